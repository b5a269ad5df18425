// SPDX-License-Identifier: Apache-2.0
// User errors at the public API's boundary: diagnostics and messages become one fxc::Error.
#pragma once

#include <string>

#include <fxc/error.h>

#include "support/diagnostics.h"

namespace fxc::driver {

/// Throws Error with the diagnostics rendered (the first error's parts as its fields).
[[noreturn]] void throw_diagnostics(const DiagnosticEngine& diags);
/// Throws Error for a problem with no place in a source.
[[noreturn]] void throw_error(std::string message, std::string code = "fxc-api");

}  // namespace fxc::driver
