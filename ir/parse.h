// SPDX-License-Identifier: Apache-2.0
// Reads the canonical text form written by print_graph back into a Graph.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ir/graph.h"
#include "support/diagnostics.h"

namespace fxc::ir {

/// Parses IR text. Errors (with file:line:col) go to `diags`; nullopt if there were any.
/// `file` names the text in diagnostics. Operands may refer to nodes defined later; node ids
/// are renumbered densely in order of definition.
std::optional<Graph> parse_graph(std::string_view text, const std::string& file,
                                 DiagnosticEngine& diags);

}  // namespace fxc::ir
