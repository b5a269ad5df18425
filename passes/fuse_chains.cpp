// SPDX-License-Identifier: Apache-2.0
#include "passes/fuse_chains.h"

#include <algorithm>
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

// Whether `first` followed by `then` may run as one chain. Not where either holds a FIR that
// runs by FFT. On the CPU a FIR from fir_alone_min_taps taps joins only FIRs and memoryless
// stages, which run in time lanes (passes::fir_time_lanes); beside a section, a dynamics
// stage or a delay it would run a channel a lane, its ring summed every sample.
bool may_fuse(const ir::Chain& first, const ir::Chain& then, const PassContext& context) {
  if (is_fft_fir(first, context) || is_fft_fir(then, context)) return false;
  if (context.target.kind != TargetKind::cpu) return true;
  auto long_fir = [&](const ir::Chain& chain) {
    return std::any_of(chain.stages.begin(), chain.stages.end(), [&](const ir::Stage& stage) {
      auto* fir = std::get_if<ir::FirFilter>(&stage);
      return fir && fir->taps.size() >= static_cast<std::size_t>(context.thresholds.fir_alone_min_taps);
    });
  };
  if (!long_fir(first) && !long_fir(then)) return true;
  auto plain = [](const ir::Chain& chain) {
    return std::all_of(chain.stages.begin(), chain.stages.end(), ir::fir_or_memoryless);
  };
  return plain(first) && plain(then);
}

}  // namespace

// Algorithm: every stage node becomes a chain of one stage; then absorb_single_use_operands
// appends each chain to the chain it reads, when that chain has no other user and neither is
// a FIR that will run by FFT, nor joins a long FIR to a stage with state (may_fuse).
ir::Graph fuse_chains(const ir::Graph& graph, PassContext& context) {
  ir::Graph out = graph;
  for (ir::NodeId id = 0; id < out.size(); ++id)
    if (std::optional<ir::Stage> stage = as_stage(out.node(id).op))
      out.node(id).op = ir::Chain{{std::move(*stage)}};
  if (!context.fusion) return out;
  return ir::absorb_single_use_operands(out, [&](ir::Node& node, ir::Node& operand) {
    auto* chain = std::get_if<ir::Chain>(&node.op);
    auto* first = std::get_if<ir::Chain>(&operand.op);
    if (!chain || !first || !may_fuse(*first, *chain, context)) return false;
    // The operand's stages (all the run's so far) are taken and the node's few appended, not
    // copied in front of them: a run of n stages costs O(n), not O(n²) (ir/rewrite.h).
    first->stages.insert(first->stages.end(), std::make_move_iterator(chain->stages.begin()),
                         std::make_move_iterator(chain->stages.end()));
    chain->stages = std::move(first->stages);
    return true;
  });
}

}  // namespace fxc::passes
