// SPDX-License-Identifier: Apache-2.0
// What the BlockExecutor tests share (block_executor_test.cpp in the unit binary and
// realtime_alloc_test.cpp in its own): graphs compiled to force each execution strategy, in
// two sets of values of the same shape, and helpers that run signals through block by block.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "expected_text.h"
#include "frontend/dsl.h"
#include "ir/hash.h"
#include "passes/pipeline.h"
#include "runtime/block_executor.h"
#include "runtime/cpu_executor.h"
#include "driver/kernel_cache.h"
#include "worse.h"

namespace fxc::test {

struct Compiled {
  ir::Graph scheduled;
  std::shared_ptr<const codegen::CpuKernels> kernels;
};

/// `g` through the pipeline for `channels` and `dtype`, scheduled for calls of `length`
/// samples, and its kernels (memory cache only).
inline Compiled compile_graph(const ir::Graph& g, int channels, DType dtype, std::int64_t length,
                              const passes::StrategyThresholds& thresholds = {}) {
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, channels, dtype}};
  context.binding.length_samples = length;
  context.thresholds = thresholds;
  auto scheduled = passes::run_pipeline(g, context);
  REQUIRE_MESSAGE(scheduled, diags.str());
  static KernelCache cache("");
  auto kernels = cache.cpu_kernels(*scheduled, diags);
  REQUIRE(kernels);
  return {std::move(*scheduled), *kernels};
}

/// Uniform noise in [-1, 1], one signal per input.
inline std::vector<Signal> noise_signals(std::size_t inputs, int channels, std::size_t samples, DType dtype,
                                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Signal> out;
  for (std::size_t i = 0; i < inputs; ++i) {
    Signal s(static_cast<std::size_t>(channels), samples);
    for (int c = 0; c < channels; ++c)
      for (double& v : s.f64(static_cast<std::size_t>(c))) v = u(rng);
    out.push_back(s.converted(dtype));
  }
  return out;
}

inline const void* data_of(const Signal& s, std::size_t c) {
  return s.dtype() == DType::f32 ? static_cast<const void*>(s.f32(c).data()) : s.f64(c).data();
}
inline void* data_of(Signal& s, std::size_t c) {
  return s.dtype() == DType::f32 ? static_cast<void*>(s.f32(c).data()) : s.f64(c).data();
}

/// Planar pointer arrays into signals, `offset` samples in, as BlockExecutor::process takes.
struct Pointers {
  std::vector<std::vector<const void*>> in;
  std::vector<std::vector<void*>> out;
  std::vector<const void* const*> inputs;
  std::vector<void* const*> outputs;

  Pointers(const std::vector<Signal>& ins, std::vector<Signal>& outs, std::size_t offset = 0) {
    for (const Signal& s : ins) {
      auto& a = in.emplace_back();
      for (std::size_t c = 0; c < s.channels(); ++c)
        a.push_back(static_cast<const std::byte*>(data_of(s, c)) + offset * size_of(s.dtype()));
    }
    for (Signal& s : outs) {
      auto& a = out.emplace_back();
      for (std::size_t c = 0; c < s.channels(); ++c)
        a.push_back(static_cast<std::byte*>(data_of(s, c)) + offset * size_of(s.dtype()));
    }
    for (auto& a : in) inputs.push_back(a.data());
    for (auto& a : out) outputs.push_back(a.data());
  }
  /// Moves every pointer `samples` samples on (the next block).
  void advance(std::size_t samples, DType dtype) {
    std::size_t bytes = samples * size_of(dtype);
    for (auto& a : in)
      for (auto& p : a) p = static_cast<const std::byte*>(p) + bytes;
    for (auto& a : out)
      for (auto& p : a) p = static_cast<std::byte*>(p) + bytes;
  }
};

/// Zero signals shaped as `scheduled`'s outputs.
inline std::vector<Signal> output_signals(const ir::Graph& scheduled, std::size_t samples) {
  std::vector<Signal> out;
  DType dtype = scheduled.node(scheduled.inputs()[0]).type.dtype;
  for (ir::NodeId id : scheduled.outputs())
    out.emplace_back(static_cast<std::size_t>(scheduled.node(id).type.channels), samples, dtype);
  return out;
}

