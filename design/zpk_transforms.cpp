// SPDX-License-Identifier: Apache-2.0
// Frequency transformations and the bilinear transform, in the order SciPy computes them.
// Scalars enter complex arithmetic as complex numbers (x + 0j), as numpy promotes them.
#include "design/zpk_transforms.h"

#include <cmath>

#include "design/numpy_complex.h"

namespace fxc::design {
namespace {

int relative_degree(const Zpk& zpk) {
  return static_cast<int>(zpk.p.size()) - static_cast<int>(zpk.z.size());
}

Complex product_of_negated(const std::vector<Complex>& v) {
  Complex product(1.0, 0.0);
  for (const Complex& x : v) product = np_mul(product, -x);
  return product;
}

// Shifts each root of a lowpass at baseband to the pair around +wo and -wo: all the "+"
// roots first, then all the "-" roots, as SciPy concatenates them.
std::vector<Complex> split_around(const std::vector<Complex>& scaled, double wo) {
  std::vector<Complex> out;
  out.reserve(2 * scaled.size());
  std::vector<Complex> roots(scaled.size());
  for (std::size_t i = 0; i < scaled.size(); ++i) {
    roots[i] = std::sqrt(np_mul(scaled[i], scaled[i]) - as_complex(wo * wo));
  }
  for (std::size_t i = 0; i < scaled.size(); ++i) out.push_back(scaled[i] + roots[i]);
  for (std::size_t i = 0; i < scaled.size(); ++i) out.push_back(scaled[i] - roots[i]);
  return out;
}

}  // namespace

Zpk lp2lp_zpk(const Zpk& prototype, double wo) {
  const int degree = relative_degree(prototype);
  Zpk out;
  for (const Complex& z : prototype.z) out.z.push_back(np_mul(z, as_complex(wo)));
  for (const Complex& p : prototype.p) out.p.push_back(np_mul(p, as_complex(wo)));
  // Each pole scaled by wo lowers the gain by wo, each zero raises it.
  out.k = prototype.k * std::pow(wo, static_cast<double>(degree));
  return out;
}

Zpk lp2hp_zpk(const Zpk& prototype, double wo) {
  const int degree = relative_degree(prototype);
  Zpk out;
  for (const Complex& z : prototype.z) out.z.push_back(np_div(as_complex(wo), z));
  for (const Complex& p : prototype.p) out.p.push_back(np_div(as_complex(wo), p));
  // Zeros at infinity come back at the origin.
  for (int i = 0; i < degree; ++i) out.z.emplace_back(0.0, 0.0);
  out.k =
      prototype.k * np_div(product_of_negated(prototype.z), product_of_negated(prototype.p)).real();
  return out;
}

Zpk lp2bp_zpk(const Zpk& prototype, double wo, double bw) {
  const int degree = relative_degree(prototype);
  std::vector<Complex> z_lp;
  std::vector<Complex> p_lp;
  for (const Complex& z : prototype.z) {
    z_lp.push_back(np_div(np_mul(z, as_complex(bw)), as_complex(2.0)));
  }
  for (const Complex& p : prototype.p) {
    p_lp.push_back(np_div(np_mul(p, as_complex(bw)), as_complex(2.0)));
  }
  Zpk out;
  out.z = split_around(z_lp, wo);
  out.p = split_around(p_lp, wo);
  // Half of the zeros at infinity move to the origin; the rest stay at infinity.
  for (int i = 0; i < degree; ++i) out.z.emplace_back(0.0, 0.0);
  out.k = prototype.k * std::pow(bw, static_cast<double>(degree));
  return out;
}

Zpk lp2bs_zpk(const Zpk& prototype, double wo, double bw) {
  const int degree = relative_degree(prototype);
  std::vector<Complex> z_hp;
  std::vector<Complex> p_hp;
  for (const Complex& z : prototype.z) z_hp.push_back(np_div(as_complex(bw / 2), z));
  for (const Complex& p : prototype.p) p_hp.push_back(np_div(as_complex(bw / 2), p));
  Zpk out;
  out.z = split_around(z_hp, wo);
  out.p = split_around(p_hp, wo);
  // Zeros at infinity move to the centre of the stopband, +-j wo.
  for (int i = 0; i < degree; ++i) out.z.emplace_back(0.0, wo);
  for (int i = 0; i < degree; ++i) out.z.emplace_back(0.0, -wo);
  out.k =
      prototype.k * np_div(product_of_negated(prototype.z), product_of_negated(prototype.p)).real();
  return out;
}

Zpk bilinear_zpk(const Zpk& analog, double fs) {
  const int degree = relative_degree(analog);
  const Complex fs2(2.0 * fs, 0.0);
  Zpk out;
  for (const Complex& z : analog.z) out.z.push_back(np_div(fs2 + z, fs2 - z));
  for (const Complex& p : analog.p) out.p.push_back(np_div(fs2 + p, fs2 - p));
  // Zeros at infinity land on the Nyquist frequency.
  for (int i = 0; i < degree; ++i) out.z.emplace_back(-1.0, 0.0);
  Complex num(1.0, 0.0);
  for (const Complex& z : analog.z) num = np_mul(num, fs2 - z);
  Complex den(1.0, 0.0);
  for (const Complex& p : analog.p) den = np_mul(den, fs2 - p);
  out.k = analog.k * np_div(num, den).real();
  return out;
}

}  // namespace fxc::design
