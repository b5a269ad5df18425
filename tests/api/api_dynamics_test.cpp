// SPDX-License-Identifier: Apache-2.0
// Dynamics through the public API: live parameters (set() never recompiles; a lookahead, which
// sizes the kernel's rings, cannot change live), streams in random block lengths and batches
// equal to whole runs, and the documented static curve and time constants measured on the
// compiled kernels (docs/fx-language.md, "Dynamics").
#include <fxc/fxc.h>

#include <doctest/doctest.h>

#include <cstring>

#include "support/sha256.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "api_test_support.h"
#include "runtime/counters.h"  // to check that set() never compiles
#include "worse.h"

using fxc::test::worse;

namespace {

using fxc::test::noise;
using fxc::test::options;
using fxc::test::relative_error;
using fxc::test::run_processor;

// Every stage, after a filter, with live parameters that have ranges.
constexpr const char* kChain =
    "input x : 2\n"
    "th = -20 dB in [-40 dB, 0 dB]\n"
    "ratio = 4 in [1, 20]\n"
    "att = 2 ms in [0 ms, 50 ms]\n"
    "y = x | highpass(80 Hz) | compressor(th, ratio, att, 30 ms, knee=6 dB, makeup=3 dB)\n"
    "output y | gate(-40 dB, 0.5 ms, 20 ms, hold=2 ms) | limiter(-2 dB, 20 ms, lookahead=1 ms)\n";

std::string with(const std::string& from, const std::string& to) {
  std::string s = kChain;
  s.replace(s.find(from), from.size(), to);
  return s;
}

// Noise whose level swells and falls, so every stage acts: quiet (gate closed), loud
// (compressor and limiter at work), and the transitions.
fxc::Signal swelling_noise(std::size_t channels, std::size_t samples, unsigned seed) {
  fxc::Signal x = noise(channels, samples, fxc::DType::f64, seed);
  for (std::size_t c = 0; c < channels; ++c)
    for (std::size_t n = 0; n < samples; ++n)
      x.f64(c)[n] *= std::pow(10.0, -3.0 * (0.5 + 0.5 * std::cos(2 * M_PI * n / 4000.0 + c)));
  return x;
}

// A stream of `x` saved after `cut` frames (blocks of random length up to `block`, from
// `seed`), loaded into another Processor and run on: the largest difference of what follows
// from the whole run's `whole`.
double resumed_difference(const fxc::Program& program, const fxc::Signal& x, const fxc::Signal& whole, std::size_t cut,
                          int prepared, int block, unsigned seed) {
  const std::size_t channels = x.channels();
  fxc::Signal head(channels, cut, fxc::DType::f64), tail(channels, x.samples() - cut, fxc::DType::f64);
  for (std::size_t c = 0; c < channels; ++c) {
    std::copy_n(x.f64(c).begin(), cut, head.f64(c).begin());
    std::copy(x.f64(c).begin() + static_cast<std::ptrdiff_t>(cut), x.f64(c).end(), tail.f64(c).begin());
  }
  fxc::Processor first = program.processor();
  first.prepare(prepared);
  run_processor(first, head, seed, block);
  fxc::Processor second = program.processor();
  second.prepare(prepared);
  second.load_state(first.save_state());
  fxc::Signal rest = run_processor(second, tail, seed + 1, block);
  double worst = 0;
  for (std::size_t c = 0; c < channels; ++c)
    for (std::size_t n = 0; n < tail.samples(); ++n) worst = worse(worst, std::abs(rest.at(c, n) - whole.at(c, cut + n)));
  return worst;
}

}  // namespace

TEST_CASE("dynamics: compiled float64 and float32 equal the reference interpreter") {
  fxc::Signal x = swelling_noise(2, 12000, 1);
  fxc::Signal want = fxc::Program::from_source(kChain, options(fxc::DType::f64, fxc::Target::reference)).run(x);
  CHECK(relative_error(fxc::Program::from_source(kChain, options(fxc::DType::f64)).run(x), want) < 1e-12);
  fxc::Program f32 = fxc::Program::from_source(kChain, options(fxc::DType::f32));
  CHECK(relative_error(f32.run(x.converted(fxc::DType::f32)), want) < 1e-4);
}

