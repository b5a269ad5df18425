// SPDX-License-Identifier: Apache-2.0
// Zeros, poles and gain: the intermediate form of an IIR design, as scipy's (z, p, k).
#pragma once

#include <complex>
#include <vector>

namespace fxc::design {

using Complex = std::complex<double>;

/// A transfer function k * prod(s - z) / prod(s - p), analog or digital by context.
/// The order of `z` and `p` follows SciPy's so that later steps see the same arrays.
struct Zpk {
  std::vector<Complex> z;
  std::vector<Complex> p;
  double k = 1;
};

}  // namespace fxc::design
