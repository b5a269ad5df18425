// SPDX-License-Identifier: Apache-2.0
// What a compile for either backend is asked: how to bind the graph, the strategy inputs and
// where the cache is; and the pass pipeline run with it for a target.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "passes/pipeline.h"
#include "passes/target.h"
#include "support/diagnostics.h"

namespace fxc {

struct CompileRequest {
  double sample_rate_hz = 48000;
  DType dtype = DType::f32;
  int channels = 0;                            ///< for inputs declared without a count
  std::optional<std::int64_t> length_samples;  ///< guides the strategy choice
  int batch = 1;
  std::string cache_directory;                 ///< empty: memory cache only
  passes::StrategyThresholds thresholds;
  passes::PipelineOptions pipeline;            ///< passes to run, printing, timing
  bool fusion = true;                          ///< false: one kernel per stage (for comparisons)
  /// Live chains' bounds over their ranges (passes::PassContext::live_chains).
  std::map<std::uint32_t, passes::LiveChainBounds> live_chains;
  std::size_t live_designed_nodes = 0;  ///< passes::PassContext::live_designed_nodes
};

/// The pass context `request` describes for `target`, reporting to `diags`.
passes::PassContext pass_context(const CompileRequest& request, const passes::Target& target,
                                 DiagnosticEngine& diags);

/// The pass pipeline on `graph` bound as `request` says, scheduled for `target`. Fails (with
/// the errors in `diags`) also when a signal's channel count is still unknown.
std::optional<ir::Graph> schedule_graph(const ir::Graph& graph, const CompileRequest& request,
                                        const passes::Target& target, DiagnosticEngine& diags);

}  // namespace fxc
