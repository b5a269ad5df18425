// SPDX-License-Identifier: Apache-2.0
#include "passes/eliminate_dead_nodes.h"

#include "ir/graph_algorithms.h"
#include "ir/rewrite.h"

namespace fxc::passes {

ir::Graph eliminate_dead_nodes(const ir::Graph& graph, PassContext&) {
  std::vector<bool> keep = ir::reaching(graph, graph.outputs());
  for (ir::NodeId id : graph.inputs()) keep[id] = true;
  return ir::compact(graph, keep);
}

}  // namespace fxc::passes
