// SPDX-License-Identifier: Apache-2.0
// How doctest prints an fxc::Expected in an assertion: "error: <why>" for an error, "a value"
// otherwise. With it, REQUIRE(result) shows the error when it fails.
//
// Write REQUIRE(result), never REQUIRE_MESSAGE(result, result.error()): doctest evaluates a
// message whenever it prints the assertion's context, not only when the assertion fails (with
// --success, and from its crash handler, for every context still open), and error() on a
// value throws std::bad_variant_access (an abort inside the crash handler).
#pragma once

#include <ostream>

#include "support/expected.h"

namespace fxc {

template <class T, class E>
std::ostream& operator<<(std::ostream& out, const Expected<T, E>& result) {
  if (result) return out << "a value";
  if constexpr (requires { out << result.error(); }) return out << "error: " << result.error();
  else if constexpr (requires { out << result.error().message; })
    return out << "error: " << result.error().message;
  else return out << "an error";
}

}  // namespace fxc
