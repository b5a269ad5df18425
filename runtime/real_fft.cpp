// SPDX-License-Identifier: Apache-2.0
#include "runtime/real_fft.h"

#include <cmath>
#include <numbers>

#include "support/diagnostics.h"
#include "support/vector_clones.h"

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

// e^{-2 pi i k / n} for any k < n, from the half circle: past it, the conjugate of n - k's.
std::complex<double> on_circle(const std::vector<std::complex<double>>& half, std::size_t k, std::size_t n) {
  return k <= n / 2 ? half[k] : std::conj(half[n - k]);
}

// Passes. The complex transform of m points (the input in bit-reversed order, the output in
// natural order) is radix-2 decimation in time, two stages at a time. After the stages below
// half-width h, a group of 4h points holds four transforms of h points, A, B, C, D; the two
// radix-2 stages h and 2h make them one of 4h points. With w = e^{-2 pi i j / (4h)} (so that
// stage h's twiddle is w^2), for j < h:
//   b = w^2 B[j], c = w C[j], d = w^3 D[j]   (stage 2h's twiddle w times stage h's w^2 D)
//   X[j] = (A + b) + (c + d)        X[j + 2h] = (A + b) - (c + d)
//   X[j + h] = (A - b) - i (c - d)  X[j + 3h] = (A - b) + i (c - d)
// three complex products for four points where two radix-2 stages take four, and half the
// passes over memory. The pass at h = 1 has no products (w = 1). Where log2(m) is odd, a last
// radix-2 stage at h = m / 2 follows: X[j] = A + w B, X[j + h] = A - w B, w = e^{-2 pi i j / m}.
// Twiddles: 6h values for a radix-4 pass at h >= 4 (w, w^2, w^3; real parts, then imaginary),
// 2h for the last radix-2 one, in the order the passes run.
// Each pass's loop over j is over consecutive points (h from 4 up: a vector of four lanes or
// more), which the compiler vectorizes; the inverse transform is the forward one with the real
// and imaginary parts swapped (swap(fft(swap(Z))) = conj(fft(conj Z)), unnormalized).

template <class T>
struct Plan {
  std::size_t m;
  const std::uint32_t* reversed;
  const T* twiddles;
  const T* unpack_re;
  const T* unpack_im;
  T* re;  // the transform's work: m complex points, split
  T* im;
  T* zr;  // the inverse's packed spectrum in natural order, before the bit reversal
  T* zi;
};

// The bit reversal and the pass at h = 1 in one: z[j] = (from_re[r], from_im[r]) with r j's
// reversal, `stride` apart, four points at a time into the 4-point transforms (w = 1), for
// m >= 4. The passes after it (transform_from_h4) run in place.
template <class T>
[[gnu::always_inline]] inline void first_pass(T* __restrict re, T* __restrict im, const T* __restrict from_re,
                                              const T* __restrict from_im, std::size_t stride,
                                              const std::uint32_t* __restrict reversed, std::size_t m) noexcept {
  for (std::size_t g = 0; g < m; g += 4) {
    const std::size_t r0 = reversed[g] * stride, r1 = reversed[g + 1] * stride;
    const std::size_t r2 = reversed[g + 2] * stride, r3 = reversed[g + 3] * stride;
    const T er = from_re[r0] + from_re[r1], ei = from_im[r0] + from_im[r1];  // A + b
    const T fr = from_re[r0] - from_re[r1], fi = from_im[r0] - from_im[r1];  // A - b
    const T sr = from_re[r2] + from_re[r3], si = from_im[r2] + from_im[r3];  // c + d
    const T dr = from_re[r2] - from_re[r3], di = from_im[r2] - from_im[r3];  // c - d
    re[g] = er + sr, im[g] = ei + si;
    re[g + 2] = er - sr, im[g + 2] = ei - si;
    re[g + 1] = fr + di, im[g + 1] = fi - dr;  // -i (c - d) = (di, -dr)
    re[g + 3] = fr - di, im[g + 3] = fi + dr;
  }
}

