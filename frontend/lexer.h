// SPDX-License-Identifier: Apache-2.0
// The .fx lexer: text to tokens, each with its file:line:col.
//
// It also applies the statement rules of fx-language.md, so the parser sees a newline token
// only where a newline ends a statement: newlines inside (...) and [...] and after a trailing
// `|`, `+`, `-`, `*`, `,`, `=` or an open bracket are dropped, and blank lines collapse.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "frontend/token.h"
#include "support/diagnostics.h"

namespace fxc::frontend {

/// Splits `text` (the contents of `file`) into tokens ending with one eof token. Bad
/// characters, numbers, units and unterminated strings are reported to `diags` (code
/// "fx-lex") and become error tokens, so the parser can skip them without reporting again.
///
/// Recovery: inside brackets, a line that starts with `graph`, `input` or `output`, or with a
/// name right after a complete value (which no valid program has), closes the open brackets
/// and starts a new statement, so one missing `)` does not swallow the rest of the file.
std::vector<Token> lex(std::string_view text, const std::string& file, DiagnosticEngine& diags);

}  // namespace fxc::frontend
