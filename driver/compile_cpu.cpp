// SPDX-License-Identifier: Apache-2.0
#include "driver/compile_cpu.h"

#include "driver/kernel_cache.h"

namespace fxc {

std::optional<CompiledCpuGraph> compile_for_cpu(const ir::Graph& graph,
                                                const CpuCompileRequest& request,
                                                DiagnosticEngine& diags) {
  std::optional<ir::Graph> scheduled = schedule_graph(graph, request, passes::host_target(), diags);
  if (!scheduled) return std::nullopt;
  KernelCache cache(request.cache_directory);
  auto kernels = cache.cpu_kernels(*scheduled, diags);
  if (!kernels) {
    diags.error({}, kernels.error(), "fxc-compile");
    return std::nullopt;
  }
  return CompiledCpuGraph{std::move(*scheduled), *kernels};
}

}  // namespace fxc
