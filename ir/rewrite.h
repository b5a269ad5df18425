// SPDX-License-Identifier: Apache-2.0
// Small graph-rewriting helpers shared by the passes.
#pragma once

#include <functional>
#include <vector>

#include "ir/graph.h"

namespace fxc::ir {

/// Makes every node that reads `from` read `to` instead.
void replace_uses(Graph& graph, NodeId from, NodeId to);

/// A copy holding only the nodes with keep[id] true, renumbered in order. A kept node must
/// not read a removed one (checked: an internal error otherwise).
Graph compact(const Graph& graph, const std::vector<bool>& keep);

/// The locations a node fused from `first` and `second` came from, in order.
std::vector<SourceLoc> merged_origins(const Node& first, const Node& second);
/// The same, taking `first`'s origins rather than copying them (`first` is being removed).
std::vector<SourceLoc> merged_origins(Node&& first, const Node& second);

/// The common step of the fusion passes. In topological order, each node whose first operand
/// is read by it alone is offered that operand: `absorb(node, operand)` may fold the operand
/// into the node and return true. The absorbed operand is then removed, the node reads the
/// operand's operands, and it keeps both nodes' locations as origins. Because operands come
/// first, a run of any length collapses into its last node in one sweep.
///
/// The operand is handed over: when `absorb` returns true it may have moved the operand's
/// payload out (and must, for a payload that grows along the run: the operand of the k-th
/// step holds the k stages before it, and copying them at every step holds n²/2 stages for
/// a run of n); when it returns false it must have left the operand as it was.
Graph absorb_single_use_operands(const Graph& graph,
                                 const std::function<bool(Node& node, Node& operand)>& absorb);

/// True when `id` has exactly one user and that user reads it once.
bool has_single_use(const std::vector<std::vector<NodeId>>& users, const Graph& graph, NodeId id);

}  // namespace fxc::ir
