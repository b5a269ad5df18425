// SPDX-License-Identifier: Apache-2.0
// Raw coefficients in (normalize_sos, tf_to_sos) and questions about a cascade (stability,
// pole radius, frequency response).
#include <algorithm>
#include <cmath>
#include <string>

#include "design/filter_design.h"
#include "design/parameter_checks.h"
#include "design/polynomial_roots.h"
#include "design/zpk_to_sos.h"

namespace fxc::design {
namespace {

// Polynomials beyond this many coefficients are not worth factoring in double precision.
constexpr std::size_t kMaxTfCoefficients = 256;

CheckResult check_polynomial(std::string_view param, const std::vector<double>& c) {
  if (c.empty()) {
    return DesignError{std::string(param),
                       std::string(param) + " needs at least one coefficient, got none"};
  }
  if (c.size() > kMaxTfCoefficients) {
    return DesignError{std::string(param), std::string(param) + " has " + std::to_string(c.size()) +
                                               " coefficients; at most " +
                                               std::to_string(kMaxTfCoefficients) +
                                               " are supported"};
  }
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!std::isfinite(c[i])) {
      return DesignError{std::string(param), "coefficient " + std::to_string(i + 1) + " of " +
                                                 std::string(param) +
                                                 " must be a finite number, got " + fmt(c[i])};
    }
  }
  return std::nullopt;
}

bool section_is_finite(const Section& s) {
  return std::isfinite(s.b0) && std::isfinite(s.b1) && std::isfinite(s.b2) && std::isfinite(s.a1) &&
         std::isfinite(s.a2);
}

// The larger pole magnitude of 1 + a1 z^-1 + a2 z^-2.
double section_pole_radius(const Section& s) {
  const double discriminant = s.a1 * s.a1 - 4 * s.a2;
  if (discriminant < 0) return std::sqrt(s.a2);  // conjugate pair: |p|^2 = a2
  // Real roots, the larger one without cancellation and the other from the product a2.
  const double big = -0.5 * (s.a1 + (s.a1 >= 0 ? 1 : -1) * std::sqrt(discriminant));
  const double small = big != 0 ? s.a2 / big : 0.0;
  return std::max(std::abs(big), std::abs(small));
}

// b0 + b1 e^{-jw} + b2 e^{-2jw}, arranged so that when the coefficients nearly cancel at
// w = 0 (poles or zeros near z = 1) the sum (b0 + b1 + b2) is formed exactly first and only
// small, accurately known terms are added: 1 - cos w = 2 sin^2(w/2) avoids the cancellation
// of cos w near 1.
Complex quadratic_response(double b0, double b1, double b2, double sin_half, double cos_half,
                           double sin_w) {
  const double two_s2 = 2 * sin_half * sin_half;  // 1 - cos w
  const double real = (b0 + b1 + b2) - two_s2 * (b1 + 4 * b2 * cos_half * cos_half);
  const double imag = -sin_w * ((b1 + 2 * b2) - 2 * b2 * two_s2);
  return {real, imag};
}

}  // namespace

DesignResult<Sos> normalize_sos(const std::vector<std::vector<double>>& rows) {
  if (rows.empty()) {
    return Unexpected{DesignError{"sos", "sos needs at least one section, got none"}};
  }
  Sos sos;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const std::string section = "section " + std::to_string(i + 1);
    if (row.size() != 6) {
      return Unexpected{
          DesignError{"sos", section + " has " + std::to_string(row.size()) +
                                 " coefficients; each section is [b0, b1, b2, a0, a1, a2]"}};
    }
    for (double v : row) {
      if (!std::isfinite(v)) {
        return Unexpected{
            DesignError{"sos", section + " has a non-finite coefficient: " + fmt_list(row)}};
      }
    }
    const double a0 = row[3];
    if (a0 == 0) {
      return Unexpected{DesignError{"sos", section + " has a0 = 0; sections are normalized by a0"}};
    }
    const Section s{row[0] / a0, row[1] / a0, row[2] / a0, row[4] / a0, row[5] / a0};
    if (!section_is_finite(s)) {
      return Unexpected{DesignError{
          "sos", section + " overflows when normalized by a0 = " + fmt(a0) + ": " + fmt_list(row)}};
    }
    sos.push_back(s);
  }
  return sos;
}

