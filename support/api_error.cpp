// SPDX-License-Identifier: Apache-2.0
#include "support/api_error.h"

#include <sstream>

namespace fxc {

void throw_diagnostics(const DiagnosticEngine& diags) {
  for (const Diagnostic& d : diags.diagnostics())
    if (d.severity == Severity::error) {
      std::ostringstream coloured;
      diags.render(coloured, true);
      throw Error(diags.str(), d.message, d.code, d.loc.file, static_cast<int>(d.loc.line),
                  static_cast<int>(d.loc.col), coloured.str());
    }
  throw InternalError("an fxc error was reported without a diagnostic (a bug in fxc)");
}

void throw_error(std::string message, std::string code, const SourceLoc& loc) {
  DiagnosticEngine diags;
  diags.error(loc, std::move(message), std::move(code));
  throw_diagnostics(diags);
}

}  // namespace fxc
