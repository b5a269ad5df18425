// SPDX-License-Identifier: Apache-2.0
// User errors at the public API's boundary: diagnostics and messages become one fxc::Error,
// for every layer that meets the caller's mistakes (the DSL, signals, the driver).
#pragma once

#include <string>

#include <fxc/error.h>

#include "support/diagnostics.h"

namespace fxc {

/// Throws Error with the diagnostics rendered (the first error's parts as its fields).
[[noreturn]] void throw_diagnostics(const DiagnosticEngine& diags);
/// Throws Error for one problem: with no place in a source, or at `loc` (a C++ DSL call's).
[[noreturn]] void throw_error(std::string message, std::string code = "fxc-api", const SourceLoc& loc = {});

}  // namespace fxc
