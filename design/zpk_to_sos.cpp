// SPDX-License-Identifier: Apache-2.0
// scipy.signal.zpk2sos(pairing='nearest') for digital filters.
//
// Algorithm (SciPy's):
//  1. Pad zeros or poles with the origin so both counts are equal and even.
//  2. Keep one root of each conjugate pair (_cplxreal), reals after the pairs.
//  3. Fill sections from the last to the first: take the pole closest to the unit circle,
//     pair it with its conjugate (or the next real pole closest to the circle), and give it
//     the zero(s) nearest to it. So the sections closest to instability come last.
//  4. The overall gain goes into the first section's numerator.
// Ties are broken as numpy does (first index for argmin, stable order for argsort), which is
// what decides which of several identical zeros goes where.
#include "design/zpk_to_sos.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace fxc::design {
namespace {

bool is_real(const Complex& x) {
  return x.imag() == 0.0;
}

std::size_t count_real(const std::vector<Complex>& v) {
  return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), is_real));
}

// np.argmin(np.abs(1 - np.abs(v))) over the given indices: the root closest to the circle.
std::size_t index_closest_to_circle(const std::vector<Complex>& v,
                                    const std::vector<std::size_t>& candidates) {
  std::size_t best = candidates.front();
  double best_distance = std::abs(1.0 - std::abs(v[best]));
  for (std::size_t i : candidates) {
    const double distance = std::abs(1.0 - std::abs(v[i]));
    if (distance < best_distance) {
      best = i;
      best_distance = distance;
    }
  }
  return best;
}

std::vector<std::size_t> all_indices(const std::vector<Complex>& v) {
  std::vector<std::size_t> indices(v.size());
  std::iota(indices.begin(), indices.end(), 0);
  return indices;
}

enum class Which { real, complex, any };

// SciPy's _nearest_real_complex_idx: the nearest root to `to` of the wanted kind.
std::optional<std::size_t> nearest_index(const std::vector<Complex>& from, Complex to,
                                         Which which) {
  std::vector<std::size_t> order = all_indices(from);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::abs(from[a] - to) < std::abs(from[b] - to);
  });
  for (std::size_t i : order) {
    if (which == Which::any || (which == Which::real) == is_real(from[i])) return i;
  }
  return std::nullopt;
}

Complex take(std::vector<Complex>& v, std::size_t index) {
  const Complex x = v[index];
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(index));
  return x;
}

// One section from up to two zeros and exactly two poles (SciPy's _single_zpksos): the
// numerator poly(z) is right-aligned, so one zero gives [0, 1, -z] and none gives [0, 0, 1].
// `zero_count` zeros (0, 1 or 2) are taken from z1 and z2 in order. Plain values rather than a
// container: GCC 12 at -O3 otherwise warns of out-of-bounds reads on branches it cannot rule out.
Section single_section(int zero_count, Complex z1, Complex z2, Complex p1, Complex p2) {
  Section s;
  if (zero_count == 2) {
    s.b0 = 1.0;
    s.b1 = -z2.real() - z1.real();
    s.b2 = z1.real() * z2.real() - z1.imag() * z2.imag();
  } else if (zero_count == 1) {
    s.b0 = 0.0;
    s.b1 = 1.0;
    s.b2 = -z1.real();
  } else {
    s.b0 = 0.0;
    s.b1 = 0.0;
    s.b2 = 1.0;
  }
  s.a1 = -p2.real() - p1.real();
  s.a2 = p1.real() * p2.real() - p1.imag() * p2.imag();
  return s;
}

}  // namespace

