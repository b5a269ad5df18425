// SPDX-License-Identifier: Apache-2.0
// The Bessel/Thomson analog prototype (scipy.signal.besselap).
//
// Algorithm, as in SciPy's _bessel_zeros / _norm_factor:
//  1. Start from Campos & Calderon's asymptotic approximations of the zeros of the Bessel
//     polynomial y_N.
//  2. Refine all of them together by Aberth's method on f(x) = kve(N + 1/2, 1/x), then polish
//     each with Newton's method, and average conjugate pairs.
//  3. Poles are 1/zeros, rescaled for the requested normalization; 'mag' finds the -3 dB
//     frequency with SciPy's secant iteration (optimize.newton without a derivative).
//
// SciPy evaluates kve with AMOS. For half-integer orders kve has a closed form:
// kve(n + 1/2, 1/x) = sqrt(pi x / 2) * y_n(x), and y_n obeys the three-term recurrence
// y_{n+1} = (2n + 1) x y_n + y_{n-1}. The common factor sqrt(pi x / 2) cancels in f / f', so
// only y_{N-1}, y_N, y_{N+1} are needed, evaluated in extended precision (see below); the
// iteration then follows SciPy's step for step, and the poles agree with SciPy's to ~1e-15.
#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "design/analog_prototypes.h"
#include "design/numpy_complex.h"

