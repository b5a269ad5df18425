// SPDX-License-Identifier: Apache-2.0
// FIR filtering by FFT overlap-save (KissFFT, float32), for long filters on float32 signals.
#pragma once

#include <span>
#include <vector>

namespace fxc {

/// y = taps * x (y[n] = sum_k taps[k] x[n-k]), by overlap-save with FFTs of `block` points
/// (a power of two > taps.size()). `history` holds the taps.size() - 1 inputs before x[0]
/// (zeros at the start of a signal) and is left holding the last ones of x, so a stream's
/// blocks continue exactly. `y` may alias `x`.
void fft_convolve(std::span<const double> taps, std::span<const float> x, std::span<float> y,
                  int block, std::vector<float>& history);

}  // namespace fxc
