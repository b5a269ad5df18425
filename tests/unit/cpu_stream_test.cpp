// SPDX-License-Identifier: Apache-2.0
// Streams: blocks of any size give the whole signal's output; state can be reset, saved and
// restored; values change between blocks without recompiling.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "accuracy_support.h"
#include "expected_text.h"
#include "frontend/dsl.h"
#include "ir/hash.h"
#include "passes/pipeline.h"
#include "random_graphs.h"
#include "runtime/cpu_executor.h"
#include "driver/kernel_cache.h"
#include "runtime/reference_interpreter.h"
#include "worse.h"

using fxc::test::worse;

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
  REQUIRE(kernels);
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
    REQUIRE(out);
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
      // does not depend on where blocks begin. Long FIRs (FFT), rare in these graphs, are
      // left out (checked below); the FFT's streams are tested on their own.
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
    err = worse(err, std::abs(got[0].at(0, n) - (*want)[0].at(0, n)));
    ref = std::max(ref, std::abs((*want)[0].at(0, n)));
  }
  CHECK(err <= 1e-10 * ref);  // float64 carries: exact to rounding

  ir::Graph fir = make_graph("fir", {output("y", x | firwin(401, {2000}))});
  Setup fft = compile(fir, 1, DType::f32, 20000);
  std::vector<Signal> in32 = noise(1, 1, 20000, DType::f32, 5);
  auto whole = execute_cpu(fft.scheduled, *fft.kernels, in32);
  REQUIRE(whole);
  CpuStream fir_stream(fft.scheduled, fft.kernels);
  std::vector<Signal> blocks = run_blocks(fir_stream, in32, {64, 5000, 3, 14933});
  double max_diff = 0;
  for (std::size_t n = 0; n < 20000; ++n)
    max_diff = worse(max_diff, std::abs(blocks[0].at(0, n) - (*whole)[0].at(0, n)));
  CHECK(max_diff <= 1e-5);  // float32 FFT rounding differs with the block grid

  // float64: the same within 1e-12 of the output's RMS (float64 FFT rounding: measured 4.6e-16).
  Setup fft64 = compile(fir, 1, DType::f64, 20000);
  std::vector<Signal> in64 = noise(1, 1, 20000, DType::f64, 6);
  auto whole64 = execute_cpu(fft64.scheduled, *fft64.kernels, in64);
  REQUIRE(whole64);
  CpuStream fir64_stream(fft64.scheduled, fft64.kernels);
  std::vector<Signal> blocks64 = run_blocks(fir64_stream, in64, {64, 5000, 0, 3, 1, 14932});
  double diff2 = 0, power = 0;
  for (std::size_t n = 0; n < 20000; ++n) {
    double d = blocks64[0].at(0, n) - (*whole64)[0].at(0, n);
    diff2 += d * d;
    power += (*whole64)[0].at(0, n) * (*whole64)[0].at(0, n);
  }
  CHECK(std::sqrt(diff2 / power) <= 1e-12);
  bool ran_fft = false;
  for (const ir::Node& n : fft64.scheduled.nodes())
    if (auto* c = std::get_if<ir::Chain>(&n.op)) ran_fft |= c->fir_method == ir::FirMethod::fft_overlap_save;
  CHECK(ran_fft);
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
    last = worse(last, std::abs(got[0].at(0, n)));
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
  REQUIRE(loaded);
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
  REQUIRE_FALSE(wavefront.set("partial_lanes_min_channels", "0"));
  Setup other_strategy = compile(g, 2, DType::f32, 64, wavefront);
  for (const ir::Node& n : other_strategy.scheduled.nodes())
    if (auto* chain = std::get_if<ir::Chain>(&n.op)) CHECK(chain->strategy != ir::IirStrategy::channel_lanes);
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
  // The new coefficients act on the state the old ones left, so the output differs from a
  // fresh 4 kHz stream (the carried state itself is checked against a model below) ...
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
  // Its kernels do not make another order acceptable: only the schedule may differ.
  auto refused_too = stream.update_values(shape.scheduled, shape.kernels);
  REQUIRE_FALSE(refused_too);
  CHECK(refused_too.error() ==
        "the new graph has another shape (stages, orders, channels or dtype): compile it as a new stream");
}

}  // namespace
}  // namespace fxc

