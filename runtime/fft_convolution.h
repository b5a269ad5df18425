// SPDX-License-Identifier: Apache-2.0
// FIR filtering by FFT overlap-save, for long filters, through fxc's RealFft
// (runtime/real_fft.h) in the signal's type.
#pragma once

#include <complex>
#include <cstddef>
#include <span>
#include <vector>

#include "runtime/real_fft.h"

namespace fxc {

/// The plans and work memory of overlap-save for a filter of `taps` taps with FFTs of `block`
/// points (a power of two > taps) on samples of type T (float or double), made once so that
/// convolve() allocates nothing. One object serves one thread at a time: the plans keep
/// scratch memory.
template <class T>
class FftConvolver {
 public:
  FftConvolver(std::size_t taps, int block);
  FftConvolver(const FftConvolver&) = delete;
  FftConvolver& operator=(const FftConvolver&) = delete;

  std::size_t taps() const { return taps_; }
  int block() const { return static_cast<int>(n_); }
  /// Points of the real FFT's spectrum: block / 2 + 1.
  std::size_t bins() const { return n_ / 2 + 1; }

  /// The spectrum of `taps` (taps() of them) into `response` (bins() points): what
  /// convolve() multiplies by. Computed once per set of coefficients.
  void transform_taps(std::span<const double> taps, std::span<std::complex<T>> response);

  /// y = taps * x (y[n] = sum_k taps[k] x[n-k]). `response` is transform_taps' result for
  /// `taps`. `history` (taps() - 1 samples) holds the inputs before x[0], zeros at the start
  /// of a signal, and is left holding the last ones of x, so a stream's blocks continue
  /// exactly. `y` may alias `x`. Allocates nothing.
  void convolve(std::span<const double> taps, std::span<const std::complex<T>> response,
                std::span<const T> x, std::span<T> y, std::span<T> history) noexcept;

 private:
  std::size_t taps_, n_;
  RealFft<T> fft_;
  std::vector<T> frame_, out_, next_history_;
  std::vector<std::complex<T>> spectrum_;
};

/// Sets the NaNs and infinities in `frame` to 0 and says whether there were none: a transform
/// would spread one to all of its points. FFT FIRs count such an input as 0 and add its
/// products directly. Allocates nothing.
template <class T>
bool zero_nonfinite(std::span<T> frame) noexcept;

extern template class FftConvolver<float>;
extern template class FftConvolver<double>;

/// y = taps * x, by overlap-save with FFTs of `block` points (a power of two > taps.size()).
/// `history` holds the taps.size() - 1 inputs before x[0] (resized to that, zeros at the start
/// of a signal) and is left holding the last ones of x. `y` may alias `x`. Plans per call:
/// for repeated calls keep an FftConvolver.
void fft_convolve(std::span<const double> taps, std::span<const float> x, std::span<float> y,
                  int block, std::vector<float>& history);
void fft_convolve(std::span<const double> taps, std::span<const double> x, std::span<double> y,
                  int block, std::vector<double>& history);

}  // namespace fxc
