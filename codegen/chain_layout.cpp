// SPDX-License-Identifier: Apache-2.0
#include "codegen/chain_layout.h"

#include <algorithm>
#include <cmath>

#include "codegen/vector_math.h"
#include "passes/cost_model.h"

namespace fxc::codegen {
namespace {

// alpha(tau) = exp(-1 / tau) for a time constant of tau samples; 0 (no smoothing) for 0.
double smoothing_coefficient(double samples) { return samples > 0 ? std::exp(-1 / samples) : 0.0; }

}  // namespace

int lookahead_samples(const ir::Dynamics& stage) {
  return stage.unit == ir::DelayUnit::samples ? static_cast<int>(stage.lookahead) : 0;
}

ChainLayout layout_of(const ir::Chain& chain) {
  ChainLayout l;
  for (const ir::Stage& stage : chain.stages) {
    StageLayout s{l.param_count, l.state_per_channel, -1, -1, 0};
    std::visit(
        [&](const auto& p) {
          using P = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<P, ir::SosCascade>) {
            l.param_count += 5 * static_cast<int>(p.sections.size());
            l.state_per_channel += 2 * static_cast<int>(p.sections.size());
          } else if constexpr (std::is_same_v<P, ir::FirFilter>) {
            l.param_count += static_cast<int>(p.taps.size());
            l.state_per_channel += static_cast<int>(p.taps.size());
            s.ring_index = l.ring_count++;
            s.ring_length = static_cast<int>(p.taps.size());
          } else if constexpr (std::is_same_v<P, ir::Dynamics>) {
            l.param_count += kDynParamCount;
            int lookahead = lookahead_samples(p);
            // The rings of inputs and targets, then with a lookahead the targets' suffix maxima
            // and their running maximum (emit_chain.cpp's emit_lookahead).
            l.state_per_channel += kDynRings + (lookahead > 0 ? 3 * lookahead + 1 : 0);
            if (lookahead > 0) {
              s.ring_index = l.ring_count++;
              s.ring_length = lookahead;
            }
          } else if constexpr (std::is_same_v<P, ir::Gain>) {
            l.param_count += 1;
          } else if constexpr (std::is_same_v<P, ir::Clip>) {
            l.param_count += 2;
          } else if constexpr (std::is_same_v<P, ir::Delay> || std::is_same_v<P, ir::LoopRead>) {
            s.delay_index = l.delay_count++;
          } else if constexpr (std::is_same_v<P, ir::LoopWrite>) {
            l.param_count += p.dry_mix ? 4 : 2;
            s.delay_index = l.delay_count - 1;  // the line of the loop_read before it
          }
        },
        stage);
    l.stages.push_back(s);
  }
  return l;
}

ChainValues values_of(const ir::Chain& chain) {
  ChainValues v;
  for (const ir::Stage& stage : chain.stages)
    std::visit(
        [&](const auto& p) {
          using P = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<P, ir::SosCascade>) {
            for (const design::Section& s : p.sections)
              v.params.insert(v.params.end(), {s.b0, s.b1, s.b2, s.a1, s.a2});
          } else if constexpr (std::is_same_v<P, ir::FirFilter>) {
            v.params.insert(v.params.end(), p.taps.begin(), p.taps.end());
          } else if constexpr (std::is_same_v<P, ir::Gain>) {
            v.params.push_back(p.gain);
          } else if constexpr (std::is_same_v<P, ir::Clip>) {
            v.params.insert(v.params.end(), {p.lo, p.hi});
          } else if constexpr (std::is_same_v<P, ir::Dynamics>) {
            std::vector<double> d(kDynParamCount, 0.0);
            d[kDynThreshold] = p.threshold_db;
            d[kDynSlope] = p.type == design::DynamicsType::expander ? p.ratio - 1 : 1 - 1 / p.ratio;
            d[kDynKnee] = p.knee_db;
            d[kDynMakeup] = p.makeup_db;
            d[kDynAttack] = smoothing_coefficient(p.attack);
            d[kDynRelease] = smoothing_coefficient(p.release);
            d[kDynHold] = p.hold;
            d[kDynClosed] = -p.range_db;
            v.params.insert(v.params.end(), d.begin(), d.end());
          } else if constexpr (std::is_same_v<P, ir::Delay> || std::is_same_v<P, ir::LoopRead>) {
            v.delay_lengths.push_back(static_cast<std::int64_t>(p.amount));
          } else if constexpr (std::is_same_v<P, ir::LoopWrite>) {
            v.params.insert(v.params.end(), {p.input_weight, p.loop_weight});
            if (p.dry_mix) v.params.insert(v.params.end(), {p.wet_weight, p.dry_weight});
          }
        },
        stage);
  return v;
}

