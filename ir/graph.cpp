// SPDX-License-Identifier: Apache-2.0
#include "ir/graph.h"

namespace fxc::ir {

const SourceLoc& Node::loc_of(const std::string& param) const {
  auto it = arg_locs.find(param);
  return it != arg_locs.end() && it->second.valid() ? it->second : loc;
}

NodeId Graph::add(Node node) {
  nodes_.push_back(std::move(node));
  return static_cast<NodeId>(nodes_.size() - 1);
}

std::vector<NodeId> Graph::inputs() const {
  std::vector<NodeId> out;
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (holds<Input>(nodes_[i])) out.push_back(i);
  return out;
}

std::vector<NodeId> Graph::outputs() const {
  std::vector<NodeId> out;
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (holds<Output>(nodes_[i])) out.push_back(i);
  return out;
}

std::vector<std::vector<NodeId>> Graph::users() const {
  std::vector<std::vector<NodeId>> out(nodes_.size());
  for (NodeId i = 0; i < nodes_.size(); ++i)
    for (NodeId operand : nodes_[i].operands)
      if (operand < nodes_.size() && (out[operand].empty() || out[operand].back() != i))
        out[operand].push_back(i);
  return out;
}

void note_calls(Diagnostic& d, const Node& node) {
  for (const SourceLoc& call : node.calls) d.notes.push_back({Severity::note, call, "in this call", {}, {}});
}

}  // namespace fxc::ir
