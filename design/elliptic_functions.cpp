// SPDX-License-Identifier: Apache-2.0
// Elliptic integrals and functions for the elliptic (Cauer) prototype, reproducing SciPy's
// floating-point behaviour operation for operation.
//
// Why so literal: the degree equation maps the ratio of the ripples to a modulus m that for
// high orders or loose specifications lies within 1e-10 of 1, and everything downstream
// depends on 1 - m. One ulp of difference in K, or a sum taken in another order, then moves
// the poles by 1e-6 relative. So K uses the same minimax approximation as SciPy (Cephes'
// ellpk, by S. L. Moshier, which SciPy ships under its BSD licence; the coefficients below
// are that published approximation), ellipj follows Cephes' AGM algorithm, and the complex
// arithmetic of _arc_jac_sn is done as numpy does it (Smith's division, cpow for ** 0.5).
#include "design/elliptic_functions.h"

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <vector>

#include "design/numpy_complex.h"

namespace fxc::design {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kEps = std::numeric_limits<double>::epsilon();

// The Cephes approximation K(1 - x) = P(x) - log(x) Q(x) on (0, 1], with P and Q of degree 10.
constexpr double kEllpkP[] = {
    1.37982864606273237150E-4, 2.28025724005875567385E-3, 7.97404013220415179367E-3,
    9.85821379021226008714E-3, 6.87489687449949877925E-3, 6.18901033637687613229E-3,
    8.79078273952743772254E-3, 1.49380448916805252718E-2, 3.08851465246711995998E-2,
    9.65735902811690126535E-2, 1.38629436111989062502E0};
constexpr double kEllpkQ[] = {
    2.94078955048598507511E-5, 9.14184723865917226571E-4, 5.94058303753167793257E-3,
    1.54850516649762399335E-2, 2.39089602715924892727E-2, 3.01204715227604046988E-2,
    3.73774314173823228969E-2, 4.88280347570998239232E-2, 7.03124996963957469739E-2,
    1.24999999999870820058E-1, 4.99999999999999999821E-1};

// Horner's rule, highest coefficient first.
template <std::size_t N>
double horner(double x, const double (&c)[N]) {
  double value = c[0];
  for (std::size_t i = 1; i < N; ++i) value = value * x + c[i];
  return value;
}

// K(1 - x), the complete elliptic integral in terms of the complementary parameter.
double complete_elliptic_complementary(double x) {
  if (!(x >= 0.0 && x <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
  if (x > kEps / 2) return horner(x, kEllpkP) - std::log(x) * horner(x, kEllpkQ);
  if (x == 0.0) return std::numeric_limits<double>::infinity();
  return std::log(4.0) - 0.5 * std::log(x);  // leading term of the logarithmic singularity
}

}  // namespace

double ellipk(double m) {
  return complete_elliptic_complementary(1.0 - m);
}

double ellipkm1(double p) {
  return complete_elliptic_complementary(p);
}

JacobiElliptic ellipj(double u, double m) {
  JacobiElliptic out;
  if (!(m >= 0.0 && m <= 1.0)) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan, nan};
  }
  if (m < 1.0e-9) {
    // First-order expansion in m around the circular functions.
    const double t = std::sin(u);
    const double b = std::cos(u);
    const double ai = 0.25 * m * (u - t * b);
    out.sn = t - ai * b;
    out.cn = b + ai * t;
    out.ph = u - ai;
    out.dn = 1.0 - 0.5 * m * t * t;
    return out;
  }
  if (m >= 0.9999999999) {
    // First-order expansion in 1 - m around the hyperbolic functions.
    double ai = 0.25 * (1.0 - m);
    const double b = std::cosh(u);
    const double t = std::tanh(u);
    const double phi = 1.0 / b;
    const double twon = b * std::sinh(u);
    out.sn = t + ai * (twon - u) / (b * b);
    out.ph = 2.0 * std::atan(std::exp(u)) - kPi / 2 + ai * (twon - u) / b;
    ai *= t * phi;
    out.cn = phi - ai * (twon - u);
    out.dn = phi + ai * (twon + u);
    return out;
  }
  // Descending AGM, then the amplitude by backward recurrence (Abramowitz & Stegun 16.4).
  double a[9];
  double c[9];
  a[0] = 1.0;
  double b = std::sqrt(1.0 - m);
  c[0] = std::sqrt(m);
  double twon = 1.0;
  int i = 0;
  while (std::abs(c[i] / a[i]) > kEps / 2 && i < 8) {
    const double ai = a[i];
    ++i;
    c[i] = (ai - b) / 2.0;
    const double t = std::sqrt(ai * b);
    a[i] = (ai + b) / 2.0;
    b = t;
    twon *= 2.0;
  }
  double phi = twon * a[i] * u;
  double previous = phi;
  do {
    const double t = c[i] * std::sin(phi) / a[i];
    previous = phi;
    phi = (std::asin(t) + phi) / 2.0;
  } while (--i);
  out.sn = std::sin(phi);
  out.cn = std::cos(phi);
  // cn / cos(phi - previous) loses accuracy when the divisor is small; SciPy (after DLMF
  // 22.20.5) switches to sqrt(1 - m sn^2) there.
  const double dn_divisor = std::cos(phi - previous);
  out.dn = std::abs(dn_divisor) < 0.1 ? std::sqrt(1 - m * out.sn * out.sn) : out.cn / dn_divisor;
  out.ph = phi;
  return out;
}

