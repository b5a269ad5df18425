// SPDX-License-Identifier: Apache-2.0
// Graph algorithms over ir::Graph (topological order, reachability), computed with Boost.Graph.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace fxc::ir {

// Feedback nodes' operand edges are back edges (ir/nodes.h): the orders and cycle searches
// below leave them out, the reachability questions follow them (a loop's value flows on).

/// The node ids in an order where every node follows its operands (a feedback node need not
/// follow its operand), with ties broken by id so the order is deterministic; nullopt if the
/// graph has a cycle without a feedback node (or an operand id out of range).
std::optional<std::vector<NodeId>> topological_order(const Graph& graph);

/// A cycle that passes through no feedback node (any cycle with `through_feedback`), as the
/// node ids along it (each reads the next, the last reads the first), or empty if none.
/// With `within`, only among the nodes it marks.
std::vector<NodeId> find_cycle(const Graph& graph, bool through_feedback = false,
                               const std::vector<bool>* within = nullptr);

/// The loops of the graph: its strongly connected components of more than one node (or of
/// one node that reads itself), following every edge, each sorted by id; in order of their
/// smallest id.
std::vector<std::vector<NodeId>> loops(const Graph& graph);

/// An order for running a graph with loops one loop at a time: every node after its operands
/// (a feedback node's operand aside, within its loop), and the nodes of each loop together.
/// `loop[id]` is the index in loops() of the loop a node belongs to, or -1; a feedback node
/// whose operand is on no cycle with it (after a pass cut the loop) is a loop of its own.
/// nullopt where topological_order gives none.
struct LoopOrder {
  std::vector<NodeId> order;
  std::vector<int> loop;
};
std::optional<LoopOrder> loop_order(const Graph& graph);

/// For each node, whether it can be reached from one of `sources` along operand edges.
std::vector<bool> reachable_from(const Graph& graph, const std::vector<NodeId>& sources);

/// For each node, whether one of `sinks` depends on it (its value flows into a sink).
std::vector<bool> reaching(const Graph& graph, const std::vector<NodeId>& sinks);

/// For each node, the latency the graph's lookaheads add on the way to it, in samples: the
/// largest sum, over the paths from the inputs (feedback edges left out), of the lookaheads of
/// the limiters on the path (dynamics nodes and chain stages in samples, after design). A
/// limiter in a feedback loop's body (reached only through the loop's delay, or between a
/// fused loop's loop_read and loop_write) lengthens the loop, not the output's lateness. A
/// plugin host delays its other signals by an output's latency to line them up.
std::vector<std::int64_t> lookahead_latency(const Graph& graph);

}  // namespace fxc::ir
