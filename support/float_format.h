// SPDX-License-Identifier: Apache-2.0
// Floating-point text that reads back exactly: the shortest decimal that round-trips.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fxc {

/// Shortest text that parses back to exactly `value` ("0.1", "1e-05", "inf", "nan").
std::string format_double(double value);

/// Parses the whole of `text` as a double (also "inf", "-inf", "nan"); nullopt otherwise.
std::optional<double> parse_double(std::string_view text);

}  // namespace fxc
