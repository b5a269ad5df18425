// SPDX-License-Identifier: Apache-2.0
// The cost model behind fusion and strategy choices: rough flops per output sample, and the
// rules that pick a strategy. The thresholds it compares against live in
// strategy_thresholds.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/nodes.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// The longest FFT the CUDA backend's overlap-save kernel holds in shared memory
/// (codegen::kCudaFftSharedBytes, two arrays of points in the signal's type): 4096 points in
/// float32, 2048 in float64.
int cuda_max_fft_length(DType dtype);

/// FFT length for overlap-save with `taps` taps: the power of two at least 4x the taps
/// (and at least 256), so that at least three quarters of each block is new output; on the
/// CPU, where the binding's length (a stream's longest block) is short against that, the
/// shorter power of two above the taps that transforms fewest points per call, or, where it
/// costs less per call, twice the block P of a partitioned convolution (not above the taps:
/// runtime/partitioned_convolution.h, the first P taps direct, the rest by 2P-point FFTs); on
/// the GPU at most cuda_max_fft_length: a FIR of more than half of that runs partitioned, in
/// partitions of half the FFT (codegen/cuda fir_partitioned).
int fft_block_for(std::size_t taps, const PassContext& context);

/// How an FIR of `taps` taps runs on the context's target: by FFT from fir_fft_min_taps
/// (fir_fft_min_taps_f64) on the CPU, from gpu_fir_fft_min_taps on the GPU.
ir::FirMethod fir_method_for(std::size_t taps, const PassContext& context);

/// Flops per output sample of an FIR of `taps` taps on a long signal (the block fft_block_for
/// gives one, whatever the binding's length), by the method fir_method_for picks:
/// 2 per tap direct; for overlap-save, a forward and an inverse real FFT (~2.5 N log2 N flops
/// each) and a complex product per bin, spread over the N - taps + 1 new samples of a block;
/// partitioned, those transforms and a complex multiply-add per bin and partition for each
/// N / 2 new samples.
double fir_cost(std::size_t taps, const PassContext& context);

/// A kernel's schedule: what select_strategy writes on a chain node.
struct Schedule {
  ir::IirStrategy strategy = ir::IirStrategy::none;
  int chunk_length = 0;
  ir::FirMethod fir_method = ir::FirMethod::none;
  int fft_block = 0;
  std::string reason;
};

/// What select_strategy knows of a chain.
struct ChainSummary {
  int sections = 0;            ///< biquad sections in all
  int steps = 0;               ///< ir::wavefront_steps
  int recursions = 0;          ///< nonlinear recursions (dynamics stages): scheduled as sections are
  std::size_t max_taps = 0;    ///< the longest FIR stage (0: none)
  /// Runs inside a feedback loop, in passes of at most the loop's shortest delay: on the GPU
  /// too short for an FFT segment, so its FIRs run direct.
  bool in_loop = false;
  bool linear = true;          ///< only sections and gains: time can be split into chunks
  /// ir::partial_lanes_vectorize computing in float32 and in float64: a group of fewer channels
  /// than lanes still runs as one vector.
  bool partial_lanes_vectorize_f32 = false;
  bool partial_lanes_vectorize_f64 = false;
  /// Sections and gains, then memoryless stages only (ir::scanned_prefix): the GPU's chunked
  /// scan splits time and runs the tail on its output.
  bool gpu_scannable = false;
  /// Holds a fused loop (ir::has_loop): each sample needs the line's sample of a delay ago.
  bool fused_loop = false;
  double max_pole_radius = 0;  ///< of all sections: how slowly the chain forgets its state
  /// The signal's type, where the state's is wider: the CPU chunked scan follows a chunk's
  /// response to its start state down to the signal type's precision (decay_samples). Unset:
  /// the context's type.
  std::optional<DType> signal;
  /// The sections' relative RMS error when run in float32 (float32_state_error); 0 when not
  /// measured (float64 signals, or a pole radius that already decides). A live chain's is the
  /// largest the live analysis measured over its range.
  double float32_error = 0;
  /// Values follow live parameters: its error was measured at sampled values of their ranges,
  /// not at every value, so the radius over the range still decides where float64 is slow.
  bool live = false;
};

