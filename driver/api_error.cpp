// SPDX-License-Identifier: Apache-2.0
#include "driver/api_error.h"

namespace fxc::driver {

void throw_diagnostics(const DiagnosticEngine& diags) {
  for (const Diagnostic& d : diags.diagnostics())
    if (d.severity == Severity::error)
      throw Error(diags.str(), d.message, d.code, d.loc.file, static_cast<int>(d.loc.line),
                  static_cast<int>(d.loc.col));
  throw InternalError("an fxc error was reported without a diagnostic (a bug in fxc)");
}

void throw_error(std::string message, std::string code) {
  std::string report = "error: " + message + (code.empty() ? "" : " [" + code + "]") + "\n";
  throw Error(std::move(report), std::move(message), std::move(code));
}

}  // namespace fxc::driver
