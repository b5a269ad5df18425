// SPDX-License-Identifier: Apache-2.0
// Shared validation of design parameters, so that every design words its errors alike.
// Each check returns the DesignError to report, or nullopt when the value is acceptable.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "design/filter_design.h"

namespace fxc::design {

using CheckResult = std::optional<DesignError>;

/// Shortest round-trip text for a number (fxc::format_double).
std::string fmt(double value);
/// "[a, b, c]" with each number as fmt() writes it.
std::string fmt_list(const std::vector<double>& values);

/// fs: positive and finite.
CheckResult check_sample_rate(double fs_hz);
/// An integer count in [min, max]: "<what> must be at least <min>, got <value>".
CheckResult check_count(std::string_view param, std::string_view what, int value, int min, int max);
/// A finite number: "<what> must be a finite number, got nan".
CheckResult check_finite(std::string_view param, std::string_view what, double value);
/// Frequencies strictly inside (0, fs/2), finite, and strictly increasing. `what` names one
/// frequency in messages ("cutoff", "f0").
CheckResult check_frequencies(std::string_view param, std::string_view what,
                              const std::vector<double>& frequencies_hz, double fs_hz);
/// The Nyquist message for one frequency outside (0, fs/2).
DesignError frequency_out_of_range(std::string_view param, std::string_view what,
                                   double frequency_hz, double fs_hz);

}  // namespace fxc::design
