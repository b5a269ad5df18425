// SPDX-License-Identifier: Apache-2.0
// Lowering: a parsed .fx file to an ir::Graph.
//
// Names bind signals, chains or constants. A signal used twice is one node with two users
// (fan-out); a named chain is instantiated afresh at each use. `c * s` with a constant `c`
// becomes a gain node (a constant times a chain appends a gain stage); `a + b - c` becomes
// one sum node with weights [1, 1, -1]. Channel counts from `input NAME : C` are propagated
// along the graph (0 where unknown) and checked at `+` and `-`.
#pragma once

#include <optional>

#include "frontend/ast.h"
#include "ir/graph.h"
#include "support/diagnostics.h"

namespace fxc::frontend {

/// Builds the graph of `ast`, reporting semantic errors (code "fx-lower", and "fx-stage" for
/// stage arguments) at the location of the name, operator or argument at fault. Returns
/// nullopt when any error was reported. `ast_is_partial` says the file had syntax errors:
/// the checks for a missing input or output are then skipped, since the statement that
/// failed to parse may have been the one.
std::optional<ir::Graph> lower_to_ir(const Ast& ast, DiagnosticEngine& diags,
                                     bool ast_is_partial = false);

}  // namespace fxc::frontend