bool runs_in_runtime(const ir::Chain& chain) {
  return chain.fir_method == ir::FirMethod::fft_overlap_save && chain.stages.size() == 1 &&
         std::holds_alternative<ir::FirFilter>(chain.stages[0]);
}

std::vector<std::uint32_t> kernel_node_ids(const ir::Graph& graph) {
  std::vector<std::uint32_t> ids;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::Op& op = graph.node(id).op;
    auto* chain = std::get_if<ir::Chain>(&op);
    if ((chain && !runs_in_runtime(*chain)) || std::holds_alternative<ir::Sum>(op)) ids.push_back(id);
  }
  return ids;
}

std::string kernel_symbol(std::uint32_t id) { return "fxc_node_" + std::to_string(id); }

std::vector<bool> transposed_firs(const ir::Chain& chain) {
  std::vector<bool> transposed(chain.stages.size(), false);
  std::size_t taps = 0;
  for (std::size_t s = 0; s < chain.stages.size(); ++s)
    if (const auto* fir = std::get_if<ir::FirFilter>(&chain.stages[s])) {
      taps += fir->taps.size();
      transposed[s] = taps <= kFirTransposedMaxTaps;
    }
  return transposed;
}

bool lanes_across_channels(const ir::Chain& chain, DType signal, std::int64_t channels) {
  using S = ir::IirStrategy;
  if (chain.strategy == S::channel_lanes || chain.strategy == S::chunked_scan) return true;
  if (chain.strategy != S::none || passes::fir_time_lanes(chain, signal, channels)) return false;
  auto is_fir = [](const ir::Stage& stage) { return std::holds_alternative<ir::FirFilter>(stage); };
  if (ir::has_loop(chain.stages)) return std::none_of(chain.stages.begin(), chain.stages.end(), is_fir);
  // A float64 signal's tanh is a call of the C library: one per vector of channels (libmvec,
  // codegen/vector_math.h) instead of one per sample (8 ch x 10 s: 70.7 -> 12.6 ms). A
  // float32 one is a polynomial that runs faster a channel at a time (2.9 against 4.8 ms).
  auto is_f64_tanh = [&](const ir::Stage& stage) {
    return signal == DType::f64 && std::holds_alternative<ir::Tanh>(stage);
  };
  if (std::none_of(chain.stages.begin(), chain.stages.end(), is_fir) &&
      std::none_of(chain.stages.begin(), chain.stages.end(), is_f64_tanh))
    return false;
  const std::vector<bool> transposed = transposed_firs(chain);
  for (std::size_t s = 0; s < chain.stages.size(); ++s)
    if (is_fir(chain.stages[s]) && !transposed[s]) return false;
  return true;
}

bool partial_group_vectorized(const ir::Chain& chain, DType signal, std::int64_t channels) {
  return chain.strategy != ir::IirStrategy::chunked_scan && lanes_across_channels(chain, signal, channels) &&
         ir::partial_lanes_vectorize(chain.stages, compute_dtype(chain, signal) == DType::f64,
                                     host_f64_vector_math());
}

}  // namespace fxc::codegen
