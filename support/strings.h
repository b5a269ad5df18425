// SPDX-License-Identifier: Apache-2.0
// Small text helpers shared by the frontends and the command line.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fxc {

/// Levenshtein edit distance.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate nearest to `word` when it is close enough to be a plausible typo.
std::optional<std::string> nearest_name(std::string_view word,
                                        std::span<const std::string_view> candidates);

/// `byte` as two lower-case hex digits ("e9"), for messages that show bytes.
std::string hex_digits(unsigned char byte);

/// The offset of the first byte of `text` that does not begin or continue a well-formed UTF-8
/// sequence (overlong forms and surrogates count as malformed); nullopt for valid UTF-8.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

}  // namespace fxc