TEST_CASE("dynamics: live parameters change without recompiling; a lookahead is structural") {
  fxc::Signal x = swelling_noise(2, 8000, 2);
  fxc::Program program = fxc::Program::from_source(kChain, options(fxc::DType::f64));
  program.run(x);
  std::uint64_t compiles = fxc::counters().compiles;
  program.set("th", -30);
  program.set("ratio", 10);
  program.set("att", "0 ms");
  fxc::Signal got = program.run(x);
  CHECK(fxc::counters().compiles == compiles);
  std::string at = with("th = -20 dB", "th = -30 dB");
  at.replace(at.find("ratio = 4"), 9, "ratio = 10");
  at.replace(at.find("att = 2 ms"), 10, "att = 0 ms");
  CHECK(relative_error(got, fxc::Program::from_source(at, options(fxc::DType::f64)).run(x)) < 1e-13);
  CHECK_THROWS_AS(program.set("ratio", 0.5), fxc::Error);  // outside its range
  fxc::Program lookahead = fxc::Program::from_source(
      "input x : 1\nla = 1 ms in [0.5 ms, 2 ms]\noutput x | limiter(-1 dB, 10 ms, lookahead=la)\n",
      options(fxc::DType::f64));
  CHECK_THROWS_AS(lookahead.set("la", 0.002), fxc::Error);
}

TEST_CASE("dynamics: a stream in random blocks, a saved state and a batch equal whole runs") {
  fxc::Signal x = swelling_noise(2, 9000, 3);
  fxc::Program program = fxc::Program::from_source(kChain, options(fxc::DType::f64));
  fxc::Signal whole = program.run(x);
  fxc::Processor p = program.processor();
  p.prepare(1024);
  CHECK(relative_error(run_processor(p, x, 11, 1000), whole) == 0);
  p.reset();
  CHECK(relative_error(run_processor(p, x, 12, 3), whole) == 0);
  // Saved in the middle of a stream, loaded into another processor.
  CHECK(resumed_difference(program, x, whole, 4321, 1024, 500, 13) == 0);
  std::vector<std::vector<fxc::Signal>> items;
  for (unsigned i = 0; i < 3; ++i) items.push_back({swelling_noise(2, 3000 + 700 * i, 20 + i)});
  auto batch = program.run_batch(items);
  REQUIRE(batch.size() == items.size());
  for (std::size_t i = 0; i < items.size(); ++i) CHECK(relative_error(batch[i][0], program.run(items[i][0])) == 0);
}

// A long lookahead's window maximum comes from blocks of the targets' ring (van Herk and
// Gil-Werman) since 2026-11-29, where every sample scanned the ring (O(L): a 20 ms lookahead
// took 775x the time of none). The same outputs as the interpreter's full scan, whole, in
// random blocks (the blocks' ends fall inside the ring's), and from a state saved mid-ring.
TEST_CASE("dynamics: long lookaheads equal the interpreter's scan, on every lane, streamed and restored") {
  for (const char* lookahead : {"0.02 ms", "5 ms", "20 ms"}) {
    CAPTURE(lookahead);
    const std::string source = std::string("input x : 9\noutput x | limiter(-6 dB, 30 ms, lookahead=") + lookahead + ")\n";
    fxc::Signal x = swelling_noise(9, 20000, 5);
    fxc::Signal want = fxc::Program::from_source(source, options(fxc::DType::f64, fxc::Target::reference)).run(x);
    fxc::Program program = fxc::Program::from_source(source, options(fxc::DType::f64));
    fxc::Signal whole = program.run(x);
    CHECK(relative_error(whole, want) < 1e-12);
    fxc::Program f32 = fxc::Program::from_source(source, options(fxc::DType::f32));
    CHECK(relative_error(f32.run(x.converted(fxc::DType::f32)), want) < 1e-4);
    fxc::Processor p = program.processor();
    p.prepare(2048);
    CHECK(relative_error(run_processor(p, x, 31, 2000), whole) == 0);
    CHECK(resumed_difference(program, x, whole, 7777, 2048, 300, 32) == 0);
  }
}

