// SPDX-License-Identifier: Apache-2.0
// Live parameters: which nodes of a graph their values reach, and the shape decisions that
// must hold over their whole ranges, so that setting a value never recompiles.
//
// Algorithm:
//   1. Liveness. The graph is lowered at the current values and once more per parameter at
//      another value of its range; a node whose op differs between the two follows that
//      parameter. Lowering is deterministic and its structure does not depend on values, so
//      node ids correspond. The mark (ir::Node::live) keeps the passes from deciding shapes
//      on values: a live unit gain stays, live branches are not merged.
//   2. Ranges. The graph is lowered and run through every pass but select-strategy at sample
//      points of the parameters' ranges: 9 points across each declared range (log-spaced for
//      positive frequencies, times and sample counts), one parameter at a time with the
//      others at their current values, then every declared parameter at its minimum and at
//      its maximum together. For each live chain the largest pole radius seen bounds what
//      select_strategy may assume (state precision, chunked scan). A parameter without a
//      declared range is tried at a few values across what its unit allows; if that moves a
//      chain's poles, the chain is taken to have poles on the unit circle (float64 state for
//      float32, no chunked scan). Delay lengths give the longest each delay line can need.
//   A value of a declared range that a stage refuses (a cutoff above Nyquist) is a compile
//   error: the range promises it can be set. A parameter whose probe value changes the
//   lowered graph's structure, or whose sampled values change the designed graph's shape (a
//   filter order), is structural: set() refuses it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "driver/graph_source.h"
#include "ir/graph.h"
#include "passes/pass_context.h"
#include "driver/compile_request.h"

namespace fxc::driver {

struct LiveAnalysis {
  std::vector<bool> live;  ///< by node id of the lowered graph
  /// Parameters that change the graph's structure (a filter order, a tap count): they cannot
  /// change without compiling again, so set() refuses them.
  std::set<std::string, std::less<>> structural;
  /// Parameters left out because they have no declared range and unranged ones are fixed.
  std::set<std::string, std::less<>> fixed;
  /// By chain id of the designed graph (live chains only): see PassContext::live_chains.
  std::map<std::uint32_t, passes::LiveChainBounds> chains;
  std::size_t designed_nodes = 0;  ///< the designed graph's node count (PassContext::live_designed_nodes)
  /// By chain id of the scheduled graph: the longest each delay of the chain can be, in
  /// samples, over the declared ranges.
  std::map<ir::NodeId, std::vector<std::int64_t>> max_delay_lengths;
};

/// The graph lowered at `values` with the live nodes marked.
std::optional<ir::Graph> lower_marked(const GraphSource& source, const std::vector<bool>& live,
                                      const ParamValues& values, DiagnosticEngine& diags);

/// Steps 1 and 2 for `source` at `values`, compiled as `request` says (its channels, dtype,
/// sample rate; the pipeline options are not used). Errors go to `diags`, and a warning for
/// each parameter without a declared range that sets a delay's length. With `unranged_live`
/// false, parameters without a declared range are left out (fixed at their values).
std::optional<LiveAnalysis> analyse_live_parameters(const GraphSource& source, const ParamValues& values,
                                                    const CompileRequest& request, const passes::Target& target,
                                                    bool unranged_live, DiagnosticEngine& diags);

}  // namespace fxc::driver
