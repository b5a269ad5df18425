// SPDX-License-Identifier: Apache-2.0
#include "driver/run_batch.h"

#include "driver/compile_cpu.h"
#include "driver/compile_cuda.h"

namespace fxc {

std::optional<std::vector<std::vector<Signal>>> run_batch(const ir::Graph& graph,
                                                          const std::vector<BatchItem>& items,
                                                          CompileRequest request, DiagnosticEngine& diags) {
  if (items.empty()) return std::vector<std::vector<Signal>>{};
  std::optional<WideBatch> wide = widen_batch(graph, items, diags);
  if (!wide) return std::nullopt;
  request.length_samples = static_cast<std::int64_t>(wide->longest);
  request.batch = 1;  // the channels are already multiplied out
  std::optional<CompiledCpuGraph> compiled = compile_for_cpu(wide->graph, request, diags);
  if (!compiled) return std::nullopt;
  auto out = execute_cpu_batch(compiled->scheduled, *compiled->kernels, items, wide->longest);
  if (!out) {
    diags.error({}, out.error(), "fxc-batch");
    return std::nullopt;
  }
  return std::move(*out);
}

std::optional<std::vector<std::vector<Signal>>> run_batch_cuda(const ir::Graph& graph,
                                                               const std::vector<BatchItem>& items,
                                                               CompileRequest request,
                                                               std::shared_ptr<GpuDevice> device,
                                                               DiagnosticEngine& diags) {
  if (items.empty()) return std::vector<std::vector<Signal>>{};
  auto program = compile_batch_for_cuda(graph, items, std::move(request), std::move(device), diags);
  if (!program) return std::nullopt;
  auto out = execute_cuda_batch(*program, items);
  if (!out) {
    diags.error({}, out.error(), "fxc-batch");
    return std::nullopt;
  }
  return std::move(*out);
}

}  // namespace fxc
