// SPDX-License-Identifier: Apache-2.0
// Complex arithmetic rounded exactly as numpy rounds it, for steps of SciPy's designs whose
// results are sensitive to the last bit (see analog_prototypes.cpp, zpk_transforms.cpp).
//
// numpy multiplies with the textbook formula and divides with Smith's algorithm, which scales
// by a reciprocal: (a + bi) / (c + 0i) is a * (1/c), not a / c. A real operand is promoted to
// x + 0i first. std::complex division (C99 Annex G) rounds differently, so we do not use it
// where the result is amplified, e.g. by the cancellation in lp2bs_zpk for a pole near 0.
#pragma once

#include <cmath>
#include <complex>

namespace fxc::design {

inline std::complex<double> np_mul(std::complex<double> a, std::complex<double> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

inline std::complex<double> np_div(std::complex<double> a, std::complex<double> b) {
  const double ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  if (std::abs(br) >= std::abs(bi)) {
    if (br == 0.0 && bi == 0.0) return {ar / std::abs(br), ai / std::abs(bi)};
    const double rat = bi / br;
    const double scl = 1.0 / (br + bi * rat);
    return {(ar + ai * rat) * scl, (ai - ar * rat) * scl};
  }
  const double rat = br / bi;
  const double scl = 1.0 / (bi + br * rat);
  return {(ar * rat + ai) * scl, (ai * rat - ar) * scl};
}

/// x + 0i, as numpy promotes a real operand of a complex operation.
inline std::complex<double> as_complex(double x) {
  return {x, 0.0};
}

}  // namespace fxc::design
