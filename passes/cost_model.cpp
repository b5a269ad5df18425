// SPDX-License-Identifier: Apache-2.0
#include "passes/cost_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "design/filter_design.h"
#include "ir/graph_algorithms.h"
#include "passes/precision_estimate.h"

namespace fxc::passes {

int cuda_max_fft_length(DType dtype) { return dtype == DType::f64 ? 2048 : 4096; }

namespace {

// fft_block_for on a long signal: what every block of it transforms, and what the cost model
// weighs a FIR by (fir_cost), whatever the length of a call.
int long_signal_fft_block(std::size_t taps, const PassContext& context) {
  int n = 256;
  while (static_cast<std::size_t>(n) < 4 * taps) n *= 2;
  if (context.target.kind == TargetKind::cuda) n = std::min(n, cuda_max_fft_length(context.binding.dtype));
  return n;
}

}  // namespace

int fft_block_for(std::size_t taps, const PassContext& context) {
  int n = long_signal_fft_block(taps, context);
  if (context.target.kind == TargetKind::cuda) return n;
  // A call of `length` samples (a stream's block: Processor binds its longest) transforms
  // ceil(length / hop) blocks of n points, hop = n - taps + 1. Where calls are short, a
  // block that holds just the taps and the call costs less per call: a 256-sample block of a
  // 24001-tap FIR pays a 32768-point FFT instead of a 131072-point one. Long signals keep 4x.
  if (const auto length = context.binding.length_samples; length && *length > 0) {
    auto steps = [&](int m) {  // overlap-save transforms per call
      const double hop = static_cast<double>(m) - static_cast<double>(taps) + 1;
      return std::ceil(static_cast<double>(*length) / hop);
    };
    auto cost = [&](int m) { return steps(m) * m * std::log2(m); };
    for (int m = n / 2; m >= 256 && static_cast<std::size_t>(m) > taps; m /= 2)
      if (cost(m) < cost(n)) n = m;
    // A partitioned convolution (runtime/partitioned_convolution.h) with blocks of P inputs
    // pays, per call, partition 0 directly (2 P flops an output), and per block of P inputs
    // (length / P of them a call, on average) one 2P-point transform each way and a complex
    // multiply-add per bin and FFT partition, plus about one copy per input (its history moved
    // back in its buffer): its cost grows with the call, not with the taps. Its block (2P) is
    // not above the taps, which says which it is.
    const double calls = static_cast<double>(*length);
    const double d_taps = static_cast<double>(taps);
    auto transforms = [](double m) { return 5 * m * std::log2(m) + 4 * m; };
    double best = steps(n) * transforms(n);
    for (int p = 32; 2 * static_cast<std::size_t>(p) <= taps; p *= 2) {
      const double parts = std::ceil((d_taps - p) / p);
      const double partitioned =
          calls / p * (transforms(2.0 * p) + 8 * parts * (p + 1)) + 2.0 * p * calls + calls;
      if (partitioned < best) {
        best = partitioned;
        n = 2 * p;
      }
    }
  }
  return n;
}

ir::FirMethod fir_method_for(std::size_t taps, const PassContext& context) {
  if (context.target.kind == TargetKind::cuda) {
    // Taps that one block's FFT does not hold with as many new samples run partitioned
    // (fir_partitioned, codegen/cuda): fft_block_for gives them the longest FFT.
    return taps >= static_cast<std::size_t>(context.thresholds.gpu_fir_fft_min_taps) ? ir::FirMethod::fft_overlap_save
                                                                                      : ir::FirMethod::direct;
  }
  // RealFft in float32 and in float64 (runtime/real_fft.h): each has its own crossover.
  int min_taps = context.binding.dtype == DType::f64 ? context.thresholds.fir_fft_min_taps_f64
                                                     : context.thresholds.fir_fft_min_taps;
  return taps >= static_cast<std::size_t>(min_taps)
             ? ir::FirMethod::fft_overlap_save
             : ir::FirMethod::direct;
}

double fir_cost(std::size_t taps, const PassContext& context) {
  if (fir_method_for(taps, context) == ir::FirMethod::direct) return 2.0 * taps;
  double n = long_signal_fft_block(taps, context);
  double transforms = 2 * 2.5 * n * std::log2(n) + 6 * n / 2;
  if (context.target.kind != TargetKind::cuda || 2 * static_cast<double>(taps) <= n)
    return transforms / (n - static_cast<double>(taps) + 1);
  // Partitioned (the GPU's longest FIRs): per segment of n / 2 new samples, the transforms
  // and a complex multiply-add per bin and partition.
  double partitions = std::ceil(static_cast<double>(taps) / (n / 2));
  return (transforms + 8 * partitions * (n / 2 + 1)) / (n / 2);
}

double decay_tolerance(DType signal) { return signal == DType::f32 ? 1e-10 : 1e-19; }

double decay_samples(double r, DType dtype) {
  if (r >= 1 || !std::isfinite(r)) return INFINITY;
  if (r <= 0) return 1;
  return std::ceil(std::log(decay_tolerance(dtype)) / std::log(r));
}

namespace {

std::string plural(long long n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// Why a signal of `length` samples is too short for time chunks on `total` channels in
// `lanes` lanes (nullopt: long enough). Where the channels leave half the lanes or more idle,
// chunks fill them from chunked_min_samples; where they fill more, chunks gain at most
// lanes / total and must be longer (chunked_busy_lanes_min_samples).
std::optional<std::string> too_short_for_chunks(std::optional<std::int64_t> length, int total, int lanes,
                                                const StrategyThresholds& t) {
  const bool busy = 2 * static_cast<std::int64_t>(total) > lanes;
  const std::int64_t least = busy ? std::max(t.chunked_min_samples, t.chunked_busy_lanes_min_samples)
                                  : t.chunked_min_samples;
  if (length && *length >= least) return std::nullopt;
  return busy && least > t.chunked_min_samples ? "the signal is not known to be long (chunked_busy_lanes_min_samples)"
                                               : "the signal is not known to be long (chunked_min_samples)";
}

Schedule choose_iir(const ChainSummary& chain, int channels, const PassContext& c) {
  const int sections = chain.sections;
  const StrategyThresholds& t = c.thresholds;
  int lanes = c.target.lanes(c.binding.dtype);
  int batch = std::max(1, c.binding.batch);
  int total = channels * batch;  // a batch lays every signal's channels across the lanes
  std::string who = batch > 1 ? fmt::format("{} x {}", batch, plural(channels, "channel"))
                              : plural(channels, "channel");
  std::optional<std::int64_t> length = c.binding.length_samples;
  std::string how_long =
      length && c.binding.sample_rate_hz
          ? fmt::format(", {:g} s", static_cast<double>(*length) / *c.binding.sample_rate_hz)
          : "";

  if (c.target.kind == TargetKind::cuda) {
    const long long fill = t.gpu_min_channels > 0 ? t.gpu_min_channels : c.target.gpu.busy_threads();
    if (total >= fill)
      return {ir::IirStrategy::gpu_thread_per_channel, 0, {}, 0,
              fmt::format("{} fill the GPU ({} threads at once): one GPU thread per channel", who, fill)};
    if (chain.fused_loop)
      return {ir::IirStrategy::gpu_thread_per_channel, 0, {}, 0,
              fmt::format("{}: one GPU thread per channel (a loop: each sample needs what the loop wrote a "
                          "delay ago, so time cannot be split; a batch gives it width)", who)};
    if (!chain.gpu_scannable)  // a delay, FIR or dynamics stage keeps time whole
      return {ir::IirStrategy::gpu_thread_per_channel, 0, {}, 0,
              fmt::format("{}: one GPU thread per channel (a delay, FIR or dynamics stage, or a section "
                          "after a clip or tanh: time cannot be split; a batch gives it width)", who)};
    const int chunk = t.gpu_chunk_length > 0 ? t.gpu_chunk_length : choose_gpu_chunk(total, length, c.target.gpu);
    std::string reason = fmt::format("{}{}: fewer than the GPU's {} threads, chunked scan over time, L={}", who,
                                     how_long, fill, chunk);
    // Off by default (measured no faster on an H200: passes::StrategyThresholds); where set,
    // a thread's steps overlap instead of each waiting on the last.
    if (chain.steps >= 2 && chain.steps <= t.gpu_wavefront_max_steps) {
      const int group = ir::wavefront_group(chain.steps);
      return {ir::IirStrategy::gpu_chunked_wavefront, chunk, {}, 0,
              reason + (group == 1 ? fmt::format("; a wavefront of {} steps in each chunk", chain.steps)
                                   : fmt::format("; a wavefront of {} steps in {} stages of {} in each chunk",
                                                 chain.steps, ir::wavefront_stages(chain.steps), group))};
    }
    return {ir::IirStrategy::gpu_chunked_scan, chunk, {}, 0, reason};
  }
  if (total >= lanes)
    return {ir::IirStrategy::channel_lanes, 0, {}, 0,
            fmt::format("{} fill {} {} lanes", who, lanes, name(c.binding.dtype))};
  // Time chunks fill every lane. Each chunk's start is then corrected over the filter's
  // decay; with `lanes` chunks that costs about ratio x lanes^2 x decay against the vector
  // work over the whole signal, so the signal must be at least that long. Where it is longer,
  // chunks aim at lanes x decay or more, which keeps the corrections' share small: a chunk
  // only just longer than its decay would be corrected over most of its length (W1's chain on
  // one channel x 60 s took 1.2x as long in chunks of 1.4 x decay).
  double decay = decay_samples(chain.max_pole_radius, chain.signal.value_or(c.binding.dtype));
  double weighted = t.chunk_decay_ratio > 0 ? t.chunk_decay_ratio * decay : 0;  // 0 x inf is 0
  double lanes2 = static_cast<double>(lanes) * lanes;
  if (chain.linear && std::isfinite(decay) && !too_short_for_chunks(length, total, lanes, t) &&
      static_cast<double>(*length) >= lanes2 * weighted) {
    const double longer_than_decay = t.chunk_decay_ratio > 0 ? lanes * decay : 0;
    int chunk = static_cast<int>(
        std::min<double>(std::max<double>(t.chunk_length, std::ceil(longer_than_decay)), 1 << 30));
    return {ir::IirStrategy::chunked_scan, chunk, {}, 0,
            fmt::format("{}{}: time chunks as SIMD lanes, L={}", who, how_long,
                        cpu_time_chunks(total, *length, lanes, chunk).length)};
  }
  if (total >= t.lane_fill * lanes)
    return {ir::IirStrategy::channel_lanes, 0, {}, 0,
            fmt::format("{} fill {} of {} {} lanes", who, total, lanes, name(c.binding.dtype))};
  const bool partial_vector = c.binding.dtype == DType::f64 ? chain.partial_lanes_vectorize_f64
                                                            : chain.partial_lanes_vectorize_f32;
  if (partial_vector && t.partial_lanes_min_channels > 0 && total >= t.partial_lanes_min_channels)
    return {ir::IirStrategy::channel_lanes, 0, {}, 0,
            fmt::format("{} fill {} of {} {} lanes (one vector, the others idle)", who, total, lanes,
                        name(c.binding.dtype))};
  if (sections >= 2)
    return {ir::IirStrategy::section_wavefront, 0, {}, 0,
            fmt::format("{}, {}: section wavefront hides the recurrence latency", who,
                        plural(sections, "section"))};
  return {ir::IirStrategy::sequential, 0, {}, 0, fmt::format("{}, 1 section: sequential", who)};
}

}  // namespace

std::string live_chain_shape(const ir::Chain& chain) {
  std::string shape;
  for (const ir::Stage& stage : chain.stages) {
    shape += ' ' + std::to_string(stage.index());
    if (const auto* sos = std::get_if<ir::SosCascade>(&stage)) shape += 's' + std::to_string(sos->sections.size());
    if (const auto* fir = std::get_if<ir::FirFilter>(&stage)) shape += 't' + std::to_string(fir->taps.size());
  }
  return shape;
}

bool slow_float64(const Target& target) {
  return target.kind == TargetKind::cuda && target.gpu.f64_rate < kSlowFloat64Rate;
}

bool float_pairs_pay(const PassContext& context) {
  return context.target.kind == TargetKind::cuda &&
         context.target.gpu.f64_rate <= context.thresholds.gpu_float_pairs_max_f64_rate;
}

bool radius_decides_precision(const ChainSummary& chain, const PassContext& context) {
  // A GPU with slow float64 pays 16-64x for float64 state: there the measured float32 error
  // decides alone where it was measured (a live chain's only at sampled values: its radius
  // over the range still decides).
  const bool measured_only = slow_float64(context.target) && chain.float32_error > 0 && !chain.live;
  return !measured_only && chain.sections > 0 && chain.max_pole_radius >= context.thresholds.f64_state_pole_radius;
}

bool cpu_runs_in_pieces(const ir::Graph& graph, int extra_steps) {
  const auto order = ir::loop_order(graph);
  int steps = extra_steps;  // the runtime's ExecutionPlan steps: every node but the inputs and outputs
  bool feedback_loop = false, fused_loop = false;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::Node& node = graph.node(id);
    if (ir::holds<ir::Input>(node) || ir::holds<ir::Output>(node)) continue;
    ++steps;
    feedback_loop = feedback_loop || (order && order->loop[id] >= 0);
    if (const auto* chain = std::get_if<ir::Chain>(&node.op)) fused_loop = fused_loop || ir::has_loop(chain->stages);
  }
  return feedback_loop || (fused_loop && steps > 2);
}

void measure_float32_error(const ir::Chain& chain, ChainSummary& summary, const PassContext& context) {
  const StrategyThresholds& t = context.thresholds;
  if (context.binding.dtype != DType::f32 || summary.sections == 0 || t.f64_state_pole_radius > 1) return;
  if (summary.max_pole_radius >= t.f64_state_pole_radius && !slow_float64(context.target)) return;
  std::vector<design::Section> cascade;
  for (const ir::Stage& stage : chain.stages)
    if (const auto* sos = std::get_if<ir::SosCascade>(&stage))
      cascade.insert(cascade.end(), sos->sections.begin(), sos->sections.end());
  summary.float32_error = float32_state_error(cascade);
}

ir::StatePrecision choose_state_precision(const ChainSummary& chain, const PassContext& context) {
  const StrategyThresholds& t = context.thresholds;
  bool close = radius_decides_precision(chain, context);
  bool lossy = chain.sections > 0 && t.f64_state_pole_radius <= 1 && chain.float32_error > t.f64_state_error;
  return context.binding.dtype == DType::f32 && (close || lossy) ? ir::StatePrecision::f64
                                                                 : ir::StatePrecision::signal;
}

Schedule choose_schedule(const ChainSummary& chain, int channels, const PassContext& context) {
  const std::size_t max_taps = chain.max_taps;
  Schedule s;
  if (chain.sections > 0 || chain.recursions > 0) s = choose_iir(chain, std::max(channels, 1), context);
  else s.reason = "no IIR stage";
  if (max_taps > 0) {
    // A chain with sections runs in a compiled kernel (fuse-chains keeps a FIR that runs by
    // FFT in a chain of its own, by the signal type's rule), so its FIRs are direct, also where
    // it computes in float64 inside a float32 signal and `context` is not the signal's.
    s.fir_method = chain.sections > 0 ? ir::FirMethod::direct : fir_method_for(max_taps, context);
    // A GPU FFT block computes a whole segment; a loop's passes are shorter.
    const bool short_passes = chain.in_loop && context.target.kind == TargetKind::cuda &&
                              s.fir_method == ir::FirMethod::fft_overlap_save;
    if (short_passes) s.fir_method = ir::FirMethod::direct;
    if (s.fir_method == ir::FirMethod::fft_overlap_save) {
      s.fft_block = fft_block_for(max_taps, context);
      if (context.target.kind == TargetKind::cpu && static_cast<std::size_t>(s.fft_block) <= max_taps)
        s.reason += fmt::format("; FIR {} taps in calls of up to {}: partitioned, the first {} taps direct, "
                                "the rest by FFTs of {} points",
                                max_taps, plural(context.binding.length_samples.value_or(0), "sample"),
                                s.fft_block / 2, s.fft_block);
      else s.reason += fmt::format("; FIR {} taps: FFT overlap-save, block {}", max_taps, s.fft_block);
    } else {
      s.reason += fmt::format("; FIR {} taps: direct{}", max_taps,
                              short_passes ? ": inside a loop, whose passes are shorter than an FFT segment" : "");
    }
  }
  return s;
}

bool fir_time_lanes(const ir::Chain& chain, DType signal, std::int64_t channels) {
  const DType computes = ir::float64_state(chain.state_precision) ? DType::f64 : signal;
  if (chain.strategy != ir::IirStrategy::none || computes != signal || !ir::fir_and_memoryless(chain.stages))
    return false;
  std::size_t taps = 0;
  for (const ir::Stage& stage : chain.stages)
    if (const auto* fir = std::get_if<ir::FirFilter>(&stage)) taps += fir->taps.size();
  static const int f64_lanes = host_target().lanes(DType::f64);  // asked on every threaded run
  if (signal == DType::f64 && taps <= kFirChannelLanesMaxTaps && channels >= f64_lanes) return false;
  return taps <= kFirTimeLanesMaxTaps;
}

TimeChunks cpu_time_chunks(std::int64_t channels, std::int64_t samples, int lanes, int target) {
  const std::int64_t fill = lanes / std::gcd<std::int64_t>(std::max(lanes, 1), std::max<std::int64_t>(channels, 1));
  const std::int64_t per_lane = std::max<std::int64_t>(
      1, std::llround(static_cast<double>(samples) / (static_cast<double>(fill) * std::max(target, 1))));
  const std::int64_t k = fill * per_lane;
  if (k < 2 || samples / k < 256) return {1, samples};
  return {k, samples / k};
}

Schedule choose_loop_chunks(const ChainSummary& chain, int channels, std::int64_t block, const PassContext& c) {
  const StrategyThresholds& t = c.thresholds;
  const int lanes = c.target.lanes(c.binding.dtype);
  const int total = std::max(channels, 1) * std::max(1, c.binding.batch);
  const std::optional<std::int64_t> length = c.binding.length_samples;
  auto whole = [](std::string why) { return Schedule{ir::IirStrategy::none, 0, {}, 0, std::move(why)}; };
  if (c.target.kind != TargetKind::cpu) return whole("time chunks in loops are for the CPU");
  if (!chain.linear) return whole("not a linear filter: time cannot be split");
  if (chain.sections == 0) return whole("no filter to split in time");
  if (total >= lanes || lanes < 2) return whole(fmt::format("{} channels fill the lanes", total));
  if (auto too_short = too_short_for_chunks(length, total, lanes, t)) return whole(*too_short);
  // As few chunks per channel as fill the lanes (runtime/chunked_scan.cpp): each costs a fix-up.
  const int per_channel = lanes / std::gcd(lanes, total);
  const std::int64_t chunk = (block + per_channel - 1) / per_channel;
  const double decay = decay_samples(chain.max_pole_radius, chain.signal.value_or(c.binding.dtype));
  const double weighted = t.chunk_decay_ratio > 0 ? t.chunk_decay_ratio * decay : 0;  // 0 x inf is 0
  if (chunk < kMinLoopChunk || !std::isfinite(weighted) || static_cast<double>(chunk) < lanes * weighted)
    return whole(fmt::format("blocks of {} samples are too short for time chunks of the filter (its decay: {:g} samples)",
                             block, decay));
  return Schedule{ir::IirStrategy::chunked_scan, static_cast<int>(std::min<std::int64_t>(chunk, 1 << 30)), {}, 0,
                  fmt::format("{} channel{} in a loop's blocks of {} samples: each block's time chunks as SIMD "
                              "lanes, L={}",
                              total, total == 1 ? "" : "s", block, chunk)};
}

Schedule choose_loop_body_chunks(const std::vector<ir::Stage>& stages, int channels, std::int64_t block,
                                 const PassContext& context) {
  ir::Chain body;
  for (const ir::Stage& stage : stages)
    if (!std::holds_alternative<ir::LoopRead>(stage) && !std::holds_alternative<ir::LoopWrite>(stage))
      body.stages.push_back(stage);
  ChainSummary summary = summarize(body);
  summary.signal = context.binding.dtype;
  PassContext computing = context;
  if (choose_state_precision(summary, context) == ir::StatePrecision::f64) computing.binding.dtype = DType::f64;
  return choose_loop_chunks(summary, channels, block, computing);
}

int choose_gpu_chunk(long long channels, std::optional<std::int64_t> length, const GpuProperties& gpu) {
  if (!length) return 1024;
  for (long long chunk : {1024, 512})
    if (channels * ((*length + chunk - 1) / chunk) >= gpu.busy_threads()) return static_cast<int>(chunk);
  return 256;
}

ChainSummary summarize(const ir::Chain& chain) {
  ChainSummary summary;
  summary.gpu_scannable = ir::scanned_prefix(chain.stages) > 0;
  summary.steps = ir::wavefront_steps(chain.stages);
  summary.partial_lanes_vectorize_f32 = ir::partial_lanes_vectorize(chain.stages, false);
  summary.partial_lanes_vectorize_f64 = ir::partial_lanes_vectorize(chain.stages, true);
  summary.fused_loop = ir::has_loop(chain.stages);
  for (const ir::Stage& stage : chain.stages) {
    summary.linear = summary.linear && !summary.fused_loop &&
                     (std::holds_alternative<ir::SosCascade>(stage) || std::holds_alternative<ir::Gain>(stage));
    if (auto* sos = std::get_if<ir::SosCascade>(&stage)) {
      summary.sections += static_cast<int>(sos->sections.size());
      summary.max_pole_radius = std::max(summary.max_pole_radius, design::max_pole_radius(sos->sections));
    }
    if (auto* fir = std::get_if<ir::FirFilter>(&stage)) summary.max_taps = std::max(summary.max_taps, fir->taps.size());
    if (std::holds_alternative<ir::Dynamics>(stage)) ++summary.recursions;
  }
  return summary;
}

}  // namespace fxc::passes
