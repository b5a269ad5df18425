// SPDX-License-Identifier: Apache-2.0
// A float64 FFT of real signals (power-of-two lengths), written for fxc: the float64 side of
// FFT overlap-save (runtime/fft_convolution.h), where Debian packages only a float32 KissFFT.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fxc {

/// The discrete Fourier transform of `size()` real float64 points, `size()` a power of two
/// (at least 2), with KissFFT's conventions: forward() gives the bins() = size() / 2 + 1
/// points X[k] = sum_n x[n] e^{-2 pi i k n / size()}, inverse() takes them back unnormalized
/// (size() times the signal). Planned once (twiddles, bit reversal, work memory); the
/// transforms allocate nothing. One object serves one thread at a time: it keeps work memory.
class RealFft {
 public:
  explicit RealFft(std::size_t size);

  std::size_t size() const { return n_; }
  std::size_t bins() const { return n_ / 2 + 1; }

  /// `x` (size() points) to `spectrum` (bins() points).
  void forward(std::span<const double> x, std::span<std::complex<double>> spectrum) noexcept;
  /// `spectrum` (bins() points; the imaginary parts of bins 0 and size() / 2 are ignored) to
  /// size() times the real signal it is the spectrum of, in `x` (size() points).
  void inverse(std::span<const std::complex<double>> spectrum, std::span<double> x) noexcept;

 private:
  void transform(double* re, double* im) const noexcept;

  std::size_t n_;  // real points
  std::size_t m_;  // complex points: the real signal is packed two points to one complex one
  std::vector<std::uint32_t> reversed_;  // bit reversal of log2(m_) bits
  // Per butterfly stage of half-width h (1, 2, 4, ..., m_ / 2), at offset h - 1:
  // e^{-2 pi i j / (2h)} for j < h.
  std::vector<double> stage_re_, stage_im_;
  // e^{-2 pi i k / n_} for k <= m_: unpacks the complex transform into the real one.
  std::vector<double> unpack_re_, unpack_im_;
  std::vector<double> re_, im_;  // work: m_ complex points, split into real and imaginary parts
};

}  // namespace fxc