// A state saved before the lookahead's blocks (2026-11-29) lacks their L + 1 values a channel:
// refused as older, not as damaged. Made here from a state of today by cutting them out of its
// body (1 channel, the limiter alone: its state ends with them) and signing it again.
TEST_CASE("dynamics: a lookahead state saved before its blocks is refused as older, not damaged") {
  const std::string source = "input x : 1\noutput x | limiter(-3 dB, 10 ms, lookahead=1 ms)\n";  // L = 48 at 48 kHz
  fxc::Program program = fxc::Program::from_source(source, options(fxc::DType::f64));
  fxc::Processor p = program.processor();
  p.prepare(256);
  run_processor(p, swelling_noise(1, 1000, 7), 41, 100);
  const std::string saved = p.save_state();
  const std::size_t sum = saved.find("sha256 ");
  REQUIRE(sum != std::string::npos);
  const std::size_t body_at = saved.find('\n', sum) + 1;
  std::string body = saved.substr(body_at);
  // Body: u8 dtype, u64 chain count, per chain u8 ready and, when ready, u64-counted arrays.
  std::size_t at = 1;
  auto u64 = [&](std::size_t where) {
    std::uint64_t v = 0;
    std::memcpy(&v, body.data() + where, 8);
    return v;
  };
  const std::uint64_t chains = u64(at);
  at += 8;
  bool cut = false;
  for (std::uint64_t k = 0; k < chains && !cut; ++k) {
    const bool ready = body[at++] != 0;
    if (!ready) continue;
    const std::uint64_t n = u64(at);
    REQUIRE(n == 2 + 3 * 48 + 1);  // smoothed, counter, two rings, the suffix maxima, the running maximum
    const std::uint64_t older = n - 49;
    std::memcpy(body.data() + at, &older, 8);
    body.erase(at + 8 + older * 8, 49 * 8);
    cut = true;
  }
  REQUIRE(cut);
  const std::string old = saved.substr(0, sum) + "sha256 " + fxc::sha256_hex(body) + "\n" + body;
  fxc::Processor second = program.processor();
  second.prepare(256);
  try {
    second.load_state(old);
    FAIL("an older state loaded");
  } catch (const fxc::Error& e) {
    CHECK(std::string(e.what()).find("was saved by an fxc from before 2026-11-29, whose limiter lookahead kept less state") !=
          std::string::npos);
  }
  second.load_state(saved);  // today's loads
}

// The gain computer's curve at 1 dB steps: with no attack or release the output level of a
// constant input is the curve itself, plus makeup.
TEST_CASE("dynamics: the static curves of the compressor and expander are the documented formulas") {
  struct Curve {
    std::string stage;
    double threshold, ratio, knee, makeup;
    bool compressor;
  };
  for (const Curve& k : {Curve{"compressor(-30 dB, 4, 0 ms, 0 ms, knee=10 dB, makeup=2 dB)", -30, 4, 10, 2, true},
                         Curve{"compressor(-20 dB, 2, 0 ms, 0 ms)", -20, 2, 0, 0, true},
                         Curve{"expander(-40 dB, 3, 0 ms, 0 ms, knee=6 dB, makeup=1 dB)", -40, 3, 6, 1, false},
                         Curve{"expander(-40 dB, 2, 0 ms, 0 ms)", -40, 2, 0, 0, false}}) {
    INFO(k.stage);
    fxc::Program program =
        fxc::Program::from_source("input x : 1\noutput x | " + k.stage + "\n", options(fxc::DType::f64));
    for (int level = -60; level <= 0; ++level) {
      fxc::Signal x(1, 4, fxc::DType::f64);
      for (double& v : x.f64(0)) v = std::pow(10.0, level / 20.0);
      double out_db = 20 * std::log10(program.run(x).at(0, 3));
      double xg = level, t = k.threshold, w = k.knee, yg = xg;
      if (k.compressor) {
        if (2 * (xg - t) > w) yg = t + (xg - t) / k.ratio;
        else if (2 * std::abs(xg - t) <= w && w > 0) yg = xg + (1 / k.ratio - 1) * std::pow(xg - t + w / 2, 2) / (2 * w);
      } else {
        if (2 * (xg - t) < -w) yg = t + (xg - t) * k.ratio;
        else if (2 * std::abs(xg - t) <= w && w > 0) yg = xg - (k.ratio - 1) * std::pow(xg - t - w / 2, 2) / (2 * w);
      }
      CAPTURE(level);
      CHECK(out_db == doctest::Approx(yg + k.makeup).epsilon(1e-12));
    }
  }
}

