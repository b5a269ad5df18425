// SPDX-License-Identifier: Apache-2.0
#include "driver/compile_request.h"

namespace fxc {

passes::PassContext pass_context(const CompileRequest& request, const passes::Target& target,
                                 DiagnosticEngine& diags) {
  passes::PassContext context{diags, {request.sample_rate_hz, request.channels, request.dtype}};
  context.binding.length_samples = request.length_samples;
  context.binding.batch = request.batch;
  context.thresholds = request.thresholds;
  context.fusion = request.fusion;
  context.live_chains = request.live_chains;
  context.live_designed_nodes = request.live_designed_nodes;
  context.target = target;
  return context;
}

std::optional<ir::Graph> schedule_graph(const ir::Graph& graph, const CompileRequest& request,
                                        const passes::Target& target, DiagnosticEngine& diags) {
  passes::PassContext context = pass_context(request, target, diags);
  std::optional<ir::Graph> scheduled = passes::run_pipeline(graph, context, request.pipeline);
  if (!scheduled) return std::nullopt;
  for (const ir::Node& node : scheduled->nodes())
    if (node.type.channels == 0) {
      diags.error(node.loc,
                  "the channel count of this signal is not known: declare it on the input (input x : 2) or "
                  "give the count (--channels, Options::channels, channels= in Python)",
                  "fxc-channels");
      return std::nullopt;
    }
  return scheduled;
}

}  // namespace fxc
