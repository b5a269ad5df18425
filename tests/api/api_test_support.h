// SPDX-License-Identifier: Apache-2.0
// What the public-API tests share: Options for a test (48 kHz, memory-only cache) and seeded
// noise signals.
#pragma once

#include <fxc/fxc.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>
#include "worse.h"

namespace fxc::test {

inline Options options(DType dtype = DType::f64, Target target = Target::cpu) {
  Options o;
  o.sample_rate_hz = 48000;
  o.dtype = dtype;
  o.target = target;
  o.cache_directory = "none";
  return o;
}

/// Largest |a - b| over every sample, relative to the largest |b|.
inline double relative_error(const Signal& a, const Signal& b) {
  REQUIRE(a.channels() == b.channels());
  REQUIRE(a.samples() == b.samples());
  double worst = 0, scale = 0;
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t i = 0; i < a.samples(); ++i) {
      worst = worse(worst, std::abs(a.at(c, i) - b.at(c, i)));
      scale = std::max(scale, std::abs(b.at(c, i)));
    }
  return scale > 0 ? worst / scale : worst;
}

/// Whether every sample of `a` equals `b`'s (a NaN equals nothing: outputs left unwritten as
/// NaN never pass).
inline bool same_bits(const Signal& a, const Signal& b) {
  if (a.channels() != b.channels() || a.samples() != b.samples() || a.dtype() != b.dtype()) return false;
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t i = 0; i < a.samples(); ++i)
      if (a.dtype() == DType::f32 ? a.f32(c)[i] != b.f32(c)[i] : a.f64(c)[i] != b.f64(c)[i]) return false;
  return true;
}

/// Uniform noise in [-1, 1], seeded.
inline Signal noise(std::size_t channels, std::size_t samples, DType dtype, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Signal s(channels, samples, dtype);
  for (std::size_t c = 0; c < channels; ++c)
    for (std::size_t i = 0; i < samples; ++i) {
      if (dtype == DType::f32) s.f32(c)[i] = static_cast<float>(u(rng));
      else s.f64(c)[i] = u(rng);
    }
  return s;
}

/// Runs a float64 `x` (one input, one output) through a Processor in blocks of random lengths
/// from 1 to `longest`, seeded: a stream as an audio host makes one.
inline Signal run_processor(Processor& p, const Signal& x, unsigned seed, std::size_t longest) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> length(1, longest);
  Signal out(x.channels(), x.samples(), DType::f64);
  for (std::size_t start = 0; start < x.samples();) {
    std::size_t frames = std::min(length(rng), x.samples() - start);
    std::vector<const double*> in;
    std::vector<double*> o;
    for (std::size_t c = 0; c < x.channels(); ++c) {
      in.push_back(x.f64(c).data() + start);
      o.push_back(out.f64(c).data() + start);
    }
    p.process(in.data(), o.data(), frames);
    start += frames;
  }
  return out;
}

}  // namespace fxc::test
