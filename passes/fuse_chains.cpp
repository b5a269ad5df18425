#include "passes/fuse_chains.h"

#include "ir/graph_algorithms.h"
#include "ir/rewrite.h"

namespace fxc::passes {
namespace {

std::optional<ir::Stage> as_stage(const ir::Op& op) {
  return std::visit(
      [](const auto& p) -> std::optional<ir::Stage> {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_constructible_v<ir::Stage, P> && !std::is_same_v<P, ir::Chain>)
          return ir::Stage(p);
        else
          return std::nullopt;
      },
      op);
}

}  // namespace

// Algorithm: in topological order, a stage node becomes a chain of itself, or, when its
// operand is a chain read only by it, joins the end of that chain (which is then dropped).
ir::Graph fuse_chains(const ir::Graph& graph, PassContext& context) {
  ir::Graph out = graph;
  auto order = ir::topological_order(out);
  if (!order) return out;
  std::vector<std::vector<ir::NodeId>> users = out.users();
  std::vector<bool> keep(out.size(), true);
  for (ir::NodeId id : *order) {
    ir::Node& node = out.node(id);
    std::optional<ir::Stage> stage = as_stage(node.op);
    if (!stage) continue;
    ir::NodeId prev = node.operands[0];
    auto* prev_chain = std::get_if<ir::Chain>(&out.node(prev).op);
    if (context.fusion && prev_chain && ir::has_single_use(users, out, prev)) {
      ir::Chain chain = std::move(*prev_chain);
      chain.stages.push_back(std::move(*stage));
      node.origins = ir::merged_origins(out.node(prev), node);
      node.operands = out.node(prev).operands;
      node.op = std::move(chain);
      keep[prev] = false;
    } else {
      node.op = ir::Chain{{std::move(*stage)}};
    }
  }
  return ir::compact(out, keep);
}

}  // namespace fxc::passes
