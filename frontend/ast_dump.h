// SPDX-License-Identifier: Apache-2.0
// The .fx syntax tree as text, JSON and Graphviz dot: what `fxc dump --emit ast` prints.
// All three are deterministic (statement order, argument order) and carry line:col locations.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "frontend/ast.h"

namespace fxc::frontend {

/// An indented tree, one node per line, each ending with `@line:col`:
///
///   ast "vocal.fx"
///     input x channels=2 @3:1
///     binding clean @5:1
///       pipe @5:11
///         name x @5:9
///         call butter @5:13
///           arg #0 @5:20
///             number 4 @5:20
///           arg btype= @5:23
///             name highpass @5:29
///
/// A binary node shows its operator's location.
std::string ast_to_text(const Ast& ast);

/// {"file": ..., "statements": [{"kind": "input", "name": "x", "channels": 2,
///  "loc": {"line": 3, "col": 1}}, ...]}; expressions nest under "value", "lhs", "rhs",
/// "args" and "items".
/// Its dump and its destruction recurse once per level, on the caller's stack: a tree nested to
/// the parser's limits takes megabytes there (ast_to_json_text does all of it on a deep stack).
nlohmann::json ast_to_json(const Ast& ast);

/// ast_to_json's text (indent 2; invalid UTF-8 in names replaced), built, written and freed on
/// a stack sized for the deepest tree (support/deep_stack.h).
std::string ast_to_json_text(const Ast& ast);

/// A `digraph ast` with one box per node, labelled with its kind, details and location.
std::string ast_to_dot(const Ast& ast);

}  // namespace fxc::frontend
