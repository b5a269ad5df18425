// SPDX-License-Identifier: Apache-2.0
#include "passes/merge_identical_nodes.h"

#include <map>

#include "ir/field_text.h"
#include "ir/graph_algorithms.h"
#include "ir/rewrite.h"

namespace fxc::passes {

// Algorithm: in topological order, key each node by its kind, exact field values, type and
// (already merged) operands; a node whose key was seen is replaced by the first one. Inputs
// and outputs are never merged: they are the graph's interface; live nodes neither.
ir::Graph merge_identical_nodes(const ir::Graph& graph, PassContext&) {
  ir::Graph out = graph;
  auto order = ir::topological_order(out);
  if (!order) return out;
  std::map<std::string, ir::NodeId> seen;
  std::vector<bool> keep(out.size(), true);
  for (ir::NodeId id : *order) {
    const ir::Node& node = out.node(id);
    // Live nodes are equal only for the parameter values of the moment.
    // A feedback node is keyed by an operand not merged yet (it comes later in the order).
    if (ir::holds<ir::Input>(node) || ir::holds<ir::Output>(node) || ir::holds<ir::Feedback>(node) || node.live)
      continue;
    std::string key = std::string(ir::kind_name(node.op)) + "{" +
                      std::visit([](const auto& p) { return ir::fields_text(p, false); }, node.op) +
                      "}:" + std::to_string(node.type.channels) + std::string(name(node.type.dtype));
    for (ir::NodeId operand : node.operands) key += " %" + std::to_string(operand);
    auto [it, inserted] = seen.emplace(key, id);
    if (!inserted) {
      ir::replace_uses(out, id, it->second);
      keep[id] = false;
    }
  }
  return ir::compact(out, keep);
}

}  // namespace fxc::passes
