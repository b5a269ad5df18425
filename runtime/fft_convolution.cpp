// SPDX-License-Identifier: Apache-2.0
#include "runtime/fft_convolution.h"

#include <algorithm>
#include <cmath>

#include <kiss_fftr.h>

#include "support/diagnostics.h"

namespace fxc {
namespace {

// std::complex<float> is laid out as float[2] (the standard says so), as kiss_fft_cpx is.
kiss_fft_cpx* as_kiss(std::complex<float>* p) { return reinterpret_cast<kiss_fft_cpx*>(p); }

}  // namespace

FftConvolver::FftConvolver(std::size_t taps, int block)
    : taps_(taps),
      n_(static_cast<std::size_t>(block)),
      forward_(nullptr),
      inverse_(nullptr),
      frame_(n_, 0.0f),
      out_(n_, 0.0f),
      next_history_(taps > 0 ? taps - 1 : 0, 0.0f),
      spectrum_(n_ / 2 + 1) {
  FXC_INTERNAL_ASSERT(block > 0 && n_ > taps && (n_ & (n_ - 1)) == 0,
                      "the FFT block must be a power of two above the taps");
  forward_ = kiss_fftr_alloc(block, 0, nullptr, nullptr);
  inverse_ = kiss_fftr_alloc(block, 1, nullptr, nullptr);
  FXC_INTERNAL_ASSERT(forward_ && inverse_, "cannot plan an FFT");
}

FftConvolver::~FftConvolver() {
  kiss_fftr_free(forward_);
  kiss_fftr_free(inverse_);
}

void FftConvolver::transform_taps(std::span<const double> taps, std::span<std::complex<float>> response) {
  FXC_INTERNAL_ASSERT(taps.size() == taps_ && response.size() == bins(), "FFT taps of the wrong size");
  std::fill(frame_.begin(), frame_.end(), 0.0f);
  for (std::size_t k = 0; k < taps_; ++k) frame_[k] = static_cast<float>(taps[k]);
  kiss_fftr(forward_, frame_.data(), as_kiss(response.data()));
}

// Algorithm (overlap-save): with N = block and L = taps, each step takes the N inputs ending at
// the next N - L + 1 new samples (zeros before the signal), multiplies their spectrum by the
// taps' spectrum, and keeps the last N - L + 1 points of the inverse transform, which are
// free of circular wrap-around.
void FftConvolver::convolve(std::span<const double> taps, std::span<const std::complex<float>> response,
                            std::span<const float> x, std::span<float> y, std::span<float> history) noexcept {
  const std::size_t n = n_;
  const std::size_t l = taps_;
  const std::size_t hop = n - l + 1;
  const std::size_t bins = this->bins();
  const std::size_t kept = history.size();  // l - 1
  const float scale = 1.0f / static_cast<float>(n);  // KissFFT's inverse is unnormalized
  // y may overwrite x: the last L - 1 inputs of the previous step are kept in `history`.
  for (std::size_t start = 0; start < x.size(); start += hop) {
    std::size_t count = std::min(hop, x.size() - start);
    std::copy(history.begin(), history.end(), frame_.begin());
    std::copy(x.begin() + start, x.begin() + start + count, frame_.begin() + kept);
    std::fill(frame_.begin() + kept + count, frame_.end(), 0.0f);
    // The history for the next step: the last L - 1 inputs up to start + count.
    for (std::size_t k = 0; k < kept; ++k) next_history_[k] = frame_[count + k];
    // A NaN or an infinity would spread through the transform to every output of the step,
    // earlier ones included; such a step is convolved directly instead, so that it reaches
    // only the outputs it touches, as in the reference interpreter.
    if (!std::all_of(frame_.begin(), frame_.begin() + kept + count, [](float v) { return std::isfinite(v); })) {
      for (std::size_t i = 0; i < count; ++i) {
        double sum = 0;
        for (std::size_t k = 0; k < l; ++k) sum += taps[k] * frame_[kept + i - k];
        y[start + i] = static_cast<float>(sum);
      }
      std::copy(next_history_.begin(), next_history_.end(), history.begin());
      continue;
    }
    kiss_fftr(forward_, frame_.data(), as_kiss(spectrum_.data()));
    for (std::size_t b = 0; b < bins; ++b) {
      std::complex<float> product = spectrum_[b] * response[b];
      spectrum_[b] = {product.real() * scale, product.imag() * scale};
    }
    kiss_fftri(inverse_, as_kiss(spectrum_.data()), out_.data());
    std::copy(out_.begin() + kept, out_.begin() + kept + count, y.begin() + start);
    std::copy(next_history_.begin(), next_history_.end(), history.begin());
  }
}

void fft_convolve(std::span<const double> taps, std::span<const float> x, std::span<float> y,
                  int block, std::vector<float>& history) {
  FftConvolver convolver(taps.size(), block);
  std::vector<std::complex<float>> response(convolver.bins());
  convolver.transform_taps(taps, response);
  history.resize(taps.empty() ? 0 : taps.size() - 1, 0.0f);
  convolver.convolve(taps, response, x, y, history);
}

}  // namespace fxc
