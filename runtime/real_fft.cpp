// SPDX-License-Identifier: Apache-2.0
#include "runtime/real_fft.h"

#include <cmath>
#include <numbers>

#include "support/diagnostics.h"

namespace fxc {
namespace {

// e^{-2 pi i k / n}, from long double so that every twiddle is correctly rounded or nearly.
// Quarter turns are exact, so that bins 0 and n / 2 of a real signal's transform are real.
std::complex<double> root(std::size_t k, std::size_t n) {
  if (4 * k % n == 0) {
    constexpr std::complex<double> kQuarters[] = {{1, 0}, {0, -1}, {-1, 0}, {0, 1}};
    return kQuarters[4 * k / n % 4];
  }
  long double angle = -2 * std::numbers::pi_v<long double> * static_cast<long double>(k) / static_cast<long double>(n);
  return {static_cast<double>(std::cos(angle)), static_cast<double>(std::sin(angle))};
}

// root(k, n) for k = 0 .. n / 2. Only the first eighth of the circle is computed; the rest
// follows exactly by symmetry (e^{-i(pi/2 - a)} = (sin a, -cos a), e^{-i(pi/2 + a)} =
// (-sin a, -cos a)): long double sines cost about 100 ns each, and a plan of 2^17 points
// computing all of them took 20 ms, longer than the transforms of a second of audio.
std::vector<std::complex<double>> half_circle(std::size_t n) {
  std::vector<std::complex<double>> w(n / 2 + 1);
  if (n % 8 != 0) {
    for (std::size_t k = 0; k <= n / 2; ++k) w[k] = root(k, n);
    return w;
  }
  const std::size_t quarter = n / 4, eighth = n / 8;
  for (std::size_t k = 0; k <= eighth; ++k) w[k] = root(k, n);
  for (std::size_t k = eighth + 1; k <= quarter; ++k) w[k] = {-w[quarter - k].imag(), -w[quarter - k].real()};
  for (std::size_t k = quarter + 1; k <= 2 * quarter; ++k) w[k] = {w[k - quarter].imag(), -w[k - quarter].real()};
  w[quarter] = root(quarter, n);
  w[2 * quarter] = root(2 * quarter, n);
  return w;
}

}  // namespace

RealFft::RealFft(std::size_t size) : n_(size), m_(size / 2) {
  FXC_INTERNAL_ASSERT(size >= 2 && (size & (size - 1)) == 0 && size <= (std::size_t{1} << 31),
                      "a real FFT's size must be a power of two from 2 to 2^31");
  int bits = 0;
  while ((std::size_t{1} << bits) < m_) ++bits;
  // j's reversal is j / 2's shifted down, with j's lowest bit on top.
  reversed_.assign(m_, 0);
  for (std::size_t j = 1; j < m_; ++j)
    reversed_[j] = (reversed_[j >> 1] >> 1) | (static_cast<std::uint32_t>(j & 1) << (bits - 1));
  // Stage h's twiddles e^{-2 pi i j / (2h)} are the circle's points j n / (2h).
  const std::vector<std::complex<double>> circle = half_circle(n_);
  stage_re_.resize(m_ > 1 ? m_ - 1 : 0);
  stage_im_.resize(stage_re_.size());
  for (std::size_t h = 1; h < m_; h *= 2)
    for (std::size_t j = 0; j < h; ++j) {
      const std::complex<double> w = circle[j * (n_ / (2 * h))];
      stage_re_[h - 1 + j] = w.real();
      stage_im_[h - 1 + j] = w.imag();
    }
  unpack_re_.resize(m_ + 1);
  unpack_im_.resize(m_ + 1);
  for (std::size_t k = 0; k <= m_; ++k) {
    unpack_re_[k] = circle[k].real();
    unpack_im_[k] = circle[k].imag();
  }
  re_.resize(m_);
  im_.resize(m_);
}

// Algorithm (iterative radix-2 Cooley-Tukey, decimation in time): the input is in bit-reversed
// order; stage h combines pairs of transforms of h points, a[j] and b[j] = a[j + h], into one
// of 2h points: a[j] + w^j b[j], a[j] - w^j b[j] with w = e^{-2 pi i / (2h)}. The first two
// stages need no multiplications (w^j is 1 or -i) and run as one radix-4 step. The output is in
// natural order. The inverse transform is this one with the real and imaginary parts swapped.
void RealFft::transform(double* re, double* im) const noexcept {
  const std::size_t m = m_;
  std::size_t h = 1;
  if (m >= 4) {
    for (std::size_t g = 0; g < m; g += 4) {
      double ar = re[g] + re[g + 1], ai = im[g] + im[g + 1];
      double br = re[g] - re[g + 1], bi = im[g] - im[g + 1];
      double cr = re[g + 2] + re[g + 3], ci = im[g + 2] + im[g + 3];
      double dr = re[g + 2] - re[g + 3], di = im[g + 2] - im[g + 3];
      // The second stage's twiddles are 1 (for a, c) and -i (for b, d): -i d = (di, -dr).
      re[g] = ar + cr, im[g] = ai + ci;
      re[g + 2] = ar - cr, im[g + 2] = ai - ci;
      re[g + 1] = br + di, im[g + 1] = bi - dr;
      re[g + 3] = br - di, im[g + 3] = bi + dr;
    }
    h = 4;
  } else if (m == 2) {
    double ar = re[0], ai = im[0];
    re[0] = ar + re[1], im[0] = ai + im[1];
    re[1] = ar - re[1], im[1] = ai - im[1];
    h = 2;
  }
  for (; h < m; h *= 2) {
    const double* wr = stage_re_.data() + (h - 1);
    const double* wi = stage_im_.data() + (h - 1);
    for (std::size_t g = 0; g < m; g += 2 * h) {
      double* __restrict ar = re + g;
      double* __restrict ai = im + g;
      double* __restrict br = re + g + h;
      double* __restrict bi = im + g + h;
      for (std::size_t j = 0; j < h; ++j) {
        double tr = wr[j] * br[j] - wi[j] * bi[j];
        double ti = wr[j] * bi[j] + wi[j] * br[j];
        br[j] = ar[j] - tr;
        bi[j] = ai[j] - ti;
        ar[j] += tr;
        ai[j] += ti;
      }
    }
  }
}

// Algorithm (a real transform of n points by a complex one of m = n / 2): z[j] = x[2j] +
// i x[2j + 1] has the transform Z = E + i O, where E and O are the transforms of the even and
// the odd points, so E[k] = (Z[k] + conj Z[m - k]) / 2 and O[k] = (Z[k] - conj Z[m - k]) / 2i
// (Z[m] = Z[0]), and X[k] = E[k] + w^k O[k] with w = e^{-2 pi i / n}, for k = 0..m.
void RealFft::forward(std::span<const double> x, std::span<std::complex<double>> spectrum) noexcept {
  const std::size_t m = m_;
  double* re = re_.data();
  double* im = im_.data();
  for (std::size_t j = 0; j < m; ++j) {
    std::size_t r = reversed_[j];
    re[j] = x[2 * r];
    im[j] = x[2 * r + 1];
  }
  transform(re, im);
  for (std::size_t k = 0; k <= m; ++k) {
    std::size_t a = k == m ? 0 : k, b = k == 0 ? 0 : m - k;
    double er = 0.5 * (re[a] + re[b]), ei = 0.5 * (im[a] - im[b]);
    double or_ = 0.5 * (im[a] + im[b]), oi = -0.5 * (re[a] - re[b]);
    double wr = unpack_re_[k], wi = unpack_im_[k];
    spectrum[k] = {er + wr * or_ - wi * oi, ei + wr * oi + wi * or_};
  }
}

// The forward unpacking undone: E[k] = (X[k] + conj X[m - k]) / 2, O[k] = (X[k] -
// conj X[m - k]) / (2 w^k), Z[k] = E[k] + i O[k]; here without the halves, which makes the
// unnormalized inverse of Z (m times z) n times the signal. The inverse complex transform is
// the forward one of the swapped parts: swap(fft(swap(Z))) = conj(fft(conj Z)).
void RealFft::inverse(std::span<const std::complex<double>> spectrum, std::span<double> x) noexcept {
  const std::size_t m = m_;
  double* re = re_.data();
  double* im = im_.data();
  for (std::size_t k = 0; k < m; ++k) {
    std::complex<double> a = spectrum[k], b = spectrum[m - k];
    if (k == 0) a = {a.real(), 0}, b = {b.real(), 0};  // bins 0 and m of a real signal are real
    double er = a.real() + b.real(), ei = a.imag() - b.imag();
    double dr = a.real() - b.real(), di = a.imag() + b.imag();
    double wr = unpack_re_[k], wi = -unpack_im_[k];  // 1 / w^k = conj(w^k)
    double or_ = dr * wr - di * wi, oi = dr * wi + di * wr;
    std::size_t r = reversed_[k];
    re[r] = er - oi;
    im[r] = ei + or_;
  }
  transform(im, re);
  for (std::size_t j = 0; j < m; ++j) {
    x[2 * j] = re[j];
    x[2 * j + 1] = im[j];
  }
}

}  // namespace fxc
