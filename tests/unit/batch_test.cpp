// SPDX-License-Identifier: Apache-2.0
// Batches: many signals, one dispatch per kernel, each item's output as if run alone.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "driver/compile_cpu.h"
#include "driver/run_batch.h"
#include "frontend/dsl.h"
#include "runtime/batch.h"
#include "runtime/bind_inputs.h"
#include "runtime/counters.h"
#include "runtime/cpu_executor.h"
#include "worse.h"

using fxc::test::worse;

namespace fxc {
namespace {

using namespace fxc::literals;

Signal noise(int channels, std::size_t samples, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Signal s(channels, samples);
  for (int c = 0; c < channels; ++c)
    for (double& v : s.f64(c)) v = u(rng);
  return s;
}

TEST_CASE("a batch of different lengths: one dispatch per kernel, each item as if alone") {
  Flow x = input("x", 2), side = input("side");
  ir::Graph g = make_graph("b", {output("y", (x | butter(4, 80_Hz, highpass) | tanh()) +
                                                 0.5 * (side | delay(3_samples) | fir({0.5, 0.5}))),
                                 output("z", side | lowpass(2_kHz))});
  for (DType dtype : {DType::f64, DType::f32}) {
    CAPTURE(name(dtype));
    std::vector<BatchItem> items;
    for (std::size_t length : {std::size_t{300}, std::size_t{0}, std::size_t{1}, std::size_t{1000}})
      items.push_back({noise(2, length, length + 1), noise(2, length, length + 2)});
    CpuCompileRequest request;
    request.dtype = dtype;
    DiagnosticEngine diags;
    std::uint64_t before = counters().dispatches;
    auto batch = run_batch(g, items, request, diags);
    REQUIRE_MESSAGE(batch, diags.str());
    std::uint64_t batch_dispatches = counters().dispatches - before;
    CHECK(batch_dispatches == 4);  // three chains and the sum, whatever the number of items

    // Tolerance: float64 1e-12 and float32 1e-6 relative to full scale. A batch of 8 channels
    // may run another strategy (channel lanes) than one item alone (wavefront): the same
    // operations, which fmuladd keeps identical; the bound leaves room for libm differences.
    double tolerance = dtype == DType::f64 ? 1e-12 : 1e-6;
    for (std::size_t b = 0; b < items.size(); ++b) {
      CAPTURE(b);
      auto alone = compile_for_cpu(*bind_inputs(g, items[b], diags), request, diags);
      REQUIRE(alone);
      auto want = execute_cpu(alone->scheduled, *alone->kernels, items[b]);
      REQUIRE(want);
      REQUIRE((*batch)[b].size() == want->size());
      for (std::size_t o = 0; o < want->size(); ++o) {
        const Signal& got = (*batch)[b][o];
        REQUIRE(got.samples() == (*want)[o].samples());
        REQUIRE(got.channels() == (*want)[o].channels());
        double worst = 0;
        for (std::size_t c = 0; c < got.channels(); ++c)
          for (std::size_t n = 0; n < got.samples(); ++n)
            worst = worse(worst, std::abs(got.at(c, n) - (*want)[o].at(c, n)));
        CHECK(worst <= tolerance);
      }
    }
  }
}

TEST_CASE("batch items that disagree are errors") {
  Flow x = input("x");
  ir::Graph g = make_graph("b", {output("y", x | lowpass(1_kHz))});
  DiagnosticEngine diags;
  CHECK_FALSE(run_batch(g, {{noise(1, 10, 1)}, {noise(2, 10, 2)}}, {}, diags));
  CHECK(diags.str().find("batch item 1 does not match the first") != std::string::npos);
  DiagnosticEngine d2;
  CHECK_FALSE(run_batch(g, {{noise(1, 10, 1), noise(1, 10, 1)}}, {}, d2));
  CHECK(d2.str().find("has 2 signal(s) for a graph of 1 input(s)") != std::string::npos);
}

}  // namespace
}  // namespace fxc
