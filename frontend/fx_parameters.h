// SPDX-License-Identifier: Apache-2.0
// A .fx file's live parameters: its named constants (`fc = 200 Hz`, optionally
// `fc = 200 Hz in [20 Hz, 2 kHz]`), read from the AST and given new values in it.
#pragma once

#include <vector>

#include "frontend/ast.h"
#include "frontend/parameters.h"
#include "support/diagnostics.h"

namespace fxc::frontend {

/// The parameters of a file, in binding order: every `NAME = NUMBER [unit]` binding. A range
/// must be two numbers of the value's quantity with MIN <= VALUE <= MAX; errors are reported
/// at the range (code "fx-range").
std::vector<ParamDecl> fx_parameters(const Ast& ast, DiagnosticEngine& diags);

/// Replaces the values of the constants named in `values` (in their parameters' units).
/// Names that are not constants of the file are left for the caller to report.
void set_parameter_values(Ast& ast, const ParamValues& values);

/// A number as written in .fx (`2 kHz`) in the unit its parameter keeps (Hz).
struct ParamValue {
  ParamUnit unit;
  double value;
};
ParamValue param_value_of(const NumberExpr& number);

}  // namespace fxc::frontend