/// Whether the chain's CPU kernel runs each channel's samples as SIMD lanes ("time lanes",
/// codegen/cpu/emit_chain.cpp): a chain of FIRs and memoryless stages
/// (ir::fir_and_memoryless) computing in the signal's type. A FIR's outputs do not depend on
/// each other, so a vector of consecutive samples is one multiply-add a tap from a window of
/// the input, where lanes across channels leave lanes idle on one or two channels and hold
/// every partial sum of the transposed form in registers.
///
/// Their FIRs' taps add up to at most kFirTimeLanesMaxTaps: each keeps a window of its input
/// on the kernel's stack (taps + 32 vectors of samples), 34 KiB at most in float64, well
/// inside any thread's stack; longer ones (a raised FFT threshold) sum their ring a sample at
/// a time. Float64 `channels` that fill the host's lanes run FIRs of up to
/// kFirChannelLanesMaxTaps in all as channel lanes instead (codegen::lanes_across_channels),
/// their partial sums in registers: measured 2026-11-30 (`fxc bench`, one thread, 10 s, ms,
/// channel lanes / time lanes), 15 taps 4 ch 2.11 / 2.41, 8 ch 4.25 / 5.34, 16 ch 9.80 /
/// 13.2; 31 taps 8 ch 7.79 / 8.92; 48 taps 4 ch 8.51 / 6.20. Float32 runs faster in time
/// lanes on every count (8 ch 15 taps 3.5 / 2.5).
inline constexpr std::size_t kFirTimeLanesMaxTaps = 4096;
inline constexpr std::size_t kFirChannelLanesMaxTaps = 32;
bool fir_time_lanes(const ir::Chain& chain, DType signal, std::int64_t channels);

/// A chain's shape for LiveChainBounds: its stages' kinds, section and tap counts; the same
/// for every value of its live parameters, and for any channel count.
std::string live_chain_shape(const ir::Chain& chain);

/// How far below its start the CPU chunked scan follows a chunk's response to its start state
/// on a `signal` output (runtime/chunked_scan.h): 1e-10 for float32, 1e-19 for float64.
double decay_tolerance(DType signal);

/// Samples until a state decays below decay_tolerance(dtype) (r^n), for pole radius `r`;
/// infinite for r >= 1. The chunked scan's fix-up of each chunk runs about this long.
double decay_samples(double max_pole_radius, DType dtype);

/// GPUs whose float64 rate is below this fraction of float32's (consumer and L4/L40S parts:
/// 1:64) take float32 state wherever its measured error allows (choose_state_precision).
inline constexpr double kSlowFloat64Rate = 1.0 / 16;
bool slow_float64(const Target& target);
/// Whether a chain's float64 arithmetic runs as float pairs (ir::StatePrecision::pairs and
/// mixed_pairs): a GPU whose float64 rate is at most thresholds.gpu_float_pairs_max_f64_rate.
bool float_pairs_pay(const PassContext& context);

/// Whether the chain's pole radius alone makes its state float64 (choose_state_precision): a
/// pole at least thresholds.f64_state_pole_radius out, except on a GPU with slow float64 where
/// the float32 error was measured (that then decides alone).
bool radius_decides_precision(const ChainSummary& chain, const PassContext& context);

/// Whether the CPU runtime runs a whole signal through `graph` in pieces of a few thousand
/// frames, as a stream would (runtime/cpu_executor.cpp): where it has a feedback loop (whose
/// steps run in blocks no longer than its shortest delay anyway), or a fused loop among more
/// than two steps (kernels that pass values on through memory, which pieces keep in cache; a
/// step is every node but the inputs and outputs). Then no chain sees the whole signal:
/// select_strategy and split_precision weigh its chains without the signal's length, and the
/// runtime cuts by this same rule. `extra_steps`: as it would be with that many more steps
/// (a split's).
bool cpu_runs_in_pieces(const ir::Graph& graph, int extra_steps = 0);

