// SPDX-License-Identifier: Apache-2.0
// scipy.signal.firwin(numtaps, cutoff, window=..., pass_zero=..., fs=fs, scale=True):
// the windowed ideal (sinc) response of the passbands, scaled to unit gain at the centre of
// the first passband (at DC if it starts there, at Nyquist if it ends there).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "design/filter_design.h"
#include "design/fir_windows.h"
#include "design/parameter_checks.h"

namespace fxc::design {
namespace {

constexpr int kMaxTaps = 65536;
// Up to here I0(beta) stays finite in SciPy's own evaluation (it overflows near 709.78).
constexpr double kMaxKaiserBeta = 700;

double sinc(double x) {
  if (x == 0.0) return 1.0;
  const double y = std::numbers::pi * x;
  return std::sin(y) / y;
}

// numpy's pairwise summation (np.sum): blocks of up to 128 summed with 8 accumulators, larger
// arrays split in halves. The unit-gain scale factor is a sum that can cancel heavily, so we
// add in SciPy's order; what remains different is numpy's own sin and cos.
double numpy_sum(const double* a, std::size_t n) {
  if (n < 8) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    std::size_t i = 8;
    for (; i < n - n % 8; i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  std::size_t half = n / 2;
  half -= half % 8;
  return numpy_sum(a, half) + numpy_sum(a + half, n - half);
}

CheckResult check_spec(const FirwinSpec& spec, double fs_hz) {
  if (auto error = check_sample_rate(fs_hz)) return error;
  if (auto error = check_count("numtaps", "numtaps", spec.numtaps, 1, kMaxTaps)) return error;
  if (spec.cutoff_hz.empty()) {
    return DesignError{"cutoff", "cutoff needs at least one frequency, got none"};
  }
  if (auto error = check_frequencies("cutoff", "cutoff", spec.cutoff_hz, fs_hz)) return error;
  if (spec.window == Window::kaiser) {
    if (auto error = check_finite("beta", "kaiser beta", spec.kaiser_beta)) return error;
    if (spec.kaiser_beta < 0 || spec.kaiser_beta > kMaxKaiserBeta) {
      return DesignError{"beta", "kaiser beta must lie between 0 and " + fmt(kMaxKaiserBeta) +
                                     ", got " + fmt(spec.kaiser_beta)};
    }
  }
  const bool pass_nyquist = ((spec.cutoff_hz.size() & 1) != 0) != spec.pass_zero;
  if (pass_nyquist && spec.numtaps % 2 == 0) {
    return DesignError{"numtaps",
                       "a filter that passes the Nyquist frequency needs an odd numtaps, got " +
                           std::to_string(spec.numtaps) +
                           " (an even-length linear-phase FIR has a zero at Nyquist)"};
  }
  return std::nullopt;
}

}  // namespace

DesignResult<std::vector<double>> design_firwin(const FirwinSpec& spec, double fs_hz) {
  if (auto error = check_spec(spec, fs_hz)) return Unexpected{*error};

  const double nyquist = 0.5 * fs_hz;
  std::vector<double> edges;
  if (spec.pass_zero) edges.push_back(0.0);
  for (double f : spec.cutoff_hz) edges.push_back(f / nyquist);
  const bool pass_nyquist = ((spec.cutoff_hz.size() & 1) != 0) != spec.pass_zero;
  if (pass_nyquist) edges.push_back(1.0);

  const int numtaps = spec.numtaps;
  const double alpha = 0.5 * (numtaps - 1);
  std::vector<double> h(numtaps, 0.0);
  for (std::size_t band = 0; band + 1 < edges.size(); band += 2) {
    const double left = edges[band];
    const double right = edges[band + 1];
    for (int i = 0; i < numtaps; ++i) {
      const double m = i - alpha;
      h[i] += right * sinc(right * m);
      h[i] -= left * sinc(left * m);
    }
  }
  const std::vector<double> window = symmetric_window(spec.window, numtaps, spec.kaiser_beta);
  for (int i = 0; i < numtaps; ++i) h[i] *= window[i];

  const double left = edges[0];
  const double right = edges[1];
  const double scale_frequency = left == 0.0 ? 0.0 : right == 1.0 ? 1.0 : 0.5 * (left + right);
  std::vector<double> weighted(numtaps);
  for (int i = 0; i < numtaps; ++i) {
    weighted[i] = h[i] * std::cos(std::numbers::pi * (i - alpha) * scale_frequency);
  }
  const double s = numpy_sum(weighted.data(), weighted.size());
  for (double& tap : h) tap /= s;
  if (!std::all_of(h.begin(), h.end(), [](double v) { return std::isfinite(v); })) {
    return Unexpected{DesignError{"cutoff",
                                  "the firwin design has no gain to normalize at its "
                                  "first passband; check the cutoff frequencies"}};
  }
  return h;
}

}  // namespace fxc::design
