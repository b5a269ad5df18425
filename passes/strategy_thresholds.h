// SPDX-License-Identifier: Apache-2.0
// The thresholds of the cost model, in one place. Each can be overridden from the command
// line with `--threshold NAME=VALUE`; docs/passes.md explains where each default comes from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fxc::passes {

struct StrategyThresholds {
  /// Channels across SIMD lanes when channels >= lane_fill * lanes: below half-full
  /// vectors, pipelining sections (wavefront) keeps more FMA units busy.
  double lane_fill = 0.5;
  /// And from this many channels where the kernel runs a partial group of lanes as one vector
  /// (ir::partial_lanes_vectorize): two channels in 8 float32 lanes beat one at a time (a
  /// stereo float32 compressor 8.2 against 19.5 ms per 10 s, butter(8) 0.46 against 0.80 ms
  /// per 2 s); one does not (9.8 against 9.6 ms). 0: lane_fill alone decides.
  int partial_lanes_min_channels = 2;
  /// Time-chunked scan (chunks as SIMD lanes) from this many samples where the channels leave
  /// at least half the lanes idle (one to four float32 channels, one or two float64): the
  /// alternative, a section wavefront or a mostly idle vector, measured 1.3-6.6x slower from
  /// 4096 samples (2026-11-30, docs/performance.md "Cliffs"); the filter's decay
  /// (chunk_decay_ratio) still decides for long-ringing filters. Streams run without chunks.
  std::int64_t chunked_min_samples = 4096;
  /// And from this many (if more) where the channels fill more than half the lanes: the chunks
  /// gain at most lanes / channels there, which only pays once chunks are tens of thousands
  /// of samples long and the work spreads over threads.
  std::int64_t chunked_busy_lanes_min_samples = std::int64_t{1} << 17;
  /// Chunk length the CPU chunked scan aims at (samples; shorter chunks where the signal is
  /// short, passes::cpu_time_chunks); see chunk_decay_ratio.
  int chunk_length = 65536;
  /// The chunked scan corrects each chunk over the filter's decay (`decay` samples, from the
  /// largest pole radius, down to the signal type's precision), eight or four chunks at a time
  /// (LinearChain::decay): it is chosen only when the signal has at least ratio x lanes^2 x
  /// decay samples (in a loop, for blocks of chunks of at least ratio x lanes x decay), and
  /// then aims at chunks of at least lanes x decay. At 1 the correction of one chunk at a time
  /// cost at most the vector work; eight at a time cost 1/2.7 of that (2026-12-02, `perf` on
  /// W5), hence 0.35. 0 ignores the decay.
  double chunk_decay_ratio = 0.35;
  /// FFT overlap-save instead of direct FIR from this many taps (CPU, float32 signals; the FFT
  /// is runtime/real_fft.h). Direct FIRs of a chain of FIRs and memoryless stages run in time
  /// lanes (passes::fir_time_lanes): a multiply-add a tap for a vector of consecutive samples,
  /// even with the FFT at 192-224 taps on 1, 2 and 8 channels, behind it from 256 on all
  /// (docs/passes.md, 2026-12-01). 400 with KissFFT before; 32 before time lanes; 64 before
  /// 2026-11-29, with a scalar loop.
  int fir_fft_min_taps = 240;
  /// The same for float64 signals: even at 160-176 taps on 1, 2 and 8 channels, behind from
  /// 192. 256 before the FFT's radix-4 passes.
  int fir_fft_min_taps_f64 = 176;
  /// FIRs from this many taps run in a chain of FIRs and memoryless stages (gain, clip, tanh)
  /// only, in time lanes or by FFT (CPU; passes/fuse_chains.cpp), not fused with sections,
  /// dynamics or delays, where a chain's FIRs share its budget of transposed taps
  /// (codegen::kFirTransposedMaxTaps) and a FIR past it sums its ring every sample.
  int fir_alone_min_taps = 32;
  /// Float32 chains with a pole at least this close to the unit circle (largest pole
  /// radius >= this) keep their state and arithmetic in float64: float32 state there loses
  /// the signal in rounding noise (docs/errors.md, "Numerical accuracy"). 0: always; above
  /// 1: never.
  double f64_state_pole_radius = 0.99;
  /// Float32 chains whose sections, run in float32, measure more than this relative RMS error
  /// against float64 (passes/precision_estimate.h) keep float64 state too, whatever their
  /// pole radius: high-order designs near Nyquist and long cascades lose precision with every
  /// pole inside the radius threshold. 3e-5 (90 dB) leaves a factor of three to the 1e-4
  /// every float32 run must stay within (docs/errors.md). An f64_state_pole_radius above 1
  /// turns both rules off.
  double f64_state_error = 3e-5;
  /// split-precision: the largest relative RMS error the float32 part of a split chain may
  /// measure (float32_state_error): float64 quality as the design defines it (1e-6 on noise),
  /// with room for the output's own float32 rounding. 0 turns the split off (CPU and GPU), to
  /// compare a chain with and without it.
  double split_error = 5e-7;
  /// GPU: one thread per channel from this many channels; below, chunked scan over time.
  /// 0: the threads that keep the device busy (GpuProperties::busy_threads; 135168 on an
  /// H100): below that, channels alone leave it partly idle.
  int gpu_min_channels = 0;
  /// Chunk length of the GPU chunked scan (samples). 0: chosen per graph (choose_gpu_chunk).
  int gpu_chunk_length = 0;
  /// A lone FIR on the GPU runs by FFT overlap-save from this many taps (both signal types),
  /// up to half the longest FFT a block holds (passes::cuda_max_fft_length); direct tiles
  /// below and above. A model, not a measurement (docs/cuda.md): the direct kernel reads one
  /// shared-memory word per tap and sample, the FFT 8 per butterfly, N log2(N) / (2 (N - taps
  /// + 1)) butterflies per sample.
  int gpu_fir_fft_min_taps = 64;
  /// The GPU chunked scan's chunk passes pipeline a chain of at most this many steps (its
  /// sections, plus one per other stage) as a wavefront (ir::IirStrategy::gpu_chunked_wavefront):
  /// each step on another sample, so a thread's steps do not wait on each other. Past
  /// ir::kGpuWavefrontMaxStages steps (the output pass's ring tile holds 32 samples of lag) the
  /// steps go in groups, a stage each (ir::wavefront_group). 0 (off) by measurement: on an H200
  /// (2026-11-30) W1 ran 1.64 ms with it and 1.65 ms without, W4's chain on 1024 channels 3.38
  /// and 2.98 ms, and a 65-step chain compiles in twice the time. Set it (48 keeps ptxas's
  /// spills on sm_90 no worse than the plain passes') to compare (scripts/gpu-check.sh).
  int gpu_wavefront_max_steps = 0;
  /// GPU: a float32 chain whose sections need float64 arithmetic (state_precision f64 or
  /// mixed) does it in pairs of floats (`pairs`, `mixed_pairs`: hi + lo, about 48 bits) on a
  /// device whose float64 rate is at most this fraction of float32's. A section costs 5
  /// float64 FMAs or 120 float32 operations in pairs (docs/cuda.md), so pairs pay below about
  /// 1:24: 1/32 takes them on consumer and L4/L40S parts (1:64), not on an H100 (1:2).
  /// 0 turns them off; 1 takes them everywhere (to measure them on any card).
  double gpu_float_pairs_max_f64_rate = 1.0 / 32;
  /// GPU: fuse-loops makes each loop through one mix one chain kernel (a thread per channel, a
  /// launch per block) instead of the loop's kernels launched once per pass of its delay. 0
  /// keeps every loop's feedback nodes, to compare (scripts/gpu-check.sh); the CPU decides by
  /// its own cost model (choose_loop_body_chunks).
  int gpu_fuse_loops = 1;

  /// Sets the threshold called `name` ("lane_fill", "chunked_min_samples", ...). Returns an
  /// error message for an unknown name or a bad value.
  std::optional<std::string> set(std::string_view name, std::string_view value);
  /// Every name `set` accepts.
  static std::vector<std::string_view> names();
};

}  // namespace fxc::passes
