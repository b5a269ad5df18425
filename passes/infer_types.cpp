// SPDX-License-Identifier: Apache-2.0
#include "passes/infer_types.h"

#include "ir/graph_algorithms.h"

namespace fxc::passes {

// Algorithm: visit nodes in topological order; an input takes its declared channel count or
// the binding's; every other node takes its operands' count (the first known one), and a sum
// whose operands disagree is reported.
ir::Graph infer_types(const ir::Graph& graph, PassContext& context) {
  ir::Graph out = graph;
  auto order = ir::topological_order(out);
  if (!order) {
    context.diags.error({}, "cannot infer types: the graph has a cycle", "ir-verify");
    return out;
  }
  for (ir::NodeId id : *order) {
    ir::Node& node = out.node(id);
    node.type.dtype = context.binding.dtype;
    if (ir::holds<ir::Input>(node)) {
      if (node.type.channels == 0) node.type.channels = context.binding.channels;
      continue;
    }
    int channels = 0;
    for (ir::NodeId operand : node.operands) {
      int c = out.node(operand).type.channels;
      if (c == 0) continue;
      if (channels != 0 && c != channels) {
        context.diags.error(node.loc,
                            "cannot mix signals with " + std::to_string(channels) + " and " +
                                std::to_string(c) + " channels",
                            "fx-channels");
        break;
      }
      channels = channels ? channels : c;
    }
    node.type.channels = channels;
  }
  return out;
}

}  // namespace fxc::passes
