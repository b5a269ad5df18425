// SPDX-License-Identifier: Apache-2.0
#include "passes/fuse_chains.h"

#include <iterator>

#include "ir/rewrite.h"
#include "passes/cost_model.h"

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

// A FIR long enough for FFT convolution runs block-wise, not sample by sample: it stays a
// chain of its own.
bool is_fft_fir(const ir::Chain& chain, const PassContext& context) {
  for (const ir::Stage& stage : chain.stages)
    if (auto* fir = std::get_if<ir::FirFilter>(&stage))
      if (fir_method_for(fir->taps.size(), context) == ir::FirMethod::fft_overlap_save) return true;
  return false;
}

}  // namespace

// Algorithm: every stage node becomes a chain of one stage; then absorb_single_use_operands
// appends each chain to the chain it reads, when that chain has no other user and neither is
// a FIR that will run by FFT.
ir::Graph fuse_chains(const ir::Graph& graph, PassContext& context) {
  ir::Graph out = graph;
  for (ir::NodeId id = 0; id < out.size(); ++id)
    if (std::optional<ir::Stage> stage = as_stage(out.node(id).op))
      out.node(id).op = ir::Chain{{std::move(*stage)}};
  if (!context.fusion) return out;
  return ir::absorb_single_use_operands(out, [&](ir::Node& node, ir::Node& operand) {
    auto* chain = std::get_if<ir::Chain>(&node.op);
    auto* first = std::get_if<ir::Chain>(&operand.op);
    if (!chain || !first || is_fft_fir(*chain, context) || is_fft_fir(*first, context)) return false;
    // The operand's stages (all the run's so far) are taken and the node's few appended, not
    // copied in front of them: a run of n stages costs O(n), not O(n²) (ir/rewrite.h).
    first->stages.insert(first->stages.end(), std::make_move_iterator(chain->stages.begin()),
                         std::make_move_iterator(chain->stages.end()));
    chain->stages = std::move(first->stages);
    return true;
  });
}

}  // namespace fxc::passes
