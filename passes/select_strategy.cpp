// SPDX-License-Identifier: Apache-2.0
#include "passes/select_strategy.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "ir/graph_algorithms.h"
#include "passes/cost_model.h"

namespace fxc::passes {

namespace {

// Each loop runs in blocks no longer than its shortest feedback delay (runtime/run_graph.h);
// each feedback node says so, which delay sets the length, and how the rest of the graph runs
// (`cpu`: in pieces, cpu_runs_in_pieces). Returns, by node, that length for the nodes of a
// loop (nullopt elsewhere), or 0 where a feedback delay of the loop is live: its blocks change
// with a value that may not change the kernels' shape.
std::vector<std::optional<std::int64_t>> explain_loops(ir::Graph& graph, bool cpu) {
  std::vector<std::optional<std::int64_t>> block(graph.size());
  auto order = ir::loop_order(graph);
  if (!order) return block;
  std::set<int> live;  // loops with a live feedback delay
  for (ir::NodeId id = 0; id < graph.size(); ++id)
    if (ir::holds<ir::Feedback>(graph.node(id)) && graph.node(id).live) live.insert(order->loop[id]);
  std::map<int, ir::NodeId> shortest;  // by loop
  for (ir::NodeId id = 0; id < graph.size(); ++id)
    if (const auto* f = std::get_if<ir::Feedback>(&graph.node(id).op)) {
      auto [it, fresh] = shortest.emplace(order->loop[id], id);
      if (!fresh && f->amount < std::get<ir::Feedback>(graph.node(it->second).op).amount) it->second = id;
    }
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (order->loop[id] < 0) continue;
    ir::NodeId by = shortest.at(order->loop[id]);
    const double amount = std::get<ir::Feedback>(graph.node(by).op).amount;
    block[id] = live.count(order->loop[id]) ? 0 : std::max<std::int64_t>(1, static_cast<std::int64_t>(amount));
    if (auto* f = std::get_if<ir::Feedback>(&graph.node(id).op))
      f->reason = fmt::format(
          "its loop runs in blocks of up to {:g} samples{}: every kernel of the loop runs vectorised over a "
          "block, and the block's feedback values were all written before it, since no delay of the loop is "
          "shorter; {}",
          amount, by == id ? " (this delay, the loop's shortest)" : fmt::format(" (the loop's shortest delay, %{})", by),
          cpu ? "the whole graph runs in pieces of a few thousand frames, as a stream would"
              : "the rest of the graph runs over whole signals");
  }
  return block;
}

}  // namespace

