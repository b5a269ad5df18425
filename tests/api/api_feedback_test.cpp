// SPDX-License-Identifier: Apache-2.0
// Feedback loops through the public API: the compiled CPU path against the reference
// interpreter and against loops written here from their textbook definitions; streams in
// random block lengths, saved and restored state, live delay lengths and batches, each equal
// to one whole run.
#include <fxc/fxc.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "api_test_support.h"
#include "worse.h"

using fxc::test::worse;

namespace {

using fxc::test::noise;
using fxc::test::options;
using fxc::test::relative_error;
using fxc::test::run_processor;


// A stereo echo with a lowpass in the loop (short, so the test is quick).
constexpr const char* kEcho =
    "input x : 2\n"
    "time = 5 ms in [1 ms, 20 ms]\n"
    "y = x + 0.5 * (y | lowpass(3 kHz) | delay(time))\n"
    "output y\n";

// Two delays of different lengths feeding each other through a mixing matrix (a small FDN),
// a nonlinearity inside one loop, an FIR long enough for FFT convolution in float64 outside.
constexpr const char* kTangle =
    "input x : 2\n"
    "a = x + 0.6 * (a | delay(37)) - 0.3 * (b | delay(53))\n"
    "b = x | tanh() + 0.3 * (a | delay(29)) + 0.5 * (b | highpass(200 Hz) | delay(41))\n"
    "output a + b | fir([0.1, 0.2, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, "
    "0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, "
    "0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01])\n";

fxc::Signal run_reference(const char* source, const fxc::Signal& x) {
  return fxc::Program::from_source(source, options(fxc::DType::f64, fxc::Target::reference)).run(x);
}

TEST_CASE("a feedback loop compiled for the CPU equals the reference interpreter") {
  fxc::Signal x = noise(2, 9000, fxc::DType::f64);
  for (const char* source : {kEcho, kTangle}) {
    fxc::Signal want = run_reference(source, x);
    fxc::Signal f64 = fxc::Program::from_source(source, options(fxc::DType::f64)).run(x);
    CHECK(relative_error(f64, want) < 1e-12);
    fxc::Program f32 = fxc::Program::from_source(source, options(fxc::DType::f32));
    CHECK(relative_error(f32.run(x.converted(fxc::DType::f32)), want) < 1e-5);
  }
}

TEST_CASE("feedback loops equal the textbook recursions written here") {
  // A feedback comb, y[n] = x[n] + g y[n - D], and Schroeder's allpass,
  // y[n] = -g x[n] + x[n - D] + g y[n - D] (written as a loop through one delay line).
  const std::size_t d = 23;
  const double g = 0.7;
  fxc::Signal x = noise(1, 4000, fxc::DType::f64, 7);
  fxc::Signal comb(1, x.samples(), fxc::DType::f64), allpass(1, x.samples(), fxc::DType::f64);
  for (std::size_t n = 0; n < x.samples(); ++n) {
    double past_x = n >= d ? x.at(0, n - d) : 0, past_comb = n >= d ? comb.at(0, n - d) : 0;
    double past_allpass = n >= d ? allpass.at(0, n - d) : 0;
    comb.f64(0)[n] = x.at(0, n) + g * past_comb;
    allpass.f64(0)[n] = -g * x.at(0, n) + past_x + g * past_allpass;
  }
  auto compiled = [&](const std::string& source) {
    return fxc::Program::from_source(source, options(fxc::DType::f64)).run(x);
  };
  CHECK(relative_error(compiled("input x : 1\ny = x + 0.7 * (y | delay(23))\noutput y\n"), comb) < 1e-13);
  // The allpass as a loop through its state w[n] = x[n] + g w[n - D], y = -g w + w[n - D].
  CHECK(relative_error(compiled("input x : 1\nw = x + 0.7 * (w | delay(23))\n"
                                "output -0.7 * w + (w | delay(23))\n"),
                       allpass) < 1e-12);
  // A one-sample loop is a one-pole IIR: blocks of one sample still give it exactly.
  fxc::Signal pole = compiled("input x : 1\ny = x + 0.5 * (y | delay(1))\noutput y\n");
  fxc::Signal iir = compiled("input x : 1\noutput x | tf([1], [1, -0.5])\n");
  CHECK(relative_error(pole, iir) < 1e-13);
}

TEST_CASE("a looped stream in random blocks equals the whole run") {
  fxc::Signal x = noise(2, 6000, fxc::DType::f64, 3);
  for (const char* source : {kEcho, kTangle}) {
    fxc::Program program = fxc::Program::from_source(source, options(fxc::DType::f64));
    fxc::Signal whole = program.run(x);
    fxc::Processor p = program.processor();
    p.prepare(1024);
    CHECK(relative_error(run_processor(p, x, 11, 700), whole) < 1e-13);
    p.reset();
    CHECK(relative_error(run_processor(p, x, 12, 3), whole) < 1e-13);
    CHECK(relative_error(program.run_in_blocks({x}, 77)[0], whole) < 1e-13);
  }
}

TEST_CASE("a loop's saved state continues exactly") {
  fxc::Signal x = noise(2, 5000, fxc::DType::f64, 5);
  fxc::Program program = fxc::Program::from_source(kEcho, options(fxc::DType::f64));
  fxc::Signal whole = program.run(x);
  fxc::Processor first = program.processor();
  first.prepare(512);
  const std::size_t half = 2345;
  fxc::Signal head(2, half, fxc::DType::f64), tail(2, x.samples() - half, fxc::DType::f64);
  for (std::size_t c = 0; c < 2; ++c) {
    std::copy_n(x.f64(c).begin(), half, head.f64(c).begin());
    std::copy(x.f64(c).begin() + half, x.f64(c).end(), tail.f64(c).begin());
  }
  run_processor(first, head, 1, 300);
  fxc::Processor second = program.processor();
  second.prepare(512);
  second.load_state(first.save_state());
  fxc::Signal rest = run_processor(second, tail, 2, 300);
  double worst = 0;
  for (std::size_t c = 0; c < 2; ++c)
    for (std::size_t n = 0; n < tail.samples(); ++n)
      worst = worse(worst, std::abs(rest.at(c, n) - whole.at(c, half + n)));
  CHECK(worst < 1e-13);
}

TEST_CASE("a live feedback delay changes without recompiling and keeps the block bound") {
  fxc::Signal x = noise(2, 6000, fxc::DType::f64, 9);
  fxc::Program program = fxc::Program::from_source(kEcho, options(fxc::DType::f64));
  program.set("time", 0.0125);
  fxc::Options at = options(fxc::DType::f64);
  fxc::Signal want = fxc::Program::from_source(
                         "input x : 2\ny = x + 0.5 * (y | lowpass(3 kHz) | delay(12.5 ms))\noutput y\n", at)
                         .run(x);
  CHECK(relative_error(program.run(x), want) < 1e-13);
  // Shorter than the block a Processor was prepared for: the loop still closes sample-exactly.
  fxc::Processor p = program.processor();
  p.prepare(2048);
  p.set("time", "1 ms");
  fxc::Signal short_loop = fxc::Program::from_source(
                               "input x : 2\ny = x + 0.5 * (y | lowpass(3 kHz) | delay(1 ms))\noutput y\n", at)
                               .run(x);
  CHECK(relative_error(run_processor(p, x, 4, 2048), short_loop) < 1e-13);
  CHECK_THROWS_AS(program.set("time", 0.0), fxc::Error);
}

TEST_CASE("a looped batch equals its items run one by one") {
  fxc::Program program = fxc::Program::from_source(kTangle, options(fxc::DType::f64));
  std::vector<std::vector<fxc::Signal>> items;
  for (unsigned i = 0; i < 3; ++i) items.push_back({noise(2, 3000 + 500 * i, fxc::DType::f64, 20 + i)});
  auto batch = program.run_batch(items);
  REQUIRE(batch.size() == items.size());
  for (std::size_t i = 0; i < items.size(); ++i)
    CHECK(relative_error(batch[i][0], program.run(items[i][0])) < 1e-13);
}

TEST_CASE("a loop's channel count comes from the input it is bound to") {
  fxc::Program program =
      fxc::Program::from_source("input x\ny = x + 0.5 * (y | delay(10))\noutput y\n", options(fxc::DType::f64));
  fxc::Signal x = noise(3, 500, fxc::DType::f64);
  fxc::Signal y = program.run(x);
  CHECK(y.channels() == 3);
  CHECK(y.at(2, 10) == doctest::Approx(x.at(2, 10) + 0.5 * x.at(2, 0)));
}

TEST_CASE("the dumps show a loop: fused into one kernel, or run in blocks") {
  // An echo whose filter is after the delay goes through one mix: one chain holds it
  // (fuse-loops). With the filter before the delay (kEcho) it runs in blocks.
  fxc::Program echo = fxc::Program::from_source(
      "input x : 2\ny = x + 0.5 * (y | delay(240) | lowpass(3 kHz))\noutput y\n", options(fxc::DType::f64));
  std::string fused = echo.dump("ir-opt");
  CHECK(fused.find("loop_read{amount=240}") != std::string::npos);
  CHECK(fused.find("the loop runs in this kernel") != std::string::npos);
  CHECK(fused.find("feedback %") == std::string::npos);
  CHECK(echo.dump("ir").find("feedback %") != std::string::npos);  // before the passes
  CHECK(fxc::Program::from_source(kEcho, options(fxc::DType::f64)).dump("ir-opt").find("its loop runs in blocks of up to 240") !=
        std::string::npos);
  // Two loops through each other's mixes are not one mix: they run in blocks of their delays.
  fxc::Program tangle = fxc::Program::from_source(kTangle, options(fxc::DType::f64));
  CHECK(tangle.dump("ir-opt").find("its loop runs in blocks of up to 29 samples") != std::string::npos);
  CHECK(tangle.dump("dot").find("style=dashed") != std::string::npos);
}

}  // namespace

