// SPDX-License-Identifier: Apache-2.0
#include "passes/fuse_iir_cascades.h"

#include "ir/rewrite.h"

namespace fxc::passes {

// Algorithm: absorb_single_use_operands, where an sos node takes the sections of an sos
// operand in front of its own.
ir::Graph fuse_iir_cascades(const ir::Graph& graph, PassContext&) {
  return ir::absorb_single_use_operands(graph, [](ir::Node& node, ir::Node& operand) {
    auto* sos = std::get_if<ir::SosCascade>(&node.op);
    auto* first = std::get_if<ir::SosCascade>(&operand.op);
    if (!sos || !first) return false;
    // Taken from the operand, which is removed, rather than copied: linear in a run's length.
    first->sections.insert(first->sections.end(), sos->sections.begin(), sos->sections.end());
    sos->sections = std::move(first->sections);
    sos->allow_unstable = sos->allow_unstable || first->allow_unstable;
    return true;
  });
}

}  // namespace fxc::passes
