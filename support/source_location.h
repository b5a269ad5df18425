// SPDX-License-Identifier: Apache-2.0
// A position in a user's source: a .fx file, or a C++ file using the pipe DSL.
#pragma once

#include <cstdint>
#include <string>

namespace fxc {

/// A file, line and column, both counted from 1. Line 0 means "no location".
struct SourceLoc {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t col = 0;

  bool valid() const { return line != 0; }
  friend bool operator==(const SourceLoc&, const SourceLoc&) = default;
};

/// "file:line:col", or "file" / "" when parts are missing.
std::string to_string(const SourceLoc& loc);

}  // namespace fxc
