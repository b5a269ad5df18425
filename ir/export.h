// SPDX-License-Identifier: Apache-2.0
// The graph as Graphviz dot and as JSON, for tools and people.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "ir/graph.h"

namespace fxc::ir {

/// A Graphviz digraph: one box per node (kind, attributes, type), edges operand -> user.
std::string to_dot(const Graph& graph);

/// {"name": ..., "nodes": [{"id", "kind", "operands", "attrs", "type", "loc", "origins"}]}.
/// Non-finite numbers appear as the strings "nan", "inf", "-inf".
nlohmann::json to_json(const Graph& graph);

}  // namespace fxc::ir
