#include "passes/fuse_fir_chains.h"

#include "ir/graph_algorithms.h"
#include "ir/rewrite.h"
#include "passes/cost_model.h"

namespace fxc::passes {
namespace {

std::vector<double> convolve(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out(a.size() + b.size() - 1, 0.0);
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) out[i + j] += a[i] * b[j];
  return out;
}

}  // namespace

// Algorithm: as fuse_iir_cascades, in topological order, with the taps convolved and the cost
// model consulted for each pair.
ir::Graph fuse_fir_chains(const ir::Graph& graph, PassContext& context) {
  ir::Graph out = graph;
  auto order = ir::topological_order(out);
  if (!order) return out;
  std::vector<std::vector<ir::NodeId>> users = out.users();
  std::vector<bool> keep(out.size(), true);
  for (ir::NodeId id : *order) {
    ir::Node& node = out.node(id);
    auto* fir = std::get_if<ir::FirFilter>(&node.op);
    if (!fir) continue;
    ir::NodeId prev = node.operands[0];
    auto* prev_fir = std::get_if<ir::FirFilter>(&out.node(prev).op);
    if (!prev_fir || !ir::has_single_use(users, out, prev)) continue;
    std::size_t merged = fir->taps.size() + prev_fir->taps.size() - 1;
    if (fir_cost(merged, context) > fir_cost(fir->taps.size(), context) +
                                        fir_cost(prev_fir->taps.size(), context))
      continue;
    fir->taps = convolve(prev_fir->taps, fir->taps);
    node.origins = ir::merged_origins(out.node(prev), node);
    node.operands = out.node(prev).operands;
    keep[prev] = false;
  }
  return ir::compact(out, keep);
}

}  // namespace fxc::passes
