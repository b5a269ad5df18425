// SPDX-License-Identifier: Apache-2.0
#include "passes/fuse_loops.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "ir/graph_algorithms.h"
#include "ir/rewrite.h"
#include "passes/cost_model.h"

namespace fxc::passes {
namespace {

// Stages a fused loop may hold between its read and its write.
bool body_stage(const ir::Stage& stage) {
  return std::holds_alternative<ir::SosCascade>(stage) || std::holds_alternative<ir::Gain>(stage) ||
         std::holds_alternative<ir::Tanh>(stage) || std::holds_alternative<ir::Clip>(stage);
}

// A chain node of body stages read by `reader` alone, or nullptr.
const ir::Chain* body_chain(const ir::Graph& g, const std::vector<std::vector<ir::NodeId>>& users, ir::NodeId id,
                            ir::NodeId reader) {
  const auto* chain = std::get_if<ir::Chain>(&g.node(id).op);
  if (!chain || users[id] != std::vector<ir::NodeId>{reader}) return nullptr;
  for (const ir::Stage& stage : chain->stages)
    if (!body_stage(stage)) return nullptr;
  return chain;
}

// One loop through the mix `s`: s = a x + b B(f), f = feedback(s), with the chain B optional.
// Stages between s and the delay (`y | lowpass | delay`) are not taken: a filter there keeps
// state of s, and after a change of the delay's length (its line restarts from zeros) it
// would not be the state the same filter after the delay keeps.
struct Loop {
  ir::NodeId s = 0, f = 0, x = 0;
  std::optional<ir::NodeId> after;  // B
  std::size_t loop_side = 0;
  std::vector<ir::NodeId> s_outside, f_outside;  // their users outside the loop
};

std::optional<Loop> find_loop(const ir::Graph& g, const std::vector<std::vector<ir::NodeId>>& users, ir::NodeId s) {
  const auto* sum = std::get_if<ir::Sum>(&g.node(s).op);
  if (!sum || g.node(s).operands.size() != 2 || g.node(s).operands[0] == g.node(s).operands[1]) return std::nullopt;
  for (std::size_t side = 0; side < 2; ++side) {
    Loop loop;
    loop.s = s;
    loop.loop_side = side;
    loop.x = g.node(s).operands[1 - side];
    ir::NodeId at = g.node(s).operands[side];
    if (body_chain(g, users, at, s)) {
      loop.after = at;
      at = g.node(at).operands[0];
    }
    const auto* feedback = std::get_if<ir::Feedback>(&g.node(at).op);
    if (!feedback || feedback->unit != ir::DelayUnit::samples) continue;
    loop.f = at;
    if (g.node(at).operands[0] != s) continue;
    const ir::NodeId f_reader = loop.after ? *loop.after : s;
    for (ir::NodeId u : users[loop.f])
      if (u != f_reader) loop.f_outside.push_back(u);
    for (ir::NodeId u : users[s])
      if (u != loop.f) loop.s_outside.push_back(u);
    // One value leaves the loop: the mix, or the line's sample.
    if (!loop.f_outside.empty() && !loop.s_outside.empty()) continue;
    if (ir::reachable_from(g, {loop.f})[loop.x]) continue;  // x must come from outside the loop
    return loop;
  }
  return std::nullopt;
}

// Whether the loop runs faster unfused, in blocks of its delay with B split into time chunks
// (choose_loop_chunks): a fused kernel runs one sample after another, and with fewer channels
// than lanes it leaves lanes idle while B's recursion sets its pace. Measured on the stereo
// echo (bench/workloads/loop_echo.fx, 2 ch x 60 s, f32, one thread): fused 19.4 ms, unfused
// in chunked blocks 10.7 ms. A live delay keeps the loop fused: the choice must not move with
// a value set() may change; so does a live filter (its decay decides too). Only on the CPU
// (choose_loop_chunks says whole elsewhere): on the GPU, B runs a thread per channel fused or
// not, and unfused the loop launches its kernels for every pass of its delay's length.
bool runs_in_chunks(const ir::Graph& g, const Loop& loop, const PassContext& context) {
  if (!loop.after || g.node(loop.f).live || g.node(*loop.after).live) return false;
  const auto block = static_cast<std::int64_t>(std::get<ir::Feedback>(g.node(loop.f).op).amount);
  return choose_loop_body_chunks(std::get<ir::Chain>(g.node(*loop.after).op).stages, g.node(loop.s).type.channels,
                                 block, context)
             .strategy == ir::IirStrategy::chunked_scan;
}

// A fused loop read only by a two-operand mix with its own input, y = a loop + b x (the
// allpass's `past - in`), takes the mix into its kernel (loop_write's dry_mix): a pass over
// memory less per mix. Measured on Freeverb (8 ch x 20 s, f32, one thread): its four allpass
// mixes took about a fifth of the run.
void take_dry_mixes(ir::Graph& g, std::vector<bool>& keep) {
  const auto users = g.users();
  for (ir::NodeId f = 0; f < g.size(); ++f) {
    auto* chain = std::get_if<ir::Chain>(&g.node(f).op);
    if (!keep[f] || !chain || chain->stages.empty() || !ir::has_single_use(users, g, f)) continue;
    auto* write = std::get_if<ir::LoopWrite>(&chain->stages.back());
    const ir::NodeId s = users[f][0];
    const auto* mix = std::get_if<ir::Sum>(&g.node(s).op);
    if (!write || write->dry_mix || !mix || !keep[s] || g.node(s).operands.size() != 2) continue;
    const ir::NodeId x = g.node(f).operands[0];
    const std::vector<ir::NodeId>& operands = g.node(s).operands;
    if (!((operands[0] == f && operands[1] == x) || (operands[0] == x && operands[1] == f))) continue;
    const std::size_t wet_side = operands[0] == f ? 0 : 1;
    write->dry_mix = true;
    write->wet_weight = mix->weights[wet_side];
    write->dry_weight = mix->weights[1 - wet_side];
    g.node(f).origins = ir::merged_origins(g.node(f), g.node(s));
    g.node(f).live = g.node(f).live || g.node(s).live;
    ir::replace_uses(g, s, f);
    g.node(s).operands.clear();
    keep[s] = false;
  }
}

}  // namespace

// Algorithm: for each two-operand sum, find_loop; then, unless it runs faster in time chunks,
// one chain on x replaces the mix, the feedback node and the chain B, read where the mix (or
// the line's sample) was read.
ir::Graph fuse_loops(const ir::Graph& graph, PassContext& context) {
  if (context.target.kind == TargetKind::cuda && context.thresholds.gpu_fuse_loops == 0) return graph;
  ir::Graph out = graph;
  std::vector<bool> keep(out.size(), true);
  const std::size_t count = out.size();
  for (ir::NodeId s = 0; s < count; ++s) {
    if (!keep[s] || !ir::holds<ir::Sum>(out.node(s))) continue;
    std::optional<Loop> loop = find_loop(out, out.users(), s);
    if (!loop || runs_in_chunks(out, *loop, context)) continue;
    const auto& sum = std::get<ir::Sum>(out.node(s).op);
    ir::Chain fused;
    fused.stages.push_back(ir::LoopRead{std::get<ir::Feedback>(out.node(loop->f).op).amount});
    if (loop->after) {
      const auto& stages = std::get<ir::Chain>(out.node(*loop->after).op).stages;
      fused.stages.insert(fused.stages.end(), stages.begin(), stages.end());
    }
    const bool output_read = loop->s_outside.empty();
    fused.stages.push_back(
        ir::LoopWrite{sum.weights[1 - loop->loop_side], sum.weights[loop->loop_side], output_read});
    ir::Node node = out.node(s);  // its type and location
    node.op = std::move(fused);
    node.operands = {loop->x};
    node.origins = ir::merged_origins(out.node(loop->f), out.node(s));
    node.live = node.live || out.node(loop->f).live || (loop->after && out.node(*loop->after).live);
    const ir::NodeId replaced = output_read ? loop->f : s;
    const ir::NodeId added = out.add(std::move(node));
    keep.push_back(true);
    for (ir::NodeId u : output_read ? loop->f_outside : loop->s_outside)
      for (ir::NodeId& operand : out.node(u).operands)
        if (operand == replaced) operand = added;
    keep[s] = keep[loop->f] = false;
    if (loop->after) keep[*loop->after] = false;
  }
  take_dry_mixes(out, keep);
  return ir::compact(out, keep);
}

}  // namespace fxc::passes