namespace fxc {
namespace {

// An independent model of what a stream promises across a value change (docs/streaming.md):
// each section in transposed direct form II, as sosfilt, in float64, whose two state
// variables carry over when the coefficients change at sample `switch_at`.
std::vector<double> carried_filter(const std::vector<design::Section>& before,
                                   const std::vector<design::Section>& after, const Signal& x,
                                   std::size_t switch_at) {
  REQUIRE(before.size() == after.size());
  std::vector<double> z(2 * before.size(), 0.0), y(x.samples());
  for (std::size_t n = 0; n < x.samples(); ++n) {
    const auto& sections = n < switch_at ? before : after;
    double v = x.at(0, n);
    for (std::size_t k = 0; k < sections.size(); ++k) {
      const design::Section& s = sections[k];
      double out = s.b0 * v + z[2 * k];
      z[2 * k] = s.b1 * v - s.a1 * out + z[2 * k + 1];
      z[2 * k + 1] = s.b2 * v - s.a2 * out;
      v = out;
    }
    y[n] = v;
  }
  return y;
}

std::vector<design::Section> designed_sections(const ir::Graph& designed) {
  for (const ir::Node& node : designed.nodes())
    if (const auto* sos = std::get_if<ir::SosCascade>(&node.op)) return sos->sections;
  FAIL("no sos node in the designed graph");
  return {};
}

double rms(const std::vector<double>& a, const std::vector<double>& b, std::size_t from, std::size_t to) {
  double sum = 0;
  for (std::size_t n = from; n < to; ++n) sum += (a[n] - b[n]) * (a[n] - b[n]);
  return std::sqrt(sum / static_cast<double>(to - from));
}

TEST_CASE("across a value change the state carries over, as an independent filter's does") {
  struct Change {
    const char* what;
    DType dtype;
    int order;
    design::BandType band;
    double from_hz, to_hz;
    bool schedule_changes;  // the new values change the state precision: pass the kernels
    double tolerance;       // relative RMS against the float64 model
  };
  const Change changes[] = {
      // float64 throughout; the model runs the same recurrences (1e-9, as every float64 check).
      {"float64 lowpass 1 kHz -> 4 kHz", DType::f64, 4, design::BandType::lowpass, 1000, 4000, false, 1e-9},
      // float32: 2 kHz (pole radius 0.83, float32 state) -> 20 Hz (0.998, float64 state) and
      // back. float32 state at r = 0.83 measures 3e-7 (2^-24 rounding times about 1/(1 - r)),
      // float64 state 2e-8 (output rounding only). After 2 kHz -> 20 Hz the float32 state's
      // rounding at the change lives on in a filter that forgets it over ~1/(1 - r) = 500
      // samples: 2.4e-6 after the change, 1.7e-6 overall; bound 1e-5.
      {"float32 highpass 2 kHz -> 20 Hz, state float32 -> float64", DType::f32, 2, design::BandType::highpass, 2000,
       20, true, 1e-5},
      {"float32 highpass 20 Hz -> 2 kHz, state float64 -> float32", DType::f32, 2, design::BandType::highpass, 20,
       2000, true, 1e-6},
  };
  const std::size_t block = 500, blocks_before = 3, blocks_after = 3;
  const std::size_t total = block * (blocks_before + blocks_after), switch_at = block * blocks_before;
  for (const Change& c : changes) {
    CAPTURE(std::string(c.what));
    auto graph_at = [&](double hz) {
      Flow x = input("x", 1);
      return make_graph("v", {output("y", x | butter(c.order, Frequency{hz}, c.band))});
    };
    test::CompiledCpu a = test::compile_cpu(graph_at(c.from_hz), 1, c.dtype, block);
    test::CompiledCpu b = test::compile_cpu(graph_at(c.to_hz), 1, c.dtype, block);
    const ir::Chain& ca = *test::chains_of(a.scheduled).at(0);
    const ir::Chain& cb = *test::chains_of(b.scheduled).at(0);
    CHECK((ca.state_precision != cb.state_precision) == c.schedule_changes);

    std::vector<Signal> x = noise(1, 1, total, c.dtype, 23);
    CpuStream stream(a.scheduled, a.kernels);
    std::vector<double> got(total);
    for (std::size_t k = 0; k < blocks_before + blocks_after; ++k) {
      if (k == blocks_before) {
        if (c.schedule_changes) {
          // The update that keeps the old kernels is refused: the schedule changed.
          auto refused = stream.update_values(b.scheduled);
          REQUIRE_FALSE(refused);
          CHECK(refused.error().find("pass its kernels") != std::string::npos);
          REQUIRE(stream.update_values(b.scheduled, b.kernels));
        } else {
          REQUIRE(stream.update_values(b.scheduled));
        }
      }
      std::vector<Signal> part;
      Signal p(1, block, c.dtype);
      for (std::size_t n = 0; n < block; ++n)
        if (c.dtype == DType::f32) p.f32(0)[n] = x[0].f32(0)[k * block + n];
        else p.f64(0)[n] = x[0].f64(0)[k * block + n];
      part.push_back(std::move(p));
      auto out = stream.process(part);
      REQUIRE(out);
      for (std::size_t n = 0; n < block; ++n) got[k * block + n] = (*out)[0].at(0, n);
    }

    std::vector<design::Section> before = designed_sections(a.designed), after = designed_sections(b.designed);
    std::vector<double> want = carried_filter(before, after, x[0], switch_at);
    std::vector<double> zero(total, 0.0);
    double scale = std::max(rms(want, zero, 0, total), 1e-3);
    double error = rms(got, want, 0, total) / scale;
    MESSAGE(std::string(c.what) << ": relative RMS error against the carried model " << error << " (before the change "
                   << rms(got, want, 0, switch_at) / scale << ", after " << rms(got, want, switch_at, total) / scale
                   << ")");
    CHECK(error <= c.tolerance);
    // The check can tell a carried state from a reset one: restarting the new filter from zero
    // state at the switch is far outside the tolerance just after it.
    Signal tail(1, total - switch_at);
    for (std::size_t n = switch_at; n < total; ++n) tail.f64(0)[n - switch_at] = x[0].at(0, n);
    std::vector<double> reset = carried_filter(after, after, tail, 0);
    std::vector<double> reset_whole(total, 0.0);
    std::copy(want.begin(), want.begin() + switch_at, reset_whole.begin());
    std::copy(reset.begin(), reset.end(), reset_whole.begin() + switch_at);
    CHECK(rms(reset_whole, want, switch_at, switch_at + 50) / scale > 100 * c.tolerance);
  }
}

}  // namespace
}  // namespace fxc

