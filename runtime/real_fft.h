// SPDX-License-Identifier: Apache-2.0
// fxc's FFT of real signals (power-of-two lengths), in float32 and float64: FFT overlap-save
// (runtime/fft_convolution.h), partitioned convolution, and the GPU's FFT tables.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fxc {

/// The discrete Fourier transform of `size()` real points of type T (float or double),
/// `size()` a power of two (at least 2): forward() gives the bins() = size() / 2 + 1 points
/// X[k] = sum_n x[n] e^{-2 pi i k n / size()}, inverse() takes them back unnormalized
/// (size() times the signal), as KissFFT and FFTW do. Planned once (twiddles, bit reversal, work
/// memory); the transforms allocate nothing. One object serves one thread at a time: it keeps
/// work memory. The same bits on every x86-64 CPU, with or without AVX2
/// (support/vector_clones.h).
template <class T>
class RealFft {
 public:
  explicit RealFft(std::size_t size);

  std::size_t size() const { return n_; }
  std::size_t bins() const { return n_ / 2 + 1; }

  /// `x` (size() points) to `spectrum` (bins() points).
  void forward(std::span<const T> x, std::span<std::complex<T>> spectrum) noexcept;
  /// `spectrum` (bins() points; the imaginary parts of bins 0 and size() / 2 are ignored) to
  /// size() times the real signal it is the spectrum of, in `x` (size() points).
  void inverse(std::span<const std::complex<T>> spectrum, std::span<T> x) noexcept;

 private:
  std::size_t n_;  // real points
  std::size_t m_;  // complex points: the real signal is packed two points to one complex one
  std::vector<std::uint32_t> reversed_;  // bit reversal of log2(m_) bits
  // Each pass's twiddles, one pass after another (real_fft.cpp, "Passes").
  std::vector<T> twiddles_;
  // e^{-2 pi i k / n_} for k <= m_: unpacks the complex transform into the real one.
  std::vector<T> unpack_re_, unpack_im_;
  // Work: m_ complex points, split into real and imaginary parts, twice (real_fft.cpp, Plan).
  std::vector<T> re_, im_, zr_, zi_;
};

extern template class RealFft<float>;
extern template class RealFft<double>;

}  // namespace fxc
