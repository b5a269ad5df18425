// SPDX-License-Identifier: Apache-2.0
// LinearChain, the float64 state-space view of a linear chain that both backends' chunked scans
// carry with: its transition powers, its input-to-state table and its side-by-side decay against
// the chain stepped a sample at a time (the definition they must agree with).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "runtime/linear_chain.h"
#include "worse.h"

using fxc::test::worse;

namespace fxc {
namespace {

// Two stages of sections with a gain between them (a gain keeps no state), poles at radius
// 0.9 to 0.999 (the last one slow to decay, as a low cutoff's).
ir::Chain test_chain() {
  ir::SosCascade first, second;
  first.sections = {{0.2, 0.4, 0.2, -1.5, 0.81}, {1.0, -2.0, 1.0, -1.9, 0.9025}};
  second.sections = {{0.5, 0.1, -0.3, -1.99, 0.998001}};
  ir::Chain chain;
  chain.stages = {first, ir::Gain{0.7}, second};
  return chain;
}

std::vector<double> noise(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(n);
  for (double& v : x) v = u(rng);
  return x;
}

TEST_CASE("LinearChain: the input-to-state table sums to the state the chain's steps leave") {
  const LinearChain chain(test_chain());
  REQUIRE(chain.dimension() == 6);
  const auto d = static_cast<std::size_t>(chain.dimension());
  for (std::int64_t length : {1, 2, 17, 1024}) {
    CAPTURE(length);
    const std::vector<double> table = chain.input_to_state(length);
    REQUIRE(table.size() == static_cast<std::size_t>(length) * d);
    const std::vector<double> x = noise(static_cast<std::size_t>(length), 3);
    std::vector<double> stepped(d, 0.0);
    for (double v : x) chain.step(stepped.data(), v);
    double scale = 0, worst = 0;
    for (std::size_t r = 0; r < d; ++r) {
      double sum = 0;
      for (std::size_t n = 0; n < x.size(); ++n) sum += table[n * d + r] * x[n];
      scale = std::max(scale, std::abs(stepped[r]));
      worst = worse(worst, std::abs(sum - stepped[r]));
    }
    // The same float64 operations in another order: rounding only (measured about 1e-15 of the
    // largest state).
    CHECK(worst <= 1e-12 * scale);
  }
  // Its last row is B (one sample of 1 from zero), its first A^(length - 1) B.
  const std::vector<double> table = chain.input_to_state(5);
  std::vector<double> b(d, 0.0);
  chain.step(b.data(), 1.0);
  for (std::size_t r = 0; r < d; ++r) CHECK(table[4 * d + r] == b[r]);
  const std::vector<double> a4 = chain.transition_power(4);
  for (std::size_t r = 0; r < d; ++r) {
    double sum = 0;
    for (std::size_t q = 0; q < d; ++q) sum += a4[r * d + q] * b[q];
    CHECK(table[r] == doctest::Approx(sum).epsilon(1e-12));
  }
  CHECK(chain.input_to_state(0).empty());
}

TEST_CASE("LinearChain: A^n carries a state as n steps of zero input do") {
  const LinearChain chain(test_chain());
  const auto d = static_cast<std::size_t>(chain.dimension());
  const std::vector<double> start = noise(d, 5);
  for (std::int64_t n : {0, 1, 7, 300}) {
    CAPTURE(n);
    std::vector<double> stepped = start;
    for (std::int64_t i = 0; i < n; ++i) chain.step(stepped.data(), 0.0);
    const std::vector<double> a = chain.transition_power(n);
    for (std::size_t r = 0; r < d; ++r) {
      double sum = 0;
      for (std::size_t q = 0; q < d; ++q) sum += a[r * d + q] * start[q];
      CHECK(sum == doctest::Approx(stepped[r]).epsilon(1e-10).scale(1.0));
    }
  }
}

TEST_CASE("LinearChain: decay steps eight or four states side by side with step's bits") {
  // Bit for bit, not within a tolerance: the chunked scan's outputs must not depend on how
  // many chunks it fixes up at once, nor on whether the CPU has AVX2 (no FMA in either).
  ir::Chain with_negative_gain = test_chain();
  with_negative_gain.stages.insert(with_negative_gain.stages.begin(), ir::Gain{-1.5});  // 0 * -1.5 is -0.0
  for (const ir::Chain& description : {test_chain(), with_negative_gain})
    for (int width : {LinearChain::kDecayLanes, LinearChain::kNarrowDecayLanes}) {
      CAPTURE(width);
      const LinearChain chain(description);
      const auto d = static_cast<std::size_t>(chain.dimension());
      const auto lanes_wide = static_cast<std::size_t>(width);
      std::vector<std::vector<double>> lanes;
      for (std::size_t l = 0; l < lanes_wide; ++l) lanes.push_back(noise(d, 10 + static_cast<unsigned>(l)));
      std::fill(lanes[3].begin(), lanes[3].end(), 0.0);  // a lane at rest stays at rest
      lanes[1][0] = 1e300;                                // and one far from the others' scale
      std::vector<double> z(d * lanes_wide);
      for (std::size_t r = 0; r < d; ++r)
        for (std::size_t l = 0; l < lanes_wide; ++l) z[r * lanes_wide + l] = lanes[l][r];
      for (int samples : {1, 32, 5}) {  // in calls of any length, as the fix-up's last block
        CAPTURE(samples);
        std::vector<double> y(static_cast<std::size_t>(samples) * lanes_wide);
        chain.decay(z.data(), y.data(), samples, width);
        for (std::size_t l = 0; l < lanes_wide; ++l) {
          CAPTURE(l);
          for (int i = 0; i < samples; ++i) {
            const double want = chain.step(lanes[l].data(), 0.0);
            const double got = y[static_cast<std::size_t>(i) * lanes_wide + l];
            CHECK(std::signbit(got) == std::signbit(want));
            CHECK(got == want);
          }
          for (std::size_t r = 0; r < d; ++r) CHECK(z[r * lanes_wide + l] == lanes[l][r]);
        }
      }
    }
  double z = 0, y = 0;
  CHECK_THROWS_AS(LinearChain(test_chain()).decay(&z, &y, 1, 2), std::invalid_argument);
}

}  // namespace
}  // namespace fxc
