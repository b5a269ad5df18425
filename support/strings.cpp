// SPDX-License-Identifier: Apache-2.0
#include "support/strings.h"

#include <algorithm>
#include <vector>

namespace fxc {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_name(std::string_view word,
                                        std::span<const std::string_view> candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (std::string_view c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (!best || d < best_distance) {
      best = std::string(c);
      best_distance = d;
    }
  }
  // A suggestion further than a third of the word away is noise, not help.
  if (best && best_distance <= std::max<std::size_t>(2, word.size() / 3)) return best;
  // Else the one name of 4 characters or more that the word begins with ('butterworth' for
  // 'butter'); none where several do, or where the word is only the start of names ('high'
  // begins highpass and highshelf alike).
  std::optional<std::string> prefix;
  for (std::string_view c : candidates)
    if (c.size() >= 4 && word.size() > c.size() && word.starts_with(c)) {
      if (prefix) return std::nullopt;
      prefix = std::string(c);
    }
  return prefix;
}

std::string hex_digits(unsigned char byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  return {kHex[byte >> 4], kHex[byte & 15]};
}

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    // The sequence's length and the range its second byte must fall in (RFC 3629's table).
    std::size_t length = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) length = 2;
    else if (b == 0xE0) length = 3, lo = 0xA0;
    else if (b == 0xED) length = 3, hi = 0x9F;
    else if (b >= 0xE1 && b <= 0xEF) length = 3;
    else if (b == 0xF0) length = 4, lo = 0x90;
    else if (b >= 0xF1 && b <= 0xF3) length = 4;
    else if (b == 0xF4) length = 4, hi = 0x8F;
    else return i;
    if (i + length > text.size()) return i;
    for (std::size_t k = 1; k < length; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) return i;
    }
    i += length;
  }
  return std::nullopt;
}

}  // namespace fxc
