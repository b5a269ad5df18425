// SPDX-License-Identifier: Apache-2.0
// Where a chain's values and state live in the kernel arguments: derived from the chain's
// shape alone, so code generators and the runtime agree without exchanging anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/nodes.h"

namespace fxc::codegen {

struct StageLayout {
  int param_offset = 0;  ///< first value in FxcChainArgs::params
  int state_offset = 0;  ///< first state slot of a channel
  int delay_index = -1;  ///< delay stages: index into delay_lengths / delay_lines
  /// Stages with a ring in their state (fir; dynamics with a lookahead): the index of its
  /// position after the delays', and its length.
  int ring_index = -1;
  int ring_length = 0;
};

/// A dynamics stage's values, in this order (params from param_offset), and its state slots.
/// The values are derived from the payload's (values_of): the kernels and the interpreter
/// read the same numbers.
enum DynamicsParam {
  kDynThreshold,  ///< T, dB
  kDynSlope,      ///< compressor 1 - 1/R, expander R - 1
  kDynKnee,       ///< W, dB
  kDynMakeup,     ///< M, dB
  kDynAttack,     ///< alpha_A = exp(-1 / attack in samples), 0 for no attack time
  kDynRelease,    ///< alpha_R
  kDynHold,       ///< H, samples
  kDynClosed,     ///< the gate's reduction when closed, -range (dB)
  kDynParamCount
};
/// State: the smoothed reduction (or envelope, or mean square), the gate's counter, then with
/// a lookahead L two rings of L samples (the signal, then the reduction targets), the targets'
/// maxima from each position to the ring's end as of its last wrap (L), and the running maximum
/// of the targets written since (1): the window's maximum in O(1) a sample (van Herk and
/// Gil-Werman's blocks).
enum DynamicsState { kDynSmoothed, kDynCounter, kDynRings };

/// The lookahead of a designed dynamics stage, in samples (its rings' length).
int lookahead_samples(const ir::Dynamics& stage);

struct ChainLayout {
  std::vector<StageLayout> stages;
  int param_count = 0;
  int state_per_channel = 0;  ///< sos: 2 per section; fir: one ring of `taps` samples; dynamics: 2 + 2 rings
  int delay_count = 0;
  int ring_count = 0;
  int positions_per_channel() const { return delay_count + ring_count; }
};

ChainLayout layout_of(const ir::Chain& chain);

/// The type of a chain's coefficients, state, rings and arithmetic, for a signal of `signal`:
/// float64 when the chain keeps its state in float64, else the signal's.
inline DType compute_dtype(const ir::Chain& chain, DType signal) {
  return ir::float64_state(chain.state_precision) ? DType::f64 : signal;
}

/// The chain's values in layout order: coefficients (params) and delay lengths.
struct ChainValues {
  std::vector<double> params;
  std::vector<std::int64_t> delay_lengths;
};
ChainValues values_of(const ir::Chain& chain);

/// True for a chain the runtime runs itself rather than through a generated kernel: a lone
/// FIR stage by FFT overlap-save.
bool runs_in_runtime(const ir::Chain& chain);

/// The ids of the nodes that have generated kernels (chains, except those the runtime runs
/// itself, and sums), in increasing order.
std::vector<std::uint32_t> kernel_node_ids(const ir::Graph& graph);

/// The symbol of the kernel for node `id`.
std::string kernel_symbol(std::uint32_t id);

/// A chain's FIRs run in the CPU kernel's transposed form, their partial sums in registers
/// (emit_chain.cpp), while their taps add up to at most this many; the others (long ones, and
/// those past the first few in a chain of many) sum their ring in a loop. The budget keeps
/// the kernel's registers and LLVM's time in bounds: sixteen 31-tap FIRs with a tanh after
/// each, all transposed, took 6.4 s to compile for 8 channels.
inline constexpr std::size_t kFirTransposedMaxTaps = 64;
/// By stage of `chain`: whether it is a FIR that runs transposed, the chain's FIRs in order
/// while their taps add up to at most kFirTransposedMaxTaps.
std::vector<bool> transposed_firs(const ir::Chain& chain);

/// Whether the chain's kernel runs its channels as SIMD lanes (vectors of the host's width
/// across channels, the rest one at a time): for channel_lanes and chunked_scan (whose
/// "channels" are time chunks), for a fused loop without a recursion or FIR (strategy
/// none: Freeverb's allpasses), whose line then moves a tile at a time (emit_chain.cpp), and
/// for a chain without a recursion or loop whose FIRs run transposed (a lane's partial sums
/// are one multiply-add a tap) or that has a tanh on a float64 `signal` (a vector call), unless
/// it runs in time lanes (passes::fir_time_lanes, which `channels` decide for float64). Other
/// feed-forward chains without a recursion run one channel at a time. The runtime cuts a call
/// into parts of whole vector groups by the same rule.
bool lanes_across_channels(const ir::Chain& chain, DType signal, std::int64_t channels);

/// Whether the chain's CPU kernel runs the channels past its last whole group of lanes as one
/// vector, its spare lanes idle (ir::partial_lanes_vectorize, for the type it computes in),
/// rather than one at a time. Callers that split channels between threads keep such a
/// remainder whole, in the last part (runtime/run_graph.cpp).
bool partial_group_vectorized(const ir::Chain& chain, DType signal, std::int64_t channels);

}  // namespace fxc::codegen
