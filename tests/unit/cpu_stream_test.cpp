// SPDX-License-Identifier: Apache-2.0
// Streams: blocks of any size give the whole signal's output; state can be reset, saved and
// restored; values change between blocks without recompiling.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "frontend/dsl.h"
#include "ir/hash.h"
#include "passes/pipeline.h"
#include "random_graphs.h"
#include "runtime/cpu_executor.h"
#include "runtime/kernel_cache.h"
#include "runtime/reference_interpreter.h"

namespace fxc {
namespace {

using namespace fxc::literals;

struct Setup {
  ir::Graph scheduled;
  std::shared_ptr<const codegen::CpuKernels> kernels;
};

Setup compile(const ir::Graph& g, int channels, DType dtype, std::int64_t length,
              const passes::StrategyThresholds& thresholds = {}) {
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, channels, dtype}};
  context.binding.length_samples = length;
  context.thresholds = thresholds;
  auto scheduled = passes::run_pipeline(g, context);
  REQUIRE_MESSAGE(scheduled, diags.str());
  KernelCache cache("");
  auto kernels = cache.cpu_kernels(*scheduled, diags);
  REQUIRE_MESSAGE(kernels, kernels.error());
  return {std::move(*scheduled), *kernels};
}

std::vector<Signal> noise(std::size_t inputs, int channels, std::size_t samples, DType dtype,
                          std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Signal> out;
  for (std::size_t i = 0; i < inputs; ++i) {
    Signal s(channels, samples);
    for (int c = 0; c < channels; ++c)
      for (double& v : s.f64(c)) v = u(rng);
    out.push_back(s.converted(dtype));
  }
  return out;
}

// Cuts `signals` into blocks of `sizes` and runs them through `stream`, placing each block's
// outputs into the whole.
std::vector<Signal> run_blocks(CpuStream& stream, const std::vector<Signal>& signals,
                               const std::vector<std::size_t>& sizes) {
  std::size_t total = 0;
  for (std::size_t size : sizes) total += size;
  std::vector<Signal> whole;
  std::size_t start = 0;
  for (std::size_t size : sizes) {
    std::vector<Signal> block;
    for (const Signal& s : signals) {
      Signal b(s.channels(), size, s.dtype());
      for (std::size_t c = 0; c < s.channels(); ++c)
        for (std::size_t n = 0; n < size; ++n)
          if (s.dtype() == DType::f32) b.f32(c)[n] = s.f32(c)[start + n];
          else b.f64(c)[n] = s.f64(c)[start + n];
      block.push_back(std::move(b));
    }
    auto out = stream.process(block);
    REQUIRE_MESSAGE(out, out.error());
    if (whole.empty())
      for (const Signal& o : *out) whole.emplace_back(o.channels(), total, o.dtype());
    for (std::size_t k = 0; k < out->size(); ++k)
      for (std::size_t c = 0; c < whole[k].channels(); ++c)
        for (std::size_t n = 0; n < size; ++n)
          if (whole[k].dtype() == DType::f32) whole[k].f32(c)[start + n] = (*out)[k].f32(c)[n];
          else whole[k].f64(c)[start + n] = (*out)[k].f64(c)[n];
    start += size;
  }
  return whole;
}

bool bit_equal(const Signal& a, const Signal& b) {
  if (a.channels() != b.channels() || a.samples() != b.samples() || a.dtype() != b.dtype()) return false;
  for (std::size_t c = 0; c < a.channels(); ++c) {
    const void* x = a.dtype() == DType::f32 ? static_cast<const void*>(a.f32(c).data()) : a.f64(c).data();
    const void* y = b.dtype() == DType::f32 ? static_cast<const void*>(b.f32(c).data()) : b.f64(c).data();
    if (std::memcmp(x, y, a.samples() * size_of(a.dtype())) != 0) return false;
  }
  return true;
}

