// SPDX-License-Identifier: Apache-2.0
#include "runtime/fft_convolution.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/diagnostics.h"

namespace fxc {
namespace {

template <class T>
void convolve_plan(std::span<const double> taps, std::span<const T> x, std::span<T> y, int block,
                   std::vector<T>& history) {
  FftConvolver<T> convolver(taps.size(), block);
  std::vector<std::complex<T>> response(convolver.bins());
  convolver.transform_taps(taps, response);
  history.resize(taps.empty() ? 0 : taps.size() - 1, T(0));
  convolver.convolve(taps, response, x, y, history);
}

}  // namespace

template <class T>
FftConvolver<T>::FftConvolver(std::size_t taps, int block)
    : taps_(taps),
      n_(static_cast<std::size_t>(std::max(block, 2))),
      fft_(n_),
      frame_(n_, T(0)),
      out_(n_, T(0)),
      next_history_(taps > 0 ? taps - 1 : 0, T(0)),
      spectrum_(n_ / 2 + 1) {
  FXC_INTERNAL_ASSERT(block > 0 && n_ > taps && (n_ & (n_ - 1)) == 0,
                      "the FFT block must be a power of two above the taps");
}

template <class T>
void FftConvolver<T>::transform_taps(std::span<const double> taps, std::span<std::complex<T>> response) {
  FXC_INTERNAL_ASSERT(taps.size() == taps_ && response.size() == bins(), "FFT taps of the wrong size");
  std::fill(frame_.begin(), frame_.end(), T(0));
  for (std::size_t k = 0; k < taps_; ++k) frame_[k] = static_cast<T>(taps[k]);
  fft_.forward(frame_, response);
}

// Algorithm (overlap-save): with N = block and L = taps, each step takes the N inputs ending at
// the next N - L + 1 new samples (zeros before the signal), multiplies their spectrum by the
// taps' spectrum, and keeps the last N - L + 1 points of the inverse transform, which are
// free of circular wrap-around.
template <class T>
void FftConvolver<T>::convolve(std::span<const double> taps, std::span<const std::complex<T>> response,
                               std::span<const T> x, std::span<T> y, std::span<T> history) noexcept {
  const std::size_t n = n_;
  const std::size_t l = taps_;
  const std::size_t hop = n - l + 1;
  const std::size_t bins = this->bins();
  const std::size_t kept = history.size();  // l - 1
  const T scale = T(1) / static_cast<T>(n);  // both FFTs' inverses are unnormalized
  // y may overwrite x: the last L - 1 inputs of the previous step are kept in `history`.
  for (std::size_t start = 0; start < x.size(); start += hop) {
    std::size_t count = std::min(hop, x.size() - start);
    std::copy(history.begin(), history.end(), frame_.begin());
    std::copy(x.begin() + start, x.begin() + start + count, frame_.begin() + kept);
    std::fill(frame_.begin() + kept + count, frame_.end(), T(0));
    // The history for the next step: the last L - 1 inputs up to start + count.
    for (std::size_t k = 0; k < kept; ++k) next_history_[k] = frame_[count + k];
    // A NaN or an infinity would spread through the transform to every output of the step,
    // earlier ones included: the transform counts it as 0, and its products are added
    // directly to the outputs its taps reach (L multiply-adds for each such input, where the
    // step's direct sum would cost L per output), so that it reaches only those, as in the
    // reference interpreter.
    const bool finite = zero_nonfinite<T>(std::span<T>(frame_).first(kept + count));
    fft_.forward(frame_, spectrum_);
    // The product written out: std::complex's operator* checks for infinities and NaNs
    // (Annex G) and would not vectorize.
    for (std::size_t b = 0; b < bins; ++b) {
      T ar = spectrum_[b].real(), ai = spectrum_[b].imag();
      T br = response[b].real(), bi = response[b].imag();
      spectrum_[b] = {(ar * br - ai * bi) * scale, (ar * bi + ai * br) * scale};
    }
    fft_.inverse(spectrum_, out_);
    if (!finite) {
      // Frame position j holds history[j] (j < kept) or x[start + j - kept], neither written
      // yet; output i of the step is frame position kept + i.
      for (std::size_t j = 0; j < kept + count; ++j) {
        const T v = j < kept ? history[j] : x[start + j - kept];
        if (std::isfinite(v)) continue;
        const std::size_t first = j > kept ? j - kept : 0, end = std::min(count, j + l - kept);
        for (std::size_t i = first; i < end; ++i)
          out_[kept + i] = static_cast<T>(static_cast<double>(out_[kept + i]) + taps[kept + i - j] * static_cast<double>(v));
      }
    }
    std::copy(out_.begin() + kept, out_.begin() + kept + count, y.begin() + start);
    std::copy(next_history_.begin(), next_history_.end(), history.begin());
  }
}

// One pass over the frame with no branch, which the compiler vectorizes (|v| <= max is false for
// NaNs and infinities), then a second only where it found one: a test and a branch per sample
// had been two thirds of the time W3's convolutions spent outside the transforms.
template <class T>
bool zero_nonfinite(std::span<T> frame) noexcept {
  unsigned bad = 0;
  for (const T v : frame) bad |= !(std::fabs(v) <= std::numeric_limits<T>::max());
  if (bad == 0) return true;
  for (T& v : frame)
    if (!std::isfinite(v)) v = T(0);
  return false;
}

template bool zero_nonfinite<float>(std::span<float>) noexcept;
template bool zero_nonfinite<double>(std::span<double>) noexcept;
template class FftConvolver<float>;
template class FftConvolver<double>;

void fft_convolve(std::span<const double> taps, std::span<const float> x, std::span<float> y,
                  int block, std::vector<float>& history) {
  convolve_plan<float>(taps, x, y, block, history);
}

void fft_convolve(std::span<const double> taps, std::span<const double> x, std::span<double> y,
                  int block, std::vector<double>& history) {
  convolve_plan<double>(taps, x, y, block, history);
}

}  // namespace fxc