/// Block lengths in [1, max_block] (and one last shorter one) that add up to `total`.
inline std::vector<std::size_t> random_block_lengths(std::size_t total, std::size_t max_block, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::size_t> sizes;
  for (std::size_t left = total; left > 0;) {
    std::size_t size = std::min(left, std::uniform_int_distribution<std::size_t>(1, max_block)(rng));
    sizes.push_back(size);
    left -= size;
  }
  return sizes;
}

/// `inputs` through `executor` in blocks of `sizes`, straight from and into whole signals.
inline std::vector<Signal> run_in_blocks(BlockExecutor& executor, const ir::Graph& scheduled,
                                         const std::vector<Signal>& inputs, const std::vector<std::size_t>& sizes) {
  std::size_t total = 0;
  for (std::size_t n : sizes) total += n;
  std::vector<Signal> outputs = output_signals(scheduled, total);
  Pointers p(inputs, outputs);
  for (std::size_t n : sizes) {
    executor.process(p.inputs, p.outputs, n);
    p.advance(n, inputs[0].dtype());
  }
  return outputs;
}

inline bool bit_equal(const Signal& a, const Signal& b) {
  if (a.channels() != b.channels() || a.samples() != b.samples() || a.dtype() != b.dtype()) return false;
  for (std::size_t c = 0; c < a.channels(); ++c)
    if (a.samples() > 0 && std::memcmp(data_of(a, c), data_of(b, c), a.samples() * size_of(a.dtype())) != 0)
      return false;
  return true;
}

/// max |a - b| / max |b| over every channel.
inline double relative_difference(const Signal& a, const Signal& b) {
  double diff = 0, peak = 0;
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t n = 0; n < a.samples(); ++n) {
      diff = worse(diff, std::abs(a.at(c, n) - b.at(c, n)));
      peak = std::max(peak, std::abs(b.at(c, n)));
    }
  return peak > 0 ? diff / peak : diff;
}

/// A graph that makes the pipeline pick one execution strategy, in two sets of values
/// (variant 0 and 1) of the same shape, delays included.
struct StrategyCase {
  std::string name;
  std::function<ir::Graph(int variant)> graph;
  int channels;
  DType dtype;
  passes::StrategyThresholds thresholds;
  ir::IirStrategy strategy;  ///< some chain runs this way (none: no IIR chain is checked)
  ir::FirMethod fir;         ///< some chain's FIR method (none: not checked)
  bool exact = true;  ///< bit-identical to the whole signal (all but FFT convolution)
};

inline passes::StrategyThresholds lane_fill(double fill) {
  passes::StrategyThresholds t;
  t.lane_fill = fill;
  return t;
}

