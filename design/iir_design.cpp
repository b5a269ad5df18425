// SPDX-License-Identifier: Apache-2.0
// scipy.signal.iirfilter(..., output='sos', fs=fs) for the five classic families:
// validate, build the analog prototype, prewarp the band edges, transform the prototype to
// the band type, map it to z with the bilinear transform, and split it into sections.
#include <cmath>
#include <numbers>

#include "design/analog_prototypes.h"
#include "design/filter_design.h"
#include "design/parameter_checks.h"
#include "design/zpk_to_sos.h"
#include "design/zpk_transforms.h"

namespace fxc::design {
namespace {

// SciPy has no cap. 64 is far above what audio filters use, and it is the range in which the
// Bessel root finder's extended precision is sized and tested.
constexpr int kMaxIirOrder = 64;
// Ripple and attenuation in dB; far past anything double precision can realize.
constexpr double kMaxRippleDb = 1000;

bool uses_rp(IirFamily family) {
  return family == IirFamily::cheby1 || family == IirFamily::ellip;
}
bool uses_rs(IirFamily family) {
  return family == IirFamily::cheby2 || family == IirFamily::ellip;
}

CheckResult check_ripple(std::string_view param, std::string_view what, double value_db) {
  if (auto error = check_finite(param, what, value_db)) return error;
  if (!(value_db > 0)) {
    return DesignError{std::string(param),
                       std::string(what) + " must be positive (in dB), got " + fmt(value_db)};
  }
  if (value_db > kMaxRippleDb) {
    return DesignError{std::string(param), std::string(what) + " must be at most " +
                                               fmt(kMaxRippleDb) + " dB, got " + fmt(value_db)};
  }
  return std::nullopt;
}

CheckResult check_spec(const IirSpec& spec, double fs_hz) {
  if (auto error = check_sample_rate(fs_hz)) return error;
  if (auto error = check_count("N", "order", spec.order, 1, kMaxIirOrder)) return error;
  if (uses_rp(spec.family)) {
    if (auto error = check_ripple("rp", "passband ripple rp", spec.rp_db)) return error;
  }
  if (uses_rs(spec.family)) {
    if (auto error = check_ripple("rs", "stopband attenuation rs", spec.rs_db)) return error;
  }
  if (spec.family == IirFamily::ellip && !(spec.rs_db > spec.rp_db)) {
    return DesignError{"rs",
                       "stopband attenuation rs must be greater than the passband "
                       "ripple rp (" +
                           fmt(spec.rp_db) + " dB), got " + fmt(spec.rs_db)};
  }
  const std::size_t count = spec.cutoff_hz.size();
  if (is_band(spec.btype) && count != 2) {
    return DesignError{"Wn", std::string(name(spec.btype)) +
                                 " needs two band edges [low, high], got " + std::to_string(count)};
  }
  if (!is_band(spec.btype) && count != 1) {
    return DesignError{"Wn", std::string(name(spec.btype)) + " needs one cutoff frequency, got " +
                                 std::to_string(count)};
  }
  return check_frequencies("Wn", "cutoff", spec.cutoff_hz, fs_hz);
}

std::optional<Zpk> prototype(const IirSpec& spec) {
  switch (spec.family) {
    case IirFamily::butter:
      return butter_prototype(spec.order);
    case IirFamily::cheby1:
      return cheby1_prototype(spec.order, spec.rp_db);
    case IirFamily::cheby2:
      return cheby2_prototype(spec.order, spec.rs_db);
    case IirFamily::ellip:
      return ellip_prototype(spec.order, spec.rp_db, spec.rs_db);
    case IirFamily::bessel:
      return bessel_prototype(spec.order, spec.norm);
  }
  return std::nullopt;
}

bool all_finite(const Sos& sos) {
  for (const Section& s : sos) {
    for (double v : {s.b0, s.b1, s.b2, s.a1, s.a2}) {
      if (!std::isfinite(v)) return false;
    }
  }
  return true;
}

DesignError numerical_failure(const IirSpec& spec) {
  return DesignError{"N", "the " + std::string(name(spec.family)) + " design of order " +
                              std::to_string(spec.order) +
                              " failed numerically (non-finite or unconverged values); "
                              "try a lower order or a less extreme cutoff"};
}

}  // namespace

DesignResult<Sos> design_iir(const IirSpec& spec, double fs_hz) {
  if (auto error = check_spec(spec, fs_hz)) return Unexpected{*error};

  const auto analog = prototype(spec);
  if (!analog) return Unexpected{numerical_failure(spec)};

  // Prewarp for the bilinear transform at SciPy's internal fs = 2 (Wn normalized to Nyquist).
  constexpr double kFs = 2.0;
  std::vector<double> warped;
  for (double f : spec.cutoff_hz) {
    const double wn = 2 * f / fs_hz;
    warped.push_back(2 * kFs * std::tan(std::numbers::pi * wn / kFs));
  }

  Zpk transformed;
  switch (spec.btype) {
    case BandType::lowpass:
      transformed = lp2lp_zpk(*analog, warped[0]);
      break;
    case BandType::highpass:
      transformed = lp2hp_zpk(*analog, warped[0]);
      break;
    case BandType::bandpass:
      transformed = lp2bp_zpk(*analog, std::sqrt(warped[0] * warped[1]), warped[1] - warped[0]);
      break;
    case BandType::bandstop:
      transformed = lp2bs_zpk(*analog, std::sqrt(warped[0] * warped[1]), warped[1] - warped[0]);
      break;
  }
  const auto sos = zpk_to_sos(bilinear_zpk(transformed, kFs));
  if (!sos || !all_finite(*sos)) return Unexpected{numerical_failure(spec)};
  return *sos;
}

int iir_section_count(const IirSpec& spec) {
  if (spec.order < 1) return 0;
  // Band types double the order; zpk2sos pads an odd pole count with one at the origin.
  return is_band(spec.btype) ? spec.order : (spec.order + 1) / 2;
}

}  // namespace fxc::design