namespace fxc {
namespace {

TEST_CASE("blocks against the whole on signals long enough for the chunked scan") {
  // 300000 samples (over chunked_min_samples = 131072): the whole signal runs the chunked
  // scan. A stream gives the same samples only within rounding (docs/streaming.md,
  // "Exactness"): its chunks start where its blocks do, and a stream compiled for short blocks
  // (as `fxc run --block` compiles) runs another strategy. Bounds, relative RMS of blocks
  // against whole: float64 1e-12 (both run float64 recurrences; measured 1.0e-13); float32
  // signal with float64 state 1e-7 (only the final rounding to float32 may differ, by 1 ulp:
  // at most 2^-24 = 6e-8 relative per sample; measured 1.6e-8); float32 state 1e-6 (the
  // state's own rounding differs where chunks restart, 4% of the samples here; against the
  // reference each run may be off by docs/errors.md's 107 dB, 4.6e-6; measured 4.4e-7).
  struct Case {
    const char* what;
    DType dtype;
    Chain chain;
    double bound;
  };
  const Case cases[] = {
      {"float64", DType::f64, butter(4, 80_Hz, highpass) | butter(6, 9_kHz), 1e-12},
      {"float32, float64 state", DType::f32, butter(4, 80_Hz, highpass) | butter(6, 9_kHz), 1e-7},
      {"float32, float32 state", DType::f32, butter(4, 1_kHz, highpass) | butter(2, 8_kHz), 1e-6},
  };
  const std::size_t n = 300000;
  passes::StrategyThresholds chunky;  // the chunked scan whatever the host's lanes make of the decay
  chunky.chunk_decay_ratio = 0;
  for (const Case& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    Flow x = input("x", 1);
    ir::Graph g = make_graph("long", {output("y", x | c.chain)});
    Setup whole_setup = compile(g, 1, c.dtype, static_cast<std::int64_t>(n), chunky);
    REQUIRE(test::chains_of(whole_setup.scheduled).at(0)->strategy == ir::IirStrategy::chunked_scan);
    std::vector<Signal> in = noise(1, 1, n, c.dtype, 29);
    auto whole = execute_cpu(whole_setup.scheduled, *whole_setup.kernels, in);
    REQUIRE(whole);
    auto compare = [&](const std::vector<Signal>& blocks, const std::string& how) {
      double e = test::relative_rms_error(blocks, *whole);
      std::size_t differ = 0;
      for (std::size_t i = 0; i < n; ++i) differ += blocks[0].at(0, i) != (*whole)[0].at(0, i);
      MESSAGE(what << ", " << how << ": relative RMS " << e << ", " << differ << " of " << n << " samples differ");
      CHECK(e <= c.bound);
    };
    // The whole signal's schedule (chunked scan), in blocks of other lengths: the chunks
    // start at each block.
    for (std::vector<std::size_t> sizes : {std::vector<std::size_t>{150000, 150000},
                                           std::vector<std::size_t>{70001, 1000, 64, 228935}}) {
      CpuStream stream(whole_setup.scheduled, whole_setup.kernels);
      compare(run_blocks(stream, in, sizes), "chunked-scan stream in " + std::to_string(sizes.size()) + " blocks");
    }
    // As `fxc run --block 64` runs it: compiled for 64-sample blocks (no time chunks).
    Setup short_setup = compile(g, 1, c.dtype, 64, chunky);
    CHECK(test::chains_of(short_setup.scheduled).at(0)->strategy != ir::IirStrategy::chunked_scan);
    CpuStream stream(short_setup.scheduled, short_setup.kernels);
    std::vector<std::size_t> sixty_fours(n / 64, 64);
    sixty_fours.push_back(n % 64);
    compare(run_blocks(stream, in, sixty_fours), "compiled for 64-sample blocks");
  }
}

}  // namespace
}  // namespace fxc
