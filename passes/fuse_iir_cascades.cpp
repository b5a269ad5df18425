// SPDX-License-Identifier: Apache-2.0
#include "passes/fuse_iir_cascades.h"

#include "ir/rewrite.h"

namespace fxc::passes {

// Algorithm: absorb_single_use_operands, where an sos node takes the sections of an sos
// operand in front of its own.
ir::Graph fuse_iir_cascades(const ir::Graph& graph, PassContext&) {
  return ir::absorb_single_use_operands(graph, [](ir::Node& node, const ir::Node& operand) {
    auto* sos = std::get_if<ir::SosCascade>(&node.op);
    auto* first = std::get_if<ir::SosCascade>(&operand.op);
    if (!sos || !first) return false;
    sos->sections.insert(sos->sections.begin(), first->sections.begin(), first->sections.end());
    sos->allow_unstable = sos->allow_unstable || first->allow_unstable;
    return true;
  });
}

}  // namespace fxc::passes
