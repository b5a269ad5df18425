// SPDX-License-Identifier: Apache-2.0
// The fxc dataflow graph: nodes in a vector, each naming its operands by id.
//
// Storage is SSA-like (each node lists the ids it reads), which keeps passes simple and the
// text form direct. The graph algorithms (topological order, cycles, reachability) run on a
// Boost.Graph view built in graph_algorithms.cpp; Boost types never leave ir/.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/nodes.h"
#include "support/diagnostics.h"
#include "support/source_location.h"

namespace fxc::ir {

using NodeId = std::uint32_t;

/// The type of the signal a node produces. `channels == 0` means "not yet known": an input
/// declared without a channel count, before the graph is bound.
struct Type {
  int channels = 0;
  DType dtype = DType::f64;
  friend bool operator==(const Type&, const Type&) = default;
};

struct Node {
  Op op;
  std::vector<NodeId> operands;
  Type type;
  SourceLoc loc;                       ///< where the user wrote this node
  std::vector<SourceLoc> origins;      ///< for a node made by fusing others: their locations
  std::map<std::string, SourceLoc> arg_locs;  ///< parameter name -> where its value was written
  /// Its values follow a live parameter (driver/live_parameters.h): they may change after
  /// compilation, so no pass makes a shape decision from them (a unit gain stays, identical
  /// branches stay apart, the strategy holds for the parameter's whole range). A node fused
  /// from a live one is live.
  bool live = false;
  /// For a node made in a function's body: the calls it was made for, innermost first, so an
  /// error found later at the node (a frequency above Nyquist) can say which call it came from.
  std::vector<SourceLoc> calls;

  /// The location of a parameter's value, or of the node when the parameter has none.
  const SourceLoc& loc_of(const std::string& param) const;
};

/// Adds a note "in this call" to `d` for each function call `node` was made for.
void note_calls(Diagnostic& d, const Node& node);

class Graph {
 public:
  std::string name;

  NodeId add(Node node);
  const Node& node(NodeId id) const { return nodes_.at(id); }
  Node& node(NodeId id) { return nodes_.at(id); }
  std::size_t size() const { return nodes_.size(); }
  std::span<const Node> nodes() const { return nodes_; }

  /// The ids of the input (resp. output) nodes, in the order they were added.
  std::vector<NodeId> inputs() const;
  std::vector<NodeId> outputs() const;

  /// For each node, the ids of the nodes that read it, in increasing id order.
  std::vector<std::vector<NodeId>> users() const;

 private:
  std::vector<Node> nodes_;
};

template <class T>
bool holds(const Node& node) {
  return std::holds_alternative<T>(node.op);
}

}  // namespace fxc::ir