inline std::vector<StrategyCase> strategy_cases() {
  using namespace fxc::literals;
  using S = ir::IirStrategy;
  using F = ir::FirMethod;
  std::vector<StrategyCase> cases;
  // One section on one channel, never across lanes: sequential. A delay whose length the
  // second values change (the line restarts), and a gain.
  cases.push_back({"sequential f32 with a delay",
                   [](int v) {
                     return make_graph("seq", {output("y", input("x", 1) | butter(2, v ? 2_kHz : 3_kHz) |
                                                                delay(v ? 11_samples : 7_samples) |
                                                                gain(v ? 0.5 : 0.8))});
                   },
                   1, DType::f32, lane_fill(2), S::sequential, F::none, true});
  // W4's chain on one channel: six sections, pipelined.
  cases.push_back({"section wavefront f64 (W4's chain)",
                   [](int v) {
                     return make_graph("wave", {output("y", input("x", 1) | butter(4, v ? 100_Hz : 80_Hz, highpass) |
                                                                 butter(8, v ? 10_kHz : 12_kHz))});
                   },
                   1, DType::f64, lane_fill(2), S::section_wavefront, F::none, true});
  // W4's chain on two float32 channels: poles near the unit circle, so float64 state.
  cases.push_back({"channel lanes f32, float64 state (W7's chain)",
                   [](int v) {
                     return make_graph("lanes", {output("y", input("x", 2) | butter(4, v ? 100_Hz : 80_Hz, highpass) |
                                                                  butter(8, v ? 10_kHz : 12_kHz))});
                   },
                   2, DType::f32, lane_fill(0), S::channel_lanes, F::none, true});
  // A direct FIR beside a delay, mixed by a sum (fan-out from the input), two outputs.
  cases.push_back({"direct FIR f32 with a mix and two outputs",
                   [](int v) {
                     Flow x = input("x", 2);
                     Flow wet = x | firwin(31, {v ? 3000.0 : 2000.0}) | tanh();
                     Flow mix = (v ? 0.6 : 0.7) * wet + (v ? 0.4 : 0.3) * (x | delay(v ? 5_samples : 9_samples));
                     return make_graph("fir", {output("y", mix), output("wet", wet)});
                   },
                   2, DType::f32, {}, S::none, F::direct, true});
  cases.push_back({"direct FIR f64 with sections",
                   [](int v) {
                     return make_graph("fir64", {output("y", input("x", 3) | fir({0.5, v ? 0.3 : 0.25, 0.25}) |
                                                                 butter(2, v ? 500_Hz : 700_Hz))});
                   },
                   3, DType::f64, {}, S::none, F::direct, true});
  // 151 taps and a gain on float64: direct, in time lanes (passes::fir_time_lanes), whose
  // calls run their last few samples through the ring, in the same order.
  cases.push_back({"time lanes FIR f64",
                   [](int v) {
                     return make_graph("lanes64", {output("y", input("x", 2) | firwin(151, {v ? 3000.0 : 2000.0}) |
                                                                   gain(v ? 0.5 : 2.0))});
                   },
                   2, DType::f64, {}, S::none, F::direct, true});
  // 401 taps on float32: FFT overlap-save, whose rounding depends on where blocks begin.
  cases.push_back({"FFT FIR f32",
                   [](int v) {
                     return make_graph("fft", {output("y", input("x", 1) | firwin(401, {v ? 3000.0 : 2000.0}))});
                   },
                   1, DType::f32, {}, S::none, F::fft_overlap_save, false});
  // The same on float64: fxc's own FFT (runtime/real_fft.h).
  cases.push_back({"FFT FIR f64",
                   [](int v) {
                     return make_graph("fft64", {output("y", input("x", 2) | firwin(401, {v ? 3000.0 : 2000.0}))});
                   },
                   2, DType::f64, {}, S::none, F::fft_overlap_save, false});
  return cases;
}

/// The case's graph (`variant` values) compiled for blocks of `max_block` samples; checks the
/// case's strategy was chosen.
inline Compiled compile_case(const StrategyCase& c, int variant, std::size_t max_block) {
  Compiled compiled = compile_graph(c.graph(variant), c.channels, c.dtype, static_cast<std::int64_t>(max_block),
                                    c.thresholds);
  bool strategy = c.strategy == ir::IirStrategy::none, fir = c.fir == ir::FirMethod::none;
  for (const ir::Node& n : compiled.scheduled.nodes())
    if (const auto* chain = std::get_if<ir::Chain>(&n.op)) {
      strategy |= chain->strategy == c.strategy;
      fir |= chain->fir_method == c.fir;
    }
  CHECK_MESSAGE(strategy, c.name, ": the strategy was not chosen");
  CHECK_MESSAGE(fir, c.name, ": the FIR method was not chosen");
  return compiled;
}

/// Maxima for every delay of `scheduled`: `cells` samples each.
inline std::map<ir::NodeId, std::vector<std::int64_t>> all_delays_up_to(const ir::Graph& scheduled, std::int64_t cells) {
  std::map<ir::NodeId, std::vector<std::int64_t>> maxima;
  for (ir::NodeId id = 0; id < scheduled.size(); ++id)
    if (const auto* chain = std::get_if<ir::Chain>(&scheduled.node(id).op))
      for (const ir::Stage& s : chain->stages)
        if (std::holds_alternative<ir::Delay>(s)) maxima[id].push_back(cells);
  return maxima;
}

}  // namespace fxc::test