double ellipdeg(int n, double m1) {
  // Solves the degree equation through the nome: q = q1^(1/n), then m from theta series
  // truncated after 7 terms, as SciPy does (_ELLIPDEG_MMAX). numpy sums the 8 terms
  // pairwise, and raises to integer powers with pow(); both are mirrored.
  constexpr int kTerms = 8;
  const double k1 = ellipk(m1);
  const double k1p = ellipkm1(m1);
  const double q1 = std::exp(-kPi * k1p / k1);
  const double q = std::pow(q1, 1.0 / n);
  double num_terms[kTerms];
  double den_terms[kTerms];
  for (int j = 0; j < kTerms; ++j) {
    num_terms[j] = std::pow(q, static_cast<double>(j * (j + 1)));
    den_terms[j] = std::pow(q, static_cast<double>((j + 1) * (j + 1)));
  }
  auto pairwise8 = [](const double(&t)[kTerms]) {
    return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
  };
  const double num = pairwise8(num_terms);
  const double den = 1.0 + 2.0 * pairwise8(den_terms);
  return 16.0 * q * std::pow(num / den, 4.0);
}

namespace {

using Complex = std::complex<double>;

// sqrt(1 - k^2) written so that it stays accurate for small k; ** 0.5 in numpy is cpow.
Complex complement(Complex kx) {
  const Complex one_minus = as_complex(1.0) - kx;
  const Complex one_plus = as_complex(1.0) + kx;
  return std::pow(np_mul(one_minus, one_plus), Complex(0.5, 0.0));
}

// Inverse Jacobi sn by descending Landen transformations (SciPy's _arc_jac_sn), for complex w.
std::optional<Complex> arc_jac_sn(Complex w, double m) {
  const double k = std::sqrt(m);
  if (k > 1.0 || std::isnan(k)) return std::nullopt;
  if (k == 1.0) return std::atanh(w);
  std::vector<double> ks = {k};
  constexpr int kMaxIterations = 10;
  int iterations = 0;
  while (ks.back() != 0.0) {
    const double k_prev = ks.back();
    const double k_comp = std::sqrt((1.0 - k_prev) * (1.0 + k_prev));
    ks.push_back((1.0 - k_comp) / (1.0 + k_comp));
    if (++iterations > kMaxIterations) return std::nullopt;
  }
  double capk = 1.0;
  for (std::size_t j = 1; j < ks.size(); ++j) capk *= 1.0 + ks[j];
  capk = capk * kPi / 2;
  Complex wn = w;
  for (std::size_t j = 0; j + 1 < ks.size(); ++j) {
    const double kn = ks[j];
    const double knext = ks[j + 1];
    const Complex denominator =
        np_mul(as_complex(1.0 + knext), as_complex(1.0) + complement(np_mul(as_complex(kn), wn)));
    wn = np_div(np_mul(as_complex(2.0), wn), denominator);
  }
  const Complex u = np_mul(as_complex(2.0 / kPi), std::asin(wn));
  return np_mul(as_complex(capk), u);
}

}  // namespace

std::optional<double> arc_jac_sc1(double w, double m) {
  const auto z = arc_jac_sn(np_mul(Complex(0.0, 1.0), as_complex(w)), m);
  if (!z || std::abs(z->real()) > 1e-14) return std::nullopt;
  return z->imag();
}

}  // namespace fxc::design
