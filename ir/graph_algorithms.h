// SPDX-License-Identifier: Apache-2.0
// Graph algorithms over ir::Graph (topological order, reachability), computed with Boost.Graph.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace fxc::ir {

/// The node ids in an order where every node follows its operands, with ties broken by id so
/// the order is deterministic; nullopt if the graph has a cycle (or an operand id out of range).
std::optional<std::vector<NodeId>> topological_order(const Graph& graph);

/// A node that lies on a cycle, if any.
std::optional<NodeId> find_cycle_node(const Graph& graph);

/// For each node, whether it can be reached from one of `sources` along operand edges.
std::vector<bool> reachable_from(const Graph& graph, const std::vector<NodeId>& sources);

/// For each node, whether one of `sinks` depends on it (its value flows into a sink).
std::vector<bool> reaching(const Graph& graph, const std::vector<NodeId>& sinks);

}  // namespace fxc::ir
