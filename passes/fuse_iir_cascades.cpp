#include "passes/fuse_iir_cascades.h"

#include "ir/graph_algorithms.h"
#include "ir/rewrite.h"

namespace fxc::passes {

// Algorithm: in topological order, an sos node whose operand is an sos node used by it alone
// takes that node's sections in front of its own and reads its operand. Because operands
// come first, a run of any length collapses into its last node in one sweep.
ir::Graph fuse_iir_cascades(const ir::Graph& graph, PassContext&) {
  ir::Graph out = graph;
  auto order = ir::topological_order(out);
  if (!order) return out;
  std::vector<std::vector<ir::NodeId>> users = out.users();
  std::vector<bool> keep(out.size(), true);
  for (ir::NodeId id : *order) {
    ir::Node& node = out.node(id);
    auto* sos = std::get_if<ir::SosCascade>(&node.op);
    if (!sos) continue;
    ir::NodeId prev = node.operands[0];
    auto* prev_sos = std::get_if<ir::SosCascade>(&out.node(prev).op);
    if (!prev_sos || !ir::has_single_use(users, out, prev)) continue;
    sos->sections.insert(sos->sections.begin(), prev_sos->sections.begin(),
                         prev_sos->sections.end());
    sos->allow_unstable = sos->allow_unstable || prev_sos->allow_unstable;
    node.origins = ir::merged_origins(out.node(prev), node);
    node.operands = out.node(prev).operands;
    keep[prev] = false;
  }
  return ir::compact(out, keep);
}

}  // namespace fxc::passes
