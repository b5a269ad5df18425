// SPDX-License-Identifier: Apache-2.0
// The chunked scan's fix-up (add_start_responses), which steps chunks side by side in vectors,
// against the loop it replaced: one chunk at a time through LinearChain::step, stopping at the
// first multiple of 32 samples where the state has decayed. Bit for bit, since a stop one check
// early or late changes the output by less than any tolerance a filter test could use.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "runtime/chunked_scan.h"
#include "runtime/linear_chain.h"

namespace fxc {
namespace {

// The loop before 2026-12-02 (runtime/chunked_scan.cpp), kept here as the definition.
template <class T>
void one_at_a_time(const LinearChain& linear, const std::vector<double>& starts, std::vector<std::vector<T>>& out,
                   double tolerance) {
  const auto d = static_cast<std::size_t>(linear.dimension());
  for (std::size_t lane = 0; lane < out.size(); ++lane) {
    std::vector<double> z(starts.begin() + static_cast<std::ptrdiff_t>(lane * d),
                          starts.begin() + static_cast<std::ptrdiff_t>((lane + 1) * d));
    double scale = 0;
    for (double v : z) scale = std::max(scale, std::abs(v));
    const bool finite = std::all_of(z.begin(), z.end(), [](double v) { return std::isfinite(v); });
    if (finite && scale == 0) continue;
    std::vector<T>& y = out[lane];
    for (std::size_t i = 0; i < y.size(); ++i) {
      y[i] = static_cast<T>(y[i] + linear.step(z.data(), 0.0));
      if (finite && (i & 31) == 31) {
        double left = 0;
        for (double v : z) left = std::max(left, std::abs(v));
        if (left <= tolerance * scale) break;
      }
    }
  }
}

// Two sections and a gain, the slower pole at r = 0.999 (23000 samples to 1e-10), the other
// fast: chunks stop at different checks, as their start states' shapes differ.
ir::Chain slow_chain() {
  ir::SosCascade fast, slow;
  fast.sections = {{0.2, 0.4, 0.2, -1.5, 0.81}};
  slow.sections = {{0.5, 0.1, -0.3, -1.997, 0.998001}};
  ir::Chain chain;
  chain.stages = {fast, ir::Gain{-0.7}, slow};
  return chain;
}

template <class T>
void check_against_one_at_a_time(std::int64_t chunks, std::int64_t length, int threads, unsigned seed) {
  const LinearChain linear(slow_chain());
  const auto d = static_cast<std::size_t>(linear.dimension());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> starts(static_cast<std::size_t>(chunks) * d);
  for (std::size_t k = 0; k < static_cast<std::size_t>(chunks); ++k) {
    const double scale = std::pow(10.0, 6 * u(rng));  // 1e-6 to 1e6: stops at different checks
    for (std::size_t r = 0; r < d; ++r) starts[k * d + r] = scale * u(rng);
    if (k % 5 == 2) std::fill(starts.begin() + static_cast<std::ptrdiff_t>(k * d),
                              starts.begin() + static_cast<std::ptrdiff_t>((k + 1) * d), 0.0);  // at rest
    if (k % 5 == 3) starts[k * d] = -0.0, starts[k * d + 1] = 1e-300;  // a state as small as can be
  }
  if (chunks > 6) starts[6 * d + 1] = std::numeric_limits<double>::quiet_NaN();
  if (chunks > 7) starts[7 * d + 2] = -std::numeric_limits<double>::infinity();
  std::vector<std::vector<T>> want(static_cast<std::size_t>(chunks));
  for (auto& y : want) {
    y.resize(static_cast<std::size_t>(length));
    for (T& v : y) v = static_cast<T>(u(rng));
  }
  std::vector<std::vector<T>> got = want;
  const double tolerance = std::is_same_v<T, float> ? 1e-10 : 1e-19;
  one_at_a_time(linear, starts, want, tolerance);
  std::vector<T*> out;
  for (auto& y : got) out.push_back(y.data());
  add_start_responses<T>(linear, starts, out.data(), chunks, length, tolerance, threads);
  std::size_t differ = 0;
  for (std::size_t k = 0; k < want.size(); ++k)
    differ += std::memcmp(want[k].data(), got[k].data(), want[k].size() * sizeof(T)) != 0;
  CHECK(differ == 0);
}

}  // namespace

TEST_CASE("the chunked scan's fix-up gives the bits of one chunk at a time") {
  // Chunk counts on both sides of the groups' widths (4 and 8), lengths on both sides of a check
  // (32) and of the decay, one and two threads (two make groups of 4 where groups of 8 would be
  // too few), float and double outputs (their tolerances differ).
  for (std::int64_t chunks : {1, 3, 4, 5, 8, 9, 17})
    for (std::int64_t length : {1, 31, 32, 33, 100, 3000, 30000})
      for (int threads : {1, 2}) {
        CAPTURE(chunks);
        CAPTURE(length);
        CAPTURE(threads);
        const auto seed = static_cast<unsigned>(chunks * 1000 + length + threads);
        check_against_one_at_a_time<float>(chunks, length, threads, seed);
        check_against_one_at_a_time<double>(chunks, length, threads, seed);
      }
}

}  // namespace fxc