namespace fxc::design {
namespace {

// Horner evaluation of c[0] + c[1] x + c[2] x^2 + ... (numpy.polynomial.polynomial.polyval).
double polyval_ascending(double x, std::initializer_list<double> coefficients) {
  const double* c = coefficients.begin();
  std::size_t i = coefficients.size();
  double value = c[i - 1];
  while (i-- > 1) value = c[i - 1] + value * x;
  return value;
}

// Initial guesses for the zeros of y_n (SciPy's _campos_zeros).
std::vector<Complex> campos_zeros(int n) {
  if (n == 1) return {Complex(-1.0, 0.0)};
  const double nd = n;
  const double s = polyval_ascending(nd, {0, 0, 2, 0, -3, 1});
  const double b3 = polyval_ascending(nd, {16, -8}) / s;
  const double b2 = polyval_ascending(nd, {-24, -12, 12}) / s;
  const double b1 = polyval_ascending(nd, {8, 24, -12, -2}) / s;
  const double b0 = polyval_ascending(nd, {0, -6, 0, 5, -1}) / s;
  const double r = polyval_ascending(nd, {0, 0, 2, 1});
  const double a1 = polyval_ascending(nd, {-6, -6}) / r;
  const double a2 = 6.0 / r;
  std::vector<Complex> zeros;
  for (int k = 1; k <= n; ++k) {
    const double x = polyval_ascending(k, {0, a1, a2});
    const double y = polyval_ascending(k, {b0, b1, b2, b3});
    zeros.emplace_back(x, y);
  }
  return zeros;
}

// Extended precision for the recurrence below. The zeros of y_N are badly conditioned in
// this polynomial form: near a zero, y_N is a sum of terms up to ~1e10 (N = 40) or ~1e17
// (N = 64) times larger than its derivative can absorb, so a relative root error of 1e-16
// needs the sum to 1e-27 .. 1e-50. (SciPy's AMOS kve uses uniform asymptotic expansions and
// does not suffer this.) So y_n is carried as K non-overlapping doubles, with K from the
// order; each operation gathers the exact partial results (TwoSum/TwoProduct) and distils
// them back to K components.
void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

template <int K>
struct Multi {
  std::array<double, K> c{};  // c[0] carries the most weight; the value is their exact sum
  double rounded() const {
    double sum = 0.0;
    for (int k = K - 1; k >= 0; --k) sum += c[k];
    return sum;
  }
};

// Distils `n` terms (destroyed) into K components: each pass sums the terms from the smallest
// up, keeps the sum as the next component and the exact rounding errors as the new terms.
template <int K>
Multi<K> distill(double* terms, int n) {
  Multi<K> out;
  for (int k = 0; k < K && n > 0; ++k) {
    std::sort(terms, terms + n, [](double a, double b) { return std::abs(a) < std::abs(b); });
    double s = 0.0;
    int m = 0;
    for (int i = 0; i < n; ++i) {
      double e = 0.0;
      two_sum(s, terms[i], s, e);
      if (e != 0.0) terms[m++] = e;
    }
    out.c[k] = s;
    n = m;
  }
  return out;
}

template <int K>
struct ComplexMulti {
  Multi<K> re, im;
  Complex rounded() const { return {re.rounded(), im.rounded()}; }
};

// previous + scale * (x * current), exactly up to the final distillation.
template <int K>
ComplexMulti<K> recurrence_step(const ComplexMulti<K>& previous, double scale, Complex x,
                                const ComplexMulti<K>& current) {
  auto product_part = [](double a, const Multi<K>& u, double b, const Multi<K>& v) {
    // a * u + b * v
    double terms[4 * K];
    int n = 0;
    for (int k = 0; k < K; ++k) {
      const double p = a * u.c[k];
      terms[n++] = p;
      terms[n++] = std::fma(a, u.c[k], -p);
      const double q = b * v.c[k];
      terms[n++] = q;
      terms[n++] = std::fma(b, v.c[k], -q);
    }
    return distill<K>(terms, n);
  };
  auto scaled_sum = [scale](const Multi<K>& base, const Multi<K>& u) {
    // base + scale * u
    double terms[3 * K];
    int n = 0;
    for (int k = 0; k < K; ++k) {
      terms[n++] = base.c[k];
      const double p = scale * u.c[k];
      terms[n++] = p;
      terms[n++] = std::fma(scale, u.c[k], -p);
    }
    return distill<K>(terms, n);
  };
  const Multi<K> re = product_part(x.real(), current.re, -x.imag(), current.im);
  const Multi<K> im = product_part(x.real(), current.im, x.imag(), current.re);
  return {scaled_sum(previous.re, re), scaled_sum(previous.im, im)};
}

// f(x) / f'(x) for f(x) = kve(n + 1/2, 1/x), from y_{n-1}, y_n, y_{n+1} (see the file comment).
struct NewtonTerms {
  Complex f;   // y_n(x): f without its factor sqrt(pi x / 2)
  Complex fp;  // f'(x) without the same factor
};
template <int K>
NewtonTerms bessel_terms_k(int n, Complex x) {
  ComplexMulti<K> one;
  one.re.c[0] = 1.0;
  ComplexMulti<K> previous = one;  // y_{-1} = y_0, since kve(-1/2) = kve(1/2)
  ComplexMulti<K> current = one;   // y_0
  for (int j = 0; j < n; ++j) {
    ComplexMulti<K> next = recurrence_step(previous, 2.0 * j + 1, x, current);
    previous = current;
    current = next;
  }
  const Complex y_before = previous.rounded();  // y_{n-1}
  const Complex y_n = current.rounded();
  const Complex y_after = recurrence_step(previous, 2.0 * n + 1, x, current).rounded();
  const Complex x2 = x * x;
  return {y_n, y_before / (2.0 * x2) - y_n / x2 + y_after / (2.0 * x2)};
}

// Enough components that the evaluation error, times the conditioning of the zeros (about
// 1e5 at N = 12, 1e20 at N = 40, 1e34 at N = 64), stays below double rounding.
NewtonTerms bessel_terms(int n, Complex x) {
  if (n <= 20) return bessel_terms_k<2>(n, x);
  if (n <= 45) return bessel_terms_k<3>(n, x);
  return bessel_terms_k<4>(n, x);
}

bool all_finite(const std::vector<Complex>& v) {
  for (const Complex& x : v) {
    if (!std::isfinite(x.real()) || !std::isfinite(x.imag())) return false;
  }
  return true;
}

// Simultaneous refinement of all zeros (SciPy's _aberth with tol 1e-15, 50 iterations).
std::optional<std::vector<Complex>> aberth(int n, std::vector<Complex> x) {
  constexpr double kTol = 1e-15;
  constexpr int kMaxIterations = 50;
  const std::size_t count = x.size();
  std::vector<Complex> alpha(count);
  std::vector<Complex> beta(count);
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    for (std::size_t k = 0; k < count; ++k) {
      const NewtonTerms t = bessel_terms(n, x[k]);
      alpha[k] = -t.f / t.fp;
    }
    bool converged = true;
    for (std::size_t k = 0; k < count; ++k) {
      Complex sum_after(0.0, 0.0);
      for (std::size_t j = k + 1; j < count; ++j) sum_after += 1.0 / (x[k] - x[j]);
      Complex sum_before(0.0, 0.0);
      for (std::size_t j = 0; j < k; ++j) sum_before += 1.0 / (x[k] - x[j]);
      beta[k] = sum_after + sum_before;
      if (!(std::abs(alpha[k]) <= kTol)) converged = false;
    }
    for (std::size_t k = 0; k < count; ++k) x[k] += alpha[k] / (1.0 + alpha[k] * beta[k]);
    if (!all_finite(x)) return std::nullopt;
    if (converged) return x;
  }
  return std::nullopt;
}

// scipy.optimize.newton with a derivative, tol 1e-15. SciPy raises if the step never gets
// that small; rounding noise in our f can differ from AMOS's, so the last iterate is kept.
Complex newton_polish(int n, Complex p0) {
  constexpr double kTol = 1e-15;
  for (int iteration = 0; iteration < 50; ++iteration) {
    const NewtonTerms t = bessel_terms(n, p0);
    if (t.f == Complex(0.0, 0.0) || t.fp == Complex(0.0, 0.0)) return p0;
    const Complex p = p0 - t.f / t.fp;
    if (std::abs(p - p0) <= kTol) return p;
    p0 = p;
  }
  return p0;
}

std::optional<std::vector<Complex>> bessel_zeros(int n) {
  auto refined = aberth(n, campos_zeros(n));
  if (!refined) return std::nullopt;
  std::vector<Complex> x = std::move(*refined);
  for (Complex& xi : x) xi = newton_polish(n, xi);
  // Average complex conjugates so that they are exactly symmetrical.
  const std::size_t count = x.size();
  std::vector<Complex> averaged(count);
  for (std::size_t i = 0; i < count; ++i) averaged[i] = (x[i] + std::conj(x[count - 1 - i])) / 2.0;
  // The zeros sum to -1; like SciPy, reject anything off by more than 1e-15 (never seen for
  // orders up to 64).
  Complex sum(0.0, 0.0);
  for (const Complex& xi : averaged) sum += xi;
  if (!(std::abs(sum + 1.0) <= 1e-15)) return std::nullopt;
  return averaged;
}

// SciPy's secant iteration (optimize.newton without fprime, default tol 1.48e-8) for the
// frequency where |H| = 1/sqrt(2).
std::optional<double> norm_factor(const std::vector<Complex>& p, double k) {
  auto cutoff = [&](double w) {
    Complex product(1.0, 0.0);
    for (const Complex& pole : p) product = np_mul(product, Complex(0.0, w) - pole);
    return std::abs(np_div(as_complex(k), product)) - 1.0 / std::sqrt(2.0);
  };
  constexpr double kTol = 1.48e-8;
  double p0 = 1.5;
  double p1 = p0 * (1.0 + 1e-4);
  p1 += (p1 >= 0 ? 1e-4 : -1e-4);
  double q0 = cutoff(p0);
  double q1 = cutoff(p1);
  if (std::abs(q1) < std::abs(q0)) {
    std::swap(p0, p1);
    std::swap(q0, q1);
  }
  for (int iteration = 0; iteration < 50; ++iteration) {
    double p = 0;
    if (q1 == q0) {
      if (p1 != p0) return std::nullopt;
      return (p1 + p0) / 2.0;
    }
    if (std::abs(q1) > std::abs(q0)) {
      p = (-q0 / q1 * p1 + p0) / (1.0 - q0 / q1);
    } else {
      p = (-q1 / q0 * p0 + p1) / (1.0 - q1 / q0);
    }
    if (std::abs(p - p1) <= kTol) return p;
    p0 = p1;
    q0 = q1;
    p1 = p;
    q1 = cutoff(p1);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Zpk> bessel_prototype(int order, BesselNorm norm) {
  const auto zeros = bessel_zeros(order);
  if (!zeros) return std::nullopt;
  Zpk zpk;
  for (const Complex& x : *zeros) zpk.p.push_back(np_div(as_complex(1.0), x));
  // a_last = (2N)! / (N! 2^N), the constant term of the reverse Bessel polynomial. SciPy has
  // it as an exact integer and converts it to the nearest double; a product of halves in
  // extended precision gets that double (exact up to 2^64, then within 1e-18 relative).
  long double a_last_extended = 1.0L;
  for (int j = order + 1; j <= 2 * order; ++j) a_last_extended *= j / 2.0L;
  const double a_last = static_cast<double>(a_last_extended);
  switch (norm) {
    case BesselNorm::delay:
      zpk.k = a_last;
      break;
    case BesselNorm::mag: {
      const auto factor = norm_factor(zpk.p, a_last);
      if (!factor) return std::nullopt;
      for (Complex& p : zpk.p) p = np_div(p, as_complex(*factor));
      zpk.k = std::pow(*factor, -order) * a_last;
      break;
    }
    case BesselNorm::phase: {
      // Phase-matched: asymptotes as the Butterworth filter's.
      const double scale = std::pow(10.0, -std::log10(a_last) / order);
      for (Complex& p : zpk.p) p = np_mul(p, as_complex(scale));
      zpk.k = 1.0;
      break;
    }
  }
  return zpk;
}

}  // namespace fxc::design
