// SPDX-License-Identifier: Apache-2.0
// Symmetric window functions as scipy.signal.get_window(..., fftbins=False) returns them.
#pragma once

#include <vector>

#include "design/filter_types.h"

namespace fxc::design {

/// The modified Bessel function I0(x) scaled by exp(-|x|) (scipy.special.i0e).
double bessel_i0_scaled(double x);

/// A symmetric window of `length` points (>= 1). `kaiser_beta` is used by Window::kaiser.
std::vector<double> symmetric_window(Window window, int length, double kaiser_beta);

}  // namespace fxc::design
