// FIR filtering by FFT overlap-save (KissFFT, float32), for long filters on float32 signals.
#pragma once

#include <span>
#include <vector>

namespace fxc {

/// y = taps * x (y[n] = sum_k taps[k] x[n-k], zero history), by overlap-save with FFTs of
/// `block` points (a power of two > taps.size()). `y` may alias `x`.
void fft_convolve(std::span<const double> taps, std::span<const float> x, std::span<float> y,
                  int block);

}  // namespace fxc
