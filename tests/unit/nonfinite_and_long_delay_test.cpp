// SPDX-License-Identifier: Apache-2.0
// NaN and infinite samples reach the same outputs on the compiled kernels as on the reference
// interpreter, whatever the strategy (docs/errors.md); a delay longer than the signal costs
// the signal's length, not the delay's. The command-line view of both is in the badinput tier.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "expected_text.h"
#include "frontend/dsl.h"
#include "passes/pipeline.h"
#include "runtime/cpu_executor.h"
#include "runtime/fft_convolution.h"
#include "driver/kernel_cache.h"
#include "runtime/reference_interpreter.h"

namespace fxc {
namespace {

using namespace fxc::literals;

struct Compiled {
  ir::Graph scheduled;
  std::shared_ptr<const codegen::CpuKernels> kernels;
};

Compiled compile(const ir::Graph& g, DType dtype, std::int64_t length,
                 const passes::StrategyThresholds& thresholds = {}) {
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, 1, dtype}};
  context.binding.length_samples = length;
  context.thresholds = thresholds;
  auto scheduled = passes::run_pipeline(g, context);
  REQUIRE_MESSAGE(scheduled, diags.str());
  KernelCache cache("");
  auto kernels = cache.cpu_kernels(*scheduled, diags);
  REQUIRE(kernels);
  return {std::move(*scheduled), *kernels};
}

Signal sine(std::size_t samples, DType dtype) {
  Signal s(1, samples);
  for (std::size_t n = 0; n < samples; ++n) s.f64(0)[n] = 0.5 * std::sin(0.01 * static_cast<double>(n));
  return s.converted(dtype);
}

void set(Signal& s, std::size_t n, double v) {
  if (s.dtype() == DType::f32) s.f32(0)[n] = static_cast<float>(v);
  else s.f64(0)[n] = v;
}

// Where each signal is not finite must agree sample for sample.
void check_same_nonfinite(const Signal& a, const Signal& b) {
  REQUIRE(a.samples() == b.samples());
  std::size_t differ = 0, first = 0;
  for (std::size_t n = 0; n < a.samples(); ++n)
    if (std::isfinite(a.at(0, n)) != std::isfinite(b.at(0, n)) && differ++ == 0) first = n;
  CHECK_MESSAGE(differ == 0, differ << " samples differ in finiteness, the first at " << first);
}

std::size_t count_nonfinite(const Signal& s) {
  std::size_t count = 0;
  for (std::size_t n = 0; n < s.samples(); ++n) count += !std::isfinite(s.at(0, n));
  return count;
}

}  // namespace

TEST_CASE("a NaN stays in a chunked scan's state to the end, as in a sequential run") {
  ir::Graph g = make_graph("hp", {output("y", input("x", 1) | butter(4, 100_Hz, design::BandType::highpass))});
  const std::size_t n = 300000;  // many chunks of 4096 on any vector width
  // The chunked scan, whatever this host's cost model would choose: time chunks even where
  // the fix-up costs more than it saves.
  passes::StrategyThresholds chunky;
  chunky.chunked_min_samples = 0;
  chunky.chunk_decay_ratio = 0;
  chunky.chunk_length = 4096;
  Compiled c = compile(g, DType::f64, static_cast<std::int64_t>(n), chunky);
  bool chunked = false;
  for (const ir::Node& node : c.scheduled.nodes())
    if (const auto* chain = std::get_if<ir::Chain>(&node.op)) chunked |= chain->strategy == ir::IirStrategy::chunked_scan;
  REQUIRE(chunked);
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    CAPTURE(bad);
    Signal x = sine(n, DType::f64);
    set(x, 100000, bad);
    auto got = execute_cpu(c.scheduled, *c.kernels, {&x, 1});
    REQUIRE(got);
    DiagnosticEngine diags;
    auto want = run_reference(g, 48000.0, {&x, 1}, diags);
    REQUIRE(want);
    check_same_nonfinite((*got)[0], (*want)[0]);
    CHECK(count_nonfinite((*got)[0]) == n - 100000);
  }
}