namespace {

TEST_CASE("a linear loop has a frequency response: the comb's and the allpass's closed forms") {
  const double fs = 48000;
  std::vector<double> hz;
  for (int k = 1; k < 200; ++k) hz.push_back(k * 119.0);
  auto response = [&](const char* source) {
    auto r = fxc::Program::from_source(source, options(fxc::DType::f64)).frequency_response(hz);
    REQUIRE(r.size() == 1);
    return r[0].response;
  };
  auto comb = response("input x : 1\ny = x + 0.7 * (y | delay(23))\noutput y\n");
  auto allpass = response("input x : 1\nw = x + 0.7 * (w | delay(23))\noutput -0.7 * w + (w | delay(23))\n");
  for (std::size_t k = 0; k < hz.size(); ++k) {
    std::complex<double> z = std::polar(1.0, -2 * M_PI * hz[k] / fs * 23);
    CHECK(std::abs(comb[k] - 1.0 / (1.0 - 0.7 * z)) < 1e-12);
    CHECK(std::abs(std::abs(allpass[k]) - 1.0) < 1e-12);
  }
  // A loop through a non-linear stage has none.
  CHECK_THROWS_AS(fxc::Program::from_source("input x : 1\ny = x + 0.5 * (y | tanh() | delay(3))\noutput y\n",
                                            options(fxc::DType::f64))
                      .frequency_response(hz),
                  fxc::Error);
}

}  // namespace

