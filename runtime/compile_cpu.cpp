#include "runtime/compile_cpu.h"

#include "runtime/kernel_cache.h"

namespace fxc {

std::optional<CompiledCpuGraph> compile_for_cpu(const ir::Graph& graph,
                                                const CpuCompileRequest& request,
                                                DiagnosticEngine& diags) {
  passes::PassContext context{diags, {request.sample_rate_hz, request.channels, request.dtype}};
  context.binding.length_samples = request.length_samples;
  context.binding.batch = request.batch;
  context.thresholds = request.thresholds;
  context.fusion = request.fusion;
  std::optional<ir::Graph> scheduled = passes::run_pipeline(graph, context, request.pipeline);
  if (!scheduled) return std::nullopt;
  for (const ir::Node& node : scheduled->nodes())
    if (node.type.channels == 0) {
      diags.error(node.loc, "the channel count of this signal is not known: declare it on the input (input x : 2) or give --channels", "fxc-channels");
      return std::nullopt;
    }
  KernelCache cache(request.cache_directory);
  auto kernels = cache.cpu_kernels(*scheduled, diags);
  if (!kernels) {
    diags.error({}, kernels.error(), "fxc-compile");
    return std::nullopt;
  }
  return CompiledCpuGraph{std::move(*scheduled), *kernels};
}

}  // namespace fxc
