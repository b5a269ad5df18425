// SPDX-License-Identifier: Apache-2.0
#include "support/float_format.h"

#include <charconv>
#include <cmath>

namespace fxc {

std::string format_double(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  // Without a precision, to_chars writes the shortest text that reads back exactly.
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

std::optional<double> parse_double(std::string_view text) {
  if (text == "nan") return std::nan("");
  if (text == "inf" || text == "+inf") return INFINITY;
  if (text == "-inf") return -INFINITY;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace fxc