// A step from -40 dB to -10 dB into compressor(-30 dB, 4, attack, release): the gain reduction
// moves from 0 to its final value along 1 - exp(-n / (tau fs)), so it reaches 1 - 1/e of the way
// at n = tau fs samples (the smooth peak detector's time constant); the same back down on release.
TEST_CASE("dynamics: attack and release time constants measured on a step match the parameters") {
  const double fs = 48000, attack = 0.005, release = 0.040;
  fxc::Options o = options(fxc::DType::f64);
  o.sample_rate_hz = fs;
  fxc::Program program = fxc::Program::from_source(
      "input x : 1\noutput x | compressor(-30 dB, 4, 5 ms, 40 ms)\n", o);
  const std::size_t step = 1000, back = 20000, total = 40000;
  fxc::Signal x(1, total, fxc::DType::f64);
  for (std::size_t n = 0; n < total; ++n) x.f64(0)[n] = std::pow(10.0, (n >= step && n < back ? -10.0 : -40.0) / 20);
  fxc::Signal y = program.run(x);
  auto reduction = [&](std::size_t n) { return 20 * std::log10(x.at(0, n) / y.at(0, n)); };
  double full = (1 - 1.0 / 4) * 20;  // 20 dB above the threshold at ratio 4
  auto crossing = [&](std::size_t from, std::size_t to, double level, bool rising) {
    for (std::size_t n = from; n < to; ++n)
      if (rising ? reduction(n) >= level : reduction(n) <= level) return static_cast<double>(n - from);
    return -1.0;
  };
  double tau_attack = crossing(step, back, full * (1 - std::exp(-1.0)), true);
  double tau_release = crossing(back, total, full * std::exp(-1.0), false);
  CHECK(std::abs(tau_attack - attack * fs) <= 1.0);
  CHECK(std::abs(tau_release - release * fs) <= 1.0);
}

// A music bus ducked under a mono voice (a side-chain), then a limiter linked across channels.
constexpr const char* kSideChain =
    "input x : 2\n"
    "input voice : 1\n"
    "music = x | compressor(-30 dB, 4, 1 ms, 50 ms, key=voice)\n"
    "output music | limiter(-6 dB, 10 ms, lookahead=0.5 ms, link=max)\n";

TEST_CASE("dynamics with a side-chain and linked channels: kernels, streams and batches") {
  fxc::Signal x = swelling_noise(2, 9000, 4), voice = swelling_noise(1, 9000, 5);
  std::vector<fxc::Signal> in{x, voice};
  fxc::Signal want =
      fxc::Program::from_source(kSideChain, options(fxc::DType::f64, fxc::Target::reference)).run(in)[0];
  fxc::Program program = fxc::Program::from_source(kSideChain, options(fxc::DType::f64));
  fxc::Signal whole = program.run(in)[0];
  CHECK(relative_error(whole, want) < 1e-12);
  // Linked: one gain on both channels, so out / in is the same on each where the input is not 0
  // (the limiter's input is the ducked music, 24 samples late).
  fxc::Signal ducked = fxc::Program::from_source(
                           "input x : 2\ninput voice : 1\noutput x | compressor(-30 dB, 4, 1 ms, 50 ms, key=voice)\n",
                           options(fxc::DType::f64))
                           .run(in)[0];
  for (std::size_t n = 24; n < x.samples(); n += 97)
    CHECK(whole.at(0, n) / ducked.at(0, n - 24) == doctest::Approx(whole.at(1, n) / ducked.at(1, n - 24)).epsilon(1e-9));
  // A stream in random blocks, two inputs.
  fxc::Processor p = program.processor();
  p.prepare(512);
  fxc::Signal out(2, x.samples(), fxc::DType::f64);
  std::mt19937 rng(21);
  std::uniform_int_distribution<std::size_t> length(1, 600);
  for (std::size_t start = 0; start < x.samples();) {
    std::size_t frames = std::min(length(rng), x.samples() - start);
    const double* xs[2] = {x.f64(0).data() + start, x.f64(1).data() + start};
    const double* vs[1] = {voice.f64(0).data() + start};
    double* os[2] = {out.f64(0).data() + start, out.f64(1).data() + start};
    const double* const* ins[2] = {xs, vs};
    double* const* outs[1] = {os};
    p.process(std::span<const double* const* const>(ins, 2), std::span<double* const* const>(outs, 1), frames);
    start += frames;
  }
  CHECK(relative_error(out, whole) == 0);
  // A batch: each item keyed by its own voice, linked within itself.
  std::vector<std::vector<fxc::Signal>> items;
  for (unsigned i = 0; i < 3; ++i) items.push_back({swelling_noise(2, 3000 + 500 * i, 30 + i), swelling_noise(1, 3000 + 500 * i, 40 + i)});
  auto batch = program.run_batch(items);
  REQUIRE(batch.size() == items.size());
  for (std::size_t i = 0; i < items.size(); ++i) CHECK(relative_error(batch[i][0], program.run(items[i])[0]) == 0);
  // float32
  fxc::Program f32 = fxc::Program::from_source(kSideChain, options(fxc::DType::f32));
  CHECK(relative_error(f32.run({x.converted(fxc::DType::f32), voice.converted(fxc::DType::f32)})[0], want) < 1e-4);
}