// The passes from h = 4 on, in place, for m >= 4.
template <class T>
[[gnu::always_inline]] inline void transform_from_h4(T* __restrict re, T* __restrict im, std::size_t m, const T* w) noexcept {
  std::size_t h = 4;
  for (; 4 * h <= m; h *= 4) {
    const T* __restrict w1r = w;
    const T* __restrict w1i = w + h;
    const T* __restrict w2r = w + 2 * h;
    const T* __restrict w2i = w + 3 * h;
    const T* __restrict w3r = w + 4 * h;
    const T* __restrict w3i = w + 5 * h;
    w += 6 * h;
    for (std::size_t g = 0; g < m; g += 4 * h) {
      T* ar = re + g;
      T* ai = im + g;
      T* br = re + g + h;
      T* bi = im + g + h;
      T* cr = re + g + 2 * h;
      T* ci = im + g + 2 * h;
      T* dr = re + g + 3 * h;
      T* di = im + g + 3 * h;
      // The four quarters never overlap. Said with a pragma: with __restrict on these
      // pointers, GCC 12 left the loop scalar ("no vectype for stmt").
#if defined(__clang__)
#pragma clang loop vectorize(assume_safety)
#elif defined(__GNUC__)
#pragma GCC ivdep
#endif
      for (std::size_t j = 0; j < h; ++j) {
        const T pr = w2r[j] * br[j] - w2i[j] * bi[j], pi = w2r[j] * bi[j] + w2i[j] * br[j];
        const T qr = w1r[j] * cr[j] - w1i[j] * ci[j], qi = w1r[j] * ci[j] + w1i[j] * cr[j];
        const T tr = w3r[j] * dr[j] - w3i[j] * di[j], ti = w3r[j] * di[j] + w3i[j] * dr[j];
        const T er = ar[j] + pr, ei = ai[j] + pi;
        const T fr = ar[j] - pr, fi = ai[j] - pi;
        const T sr = qr + tr, si = qi + ti;
        const T ur = qr - tr, ui = qi - ti;
        ar[j] = er + sr, ai[j] = ei + si;
        cr[j] = er - sr, ci[j] = ei - si;
        br[j] = fr + ui, bi[j] = fi - ur;
        dr[j] = fr - ui, di[j] = fi + ur;
      }
    }
  }
  if (h < m) {  // h == m / 2
    const T* __restrict wr = w;
    const T* __restrict wi = w + h;
    for (std::size_t j = 0; j < h; ++j) {
      const T tr = wr[j] * re[h + j] - wi[j] * im[h + j];
      const T ti = wr[j] * im[h + j] + wi[j] * re[h + j];
      re[h + j] = re[j] - tr;
      im[h + j] = im[j] - ti;
      re[j] += tr;
      im[j] += ti;
    }
  }
}

// The transform of z[j] = (from_re[j * stride], from_im[j * stride]) into re, im: natural
// order out, bit reversal on the way in.
template <class T>
[[gnu::always_inline]] inline void transform(T* __restrict re, T* __restrict im, const T* __restrict from_re,
                                             const T* __restrict from_im, std::size_t stride, const Plan<T>& p) noexcept {
  const std::size_t m = p.m;
  if (m >= 4) {
    first_pass(re, im, from_re, from_im, stride, p.reversed, m);
    transform_from_h4(re, im, m, p.twiddles);
  } else if (m == 2) {
    const T ar = from_re[0], ai = from_im[0], br = from_re[stride], bi = from_im[stride];
    re[0] = ar + br, im[0] = ai + bi;
    re[1] = ar - br, im[1] = ai - bi;
  } else {
    re[0] = from_re[0], im[0] = from_im[0];
  }
}

// Algorithm (a real transform of n points by a complex one of m = n / 2): z[j] = x[2j] +
// i x[2j + 1] has the transform Z = E + i O, where E and O are the transforms of the even and
// the odd points, so E[k] = (Z[k] + conj Z[m - k]) / 2 and O[k] = (Z[k] - conj Z[m - k]) / 2i
// (Z[m] = Z[0]), and X[k] = E[k] + w^k O[k] with w = e^{-2 pi i / n}, for k = 0..m.
// `spectrum`: m + 1 complex points, as pairs of T.
template <class T>
[[gnu::always_inline]] inline void forward_body(const Plan<T>& p, const T* __restrict x, T* __restrict spectrum) noexcept {
  const std::size_t m = p.m;
  T* __restrict re = p.re;
  T* __restrict im = p.im;
  transform(re, im, x, x + 1, 2, p);
  // Bins 0 and m (w^0 = 1, w^m = -1): real, exactly.
  spectrum[0] = re[0] + im[0], spectrum[1] = 0;
  spectrum[2 * m] = re[0] - im[0], spectrum[2 * m + 1] = 0;
  for (std::size_t k = 1; k < m; ++k) {
    const std::size_t b = m - k;
    const T er = T(0.5) * (re[k] + re[b]), ei = T(0.5) * (im[k] - im[b]);
    const T or_ = T(0.5) * (im[k] + im[b]), oi = T(-0.5) * (re[k] - re[b]);
    const T wr = p.unpack_re[k], wi = p.unpack_im[k];
    spectrum[2 * k] = er + (wr * or_ - wi * oi);
    spectrum[2 * k + 1] = ei + (wr * oi + wi * or_);
  }
}