std::optional<std::vector<Complex>> pair_conjugates(const std::vector<Complex>& roots) {
  if (roots.empty()) return std::vector<Complex>{};
  const double tol = 100 * std::numeric_limits<double>::epsilon();
  std::vector<Complex> z = roots;
  // Sort by real part, then by magnitude of the imaginary part (np.lexsort is stable).
  std::stable_sort(z.begin(), z.end(), [](const Complex& a, const Complex& b) {
    if (a.real() != b.real()) return a.real() < b.real();
    return std::abs(a.imag()) < std::abs(b.imag());
  });
  std::vector<double> reals;
  std::vector<Complex> positive;
  std::vector<Complex> negative;
  for (const Complex& x : z) {
    if (std::abs(x.imag()) <= tol * std::abs(x)) {
      reals.push_back(x.real());
    } else if (x.imag() > 0) {
      positive.push_back(x);
    } else {
      negative.push_back(x);
    }
  }
  if (positive.size() != negative.size()) return std::nullopt;
  // Within runs of (nearly) equal real part, order each half by imaginary magnitude so that
  // conjugates line up.
  const std::size_t n = positive.size();
  std::size_t start = 0;
  while (start + 1 < n) {
    std::size_t stop = start;
    while (stop + 1 < n &&
           positive[stop + 1].real() - positive[stop].real() <= tol * std::abs(positive[stop])) {
      ++stop;
    }
    if (stop > start) {
      auto by_imag = [](const Complex& a, const Complex& b) {
        return std::abs(a.imag()) < std::abs(b.imag());
      };
      std::stable_sort(positive.begin() + start, positive.begin() + stop + 1, by_imag);
      std::stable_sort(negative.begin() + start, negative.begin() + stop + 1, by_imag);
    }
    start = stop + 1;
  }
  std::vector<Complex> out;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::abs(positive[i] - std::conj(negative[i])) > tol * std::abs(negative[i])) {
      return std::nullopt;
    }
    out.push_back((positive[i] + std::conj(negative[i])) / 2.0);
  }
  for (double r : reals) out.emplace_back(r, 0.0);
  return out;
}

std::optional<Sos> zpk_to_sos(const Zpk& zpk) {
  if (zpk.z.empty() && zpk.p.empty()) {
    Section s;
    s.b0 = zpk.k;
    return Sos{s};
  }
  std::vector<Complex> z = zpk.z;
  std::vector<Complex> p = zpk.p;
  while (p.size() < z.size()) p.emplace_back(0.0, 0.0);
  while (z.size() < p.size()) z.emplace_back(0.0, 0.0);
  const std::size_t n_sections = (p.size() + 1) / 2;
  if (p.size() % 2 == 1) {
    p.emplace_back(0.0, 0.0);
    z.emplace_back(0.0, 0.0);
  }
  auto paired_z = pair_conjugates(z);
  auto paired_p = pair_conjugates(p);
  if (!paired_z || !paired_p) return std::nullopt;
  z = std::move(*paired_z);
  p = std::move(*paired_p);

  Sos sos(n_sections);
  for (std::size_t si = n_sections; si-- > 0;) {
    if (p.empty()) return std::nullopt;
    const Complex p1 = take(p, index_closest_to_circle(p, all_indices(p)));
    const std::size_t real_poles_left = count_real(p);
    if (is_real(p1) && real_poles_left == 0) {
      // Special case 1: the last real pole, paired with the origin.
      const auto z1_idx = nearest_index(z, p1, Which::real);
      if (!z1_idx) return std::nullopt;
      const Complex z1 = take(z, *z1_idx);
      sos[si] = single_section(2, z1, Complex(0.0, 0.0), p1, Complex(0.0, 0.0));
    } else if (p.size() + 1 == z.size() && !is_real(p1) && real_poles_left == 1 &&
               count_real(z) == 1) {
      // Special case 2: one real pole and one real zero remain, so this complex pole must
      // take a complex zero.
      const auto z1_idx = nearest_index(z, p1, Which::complex);
      if (!z1_idx) return std::nullopt;
      const Complex z1 = take(z, *z1_idx);
      sos[si] = single_section(2, z1, std::conj(z1), p1, std::conj(p1));
    } else {
      Complex p2;
      if (is_real(p1)) {
        std::vector<std::size_t> real_indices;
        for (std::size_t i = 0; i < p.size(); ++i) {
          if (is_real(p[i])) real_indices.push_back(i);
        }
        p2 = take(p, index_closest_to_circle(p, real_indices));
      } else {
        p2 = std::conj(p1);
      }
      if (!z.empty()) {
        const Complex z1 = take(z, *nearest_index(z, p1, Which::any));
        if (!is_real(z1)) {
          sos[si] = single_section(2, z1, std::conj(z1), p1, p2);
        } else if (!z.empty()) {
          const auto z2_idx = nearest_index(z, p1, Which::real);
          if (!z2_idx) return std::nullopt;
          const Complex z2 = take(z, *z2_idx);
          sos[si] = single_section(2, z1, z2, p1, p2);
        } else {
          sos[si] = single_section(1, z1, {}, p1, p2);
        }
      } else {
        sos[si] = single_section(0, {}, {}, p1, p2);
      }
    }
  }
  if (!p.empty() || !z.empty()) return std::nullopt;
  sos[0].b0 *= zpk.k;
  sos[0].b1 *= zpk.k;
  sos[0].b2 *= zpk.k;
  return sos;
}

}  // namespace fxc::design