/// Measures `chain`'s float32 error into `summary.float32_error` where it can decide the
/// precision (choose_state_precision): a float32 binding, sections whose radius does not
/// decide already (or a GPU with slow float64, where the error decides alone), and a radius
/// threshold of at most 1. A live chain's error comes from the live analysis instead.
void measure_float32_error(const ir::Chain& chain, ChainSummary& summary, const PassContext& context);

/// Float64 for a float32 binding whose chain has a pole at least
/// thresholds.f64_state_pole_radius from the origin, or whose sections measure more than
/// thresholds.f64_state_error in float32; otherwise the signal's own type. A radius threshold
/// above 1 keeps float32 state everywhere.
ir::StatePrecision choose_state_precision(const ChainSummary& chain, const PassContext& context);

/// The schedule for a chain over `channels` channels of the binding's dtype (for a chain
/// computing in float64, pass a context whose binding dtype is f64).
Schedule choose_schedule(const ChainSummary& chain, int channels, const PassContext& context);

/// How the CPU chunked scan cuts each channel of a signal (runtime/chunked_scan.cpp).
struct TimeChunks {
  std::int64_t per_channel = 1;  ///< K chunks per channel
  std::int64_t length = 0;       ///< samples in each (the last channel's remainder aside)
};

/// The chunks of `samples` samples on `channels` channels in `lanes` lanes, aiming at chunks
/// of `target` samples: K x channels a multiple of the lanes, so that every vector group is
/// full, with K as small as fills them when the signal is short (each chunk's start costs a
/// fix-up over the filter's decay); one chunk per channel where chunks would be shorter
/// than 256 samples.
TimeChunks cpu_time_chunks(std::int64_t channels, std::int64_t samples, int lanes, int target);

/// The shortest loop block split into time chunks: each chunk at least this long, so that a
/// chunk's fix-up (runtime/chunked_scan.cpp) stays a small part of it.
inline constexpr std::int64_t kMinLoopChunk = 256;

/// The time-chunk schedule of a chain inside a loop that runs in blocks of `block` samples
/// (its shortest feedback delay): strategy chunked_scan, or none with the reason the chain
/// should run its blocks whole. A loop's block is known before it runs, so a linear chain on
/// fewer channels than lanes can split each block into chunks that fill the lanes, as a
/// feed-forward chain splits a whole signal: on the CPU, for whole signals (length >=
/// chunked_min_samples; streams run without chunks), when the block has room for a chunk per
/// lane of at least kMinLoopChunk samples and at least chunk_decay_ratio x lanes x decay.
/// fuse_loops leaves such a loop unfused.
Schedule choose_loop_chunks(const ChainSummary& chain, int channels, std::int64_t block, const PassContext& context);

/// choose_loop_chunks for a loop's body: `stages` (loop_read and loop_write aside) on
/// `channels`, computing in the precision choose_state_precision gives them.
Schedule choose_loop_body_chunks(const std::vector<ir::Stage>& stages, int channels, std::int64_t block,
                                 const PassContext& context);

/// What the cost model needs of a chain: its sections, taps, recursions and pole radius.
ChainSummary summarize(const ir::Chain& chain);

/// The GPU chunked scan's chunk length for `channels` x `length` samples (nullopt: unknown, a
/// stream): the longest of 1024, 512 and 256 that still gives the device as many (channel,
/// chunk) threads as keep it busy (GpuProperties::busy_threads), else 256. Shorter chunks
/// would move about as much carry state (float64 per section, 4 passes) as samples.
int choose_gpu_chunk(long long channels, std::optional<std::int64_t> length, const GpuProperties& gpu);

}  // namespace fxc::passes
