// SPDX-License-Identifier: Apache-2.0
// The .fx parser: recursive descent over the grammar of fx-language.md.
//
//   expr  := term (('+' | '-') term)*        left-associative
//   term  := pipe ('*' pipe)*
//   pipe  := atom ('|' atom)*
//   atom  := NAME | ['-'] NUMBER [unit] | call | '(' expr ')'
//   call  := IDENT '(' [arg (',' arg)* [',']] ')'
//   arg   := value | IDENT '=' value
//   value := ['-'] NUMBER [unit] | STRING | IDENT | '[' [value (',' value)* [',']] ']'
//
// A syntax error is reported (code "fx-parse") saying what was expected and what was found;
// the parser then skips to the next statement, so one run reports the errors of every
// statement. Extensions to the contract's grammar: a trailing comma in argument lists and
// lists, and an empty list `[]` (rejected later, with a message, by the stage table).
#pragma once

#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/token.h"
#include "support/diagnostics.h"

namespace fxc::frontend {

/// The deepest expression tree the parser accepts: nodes from the top of a statement's
/// expression to its deepest leaf, counting each `|`, `+`, `-`, `*`, call, list, channel
/// selection and parenthesis. A chain of N stages is N deep. The passes after the parser walk
/// the tree recursively, so this keeps them inside a thread's stack (an error, code
/// "fx-parse", instead of a crash).
inline constexpr int kMaxExpressionDepth = 1000;

/// Parses the tokens of `file` (from lex(), ending with eof). Always returns a tree of the
/// statements that parsed; check `diags` for errors.
Ast parse(const std::vector<Token>& tokens, const std::string& file, DiagnosticEngine& diags);

}  // namespace fxc::frontend
