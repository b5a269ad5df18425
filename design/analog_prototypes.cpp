// SPDX-License-Identifier: Apache-2.0
// Butterworth, Chebyshev I/II and elliptic analog prototypes, following
// scipy/signal/_filter_design.py (buttap, cheb1ap, cheb2ap, ellipap) step by step so that the
// poles, zeros and gain agree with SciPy's to rounding. The Bessel prototype has its own file.
#include "design/analog_prototypes.h"

#include <cmath>
#include <numbers>

#include "design/elliptic_functions.h"
#include "design/numpy_complex.h"

namespace fxc::design {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr Complex kJ(0.0, 1.0);

// 10^x - 1 without cancellation for small x (SciPy's _pow10m1). SciPy's factor is np.log(10),
// which numpy's AVX-512 code rounds one ulp low; we use the correctly rounded value.
double pow10m1(double x) {
  return std::expm1(std::log(10.0) * x);
}

// prod(-v), in order. (numpy's prod may fuse multiply-adds on some CPUs; it only feeds the
// gain, where the last bit does not matter.)
Complex product_of_negated(const std::vector<Complex>& v) {
  Complex product(1.0, 0.0);
  for (const Complex& x : v) product = np_mul(product, -x);
  return product;
}

// exp(1j * pi * m / (2 N)) as numpy evaluates it: the division is by a promoted complex,
// i.e. a multiplication by 1 / (2 N).
Complex unit_circle_point(int m, int order) {
  const Complex angle = np_div(np_mul(Complex(0.0, kPi), as_complex(m)), as_complex(2.0 * order));
  return std::exp(angle);
}

}  // namespace

Zpk butter_prototype(int order) {
  Zpk zpk;
  // m = -N+1, -N+3, ..., N-1: the middle m = 0 gives an exactly real pole for odd N.
  for (int m = -order + 1; m < order; m += 2) {
    zpk.p.push_back(-unit_circle_point(m, order));
  }
  zpk.k = 1.0;
  return zpk;
}

Zpk cheby1_prototype(int order, double rp_db) {
  Zpk zpk;
  const double eps = std::sqrt(std::pow(10.0, 0.1 * rp_db) - 1.0);
  const double mu = 1.0 / order * std::asinh(1.0 / eps);
  // Poles on an ellipse in the left half plane.
  for (int m = -order + 1; m < order; m += 2) {
    const double theta = kPi * m / (2.0 * order);
    zpk.p.push_back(-std::sinh(Complex(mu, theta)));
  }
  double k = product_of_negated(zpk.p).real();
  // Even orders have a DC gain of -rp dB.
  if (order % 2 == 0) k = k / std::sqrt(1.0 + eps * eps);
  zpk.k = k;
  return zpk;
}

Zpk cheby2_prototype(int order, double rs_db) {
  Zpk zpk;
  const double de = 1.0 / std::sqrt(std::pow(10.0, 0.1 * rs_db) - 1.0);
  const double mu = std::asinh(1.0 / de) / order;
  // Zeros on the imaginary axis; odd orders skip m = 0 (its zero is at infinity).
  for (int m = -order + 1; m < order; m += 2) {
    if (order % 2 == 1 && m == 0) continue;
    const double s = std::sin(m * kPi / (2.0 * order));
    zpk.z.push_back(-std::conj(kJ / s));
  }
  // Butterworth poles, warped onto the Chebyshev ellipse, then inverted.
  for (int m = -order + 1; m < order; m += 2) {
    const Complex b = -unit_circle_point(m, order);
    const Complex warped = std::sinh(mu) * b.real() + kJ * (std::cosh(mu) * b.imag());
    zpk.p.push_back(np_div(as_complex(1.0), warped));
  }
  zpk.k = np_div(product_of_negated(zpk.p), product_of_negated(zpk.z)).real();
  return zpk;
}

std::optional<Zpk> ellip_prototype(int order, double rp_db, double rs_db) {
  constexpr double kEpsilon = 2e-16;  // SciPy's EPSILON in ellipap
  Zpk zpk;
  if (order == 1) {
    const double p = -std::sqrt(1.0 / pow10m1(0.1 * rp_db));
    zpk.p.push_back(p);
    zpk.k = -p;
    return zpk;
  }
  const double eps_sq = pow10m1(0.1 * rp_db);
  const double eps = std::sqrt(eps_sq);
  const double ck1_sq = eps_sq / pow10m1(0.1 * rs_db);
  if (ck1_sq == 0.0 || !(ck1_sq < 1.0)) return std::nullopt;
  const double val0 = ellipk(ck1_sq);
  const double m = ellipdeg(order, ck1_sq);
  const double capk = ellipk(m);

  // j = 1 - N%2, 3 - N%2, ..., < N.
  std::vector<JacobiElliptic> at_j;
  for (int j = 1 - order % 2; j < order; j += 2) {
    at_j.push_back(ellipj(j * capk / order, m));
  }
  std::vector<Complex> zeros;
  for (const JacobiElliptic& e : at_j) {
    if (std::abs(e.sn) > kEpsilon) zeros.push_back(kJ * (1.0 / (std::sqrt(m) * e.sn)));
  }
  const std::size_t half = zeros.size();
  for (std::size_t i = 0; i < half; ++i) zeros.push_back(std::conj(zeros[i]));
  zpk.z = std::move(zeros);

  const auto r = arc_jac_sc1(1.0 / eps, ck1_sq);
  if (!r) return std::nullopt;
  const double v0 = capk * *r / (order * val0);
  const JacobiElliptic v = ellipj(v0, 1.0 - m);
  std::vector<Complex> poles;
  for (const JacobiElliptic& e : at_j) {
    const double dsv = e.dn * v.sn;
    const Complex numerator(e.cn * e.dn * v.sn * v.cn, e.sn * v.dn);
    poles.push_back(np_div(-numerator, as_complex(1.0 - std::pow(dsv, 2.0))));
  }
  if (order % 2 == 1) {
    // The real pole (j = 0) has no conjugate; SciPy decides realness relative to the norm of
    // the whole pole vector.
    double norm_sq = 0.0;
    for (const Complex& p : poles) norm_sq += (p * std::conj(p)).real();
    const double threshold = kEpsilon * std::sqrt(norm_sq);
    const std::size_t count = poles.size();
    for (std::size_t i = 0; i < count; ++i) {
      if (std::abs(poles[i].imag()) > threshold) poles.push_back(std::conj(poles[i]));
    }
  } else {
    const std::size_t count = poles.size();
    for (std::size_t i = 0; i < count; ++i) poles.push_back(std::conj(poles[i]));
  }
  zpk.p = std::move(poles);
  double k = np_div(product_of_negated(zpk.p), product_of_negated(zpk.z)).real();
  if (order % 2 == 0) k = k / std::sqrt(1.0 + eps_sq);
  zpk.k = k;
  return zpk;
}

}  // namespace fxc::design
