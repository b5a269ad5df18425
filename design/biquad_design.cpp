// SPDX-License-Identifier: Apache-2.0
// Audio EQ Cookbook biquads (Robert Bristow-Johnson), normalized by a0.
// w0 = 2 pi f0 / fs, alpha = sin(w0) / (2 Q), A = 10^(gain_db / 40); the shelves use the
// cookbook's Q form (alpha from Q, and the 2 sqrt(A) alpha term).
#include <cmath>
#include <numbers>

#include "design/filter_design.h"
#include "design/parameter_checks.h"

namespace fxc::design {

DesignResult<Section> design_biquad(const BiquadSpec& spec, double fs_hz) {
  if (auto error = check_sample_rate(fs_hz)) return Unexpected{*error};
  if (auto error = check_frequencies("f0", "f0", {spec.f0_hz}, fs_hz)) return Unexpected{*error};
  if (auto error = check_finite("q", "q", spec.q)) return Unexpected{*error};
  if (!(spec.q > 0)) {
    return Unexpected{DesignError{"q", "q must be positive, got " + fmt(spec.q)}};
  }
  if (auto error = check_finite("gain", "gain", spec.gain_db)) return Unexpected{*error};

  const double w0 = 2 * std::numbers::pi * spec.f0_hz / fs_hz;
  const double cos_w0 = std::cos(w0);
  // 1 - cos(w0) and 1 + cos(w0) as 2 sin^2(w0/2) and 2 cos^2(w0/2), and sin(w0) from both
  // halves: near 0 Hz (and near Nyquist) the cookbook's forms cancel, and a 1 Hz lowpass at
  // 192 kHz lost 7 of its b's digits. cos(w0/2) is the sine of the distance to Nyquist, which
  // fs/2 - f0 holds exactly.
  const double sin_half = std::sin(std::numbers::pi * spec.f0_hz / fs_hz);
  const double cos_half = std::sin(std::numbers::pi * (fs_hz / 2 - spec.f0_hz) / fs_hz);
  const double one_minus_cos = 2 * sin_half * sin_half;
  const double one_plus_cos = 2 * cos_half * cos_half;
  const double alpha = 2 * sin_half * cos_half / (2 * spec.q);
  const double a = std::pow(10.0, spec.gain_db / 40);
  const double two_sqrt_a_alpha = 2 * std::sqrt(a) * alpha;

  double b0 = 0, b1 = 0, b2 = 0, a0 = 1, a1 = 0, a2 = 0;
  switch (spec.type) {
    case BiquadType::lowpass:
      b0 = one_minus_cos / 2;
      b1 = one_minus_cos;
      b2 = one_minus_cos / 2;
      a0 = 1 + alpha;
      a1 = -2 * cos_w0;
      a2 = 1 - alpha;
      break;
    case BiquadType::highpass:
      b0 = one_plus_cos / 2;
      b1 = -one_plus_cos;
      b2 = one_plus_cos / 2;
      a0 = 1 + alpha;
      a1 = -2 * cos_w0;
      a2 = 1 - alpha;
      break;
    case BiquadType::bandpass:  // constant 0 dB peak gain
      b0 = alpha;
      b1 = 0;
      b2 = -alpha;
      a0 = 1 + alpha;
      a1 = -2 * cos_w0;
      a2 = 1 - alpha;
      break;
    case BiquadType::notch:
      b0 = 1;
      b1 = -2 * cos_w0;
      b2 = 1;
      a0 = 1 + alpha;
      a1 = -2 * cos_w0;
      a2 = 1 - alpha;
      break;
    case BiquadType::allpass:
      b0 = 1 - alpha;
      b1 = -2 * cos_w0;
      b2 = 1 + alpha;
      a0 = 1 + alpha;
      a1 = -2 * cos_w0;
      a2 = 1 - alpha;
      break;
    case BiquadType::peaking:
      b0 = 1 + alpha * a;
      b1 = -2 * cos_w0;
      b2 = 1 - alpha * a;
      a0 = 1 + alpha / a;
      a1 = -2 * cos_w0;
      a2 = 1 - alpha / a;
      break;
    case BiquadType::lowshelf:
      b0 = a * ((a + 1) - (a - 1) * cos_w0 + two_sqrt_a_alpha);
      b1 = 2 * a * ((a - 1) - (a + 1) * cos_w0);
      b2 = a * ((a + 1) - (a - 1) * cos_w0 - two_sqrt_a_alpha);
      a0 = (a + 1) + (a - 1) * cos_w0 + two_sqrt_a_alpha;
      a1 = -2 * ((a - 1) + (a + 1) * cos_w0);
      a2 = (a + 1) + (a - 1) * cos_w0 - two_sqrt_a_alpha;
      break;
    case BiquadType::highshelf:
      b0 = a * ((a + 1) + (a - 1) * cos_w0 + two_sqrt_a_alpha);
      b1 = -2 * a * ((a - 1) + (a + 1) * cos_w0);
      b2 = a * ((a + 1) + (a - 1) * cos_w0 - two_sqrt_a_alpha);
      a0 = (a + 1) - (a - 1) * cos_w0 + two_sqrt_a_alpha;
      a1 = 2 * ((a - 1) - (a + 1) * cos_w0);
      a2 = (a + 1) - (a - 1) * cos_w0 - two_sqrt_a_alpha;
      break;
  }
  const Section section{b0 / a0, b1 / a0, b2 / a0, a1 / a0, a2 / a0};
  for (double v : {section.b0, section.b1, section.b2, section.a1, section.a2}) {
    if (!std::isfinite(v)) {
      return Unexpected{
          DesignError{spec.type == BiquadType::peaking || spec.type == BiquadType::lowshelf ||
                              spec.type == BiquadType::highshelf
                          ? "gain"
                          : "q",
                      "the " + std::string(name(spec.type)) +
                          " biquad has non-finite coefficients for " + "f0 = " + fmt(spec.f0_hz) +
                          " Hz, q = " + fmt(spec.q) + ", gain = " + fmt(spec.gain_db) + " dB"}};
    }
  }
  return section;
}

}  // namespace fxc::design