ir::Graph select_strategy(const ir::Graph& graph, PassContext& context) {
  ir::Graph out = graph;
  const std::vector<std::optional<std::int64_t>> loop_block = explain_loops(out, context.target.kind == TargetKind::cpu);
  // A loop's blocks are short next to a signal: a chunked scan, which splits one whole
  // signal, has none inside a loop; on the CPU a graph with loops may run in pieces of a few
  // thousand frames (cpu_runs_in_pieces), and then none anywhere.
  PassContext blocked = context;
  blocked.binding.length_samples.reset();
  const bool pieces = context.target.kind == TargetKind::cpu && cpu_runs_in_pieces(out);
  for (ir::NodeId id = 0; id < out.size(); ++id) {
    auto* chain = std::get_if<ir::Chain>(&out.node(id).op);
    if (!chain) continue;
    ChainSummary summary = summarize(*chain);
    summary.signal = context.binding.dtype;
    const bool fused_loop = summary.fused_loop;
    const bool in_loop = loop_block[id].has_value();
    summary.in_loop = in_loop;
    double now = summary.max_pole_radius;
    // A live chain's bounds over its range, where the live analysis found this chain at this
    // id; else the worst its range could be (a pole on the unit circle: float64 state).
    std::optional<LiveChainBounds> live;
    if (out.node(id).live) {
      auto found = context.live_chains.find(id);
      if (out.size() == context.live_designed_nodes && found != context.live_chains.end() &&
          found->second.shape == live_chain_shape(*chain))
        live = found->second;
      else
        live = LiveChainBounds{1.0, 0.0, {}};
      summary.live = true;
      summary.max_pole_radius = std::max(summary.max_pole_radius, live->pole_radius);
      summary.float32_error = live->float32_error;  // measured at the range's sampled values
    }
    // A chain whose values are fixed is measured (a live chain's error is the live analysis's,
    // over its range).
    const StrategyThresholds& t = context.thresholds;
    const bool slow_f64 = slow_float64(context.target);
    if (!out.node(id).live) measure_float32_error(*chain, summary, context);
    ir::StatePrecision precision = choose_state_precision(summary, context);
    PassContext computing = in_loop || pieces ? blocked : context;
    if (precision == ir::StatePrecision::f64) computing.binding.dtype = DType::f64;
    Schedule s = choose_schedule(summary, out.node(id).type.channels, computing);
    if (pieces && !in_loop && !fused_loop && s.strategy != ir::IirStrategy::chunked_scan) {
      PassContext whole_signal = context;
      whole_signal.binding.dtype = computing.binding.dtype;
      if (choose_schedule(summary, out.node(id).type.channels, whole_signal).strategy == ir::IirStrategy::chunked_scan)
        s.reason += "; not in time chunks: the graph's loop makes the CPU run it in pieces of a few thousand frames";
    }
    if (in_loop && *loop_block[id] > 0) {
      PassContext whole = context;
      whole.binding.dtype = computing.binding.dtype;
      Schedule chunks = choose_loop_chunks(summary, out.node(id).type.channels, *loop_block[id], whole);
      if (chunks.strategy == ir::IirStrategy::chunked_scan) s = chunks;
    }
    if (fused_loop && s.strategy == ir::IirStrategy::section_wavefront) {
      // Each sample's write into the line needs the whole chain's result for that sample.
      s.strategy = ir::IirStrategy::sequential;
      s.reason += "; a fused loop: sequential, one sample through every stage before the next";
    }
    if (fused_loop) {
      s.reason += "; the loop runs in this kernel, its line in the chain's state";
      auto read = std::find_if(chain->stages.begin(), chain->stages.end(),
                               [](const ir::Stage& stage) { return std::holds_alternative<ir::LoopRead>(stage); });
      const Schedule chunks = choose_loop_body_chunks(chain->stages, out.node(id).type.channels,
                                                      static_cast<std::int64_t>(std::get<ir::LoopRead>(*read).amount),
                                                      context);
      if (out.node(id).live) s.reason += "; not in time chunks: live parameters could move that choice";
      else if (chunks.strategy == ir::IirStrategy::none) s.reason += "; not in time chunks: " + chunks.reason;
    }
    if (in_loop && ir::gpu_chunked(s.strategy)) {
      // A loop's passes are no longer than its delay: one chunk, the scan's launches for nothing.
      s = {ir::IirStrategy::gpu_thread_per_channel, 0, s.fir_method, s.fft_block,
           "one GPU thread per channel: inside a loop, whose passes are too short to split in time"};
    }
    // split-precision put the sections that need float64 first, for the rest to run in float32
    // in the same kernel: that holds where the chain needs float64 at all.
    const bool mixed = precision == ir::StatePrecision::f64 && ir::mixed_precision(chain->state_precision);
    if (mixed) {
      const std::size_t hot = std::get<ir::SosCascade>(chain->stages[0]).sections.size();
      s.reason += fmt::format("; float64 state for the first {} of {} sections (pole radius {:.6g} >= {:g}), float32 after",
                              hot, summary.sections, summary.max_pole_radius, t.f64_state_pole_radius);
      precision = ir::StatePrecision::mixed;
    } else if (precision == ir::StatePrecision::f64 && radius_decides_precision(summary, context))
      s.reason += fmt::format("; float64 state (pole radius {:.6g} >= {:g})", summary.max_pole_radius,
                              t.f64_state_pole_radius);
    else if (precision == ir::StatePrecision::f64)
      s.reason += fmt::format("; float64 state (float32 would measure {:.2g} relative error > {:g})",
                              summary.float32_error, t.f64_state_error);
    else if (slow_f64 && summary.float32_error > 0 && summary.max_pole_radius >= t.f64_state_pole_radius)
      s.reason += fmt::format("; float32 state on a GPU with slow float64 (1:{:g}): float32 measures {:.2g} "
                              "relative error <= {:g}",
                              1 / context.target.gpu.f64_rate, summary.float32_error, t.f64_state_error);
    if (live)
      s.reason += fmt::format("; live parameters: decided for their whole range (pole radius {:.6g} now, "
                              "up to {:.6g})", now, summary.max_pole_radius);
    if (float_pairs_pay(context) && ir::float64_state(precision)) {
      const bool sections_and_gains = std::all_of(chain->stages.begin(), chain->stages.end(), [](const ir::Stage& stage) {
        return std::holds_alternative<ir::SosCascade>(stage) || std::holds_alternative<ir::Gain>(stage);
      });
      if (precision == ir::StatePrecision::mixed || sections_and_gains) {
        precision = precision == ir::StatePrecision::mixed ? ir::StatePrecision::mixed_pairs : ir::StatePrecision::pairs;
        s.reason += fmt::format("; its float64 arithmetic in float pairs (float64 at 1:{:g} here, pairs up to 1:{:g})",
                                1 / context.target.gpu.f64_rate, 1 / t.gpu_float_pairs_max_f64_rate);
      } else {
        s.reason += "; float64, not float pairs: pairs cover sections and gains only";
      }
    }
    chain->state_precision = precision;
    chain->strategy = s.strategy;
    chain->chunk_length = s.chunk_length;
    chain->fir_method = s.fir_method;
    chain->fft_block = s.fft_block;
    if (context.target.kind == TargetKind::cpu && s.fir_method == ir::FirMethod::direct &&
        fir_time_lanes(*chain, context.binding.dtype, out.node(id).type.channels))
      s.reason += ", in time lanes (a channel's consecutive samples as one vector)";
    chain->reason = s.reason;
  }
  return out;
}

}  // namespace fxc::passes
