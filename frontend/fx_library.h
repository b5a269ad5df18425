// SPDX-License-Identifier: Apache-2.0
// The .fx standard library (lib/*.fx, built into fxc) and how `import` finds a file.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "frontend/ast.h"
#include "support/diagnostics.h"

namespace fxc::frontend {

/// The standard library's files by name ("reverb.fx"), as `import "std/reverb.fx"` reads them.
const std::map<std::string, std::string_view, std::less<>>& standard_library();

/// Reads the file of every `import` in `ast` (and in the files it imports, each once) into
/// ast.imported, in an order where a file comes after those it imports. "std/NAME" is the
/// standard library's file NAME; any other path is relative to the directory of the file that
/// imports it (of the working directory for text without a file). An imported file may hold
/// only functions and imports. Errors (a missing file, another statement) go to `diags` at
/// the import; returns false after any.
bool resolve_imports(Ast& ast, DiagnosticEngine& diags);

/// The files the `import` statements of `text` (the file `name`, or "" for text without one)
/// read now, and theirs, as one string of their names and texts (the standard library's by
/// name: it is built in), or the errors that stop them being read. What tells apart two
/// Programs of one text whose imported files differ: a library edited since, or another
/// directory's for relative imports. Empty for text without the word `import`.
std::string imported_texts(std::string_view text, const std::string& name);

}  // namespace fxc::frontend
