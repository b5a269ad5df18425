// SPDX-License-Identifier: Apache-2.0
// Windows for firwin: hamming, hann and blackman as SciPy's general_cosine (sampled on
// numpy.linspace(-pi, pi, M)), boxcar, and kaiser.
//
// SciPy's kaiser divides I0 values computed with Cephes' Chebyshev fits. We compute I0 scaled
// by exp(-x), by its power series for small x and its asymptotic series for large x (both
// to a few ulp), and form the ratio as i0e(a) / i0e(beta) * exp(a - beta), which cannot
// overflow.
#include "design/fir_windows.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace fxc::design {

double bessel_i0_scaled(double x) {
  x = std::abs(x);
  if (x <= 30.0) {
    // sum_k ((x/2)^k / k!)^2: all terms positive, so no cancellation.
    const double quarter_x2 = 0.25 * x * x;
    double term = 1.0;
    double sum = 1.0;
    for (int k = 1; k < 500; ++k) {
      term *= quarter_x2 / (static_cast<double>(k) * k);
      sum += term;
      if (term < 1e-17 * sum) break;
    }
    return sum * std::exp(-x);
  }
  // exp(x) / sqrt(2 pi x) * sum_k t_k with t_k = t_{k-1} (2k - 1)^2 / (8 x k); for x > 30 the
  // terms fall below 1e-17 long before they start to grow.
  double term = 1.0;
  double sum = 1.0;
  for (int k = 1; k < 60; ++k) {
    const double next = term * (2.0 * k - 1) * (2.0 * k - 1) / (8.0 * x * k);
    if (next > term) break;
    term = next;
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return sum / std::sqrt(2 * std::numbers::pi * x);
}

namespace {

std::vector<double> general_cosine(int length, const std::vector<double>& a) {
  // numpy.linspace(-pi, pi, M): start + i * step, with the last point exactly pi.
  const double start = -std::numbers::pi;
  const double stop = std::numbers::pi;
  const double step = (stop - start) / (length - 1);
  std::vector<double> w(length, 0.0);
  for (int i = 0; i < length; ++i) {
    const double fac = i == length - 1 ? stop : i * step + start;
    double value = 0.0;
    for (std::size_t k = 0; k < a.size(); ++k) value += a[k] * std::cos(k * fac);
    w[i] = value;
  }
  return w;
}

std::vector<double> kaiser(int length, double beta) {
  std::vector<double> w(length);
  const double alpha = (length - 1) / 2.0;
  const double denominator = bessel_i0_scaled(beta);
  for (int n = 0; n < length; ++n) {
    const double r = (n - alpha) / alpha;
    const double arg = beta * std::sqrt(1 - std::pow(r, 2.0));
    w[n] = bessel_i0_scaled(arg) / denominator * std::exp(arg - beta);
  }
  return w;
}

}  // namespace

std::vector<double> symmetric_window(Window window, int length, double kaiser_beta) {
  if (length <= 1) return std::vector<double>(static_cast<std::size_t>(std::max(length, 0)), 1.0);
  switch (window) {
    case Window::hamming:
      return general_cosine(length, {0.54, 1.0 - 0.54});
    case Window::hann:
      return general_cosine(length, {0.5, 1.0 - 0.5});
    case Window::blackman:
      return general_cosine(length, {0.42, 0.50, 0.08});
    case Window::boxcar:
      return std::vector<double>(length, 1.0);
    case Window::kaiser:
      return kaiser(length, kaiser_beta);
  }
  return std::vector<double>(length, 1.0);
}

}  // namespace fxc::design
