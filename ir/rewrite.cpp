// SPDX-License-Identifier: Apache-2.0
#include "ir/rewrite.h"

#include <algorithm>

#include "ir/graph_algorithms.h"
#include "support/diagnostics.h"

namespace fxc::ir {

void replace_uses(Graph& graph, NodeId from, NodeId to) {
  for (NodeId id = 0; id < graph.size(); ++id)
    for (NodeId& operand : graph.node(id).operands)
      if (operand == from) operand = to;
}

Graph compact(const Graph& graph, const std::vector<bool>& keep) {
  std::vector<NodeId> new_id(graph.size(), 0);
  Graph out;
  out.name = graph.name;
  NodeId next = 0;
  for (NodeId id = 0; id < graph.size(); ++id)
    if (keep[id]) new_id[id] = next++;
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (!keep[id]) continue;
    Node node = graph.node(id);
    for (NodeId& operand : node.operands) {
      FXC_INTERNAL_ASSERT(keep.at(operand), "compact: a kept node reads a removed one");
      operand = new_id[operand];
    }
    out.add(std::move(node));
  }
  return out;
}

std::vector<SourceLoc> merged_origins(const Node& first, const Node& second) {
  std::vector<SourceLoc> out;
  for (const Node* n : {&first, &second}) {
    if (n->origins.empty()) {
      if (n->loc.valid()) out.push_back(n->loc);
    } else {
      out.insert(out.end(), n->origins.begin(), n->origins.end());
    }
  }
  return out;
}

std::vector<SourceLoc> merged_origins(Node&& first, const Node& second) {
  std::vector<SourceLoc> out = std::move(first.origins);
  if (out.empty() && first.loc.valid()) out.push_back(first.loc);
  if (second.origins.empty()) {
    if (second.loc.valid()) out.push_back(second.loc);
  } else {
    out.insert(out.end(), second.origins.begin(), second.origins.end());
  }
  return out;
}

Graph absorb_single_use_operands(const Graph& graph,
                                 const std::function<bool(Node&, Node&)>& absorb) {
  Graph out = graph;
  auto order = topological_order(out);
  if (!order) return out;
  std::vector<std::vector<NodeId>> users = out.users();
  std::vector<bool> keep(out.size(), true);
  for (NodeId id : *order) {
    Node& node = out.node(id);
    if (node.operands.empty()) continue;
    NodeId prev = node.operands[0];
    if (!has_single_use(users, out, prev) || !absorb(node, out.node(prev))) continue;
    // The operand is removed: what grows along a run (its origins, its operands) is taken,
    // not copied, so that a run of n nodes costs O(n), not O(n²).
    Node& operand = out.node(prev);
    node.origins = merged_origins(std::move(operand), node);
    node.live = node.live || operand.live;
    node.operands = std::move(operand.operands);
    keep[prev] = false;
  }
  return compact(out, keep);
}

bool has_single_use(const std::vector<std::vector<NodeId>>& users, const Graph& graph, NodeId id) {
  if (users[id].size() != 1) return false;
  const auto& operands = graph.node(users[id][0]).operands;
  return std::count(operands.begin(), operands.end(), id) == 1;
}

}  // namespace fxc::ir
