// SPDX-License-Identifier: Apache-2.0
// Wording of parameter errors shared by the IIR, biquad and FIR designs.
#include "design/parameter_checks.h"

#include <cmath>

#include "support/float_format.h"

namespace fxc::design {

std::string fmt(double value) {
  return format_double(value);
}

std::string fmt_list(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += fmt(values[i]);
  }
  return out + "]";
}

CheckResult check_sample_rate(double fs_hz) {
  if (std::isfinite(fs_hz) && fs_hz > 0) return std::nullopt;
  return DesignError{"fs",
                     "sample rate must be a positive finite number, got " + fmt(fs_hz) + " Hz"};
}

CheckResult check_count(std::string_view param, std::string_view what, int value, int min,
                        int max) {
  if (value < min) {
    return DesignError{std::string(param), std::string(what) + " must be at least " +
                                               std::to_string(min) + ", got " +
                                               std::to_string(value)};
  }
  if (value > max) {
    return DesignError{std::string(param), std::string(what) + " must be at most " +
                                               std::to_string(max) + ", got " +
                                               std::to_string(value)};
  }
  return std::nullopt;
}

CheckResult check_finite(std::string_view param, std::string_view what, double value) {
  if (std::isfinite(value)) return std::nullopt;
  return DesignError{std::string(param),
                     std::string(what) + " must be a finite number, got " + fmt(value)};
}

DesignError frequency_out_of_range(std::string_view param, std::string_view what,
                                   double frequency_hz, double fs_hz) {
  return DesignError{std::string(param),
                     std::string(what) + " " + fmt(frequency_hz) +
                         " Hz must lie strictly between 0 and the Nyquist frequency " +
                         fmt(fs_hz / 2) + " Hz (fs = " + fmt(fs_hz) + " Hz)"};
}

CheckResult check_frequencies(std::string_view param, std::string_view what,
                              const std::vector<double>& frequencies_hz, double fs_hz) {
  for (double f : frequencies_hz) {
    if (auto error = check_finite(param, what, f)) return error;
  }
  for (double f : frequencies_hz) {
    // SciPy tests the normalized frequency 2 f / fs; so do we, so that the same values pass.
    const double normalized = 2 * f / fs_hz;
    if (!(normalized > 0 && normalized < 1)) {
      return frequency_out_of_range(param, what, f, fs_hz);
    }
  }
  for (std::size_t i = 1; i < frequencies_hz.size(); ++i) {
    if (!(frequencies_hz[i] > frequencies_hz[i - 1])) {
      return DesignError{std::string(param),
                         "band edges must be increasing: got " + fmt_list(frequencies_hz) + " Hz"};
    }
  }
  return std::nullopt;
}

}  // namespace fxc::design
