// SPDX-License-Identifier: Apache-2.0
// RealFft (runtime/real_fft.h), fxc's FFT in float32 and float64, against the definition of
// the DFT summed in long double, and the overlap-save convolution built on it against direct
// sums.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <random>
#include <type_traits>
#include <vector>

#include "runtime/fft_convolution.h"
#include "runtime/real_fft.h"
#include "uniform_noise.h"
#include "worse.h"

using fxc::test::worse;

namespace fxc {
namespace {

std::vector<double> noise(std::size_t n, std::uint64_t seed) { return test::uniform_noise(n, seed); }

// X[k] = sum_n x[n] e^{-2 pi i k n / N} for k <= N / 2, in long double (O(N^2)).
std::vector<std::complex<long double>> naive_dft(const std::vector<double>& x) {
  const std::size_t n = x.size();
  std::vector<std::complex<long double>> out(n / 2 + 1);
  for (std::size_t k = 0; k <= n / 2; ++k) {
    std::complex<long double> sum = 0;
    for (std::size_t j = 0; j < n; ++j) {
      long double angle = -2 * std::numbers::pi_v<long double> * static_cast<long double>(k * j % n) /
                          static_cast<long double>(n);
      sum += static_cast<long double>(x[j]) * std::complex<long double>(std::cos(angle), std::sin(angle));
    }
    out[k] = sum;
  }
  return out;
}

// Tolerances relative to the spectrum's RMS. Radix-2 rounding grows as about 2^-53 (2^-24)
// x sqrt(log2 N) relative; the largest errors measured up to 8192 points are 9.9e-16 (float64)
// and 4.4e-7 (float32) of the RMS, and 7.8e-16 and 4.2e-7 for the round trip. 1e-13 and 1e-5
// leave margins of 100 and 20 and still catch any wrong twiddle or index (errors of order 1).
template <class T>
constexpr double kTolerance = std::is_same_v<T, float> ? 1e-5 : 1e-13;

TEST_CASE_TEMPLATE("RealFft matches the naive DFT for every power of two from 2 to 8192", T, float, double) {
  for (std::size_t n = 2; n <= 8192; n *= 2) {
    CAPTURE(n);
    std::vector<double> x = noise(n, n);
    std::vector<T> xt(x.begin(), x.end());
    for (std::size_t j = 0; j < n; ++j) x[j] = static_cast<double>(xt[j]);  // the signal T holds
    RealFft<T> fft(n);
    REQUIRE(fft.bins() == n / 2 + 1);
    std::vector<std::complex<T>> got(fft.bins());
    fft.forward(xt, got);
    std::vector<std::complex<long double>> want = naive_dft(x);
    long double err = 0, power = 0;
    for (std::size_t k = 0; k < want.size(); ++k) {
      err = worse(err, std::abs(std::complex<long double>(got[k].real(), got[k].imag()) - want[k]));
      power += std::norm(want[k]);
    }
    long double rms = std::sqrt(power / static_cast<long double>(want.size()));
    CHECK(static_cast<double>(err / rms) <= kTolerance<T>);
    // A real signal's bins 0 and N/2 are real, exactly.
    CHECK(got[0].imag() == 0);
    CHECK(got[n / 2].imag() == 0);
  }
}

TEST_CASE_TEMPLATE("RealFft's inverse gives N times the signal back", T, float, double) {
  for (std::size_t n = 2; n <= 8192; n *= 2) {
    CAPTURE(n);
    std::vector<double> x0 = noise(n, 100 + n);
    std::vector<T> x(x0.begin(), x0.end()), back(n);
    RealFft<T> fft(n);
    std::vector<std::complex<T>> spectrum(fft.bins());
    fft.forward(x, spectrum);
    fft.inverse(spectrum, back);
    double err = 0;
    for (std::size_t j = 0; j < n; ++j)
      err = worse(err, std::abs(static_cast<double>(back[j]) / static_cast<double>(n) - static_cast<double>(x[j])));
    CHECK(err <= kTolerance<T>);  // x is in [-1, 1]: relative to its scale
  }
}

TEST_CASE_TEMPLATE("RealFft's inverse ignores the imaginary parts of bins 0 and N/2", T, float, double) {
  // A spectrum that is not a real signal's there: the inverse reads the real parts only.
  for (std::size_t n : {2, 4, 8, 64, 2048}) {
    CAPTURE(n);
    RealFft<T> fft(n);
    std::vector<double> x0 = noise(n, 5 + n);
    std::vector<T> x(x0.begin(), x0.end()), clean(n), dirty(n);
    std::vector<std::complex<T>> spectrum(fft.bins());
    fft.forward(x, spectrum);
    fft.inverse(spectrum, clean);
    spectrum[0] += std::complex<T>(0, T(3.5));
    spectrum[n / 2] += std::complex<T>(0, T(-1.25));
    fft.inverse(spectrum, dirty);
    CHECK(clean == dirty);
  }
}

TEST_CASE("RealFft is linear and finds a cosine in its bin") {
  const std::size_t n = 1024;
  RealFft<double> fft(n);
  std::vector<double> a = noise(n, 1), b = noise(n, 2), mix(n);
  for (std::size_t j = 0; j < n; ++j) mix[j] = 2.5 * a[j] - 0.75 * b[j];
  std::vector<std::complex<double>> fa(fft.bins()), fb(fft.bins()), fmix(fft.bins());
  fft.forward(a, fa);
  fft.forward(b, fb);
  fft.forward(mix, fmix);
  double err = 0;
  for (std::size_t k = 0; k < fft.bins(); ++k) err = worse(err, std::abs(fmix[k] - (2.5 * fa[k] - 0.75 * fb[k])));
  CHECK(err <= kTolerance<double> * std::sqrt(static_cast<double>(n)));  // bins are of order sqrt(N)

  std::vector<double> cosine(n);
  for (std::size_t j = 0; j < n; ++j)
    cosine[j] = std::cos(2 * std::numbers::pi * 37 * static_cast<double>(j) / static_cast<double>(n));
  fft.forward(cosine, fa);
  for (std::size_t k = 0; k < fft.bins(); ++k) {
    CAPTURE(k);
    CHECK(std::abs(fa[k] - std::complex<double>(k == 37 ? n / 2.0 : 0.0, 0)) <= 1e-12 * static_cast<double>(n));
  }
}

TEST_CASE_TEMPLATE("FFT overlap-save equals direct convolution in streamed pieces", T, float, double) {
  // Relative to the output's RMS, with FFTs of 2048 points against a direct sum in long double
  // of the same (T-rounded) inputs: 1e-13 in float64 (largest error measured: 1.9e-15) and
  // 1e-5 in float32 (measured: 8.7e-7).
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  std::vector<double> taps = noise(511, 7), x0 = noise(20000, 8), want(x0.size());
  std::vector<T> x(x0.begin(), x0.end());
  for (std::size_t n = 0; n < x.size(); ++n) {
    long double sum = 0;
    for (std::size_t k = 0; k < taps.size() && k <= n; ++k) sum += static_cast<long double>(taps[k]) * x[n - k];
    want[n] = static_cast<double>(sum);
  }
  double power = 0;
  for (double v : want) power += v * v;
  const double rms = std::sqrt(power / static_cast<double>(want.size()));
  FftConvolver<T> convolver(taps.size(), 2048);
  std::vector<std::complex<T>> response(convolver.bins());
  convolver.transform_taps(taps, response);
  std::vector<T> history(taps.size() - 1, T(0)), got(x.size());
  std::mt19937 rng(3);
  for (std::size_t start = 0; start < x.size();) {
    std::size_t count = std::min<std::size_t>(x.size() - start, std::uniform_int_distribution<std::size_t>(0, 3000)(rng));
    convolver.convolve(taps, response, std::span<const T>(x).subspan(start, count),
                       std::span<T>(got).subspan(start, count), history);
    start += count;
  }
  double err = 0;
  for (std::size_t n = 0; n < x.size(); ++n) err = worse(err, std::abs(static_cast<double>(got[n]) - want[n]));
  CHECK(err <= tolerance * rms);
}

TEST_CASE_TEMPLATE("zero_nonfinite zeroes NaNs and infinities only, and says whether it found one", T, float, double) {
  using limits = std::numeric_limits<T>;
  const std::vector<T> finite = {T(0), T(-0.0), T(1.5), limits::max(), limits::lowest(), limits::denorm_min(),
                                 -limits::denorm_min(), limits::min()};
  std::vector<T> frame = finite;
  CHECK(zero_nonfinite<T>(frame));
  CHECK(frame == finite);
  CHECK(std::signbit(frame[1]));  // -0.0 kept as it is
  // One bad value anywhere in a frame longer than any vector, and each kind of bad value.
  for (T bad : {limits::quiet_NaN(), -limits::quiet_NaN(), limits::infinity(), -limits::infinity()})
    for (std::size_t at : {std::size_t{0}, std::size_t{5}, std::size_t{36}}) {
      CAPTURE(at);
      std::vector<T> many(37, T(0.25));
      many[at] = bad;
      CHECK_FALSE(zero_nonfinite<T>(many));
      CHECK(many[at] == T(0));
      for (std::size_t k = 0; k < many.size(); ++k)
        if (k != at) CHECK(many[k] == T(0.25));
    }
  std::vector<T> empty;
  CHECK(zero_nonfinite<T>(empty));
}

}  // namespace
}  // namespace fxc
