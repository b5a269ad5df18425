// SPDX-License-Identifier: Apache-2.0
#include "passes/precision_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>

namespace fxc::passes {
namespace {

// One transposed-direct-form-II section in type T, as sosfilt and the kernels run it.
template <class T>
struct Tdf2 {
  T b0, b1, b2, a1, a2, s1 = 0, s2 = 0;
  explicit Tdf2(const design::Section& s)
      : b0(static_cast<T>(s.b0)), b1(static_cast<T>(s.b1)), b2(static_cast<T>(s.b2)), a1(static_cast<T>(s.a1)),
        a2(static_cast<T>(s.a2)) {}
  T step(T x) {
    T y = b0 * x + s1;
    s1 = b1 * x - a1 * y + s2;
    s2 = b2 * x - a2 * y;
    return y;
  }
};

// The measurement of one cascade: Narrow's error against Wide's. The noise goes through the
// first `prefix` sections in Wide in both, rounded to Narrow before the rest in the narrow
// cascade (split-precision's hot part, whose float64 output a float32 signal carries on).
template <class Narrow, class Wide>
double measure_after(const std::vector<design::Section>& sections, std::size_t prefix) {
  std::vector<Tdf2<Wide>> before(sections.begin(), sections.begin() + static_cast<std::ptrdiff_t>(prefix));
  std::vector<Tdf2<Narrow>> narrow(sections.begin() + static_cast<std::ptrdiff_t>(prefix), sections.end());
  std::vector<Tdf2<Wide>> wide(sections.begin() + static_cast<std::ptrdiff_t>(prefix), sections.end());
  // r < 0.99: 0.99^4096 < 1e-17. The sections before are those at r >= 0.99: longer, so that
  // their start from rest has faded before the measurement (0.999^16384 < 1e-7).
  const int warm_up = prefix == 0 ? 4096 : 16384;
  constexpr int kMeasured = 8192;
  std::uint64_t seed = 0x9e3779b97f4a7c15ULL;
  double error2 = 0, signal2 = 0;
  for (int n = 0; n < warm_up + kMeasured; ++n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;  // a fixed LCG: the same every compile
    float x = static_cast<float>(static_cast<double>(seed >> 40) / static_cast<double>(1ULL << 24) * 2 - 1);
    Wide shared = x;
    for (auto& s : before) shared = s.step(shared);
    Narrow yn = static_cast<Narrow>(shared);
    Wide yw = shared;
    for (auto& s : narrow) yn = s.step(yn);
    for (auto& s : wide) yw = s.step(yw);
    if (!std::isfinite(yn) || !std::isfinite(yw)) return INFINITY;
    if (n < warm_up) continue;
    const double e = static_cast<double>(static_cast<Wide>(yn) - yw);
    error2 += e * e;
    signal2 += static_cast<double>(yw) * static_cast<double>(yw);
  }
  // Near-silent outputs (a stopband) are measured against a floor of 1e-3 of full scale, as
  // the accuracy tests do (docs/testing.md).
  double floor2 = 1e-6 * kMeasured;
  return std::sqrt(error2 / std::max(signal2, floor2));
}

// `measured(sections, prefix)`, remembered by coefficients and prefix: every set() of a live
// parameter schedules (and designs) the graph again, and what it does not reach would be
// measured again to the same result.
template <double (*measured)(const std::vector<design::Section>&, std::size_t)>
double remembered(const std::vector<design::Section>& sections, std::size_t prefix = 0) {
  if (sections.size() <= prefix) return 0;
  static std::mutex mutex;
  static std::unordered_map<std::string, double> known;
  std::string key(reinterpret_cast<const char*>(sections.data()), sections.size() * sizeof(design::Section));
  key.append(reinterpret_cast<const char*>(&prefix), sizeof prefix);
  {
    std::lock_guard lock(mutex);
    if (auto it = known.find(key); it != known.end()) return it->second;
  }
  double error = measured(sections, prefix);
  std::lock_guard lock(mutex);
  if (known.size() >= 4096) known.clear();
  known.emplace(std::move(key), error);
  return error;
}

}  // namespace

double float32_state_error(const std::vector<design::Section>& sections) {
  return remembered<measure_after<float, double>>(sections);
}

double float32_state_error_after(const std::vector<design::Section>& before,
                                 const std::vector<design::Section>& sections) {
  std::vector<design::Section> all = before;
  all.insert(all.end(), sections.begin(), sections.end());
  return remembered<measure_after<float, double>>(all, before.size());
}

double float64_state_error(const std::vector<design::Section>& sections) {
  // x86's long double has 11 more bits; where it has none (another platform), nothing is known.
  if constexpr (std::numeric_limits<long double>::digits <= std::numeric_limits<double>::digits) return 0;
  else return remembered<measure_after<double, long double>>(sections);
}

}  // namespace fxc::passes
