// SPDX-License-Identifier: Apache-2.0
// Complete elliptic integrals and Jacobi elliptic functions for the elliptic (Cauer) prototype.
// These stand in for scipy.special.ellipk / ellipkm1 / ellipj and for the private helpers of
// scipy.signal.ellipap (_ellipdeg, _arc_jac_sn, _arc_jac_sc1). All use the parameter m = k^2.
#pragma once

#include <optional>

namespace fxc::design {

/// K(m), the complete elliptic integral of the first kind; m in [0, 1).
double ellipk(double m);
/// K(1 - p), accurate for small p (scipy.special.ellipkm1).
double ellipkm1(double p);

struct JacobiElliptic {
  double sn = 0, cn = 1, dn = 1, ph = 0;
};
/// sn, cn, dn and the amplitude of real u at parameter m in [0, 1] (scipy.special.ellipj).
JacobiElliptic ellipj(double u, double m);

/// The modulus of the elliptic degree equation for order n and ratio m1 (SciPy's _ellipdeg).
double ellipdeg(int n, double m1);

/// Real inverse of the Jacobi sc function with complementary parameter, as SciPy's
/// _arc_jac_sc1(w, m): the u for which sc(u, 1 - m) = w. Nullopt where SciPy would raise.
std::optional<double> arc_jac_sc1(double w, double m);

}  // namespace fxc::design
