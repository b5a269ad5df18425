// SPDX-License-Identifier: Apache-2.0
// Structural comparison of two graphs, for before/after tests of passes.
#pragma once

#include <string>

#include "ir/graph.h"

namespace fxc::ir {

/// True when the graphs compute the same thing in the same structure: walking from the
/// outputs (in order), nodes correspond one to one with equal kinds, fields and types, and
/// operands that correspond. Node numbering, names of the graph, locations and unreachable
/// nodes do not matter. Numbers in fields compare equal within `relative_tolerance`.
/// On a difference, `why` (when given) says where.
bool structurally_equal(const Graph& a, const Graph& b, double relative_tolerance = 0,
                        std::string* why = nullptr);

}  // namespace fxc::ir
