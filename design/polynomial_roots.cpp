// SPDX-License-Identifier: Apache-2.0
// numpy.roots: balance the companion matrix (Parlett & Reinsch, powers of 2 so no rounding),
// then find its eigenvalues with the Francis double-shift QR iteration on the (already upper
// Hessenberg) matrix, as LAPACK's dgeev does in spirit. Complex eigenvalues come from 2x2
// blocks and so are exact conjugates, which zpk2sos's pairing relies on.
#include "design/polynomial_roots.h"

#include <algorithm>
#include <cmath>

namespace fxc::design {
namespace {

using Matrix = std::vector<std::vector<double>>;

void balance(Matrix& a) {
  constexpr double kRadix = 2.0;
  constexpr double kRadixSquared = kRadix * kRadix;
  const std::size_t n = a.size();
  bool done = false;
  for (int sweep = 0; !done && sweep < 100; ++sweep) {
    done = true;
    for (std::size_t i = 0; i < n; ++i) {
      double r = 0.0;
      double c = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        c += std::abs(a[j][i]);
        r += std::abs(a[i][j]);
      }
      if (c == 0.0 || r == 0.0) continue;
      double g = r / kRadix;
      double f = 1.0;
      const double s = c + r;
      while (c < g) {
        f *= kRadix;
        c *= kRadixSquared;
      }
      g = r * kRadix;
      while (c > g) {
        f /= kRadix;
        c /= kRadixSquared;
      }
      if ((c + r) / f < 0.95 * s) {
        done = false;
        g = 1.0 / f;
        for (std::size_t j = 0; j < n; ++j) a[i][j] *= g;
        for (std::size_t j = 0; j < n; ++j) a[j][i] *= f;
      }
    }
  }
}

double sign_of(double magnitude, double sign) {
  return sign >= 0 ? std::abs(magnitude) : -std::abs(magnitude);
}

// Eigenvalues of an upper Hessenberg matrix (destroyed), by shifted double QR steps with
// deflation from the bottom.
std::optional<std::vector<Complex>> hessenberg_eigenvalues(Matrix& a) {
  const int n = static_cast<int>(a.size());
  std::vector<Complex> out(n);
  double anorm = 0.0;
  for (int i = 0; i < n; ++i) {
    for (int j = std::max(i - 1, 0); j < n; ++j) anorm += std::abs(a[i][j]);
  }
  int nn = n - 1;
  double t = 0.0;  // accumulated exceptional shifts
  // As LAPACK's dlahqr: 30 x max(10, n) steps for the whole matrix, an exceptional shift
  // every 10 steps without a deflation. A repeated root (the (1 + z^-1)^2 (1 - z^-1)^2 of a
  // band-pass's numerator) makes the plain double shift cycle; 60 steps with three
  // exceptional shifts per eigenvalue was not enough for (x^2 - 1)^2.
  const int max_steps = 30 * std::max(10, n);
  int steps = 0;
  while (nn >= 0) {
    int its = 0;
    while (true) {
      int l = nn;
      for (; l >= 1; --l) {
        double s = std::abs(a[l - 1][l - 1]) + std::abs(a[l][l]);
        if (s == 0.0) s = anorm;
        if (std::abs(a[l][l - 1]) + s == s) {
          a[l][l - 1] = 0.0;
          break;
        }
      }
      double x = a[nn][nn];
      if (l == nn) {  // a 1x1 block has split off
        out[nn] = Complex(x + t, 0.0);
        nn -= 1;
        break;
      }
      double y = a[nn - 1][nn - 1];
      double w = a[nn][nn - 1] * a[nn - 1][nn];
      if (l == nn - 1) {  // a 2x2 block: a real pair or a conjugate pair
        const double p = 0.5 * (y - x);
        const double q = p * p + w;
        double z = std::sqrt(std::abs(q));
        x += t;
        if (q >= 0.0) {
          z = p + sign_of(z, p);
          const double first = x + z;
          out[nn - 1] = Complex(first, 0.0);
          out[nn] = Complex(z != 0.0 ? x - w / z : first, 0.0);
        } else {
          out[nn - 1] = Complex(x + p, z);
          out[nn] = Complex(x + p, -z);
        }
        nn -= 2;
        break;
      }
      if (steps++ == max_steps) return std::nullopt;
      if (its > 0 && its % 10 == 0) {
        // Exceptional shift to break a cycle: from the bottom of the active block, and every
        // second time from its top (dlahqr's two kinds), so that a cycle of one kind cannot
        // persist.
        t += x;
        for (int i = 0; i <= nn; ++i) a[i][i] -= x;
        const double s = its % 20 == 0 ? std::abs(a[l + 1][l]) + (l + 2 <= nn ? std::abs(a[l + 2][l + 1]) : 0.0)
                                       : std::abs(a[nn][nn - 1]) + std::abs(a[nn - 1][nn - 2]);
        x = 0.75 * s;
        y = x;
        w = -0.4375 * s * s;
      }
      ++its;
      // Look for two consecutive small subdiagonal elements to start the bulge.
      int m = nn - 2;
      double p = 0, q = 0, r = 0, z = 0;
      for (; m >= l; --m) {
        z = a[m][m];
        r = x - z;
        const double s1 = y - z;
        p = (r * s1 - w) / a[m + 1][m] + a[m][m + 1];
        q = a[m + 1][m + 1] - z - r - s1;
        r = a[m + 2][m + 1];
        const double s = std::abs(p) + std::abs(q) + std::abs(r);
        p /= s;
        q /= s;
        r /= s;
        if (m == l) break;
        const double u = std::abs(a[m][m - 1]) * (std::abs(q) + std::abs(r));
        const double v =
            std::abs(p) * (std::abs(a[m - 1][m - 1]) + std::abs(z) + std::abs(a[m + 1][m + 1]));
        if (u + v == v) break;
      }
      for (int i = m + 2; i <= nn; ++i) {
        a[i][i - 2] = 0.0;
        if (i != m + 2) a[i][i - 3] = 0.0;
      }
      // Chase the bulge down with Householder reflections.
      for (int k = m; k <= nn - 1; ++k) {
        if (k != m) {
          p = a[k][k - 1];
          q = a[k + 1][k - 1];
          r = k != nn - 1 ? a[k + 2][k - 1] : 0.0;
          x = std::abs(p) + std::abs(q) + std::abs(r);
          if (x != 0.0) {
            p /= x;
            q /= x;
            r /= x;
          }
        }
        const double s = sign_of(std::sqrt(p * p + q * q + r * r), p);
        if (s == 0.0) continue;
        if (k == m) {
          if (l != m) a[k][k - 1] = -a[k][k - 1];
        } else {
          a[k][k - 1] = -s * x;
        }
        p += s;
        x = p / s;
        y = q / s;
        z = r / s;
        q /= p;
        r /= p;
        for (int j = k; j <= nn; ++j) {
          double v = a[k][j] + q * a[k + 1][j];
          if (k != nn - 1) {
            v += r * a[k + 2][j];
            a[k + 2][j] -= v * z;
          }
          a[k + 1][j] -= v * y;
          a[k][j] -= v * x;
        }
        const int last = std::min(nn, k + 3);
        for (int i = l; i <= last; ++i) {
          double v = x * a[i][k] + y * a[i][k + 1];
          if (k != nn - 1) {
            v += z * a[i][k + 2];
            a[i][k + 2] -= v * r;
          }
          a[i][k + 1] -= v * q;
          a[i][k] -= v;
        }
      }
    }
  }
  return out;
}

}  // namespace

std::optional<std::vector<Complex>> polynomial_roots(const std::vector<double>& coefficients) {
  std::size_t first = 0;
  std::size_t last = coefficients.size();
  while (first < last && coefficients[first] == 0.0) ++first;
  if (first == last) return std::vector<Complex>{};
  while (coefficients[last - 1] == 0.0) --last;
  const std::size_t trailing_zeros = coefficients.size() - last;
  const std::size_t degree = last - first - 1;

  std::vector<Complex> roots;
  if (degree > 0) {
    Matrix a(degree, std::vector<double>(degree, 0.0));
    for (std::size_t j = 0; j < degree; ++j) {
      a[0][j] = -coefficients[first + 1 + j] / coefficients[first];
    }
    for (std::size_t i = 1; i < degree; ++i) a[i][i - 1] = 1.0;
    balance(a);
    auto eigenvalues = hessenberg_eigenvalues(a);
    if (!eigenvalues) return std::nullopt;
    roots = std::move(*eigenvalues);
  }
  for (std::size_t i = 0; i < trailing_zeros; ++i) roots.emplace_back(0.0, 0.0);
  return roots;
}

}  // namespace fxc::design