namespace {

// Multiplies the cascade by z^-samples, exactly: a section whose numerator ends in a zero
// shifts it one place later ([b0, b1, 0] to [0, b0, b1]), as often as such sections allow;
// the rest of the delay is added as sections of numerator z^-2 or z^-1.
void delay_sections(Sos& sos, std::size_t samples) {
  for (Section& s : sos)
    while (samples > 0 && s.b2 == 0 && !(s.b0 == 0 && s.b1 == 0)) {
      s = Section{0, s.b0, s.b1, s.a1, s.a2};
      --samples;
    }
  for (; samples >= 2; samples -= 2) sos.push_back(Section{0, 0, 1, 0, 0});
  if (samples == 1) sos.push_back(Section{0, 1, 0, 0, 0});
}

}  // namespace

DesignResult<Sos> tf_to_sos(const std::vector<double>& b_in, const std::vector<double>& a_in) {
  if (auto error = check_polynomial("b", b_in)) return Unexpected{*error};
  if (auto error = check_polynomial("a", a_in)) return Unexpected{*error};
  // scipy.signal.normalize: drop leading zeros of a, divide by a[0], then drop leading
  // numerator coefficients that are zero to 1e-14 (keeping at least one). SciPy's tf2sos then
  // loses them; here they are a delay of as many samples, as lfilter(b, a, x) reads them.
  const auto first_nonzero =
      std::find_if(a_in.begin(), a_in.end(), [](double v) { return v != 0; });
  if (first_nonzero == a_in.end()) {
    return Unexpected{DesignError{"a", "a must have at least one nonzero coefficient"}};
  }
  std::vector<double> a(first_nonzero, a_in.end());
  const double a0 = a[0];
  std::vector<double> b = b_in;
  for (double& v : b) v /= a0;
  for (double& v : a) v /= a0;
  std::size_t leading = 0;
  while (leading < b.size() && std::abs(b[leading]) <= 1e-14) ++leading;
  if (leading == b.size()) --leading;
  b.erase(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(leading));

  // tf2zpk: the gain is the leading numerator coefficient; the rest is monic.
  Zpk zpk;
  zpk.k = b[0];
  if (b.size() > 1) {
    for (double& v : b) v /= zpk.k;
    auto zeros = polynomial_roots(b);
    if (!zeros) return Unexpected{DesignError{"b", "could not find the roots of b"}};
    zpk.z = std::move(*zeros);
  }
  auto poles = polynomial_roots(a);
  if (!poles) return Unexpected{DesignError{"a", "could not find the roots of a"}};
  zpk.p = std::move(*poles);

  auto sos = zpk_to_sos(zpk);
  if (!sos) {
    return Unexpected{DesignError{"a", "the roots of b and a do not come in conjugate pairs"}};
  }
  if (zpk.k != 0) delay_sections(*sos, leading);
  for (const Section& s : *sos) {
    if (!section_is_finite(s)) {
      return Unexpected{
          DesignError{"b", "splitting this transfer function gives non-finite sections"}};
    }
  }
  return *sos;
}

bool is_stable(const Sos& sos) {
  // The stability triangle of 1 + a1 z^-1 + a2 z^-2: both poles strictly inside the unit
  // circle exactly when |a2| < 1 and |a1| < 1 + a2. No roots are computed, so no rounding.
  return std::all_of(sos.begin(), sos.end(), [](const Section& s) {
    return std::abs(s.a2) < 1 && std::abs(s.a1) < 1 + s.a2;
  });
}

double max_pole_radius(const Sos& sos) {
  double radius = 0;
  for (const Section& s : sos) radius = std::max(radius, section_pole_radius(s));
  return radius;
}

std::complex<double> frequency_response(const Sos& sos, double w) {
  const double sin_half = std::sin(w / 2);
  const double cos_half = std::cos(w / 2);
  const double sin_w = std::sin(w);
  Complex h(1.0, 0.0);
  for (const Section& s : sos) {
    h *= quadratic_response(s.b0, s.b1, s.b2, sin_half, cos_half, sin_w) /
         quadratic_response(1.0, s.a1, s.a2, sin_half, cos_half, sin_w);
  }
  return h;
}

std::complex<double> frequency_response(const std::vector<double>& taps, double w) {
  Complex h(0.0, 0.0);
  for (std::size_t n = 0; n < taps.size(); ++n) {
    const double phase = -w * static_cast<double>(n);
    h += taps[n] * Complex(std::cos(phase), std::sin(phase));
  }
  return h;
}

}  // namespace fxc::design
