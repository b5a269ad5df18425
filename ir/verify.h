// SPDX-License-Identifier: Apache-2.0
// Checks the invariants every pass relies on and reports each violation as a diagnostic.
//
// A valid graph: operands exist; each kind has its operand count; there is no cycle; payloads
// are well formed (a sum has one weight per operand, lists are non-empty, values are finite);
// channel counts agree where known; one dtype throughout; inputs and outputs exist and are
// uniquely named; every output depends on an input; nothing reads an output.
#pragma once

#include "ir/graph.h"
#include "support/diagnostics.h"

namespace fxc::ir {

/// True when the graph is valid; otherwise reports every problem found to `diags`.
bool verify(const Graph& graph, DiagnosticEngine& diags);

}  // namespace fxc::ir