TEST_CASE("blocks of any size give the whole signal's output, bit for bit (random graphs)") {
  std::mt19937 rng(11);
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    CAPTURE(seed);
    ir::Graph g = test::random_graph(seed);
    int channels = g.node(g.inputs()[0]).type.channels;
    for (DType dtype : {DType::f64, DType::f32}) {
      // Bound for short blocks: sequential, lanes or wavefront, whose arithmetic per sample
      // does not depend on where blocks begin. Long FIRs (FFT) are excluded by f64 here and
      // by the few taps of these graphs in f32 (checked below).
      Setup s = compile(g, channels, dtype, 64);
      bool fft = false;
      for (const ir::Node& n : s.scheduled.nodes())
        if (auto* c = std::get_if<ir::Chain>(&n.op)) fft |= c->fir_method == ir::FirMethod::fft_overlap_save;
      std::vector<Signal> inputs = noise(g.inputs().size(), channels, 700, dtype, seed);
      auto whole = execute_cpu(s.scheduled, *s.kernels, inputs);
      REQUIRE(whole);
      std::vector<std::size_t> sizes;
      for (std::size_t left = 700; left > 0;) {
        std::size_t size = std::min<std::size_t>(left, std::uniform_int_distribution<std::size_t>(0, 97)(rng));
        sizes.push_back(size);
        left -= size;
      }
      CpuStream stream(s.scheduled, s.kernels);
      std::vector<Signal> blocks = run_blocks(stream, inputs, sizes);
      for (std::size_t k = 0; k < whole->size(); ++k)
        if (!fft) CHECK(bit_equal(blocks[k], (*whole)[k]));
    }
  }
}

TEST_CASE("chunked scan and FFT convolution streams stay within their bounds") {
  Flow x = input("x", 1);
  passes::StrategyThresholds chunky;
  chunky.chunked_min_samples = 0;
  chunky.chunk_length = 1024;
  chunky.chunk_decay_ratio = 0;
  ir::Graph iir = make_graph("iir", {output("y", x | butter(4, 80_Hz, highpass) | butter(6, 9_kHz))});
  Setup chunked = compile(iir, 1, DType::f64, 20000, chunky);
  std::vector<Signal> in = noise(1, 1, 20000, DType::f64, 4);
  CpuStream stream(chunked.scheduled, chunked.kernels);
  std::vector<Signal> got = run_blocks(stream, in, {9000, 0, 1, 10999});
  DiagnosticEngine diags;
  auto want = run_reference(iir, 48000, in, diags);
  REQUIRE(want);
  double err = 0, ref = 0;
  for (std::size_t n = 0; n < 20000; ++n) {
    err = std::max(err, std::abs(got[0].at(0, n) - (*want)[0].at(0, n)));
    ref = std::max(ref, std::abs((*want)[0].at(0, n)));
  }
  CHECK(err <= 1e-10 * ref);  // float64 carries: exact to rounding

  ir::Graph fir = make_graph("fir", {output("y", x | firwin(201, {2000}))});
  Setup fft = compile(fir, 1, DType::f32, 20000);
  std::vector<Signal> in32 = noise(1, 1, 20000, DType::f32, 5);
  auto whole = execute_cpu(fft.scheduled, *fft.kernels, in32);
  REQUIRE(whole);
  CpuStream fir_stream(fft.scheduled, fft.kernels);
  std::vector<Signal> blocks = run_blocks(fir_stream, in32, {64, 5000, 3, 14933});
  double max_diff = 0;
  for (std::size_t n = 0; n < 20000; ++n)
    max_diff = std::max(max_diff, std::abs(blocks[0].at(0, n) - (*whole)[0].at(0, n)));
  CHECK(max_diff <= 1e-5);  // float32 FFT rounding differs with the block grid
}