TEST_CASE("an infinity reaches only the outputs its taps touch in an FFT convolution") {
  std::vector<double> taps(101);
  for (std::size_t k = 0; k < taps.size(); ++k) taps[k] = 1.0 / static_cast<double>(k + 1);
  std::vector<float> x(2000);
  for (std::size_t n = 0; n < x.size(); ++n) x[n] = static_cast<float>(std::sin(0.1 * static_cast<double>(n)));
  x[700] = std::numeric_limits<float>::infinity();
  x[1500] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> y(x.size()), history;
  fft_convolve(taps, x, y, 256, history);
  for (std::size_t n = 0; n < x.size(); ++n) {
    bool reached = (n >= 700 && n < 801) || (n >= 1500 && n < 1601);
    CAPTURE(n);
    CHECK(std::isfinite(y[n]) == !reached);
    if (reached) continue;
    double direct = 0;
    for (std::size_t k = 0; k < taps.size() && k <= n; ++k) direct += taps[k] * x[n - k];
    CHECK(y[n] == doctest::Approx(direct).epsilon(1e-4));
  }
}

TEST_CASE("an FFT convolution's non-finite outputs are the direct sums' own: NaN, +inf or -inf") {
  // The transform counts non-finite inputs as 0 and adds their products directly: +inf and
  // -inf in reach of one output make NaN there, a zero tap times an infinity makes NaN, as
  // the direct sum (the reference interpreter) does. Several steps of 156 new samples.
  std::vector<double> taps(101);
  for (std::size_t k = 0; k < taps.size(); ++k) taps[k] = (k % 7 == 3) ? 0.0 : 1.0 / static_cast<double>(k + 1);
  std::vector<float> x(1200);
  for (std::size_t n = 0; n < x.size(); ++n) x[n] = static_cast<float>(std::cos(0.07 * static_cast<double>(n)));
  const float inf = std::numeric_limits<float>::infinity();
  x[300] = inf;
  x[350] = -inf;  // 350 .. 400: both in reach
  x[700] = inf;   // tap 3 is zero: output 703 is 0 * inf
  x[1000] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> y(x.size()), history;
  fft_convolve(taps, x, y, 256, history);
  auto kind = [](double v) { return std::isnan(v) ? 0 : std::isinf(v) ? (v > 0 ? 1 : 2) : 3; };
  for (std::size_t n = 0; n < x.size(); ++n) {
    double direct = 0;
    for (std::size_t k = 0; k < taps.size() && k <= n; ++k) direct += taps[k] * static_cast<double>(x[n - k]);
    CAPTURE(n);
    CHECK(kind(y[n]) == kind(direct));
    if (std::isfinite(direct)) CHECK(y[n] == doctest::Approx(direct).epsilon(1e-4));
  }
}

TEST_CASE("a delay far longer than the signal runs in the signal's memory, whole or streamed") {
  ir::Graph g = make_graph("far", {output("y", input("x", 1) | delay(1000000000000_samples))});
  Compiled c = compile(g, DType::f64, 256);
  Signal x = sine(256, DType::f64);
  auto whole = execute_cpu(c.scheduled, *c.kernels, {&x, 1});
  REQUIRE(whole);
  CpuStream stream(c.scheduled, c.kernels);
  for (int block = 0; block < 4; ++block) {
    Signal part = sine(64, DType::f64);
    auto out = stream.process({&part, 1});
    REQUIRE(out);
    for (std::size_t n = 0; n < 64; ++n) CHECK((*out)[0].at(0, n) == 0.0);
  }
  for (std::size_t n = 0; n < 256; ++n) CHECK((*whole)[0].at(0, n) == 0.0);
}

TEST_CASE("a delay that wraps within a stream gives the whole signal's output") {
  ir::Graph g = make_graph("echo", {output("y", input("x", 1) | delay(100_samples))});
  Compiled c = compile(g, DType::f64, 7);
  Signal x = sine(700, DType::f64);
  CpuStream stream(c.scheduled, c.kernels);
  for (std::size_t start = 0; start < 700; start += 7) {
    Signal part(1, 7);
    for (std::size_t n = 0; n < 7; ++n) part.f64(0)[n] = x.f64(0)[start + n];
    auto out = stream.process({&part, 1});
    REQUIRE(out);
    for (std::size_t n = 0; n < 7; ++n) {
      std::size_t i = start + n;
      CHECK((*out)[0].at(0, n) == (i >= 100 ? x.f64(0)[i - 100] : 0.0));
    }
  }
}

}  // namespace fxc