TEST_CASE("a side-chain key of the wrong channel count, or a bad link, is an error at the argument") {
  auto error_of = [](const std::string& source) {
    try {
      fxc::Program::from_source(source, options(fxc::DType::f64));
    } catch (const fxc::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("input x : 2\ninput k : 3\noutput x | compressor(-20 dB, 4, 1 ms, 10 ms, key=k)\n")
            .find("a side-chain key must have as many channels as the signal, or one") != std::string::npos);
  CHECK(error_of("input x : 2\noutput x | compressor(-20 dB, 4, 1 ms, 10 ms, link=sum)\n")
            .find("expected none, max or mean for 'link'") != std::string::npos);
  CHECK(error_of("input x : 2\noutput x | compressor(-20 dB, 4, 1 ms, 10 ms, key=4)\n")
            .find("'key' takes a signal") != std::string::npos);
  CHECK(error_of("input x : 2\noutput x | envelope(1 ms, 10 ms, link=max)\n").find("link") != std::string::npos);
}

TEST_CASE("a linked key of any channel count is one level, declared or not") {
  // Linked, the key's channels become one level (max_c |k_c|): the same whether its count is
  // declared (refused before) or known from the signal (accepted), and the same as that
  // level given as a one-channel key.
  const fxc::Signal x = noise(2, 4000, fxc::DType::f64, 3);
  const fxc::Signal k = noise(3, 4000, fxc::DType::f64, 4);
  fxc::Signal level(1, 4000, fxc::DType::f64);
  for (std::size_t i = 0; i < 4000; ++i)
    level.f64(0)[i] = std::max({std::abs(k.at(0, i)), std::abs(k.at(1, i)), std::abs(k.at(2, i))});
  const std::string stage = "compressor(-20 dB, 4, 1 ms, 10 ms, key=k";
  auto run = [&](const std::string& source, const fxc::Signal& key) {
    return fxc::Program::from_source(source, options(fxc::DType::f64)).run({x, key})[0];
  };
  const fxc::Signal declared = run("input x : 2\ninput k : 3\noutput x | " + stage + ", link=max)\n", k);
  const fxc::Signal undeclared = run("input x : 2\ninput k\noutput x | " + stage + ", link=max)\n", k);
  const fxc::Signal one = run("input x : 2\ninput k : 1\noutput x | " + stage + ")\n", level);
  CHECK(relative_error(declared, undeclared) == 0);
  CHECK(relative_error(declared, one) < 1e-15);
}

// Float32 kernels compute the level and the gain with vector log2 and exp2 (emit_chain.cpp's
// fast_log2 and fast_exp2), not the C library: the gain must stay within 1e-6 of the float64
// reference's at every level, the bound docs/fx-language.md states. With no attack or release
// the gain is the static curve's, so a constant input per channel measures it at that level.
TEST_CASE("float32 dynamics: the vector log2 and exp2 keep the gain within 1e-6 of float64") {
  struct Stage {
    std::string text;
    int lowest, highest;  // dB
    double step_at = 1e9;  // a gate's threshold, where the gain jumps: levels next to it are left out
  };
  for (const Stage& s : {Stage{"compressor(-20 dB, 4, 0 ms, 0 ms, knee=6 dB, makeup=3 dB)", -200, 20},
                         Stage{"expander(-40 dB, 1.5, 0 ms, 0 ms, knee=4 dB)", -100, 20},
                         Stage{"limiter(-6 dB, 0 ms)", -200, 40},
                         Stage{"gate(-50 dB, 0 ms, 0 ms, range=-40 dB)", -200, 20, -50}}) {
    INFO(s.text);
    // Levels every 0.1 dB, one per sample, on 8 channels offset by 0.0125 dB.
    const std::size_t samples = static_cast<std::size_t>((s.highest - s.lowest) * 10 + 1);
    fxc::Signal x(8, samples, fxc::DType::f32);
    for (std::size_t c = 0; c < 8; ++c)
      for (std::size_t n = 0; n < samples; ++n)
        x.f32(c)[n] = static_cast<float>((n % 2 ? -1 : 1) * std::pow(10.0, (s.lowest + 0.1 * n + 0.0125 * c) / 20));
    std::string source = "input x : 8\noutput x | " + s.text + "\n";
    fxc::Signal want = fxc::Program::from_source(source, options(fxc::DType::f64, fxc::Target::reference)).run(x);
    fxc::Signal got = fxc::Program::from_source(source, options(fxc::DType::f32)).run(x);
    double worst = 0;
    for (std::size_t c = 0; c < 8; ++c)
      for (std::size_t n = 0; n < samples; ++n) {
        double in = x.at(c, n);
        if (std::abs(20 * std::log10(std::abs(in)) - s.step_at) < 1e-3) continue;
        worst = worse(worst, std::abs(got.at(c, n) / in - want.at(c, n) / in) / std::abs(want.at(c, n) / in));
      }
    MESSAGE(s.text << ": largest relative gain error " << worst);
    CHECK(worst <= 1e-6);
  }
}

TEST_CASE("the C++ DSL's dynamics stages equal the same .fx stages, live parameters included") {
  using namespace fxc::literals;
  fxc::Flow x = fxc::input("x", 2);
  fxc::Level threshold = fxc::param("th", -20_dB);
  fxc::Program dsl({fxc::output("y", x | fxc::highpass(80_Hz) |
                                         fxc::compressor(threshold, 4, 2_ms, 30_ms, 6_dB, 3_dB) |
                                         fxc::gate(-40_dB, 0.5_ms, 20_ms, 2_ms, -60_dB) |
                                         fxc::expander(-50_dB, 2, 1_ms, 10_ms) |
                                         fxc::limiter(-2_dB, 20_ms, 1_ms) |
                                         fxc::envelope(1_ms, 10_ms, fxc::Detector::rms))},
                   options(fxc::DType::f64));
  const std::string fx =
      "input x : 2\noutput x | highpass(80 Hz) | compressor(TH, 4, 2 ms, 30 ms, knee=6 dB, makeup=3 dB) |"
      " gate(-40 dB, 0.5 ms, 20 ms, hold=2 ms, range=-60 dB) | expander(-50 dB, 2, 1 ms, 10 ms) |"
      " limiter(-2 dB, 20 ms, lookahead=1 ms) | envelope(1 ms, 10 ms, detector=rms)\n";
  auto at = [&](const std::string& th) {
    std::string s = fx;
    s.replace(s.find("TH"), 2, th);
    return fxc::Program::from_source(s, options(fxc::DType::f64));
  };
  fxc::Signal in = swelling_noise(2, 6000, 6);
  CHECK(relative_error(dsl.run(in), at("-20 dB").run(in)) == 0);
  dsl.set("th", -35.0);
  CHECK(relative_error(dsl.run(in), at("-35 dB").run(in)) == 0);
}

TEST_CASE("an output's latency is the lookahead of the limiters on its way, keyed or linked too") {
  auto latency = [](const std::string& source) {
    fxc::Program p = fxc::Program::from_source(source, options(fxc::DType::f64));
    return p.outputs().at(0).latency;
  };
  CHECK(latency("input x : 2\noutput x | compressor(-20 dB, 4, 1 ms, 10 ms)\n") == 0);
  CHECK(latency("input x : 2\noutput x | limiter(-1 dB, 10 ms, lookahead=1 ms)\n") == 48);
  // Two in a row add; a plain delay is the graph's own content, not latency.
  CHECK(latency("input x : 2\noutput x | limiter(-1 dB, 10 ms, lookahead=1 ms) | delay(100) |"
                " limiter(-2 dB, 10 ms, lookahead=0.5 ms)\n") == 72);
  CHECK(latency("input x : 2\ninput k : 1\noutput x | limiter(-1 dB, 10 ms, lookahead=2 ms, key=k)\n") == 96);
  CHECK(latency("input x : 2\noutput x | limiter(-1 dB, 10 ms, lookahead=2 ms, link=max)\n") == 96);
  // The longest path counts.
  CHECK(latency("input x : 2\na = x | limiter(-1 dB, 10 ms, lookahead=1 ms)\noutput a + x\n") == 48);
  // A limiter in a feedback loop's body lengthens the loop, not the output: an impulse comes
  // out at once (it said 48).
  const std::string loop = "input x : 2\ny = x + 0.3 * (y | delay(10 ms) | limiter(-1 dB, 50 ms, lookahead=1 ms))\n";
  CHECK(latency(loop + "output y\n") == 0);
  CHECK(latency(loop + "output y | limiter(-1 dB, 10 ms, lookahead=0.5 ms)\n") == 24);
  // Unfused, the loop's nodes reached only through its feedback edge count for nothing too.
  fxc::Options unfused = options(fxc::DType::f64);
  unfused.fuse = false;
  CHECK(fxc::Program::from_source(loop + "output y\n", unfused).outputs().at(0).latency == 0);
  // And the measured lateness agrees: an impulse at 100 comes out at 100.
  fxc::Signal impulse(2, 400, fxc::DType::f64);
  impulse.f64(0)[100] = 0.01;
  fxc::Signal out = fxc::Program::from_source(loop + "output y\n", options(fxc::DType::f64)).run(impulse);
  CHECK(out.at(0, 100) == doctest::Approx(0.01));
}

// NaN and infinite samples take the same path in the kernels as in the interpreter: a NaN
// level falls to the gain computer's "no reduction" branch, an infinite one to full reduction.
TEST_CASE("dynamics: NaN and infinite samples give the interpreter's outputs") {
  fxc::Signal x = swelling_noise(2, 4000, 7);
  x.f64(0)[1000] = std::nan("");
  x.f64(1)[1500] = HUGE_VAL;
  x.f64(1)[2500] = -HUGE_VAL;
  for (const char* stage : {"compressor(-20 dB, 4, 1 ms, 20 ms, knee=6 dB)", "expander(-40 dB, 2, 1 ms, 20 ms, knee=4 dB)",
                            "gate(-40 dB, 1 ms, 20 ms, hold=1 ms)", "limiter(-6 dB, 20 ms, lookahead=1 ms)",
                            "envelope(1 ms, 20 ms, detector=rms)"}) {
    INFO(std::string(stage));
    std::string source = std::string("input x : 2\noutput x | ") + stage + "\n";
    fxc::Signal want = fxc::Program::from_source(source, options(fxc::DType::f64, fxc::Target::reference)).run(x);
    for (fxc::DType dtype : {fxc::DType::f64, fxc::DType::f32}) {
      fxc::Signal got = fxc::Program::from_source(source, options(dtype)).run(x.converted(dtype));
      for (std::size_t c = 0; c < 2; ++c)
        for (std::size_t n = 0; n < x.samples(); ++n) {
          double a = got.at(c, n), b = want.at(c, n);
          if (std::isnan(b) || std::isinf(b)) {
            CHECK(std::isnan(a) == std::isnan(b));
            if (std::isinf(b)) CHECK(a == b);
          } else {
            CHECK(std::abs(a - b) <= (dtype == fxc::DType::f64 ? 1e-12 : 1e-4));
          }
        }
    }
  }
}