TEST_CASE("ten minutes through a high-Q low-frequency filter stay within bound") {
  // 5 minutes of noise, then 5 of silence (the state decays through the denormal range), in
  // one-second blocks, float32 signal: the chain keeps float64 state (pole radius 0.99998),
  // so the whole run stays within 1e-6 of the reference. Its speed through the silence is
  // measured by `fxc_accuracy --long` (docs/errors.md), not here.
  Flow x = input("x", 1);
  ir::Graph g = make_graph("long", {output("y", x | peaking(40_Hz, 30, 12_dB) |
                                                    butter(2, 20_Hz, highpass))});
  // Under AddressSanitizer (the CI's Debug build) the float64 reference alone takes minutes
  // for 10 minutes of audio: one minute there, the full ten in every other build.
#if defined(__SANITIZE_ADDRESS__)
  const std::size_t block = 48000, blocks = 60;
#else
  const std::size_t block = 48000, blocks = 600;
#endif
  Setup s = compile(g, 1, DType::f32, block);
  for (const ir::Node& n : s.scheduled.nodes())
    if (auto* chain = std::get_if<ir::Chain>(&n.op))
      CHECK(chain->state_precision == ir::StatePrecision::f64);
  Signal whole(1, block * blocks, DType::f32);
  std::vector<Signal> first = noise(1, 1, block * blocks / 2, DType::f32, 11);
  std::copy(first[0].f32(0).begin(), first[0].f32(0).end(), whole.f32(0).begin());
  std::vector<Signal> inputs;
  inputs.push_back(whole);
  CpuStream stream(s.scheduled, s.kernels);
  auto got = run_blocks(stream, inputs, std::vector<std::size_t>(blocks, block));
  DiagnosticEngine diags;
  auto want = run_reference(g, 48000, inputs, diags);
  REQUIRE_MESSAGE(want, diags.str());
  double err = 0, ref = 0;
  for (std::size_t n = 0; n < whole.samples(); ++n) {
    double d = got[0].at(0, n) - (*want)[0].at(0, n);
    err += d * d;
    ref += (*want)[0].at(0, n) * (*want)[0].at(0, n);
  }
  double relative = std::sqrt(err / ref);
  MESSAGE((blocks / 60) << " minute(s), relative RMS error: " << relative);
  CHECK(relative <= 1e-6);
  double last = 0;
  for (std::size_t n = whole.samples() - block; n < whole.samples(); ++n)
    last = std::max(last, std::abs(got[0].at(0, n)));
  // After five minutes of silence the output has decayed, and is flushed rather than left
  // denormal (one minute is too short for this).
  if (blocks == 600) CHECK(last <= 1e-30);
}

TEST_CASE("reset, snapshot and restore") {
  Flow x = input("x", 2);
  ir::Graph g = make_graph("r", {output("y", x | butter(2, 300_Hz) | delay(7_samples) | fir({0.5, 0.5}))});
  Setup s = compile(g, 2, DType::f32, 64);
  CpuStream stream(s.scheduled, s.kernels);
  std::vector<Signal> a = noise(1, 2, 64, DType::f32, 1), b = noise(1, 2, 64, DType::f32, 2);
  auto first = stream.process(a);
  REQUIRE(first);
  auto saved = stream.snapshot();
  auto after = stream.process(b);
  REQUIRE(after);
  stream.restore(*saved);
  auto again = stream.process(b);
  REQUIRE(again);
  CHECK(bit_equal((*after)[0], (*again)[0]));
  stream.reset();
  auto fresh = stream.process(a);
  REQUIRE(fresh);
  CHECK(bit_equal((*first)[0], (*fresh)[0]));
}

