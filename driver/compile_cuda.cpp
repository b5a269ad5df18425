// SPDX-License-Identifier: Apache-2.0
#include "driver/compile_cuda.h"

#include "driver/kernel_cache.h"
#include "passes/target.h"

namespace fxc {

std::optional<std::shared_ptr<const CudaProgram>> compile_for_cuda(const ir::Graph& graph,
                                                                   const CudaCompileRequest& request,
                                                                   std::shared_ptr<GpuDevice> device,
                                                                   DiagnosticEngine& diags) {
  std::optional<ir::Graph> scheduled = schedule_graph(graph, request, passes::cuda_target(), diags);
  if (!scheduled) return std::nullopt;
  std::string cubin;
  if (!device->arch().empty()) {
    KernelCache cache(request.cache_directory);
    auto compiled = cache.cuda_cubin(*scheduled, device->arch(), diags);
    if (!compiled) {
      diags.error({}, compiled.error(), "fxc-compile");
      return std::nullopt;
    }
    cubin = **compiled;
  }
  auto program = load_cuda_program(std::move(device), *scheduled, cubin);
  if (!program) {
    diags.error({}, program.error(), "fxc-compile");
    return std::nullopt;
  }
  return *program;
}

std::optional<std::shared_ptr<const CudaProgram>> compile_batch_for_cuda(const ir::Graph& graph,
                                                                         const std::vector<BatchItem>& items,
                                                                         CudaCompileRequest request,
                                                                         std::shared_ptr<GpuDevice> device,
                                                                         DiagnosticEngine& diags) {
  std::optional<WideBatch> wide = widen_batch(graph, items, diags);
  if (!wide) return std::nullopt;
  request.length_samples = static_cast<std::int64_t>(wide->longest);
  request.batch = 1;  // the channels are already multiplied out
  return compile_for_cuda(wide->graph, request, std::move(device), diags);
}

}  // namespace fxc
