// SPDX-License-Identifier: Apache-2.0
// How often a text holds a string (emitted sources, trace JSON), counting overlapping ones.
#pragma once

#include <cstddef>
#include <string_view>

namespace fxc::test {

inline int occurrences(std::string_view text, std::string_view what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace fxc::test
