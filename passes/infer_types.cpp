// SPDX-License-Identifier: Apache-2.0
#include "passes/infer_types.h"

#include <algorithm>

#include "ir/graph_algorithms.h"
#include "ir/routing_channels.h"

namespace fxc::passes {

namespace {

// The channel count of a select, matrix or concat (0 while unknown). An empty matrix (a sum of
// channels) gets its row of ones once its operand's count is known. Counts that do not fit
// (ir::routing_channel_mismatch) are reported when `report`, and give 0.
int routed_channels(ir::Graph& g, ir::NodeId id, PassContext& context, bool report) {
  ir::Node& node = g.node(id);
  const int in = g.node(node.operands[0]).type.channels;
  if (auto* matrix = std::get_if<ir::Matrix>(&node.op); matrix && in != 0 && matrix->gains.empty())
    matrix->gains.assign(static_cast<std::size_t>(in * matrix->rows), 1.0);
  if (const std::string why = ir::routing_channel_mismatch(g, id); !why.empty()) {
    // `a, b = x` of a 3-channel x is one mistake, though each name selects from x: reported
    // at the first select of that signal that expects the same count.
    bool said = false;
    if (const auto* select = std::get_if<ir::Select>(&node.op))
      for (ir::NodeId k = 0; k < id && !said; ++k)
        if (const auto* earlier = std::get_if<ir::Select>(&g.node(k).op))
          said = g.node(k).operands[0] == node.operands[0] && earlier->of == select->of;
    if (report && !said) ir::note_calls(context.diags.error(node.loc, why, "fx-channels"), node);
    return 0;
  }
  if (const auto* select = std::get_if<ir::Select>(&node.op)) return static_cast<int>(select->indices.size());
  if (const auto* matrix = std::get_if<ir::Matrix>(&node.op)) return matrix->rows;
  if (const auto* link = std::get_if<ir::Link>(&node.op)) return link->groups;
  if (ir::holds<ir::Multiply>(node)) return in;
  int sum = 0;
  for (ir::NodeId operand : node.operands) {
    if (g.node(operand).type.channels == 0) return 0;
    sum += g.node(operand).type.channels;
  }
  return sum;
}

// One visit of every node in `order`; true if a channel count changed. Mismatches are
// reported when `report`.
bool sweep(ir::Graph& out, const std::vector<ir::NodeId>& order, PassContext& context, bool report) {
  bool changed = false;
  for (ir::NodeId id : order) {
    ir::Node& node = out.node(id);
    node.type.dtype = context.binding.dtype;
    if (ir::holds<ir::Input>(node)) {
      if (node.type.channels == 0) node.type.channels = context.binding.channels;
      continue;
    }
    if (ir::is_routing(node.op)) {
      int channels = routed_channels(out, id, context, report);
      changed = changed || node.type.channels != channels;
      node.type.channels = channels;
      continue;
    }
    int channels = 0;
    for (ir::NodeId operand : node.operands) {
      int c = out.node(operand).type.channels;
      if (c == 0) continue;
      if (channels != 0 && c != channels) {
        if (report)
          ir::note_calls(context.diags.error(node.loc,
                                             "cannot mix signals with " + std::to_string(channels) + " and " +
                                                 std::to_string(c) + " channels",
                                             "fx-channels"),
                         node);
        break;
      }
      channels = channels ? channels : c;
    }
    // A feedback node's operand comes later in the order: until its count is known, the node
    // keeps the count it has (the others around the loop give it one).
    if (channels == 0 && ir::holds<ir::Feedback>(node)) continue;
    changed = changed || node.type.channels != channels;
    node.type.channels = channels;
  }
  return changed;
}

}  // namespace

// Algorithm: visit nodes in topological order; an input takes its declared channel count or
// the binding's; a select, matrix or concat the count it makes; every other node takes its
// operands' count (the first known one), and a sum whose operands disagree is reported. A feedback node reads a node later in the order, so
// with loops the visits repeat until no count changes (each repeat carries a count at least
// one feedback edge further), then a last visit reports mismatches.
ir::Graph infer_types(const ir::Graph& graph, PassContext& context) {
  ir::Graph out = graph;
  auto order = ir::topological_order(out);
  if (!order) {
    context.diags.error({}, "cannot infer types: the graph has a cycle without a feedback node", "ir-verify");
    return out;
  }
  bool looped = std::any_of(out.nodes().begin(), out.nodes().end(),
                            [](const ir::Node& n) { return ir::holds<ir::Feedback>(n); });
  if (looped)
    for (std::size_t i = 0; i <= out.size() && sweep(out, *order, context, false); ++i) {
    }
  sweep(out, *order, context, true);
  return out;
}

}  // namespace fxc::passes
