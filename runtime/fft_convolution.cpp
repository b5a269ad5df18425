// SPDX-License-Identifier: Apache-2.0
#include "runtime/fft_convolution.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>

#include <kiss_fftr.h>

#include "support/diagnostics.h"

namespace fxc {
namespace {

struct FftPlan {
  kiss_fftr_cfg forward;
  kiss_fftr_cfg inverse;
  explicit FftPlan(int n) : forward(kiss_fftr_alloc(n, 0, nullptr, nullptr)), inverse(kiss_fftr_alloc(n, 1, nullptr, nullptr)) {
    FXC_INTERNAL_ASSERT(forward && inverse, "cannot plan an FFT");
  }
  ~FftPlan() {
    kiss_fftr_free(forward);
    kiss_fftr_free(inverse);
  }
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;
};

}  // namespace

// Algorithm (overlap-save): with N = block and L = taps, each step takes the N inputs ending at
// the next N - L + 1 new samples (zeros before the signal), multiplies their spectrum by the
// taps' spectrum, and keeps the last N - L + 1 points of the inverse transform, which are
// free of circular wrap-around.
void fft_convolve(std::span<const double> taps, std::span<const float> x, std::span<float> y,
                  int block, std::vector<float>& history) {
  const std::size_t n = static_cast<std::size_t>(block);
  const std::size_t l = taps.size();
  FXC_INTERNAL_ASSERT(n > l && (n & (n - 1)) == 0, "the FFT block must be a power of two above the taps");
  const std::size_t hop = n - l + 1;
  const std::size_t bins = n / 2 + 1;
  FftPlan plan(static_cast<int>(n));

  std::vector<float> frame(n, 0.0f);
  std::vector<kiss_fft_cpx> response(bins), spectrum(bins);
  for (std::size_t k = 0; k < l; ++k) frame[k] = static_cast<float>(taps[k]);
  kiss_fftr(plan.forward, frame.data(), response.data());
  const float scale = 1.0f / static_cast<float>(n);  // KissFFT's inverse is unnormalized

  // y may overwrite x: the last L - 1 inputs of the previous step are kept in `history`.
  history.resize(l > 0 ? l - 1 : 0, 0.0f);
  std::vector<float> next_history(history.size());
  std::vector<float> out(n);
  for (std::size_t start = 0; start < x.size(); start += hop) {
    std::size_t count = std::min(hop, x.size() - start);
    std::copy(history.begin(), history.end(), frame.begin());
    std::copy(x.begin() + start, x.begin() + start + count, frame.begin() + history.size());
    std::fill(frame.begin() + history.size() + count, frame.end(), 0.0f);
    // The history for the next step: the last L - 1 inputs up to start + count.
    for (std::size_t k = 0; k < history.size(); ++k)
      next_history[k] = frame[count + k];
    // A NaN or an infinity would spread through the transform to every output of the step,
    // earlier ones included; such a step is convolved directly instead, so that it reaches
    // only the outputs it touches, as in the reference interpreter.
    if (!std::all_of(frame.begin(), frame.begin() + history.size() + count,
                     [](float v) { return std::isfinite(v); })) {
      for (std::size_t i = 0; i < count; ++i) {
        double sum = 0;
        for (std::size_t k = 0; k < l; ++k) sum += taps[k] * frame[history.size() + i - k];
        y[start + i] = static_cast<float>(sum);
      }
      history.swap(next_history);
      continue;
    }
    kiss_fftr(plan.forward, frame.data(), spectrum.data());
    for (std::size_t b = 0; b < bins; ++b) {
      std::complex<float> product = std::complex<float>(spectrum[b].r, spectrum[b].i) *
                                    std::complex<float>(response[b].r, response[b].i);
      spectrum[b].r = product.real() * scale;
      spectrum[b].i = product.imag() * scale;
    }
    kiss_fftri(plan.inverse, spectrum.data(), out.data());
    std::copy(out.begin() + history.size(), out.begin() + history.size() + count, y.begin() + start);
    history.swap(next_history);
  }
}

}  // namespace fxc
