// SPDX-License-Identifier: Apache-2.0
#include "corpus/sample_scan.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <span>
#include <type_traits>

namespace fxc::corpus {

namespace {

constexpr std::size_t kLanes = 8;  // independent accumulators: no chain through one register

template <class T>
using BitsOf = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

// The magnitude's bits (the sign cleared) order like the magnitudes, and above the infinity's
// come the NaNs: the largest of them is the peak, or a NaN.
template <class T>
BitsOf<T> largest_magnitude_bits(std::span<const T> xs) {
  using Bits = BitsOf<T>;
  constexpr Bits kMagnitude = ~Bits{0} >> 1;
  Bits lanes[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= xs.size(); i += kLanes)
    for (std::size_t k = 0; k < kLanes; ++k) lanes[k] = std::max(lanes[k], std::bit_cast<Bits>(xs[i + k]) & kMagnitude);
  for (; i < xs.size(); ++i) lanes[0] = std::max(lanes[0], std::bit_cast<Bits>(xs[i]) & kMagnitude);
  return *std::max_element(lanes, lanes + kLanes);
}

template <class T>
bool any_non_finite(std::span<const T> xs) {
  using Bits = BitsOf<T>;
  constexpr Bits kExponent = static_cast<Bits>(sizeof(T) == 4 ? 0x7f800000u : 0x7ff0000000000000u);
  Bits lanes[kLanes] = {};  // a lane's bits hold kExponent where a sample of it had all exponent bits set
  std::size_t i = 0;
  for (; i + kLanes <= xs.size(); i += kLanes)
    for (std::size_t k = 0; k < kLanes; ++k) {
      const Bits e = std::bit_cast<Bits>(xs[i + k]) & kExponent;
      lanes[k] |= e == kExponent ? kExponent : Bits{0};
    }
  for (; i < xs.size(); ++i)
    if ((std::bit_cast<Bits>(xs[i]) & kExponent) == kExponent) return true;
  return std::any_of(lanes, lanes + kLanes, [](Bits b) { return b != 0; });
}

template <class T>
void count_non_finite(std::span<const T> xs, std::size_t channel, NonFiniteSamples& n) {
  if (!any_non_finite(xs)) return;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (std::isfinite(xs[i])) continue;
    ++(std::isnan(xs[i]) ? n.nans : n.infinities);
    if (n.nans + n.infinities == 1 || i < n.first_sample) n.first_sample = i, n.first_channel = channel;
  }
}

}  // namespace

double peak_magnitude(const Signal& s) {
  double peak = 0;
  for (std::size_t c = 0; c < s.channels(); ++c) {
    const double channel = s.dtype() == DType::f32
                               ? static_cast<double>(std::bit_cast<float>(largest_magnitude_bits(s.f32(c))))
                               : std::bit_cast<double>(largest_magnitude_bits(s.f64(c)));
    peak = larger_peak(peak, channel);
  }
  return peak;
}

NonFiniteSamples non_finite_samples(const Signal& s) {
  NonFiniteSamples n;
  for (std::size_t c = 0; c < s.channels(); ++c) {
    if (s.dtype() == DType::f32) count_non_finite(s.f32(c), c, n);
    else count_non_finite(s.f64(c), c, n);
  }
  return n;
}

}  // namespace fxc::corpus
