// SPDX-License-Identifier: Apache-2.0
#include "driver/run_batch.h"

#include "driver/compile_cpu.h"
#include "driver/compile_cuda.h"
#include "runtime/cpu_executor.h"

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

bool run_batch_into(const ir::Graph& graph, const std::vector<int>& input_channels, std::size_t items,
                    std::size_t frames, std::span<const void* const* const> inputs,
                    std::span<void* const* const> outputs, CompileRequest request, DiagnosticEngine& diags) {
  // The batch's shape from stand-in signals of no samples: widen_batch reads only their
  // channel counts (and checks them against declared ones).
  BatchItem shape;
  for (int channels : input_channels) shape.emplace_back(static_cast<std::size_t>(channels), 0);
  std::optional<WideBatch> wide = widen_batch(graph, std::vector<BatchItem>(items, shape), diags);
  if (!wide) return false;
  request.length_samples = static_cast<std::int64_t>(frames);
  request.batch = 1;  // the channels are already multiplied out
  std::optional<CompiledCpuGraph> compiled = compile_for_cpu(wide->graph, request, diags);
  if (!compiled) return false;
  if (outputs.size() != compiled->scheduled.outputs().size()) {
    diags.error({}, "the graph has " + std::to_string(compiled->scheduled.outputs().size()) + " output(s), got " +
                        std::to_string(outputs.size()), "fxc-batch");
    return false;
  }
  auto done = execute_cpu_into(compiled->scheduled, *compiled->kernels, inputs, outputs, frames);
  if (!done) {
    diags.error({}, done.error(), "fxc-batch");
    return false;
  }
  return true;
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
