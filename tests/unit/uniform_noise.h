// SPDX-License-Identifier: Apache-2.0
// Seeded white noise in [-1, 1), for tests that compare a computation with its definition.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace fxc::test {

inline std::vector<double> uniform_noise(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(n);
  for (double& v : x) v = u(rng);
  return x;
}

}  // namespace fxc::test