// The forward unpacking undone: E[k] = (X[k] + conj X[m - k]) / 2, O[k] = (X[k] -
// conj X[m - k]) / (2 w^k), Z[k] = E[k] + i O[k]; here without the halves, which makes the
// unnormalized inverse of Z (m times z) n times the signal.
template <class T>
[[gnu::always_inline]] inline void inverse_body(const Plan<T>& p, const T* __restrict spectrum, T* __restrict x) noexcept {
  const std::size_t m = p.m;
  T* __restrict re = p.re;
  T* __restrict im = p.im;
  T* __restrict zr = p.zr;
  T* __restrict zi = p.zi;
  for (std::size_t k = 0; k < m; ++k) {
    const std::size_t b = m - k;
    T ar = spectrum[2 * k], ai = spectrum[2 * k + 1], br = spectrum[2 * b], bi = spectrum[2 * b + 1];
    if (k == 0) ai = 0, bi = 0;  // bins 0 and m of a real signal are real
    const T er = ar + br, ei = ai - bi;
    const T dr = ar - br, di = ai + bi;
    const T wr = p.unpack_re[k], wi = -p.unpack_im[k];  // 1 / w^k = conj(w^k)
    const T or_ = dr * wr - di * wi, oi = dr * wi + di * wr;
    zr[k] = er - oi;
    zi[k] = ei + or_;
  }
  transform(im, re, zi, zr, 1, p);
  for (std::size_t j = 0; j < m; ++j) {
    x[2 * j] = re[j];
    x[2 * j + 1] = im[j];
  }
}

FXC_VECTOR_CLONES void forward_kernel(const Plan<float>& p, const float* x, float* spectrum) noexcept {
  forward_body(p, x, spectrum);
}
FXC_VECTOR_CLONES void forward_kernel(const Plan<double>& p, const double* x, double* spectrum) noexcept {
  forward_body(p, x, spectrum);
}
FXC_VECTOR_CLONES void inverse_kernel(const Plan<float>& p, const float* spectrum, float* x) noexcept {
  inverse_body(p, spectrum, x);
}
FXC_VECTOR_CLONES void inverse_kernel(const Plan<double>& p, const double* spectrum, double* x) noexcept {
  inverse_body(p, spectrum, x);
}

}  // namespace

template <class T>
RealFft<T>::RealFft(std::size_t size) : n_(size), m_(size / 2) {
  FXC_INTERNAL_ASSERT(size >= 2 && (size & (size - 1)) == 0 && size <= (std::size_t{1} << 31),
                      "a real FFT's size must be a power of two from 2 to 2^31");
  int bits = 0;
  while ((std::size_t{1} << bits) < m_) ++bits;
  // j's reversal is j / 2's shifted down, with j's lowest bit on top.
  reversed_.assign(m_, 0);
  for (std::size_t j = 1; j < m_; ++j)
    reversed_[j] = (reversed_[j >> 1] >> 1) | (static_cast<std::uint32_t>(j & 1) << (bits - 1));
  // e^{-2 pi i j / (4h)} is the circle's point j n / (4h), as n = 2m points go round it.
  const std::vector<std::complex<double>> circle = half_circle(n_);
  auto append = [&](std::size_t h, std::size_t power, std::size_t turn) {
    std::size_t base = twiddles_.size();
    twiddles_.resize(base + 2 * h);
    for (std::size_t j = 0; j < h; ++j) {
      std::complex<double> w = on_circle(circle, power * j * (n_ / turn), n_);
      twiddles_[base + j] = static_cast<T>(w.real());
      twiddles_[base + h + j] = static_cast<T>(w.imag());
    }
  };
  std::size_t h = 4;
  if (m_ >= 4) {
    for (; 4 * h <= m_; h *= 4)
      for (std::size_t power = 1; power <= 3; ++power) append(h, power, 4 * h);
    if (h < m_) append(h, 1, 2 * h);
  }
  unpack_re_.resize(m_ + 1);
  unpack_im_.resize(m_ + 1);
  for (std::size_t k = 0; k <= m_; ++k) {
    unpack_re_[k] = static_cast<T>(circle[k].real());
    unpack_im_[k] = static_cast<T>(circle[k].imag());
  }
  re_.resize(m_);
  im_.resize(m_);
  zr_.resize(m_);
  zi_.resize(m_);
}

// std::complex<T> is laid out as T[2], and an array of them as an array of T ([complex.numbers]).
template <class T>
void RealFft<T>::forward(std::span<const T> x, std::span<std::complex<T>> spectrum) noexcept {
  const Plan<T> p{m_, reversed_.data(), twiddles_.data(), unpack_re_.data(), unpack_im_.data(),
                  re_.data(), im_.data(), zr_.data(), zi_.data()};
  forward_kernel(p, x.data(), reinterpret_cast<T*>(spectrum.data()));
}

template <class T>
void RealFft<T>::inverse(std::span<const std::complex<T>> spectrum, std::span<T> x) noexcept {
  const Plan<T> p{m_, reversed_.data(), twiddles_.data(), unpack_re_.data(), unpack_im_.data(),
                  re_.data(), im_.data(), zr_.data(), zi_.data()};
  inverse_kernel(p, reinterpret_cast<const T*>(spectrum.data()), x.data());
}

template class RealFft<float>;
template class RealFft<double>;

}  // namespace fxc