namespace {

TEST_CASE("a routed graph's batch equals its items run one by one") {
  // Every routing kind, with outputs of other channel counts than the input: items side by
  // side must each be routed alike (select, block-diagonal matrix, regrouped concat).
  const char* source =
      "input x : 2\n"
      "left, right = x\n"
      "output wide = [right, x | sum_channels(), left | pan(0.4)]\n"
      "output ms = x | ms_encode() | mix([[1, 0.5], [0, 2], [0.25, 0.25]])\n"
      "output y = x[1, 0] + 0.5 * (y | lowpass(2 kHz) | delay(17))\n";
  fxc::Program program = fxc::Program::from_source(source, options(fxc::DType::f64));
  std::vector<std::vector<fxc::Signal>> items;
  for (unsigned i = 0; i < 3; ++i) items.push_back({noise(2, 700 + 100 * i, fxc::DType::f64, 40 + i)});
  auto batch = program.run_batch(items);
  REQUIRE(batch.size() == items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::vector<fxc::Signal> one = program.run(items[i]);
    REQUIRE(batch[i].size() == one.size());
    CHECK(one[0].channels() == 4);
    CHECK(one[1].channels() == 3);
    for (std::size_t o = 0; o < one.size(); ++o) CHECK(relative_error(batch[i][o], one[o]) < 1e-13);
  }
}

}  // namespace

namespace {

TEST_CASE("a Processor with routing takes new values between blocks") {
  // New values reach every kernel; routing steps have none to take (this aborted once).
  fxc::Program program = fxc::Program::from_source(
      "input x : 2\ng = 0.5 in [0, 1]\noutput x | swap() | gain(g) | ms_encode()\n", options(fxc::DType::f64));
  fxc::Processor p = program.processor();
  p.prepare(64);
  fxc::Signal x = noise(2, 64, fxc::DType::f64, 3);
  p.set("g", 0.25);
  fxc::Signal y = run_processor(p, x, 1, 64);
  for (std::size_t n = 0; n < 64; ++n) {
    CHECK(y.at(0, n) == doctest::Approx(0.25 * (x.at(1, n) + x.at(0, n)) / 2));
    CHECK(y.at(1, n) == doctest::Approx(0.25 * (x.at(1, n) - x.at(0, n)) / 2));
  }
}

}  // namespace