TEST_CASE("a saved state continues in another stream; damaged states are refused") {
  // A float64-state section (20 Hz at 48 kHz on float32), a delay, a FIR: every kind of state.
  Flow x = input("x", 2);
  ir::Graph g = make_graph("s", {output("y", x | butter(2, 20_Hz, highpass) | delay(7_samples) |
                                                 fir({0.5, 0.25, 0.25}))});
  Setup s = compile(g, 2, DType::f32, 64);
  CpuStream stream(s.scheduled, s.kernels);
  std::vector<Signal> a = noise(1, 2, 64, DType::f32, 1), b = noise(1, 2, 64, DType::f32, 2);
  REQUIRE(stream.process(a));
  std::string saved = stream.save_state();
  auto expected = stream.process(b);
  REQUIRE(expected);

  CpuStream other(s.scheduled, s.kernels);
  auto loaded = other.load_state(saved);
  REQUIRE_MESSAGE(loaded, loaded.error());
  auto got = other.process(b);
  REQUIRE(got);
  CHECK(bit_equal((*expected)[0], (*got)[0]));

  CpuStream fresh(s.scheduled, s.kernels);
  auto error_of = [&](std::string bytes) {
    auto r = fresh.load_state(bytes);
    return r ? std::string() : r.error();
  };
  std::string flipped = saved;
  flipped[flipped.size() - 3] ^= 0x40;
  CHECK(error_of(flipped) == "the stream state is damaged (its checksum does not match)");
  CHECK(error_of(saved.substr(0, saved.size() - 5)) ==
        "the stream state is damaged (its checksum does not match)");
  CHECK(error_of("hello") == "not an fxc stream state");
  CHECK(error_of("") == "not an fxc stream state");
  Setup other_shape = compile(make_graph("t", {output("y", input("x", 2) | butter(4, 20_Hz, highpass))}),
                              2, DType::f32, 64);
  CpuStream wrong(other_shape.scheduled, other_shape.kernels);
  auto refused = wrong.load_state(saved);
  REQUIRE_FALSE(refused);
  CHECK(refused.error() ==
        "the stream state was saved from a graph of another shape (stages, orders, channels, "
        "FIR method or dtype)");
  // The IIR strategy is not part of the shape a state needs: one saved by a whole-file run
  // (channel lanes) loads into a stream run another way (the wavefront).
  passes::StrategyThresholds wavefront;
  REQUIRE_FALSE(wavefront.set("lane_fill", "2"));
  Setup other_strategy = compile(g, 2, DType::f32, 64, wavefront);
  CpuStream continued(other_strategy.scheduled, other_strategy.kernels);
  REQUIRE(continued.load_state(saved));
  auto continued_out = continued.process(b);
  REQUIRE(continued_out);
  for (std::size_t c = 0; c < 2; ++c)
    for (std::size_t n = 0; n < 64; ++n)
      CHECK((*continued_out)[0].at(c, n) == doctest::Approx((*expected)[0].at(c, n)).epsilon(1e-5));
  // A refused load keeps the state: `fresh` still runs from zero.
  CpuStream zero(s.scheduled, s.kernels);
  auto from_zero = zero.process(b);
  auto after_refusal = fresh.process(b);
  REQUIRE(from_zero);
  REQUIRE(after_refusal);
  CHECK(bit_equal((*from_zero)[0], (*after_refusal)[0]));
}

TEST_CASE("values change between blocks without recompiling; shapes cannot") {
  auto graph_with = [](Frequency cutoff, int order) {
    Flow x = input("x", 1);
    return make_graph("v", {output("y", x | butter(order, cutoff))});
  };
  Setup s = compile(graph_with(1_kHz, 4), 1, DType::f64, 64);
  CpuStream stream(s.scheduled, s.kernels);
  std::vector<Signal> block = noise(1, 1, 64, DType::f64, 3);
  REQUIRE(stream.process(block));
  Setup other = compile(graph_with(4_kHz, 4), 1, DType::f64, 64);
  REQUIRE(stream.update_values(other.scheduled));
  auto continued = stream.process(block);
  REQUIRE(continued);
  // The new coefficients act on the state the old ones left: compare with the interpreter-free
  // expectation that the output differs from a fresh 4 kHz stream (state carried) ...
  CpuStream fresh(other.scheduled, other.kernels);
  auto from_zero = fresh.process(block);
  REQUIRE(from_zero);
  CHECK_FALSE(bit_equal((*continued)[0], (*from_zero)[0]));
  // ... and a reset stream with new values equals the fresh one.
  stream.reset();
  auto reset = stream.process(block);
  REQUIRE(reset);
  CHECK(bit_equal((*reset)[0], (*from_zero)[0]));

  Setup shape = compile(graph_with(1_kHz, 6), 1, DType::f64, 64);
  auto refused = stream.update_values(shape.scheduled);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("another shape") != std::string::npos);
}

}  // namespace
}  // namespace fxc
