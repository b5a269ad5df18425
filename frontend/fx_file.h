// SPDX-License-Identifier: Apache-2.0
// The entry points of the .fx frontend: text or a file in, an AST or a verified ir::Graph out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/ast.h"
#include "frontend/parameters.h"
#include "frontend/token.h"
#include "ir/graph.h"
#include "support/diagnostics.h"

namespace fxc::frontend {

/// Lexes and parses `text`, named `file` in messages (registered with diags.add_source so
/// errors show the line and a caret). Returns nullopt when there was a syntax error, after
/// reporting every one found. This is what `fxc dump --emit ast` prints.
std::optional<Ast> parse_fx_source(std::string_view text, const std::string& file,
                                   DiagnosticEngine& diags);

/// parse_fx_source on the contents of `path`; an unreadable file is reported (code "fx-io").
std::optional<Ast> parse_fx_file(const std::string& path, DiagnosticEngine& diags);

/// Parses and lowers `text` to a graph that passes ir::verify. Syntax and semantic errors of
/// the whole file are reported together; nullopt if there was any.
std::optional<ir::Graph> compile_fx_source(std::string_view text, const std::string& file,
                                           DiagnosticEngine& diags);

/// compile_fx_source on the contents of `path`; an unreadable file is reported (code "fx-io").
std::optional<ir::Graph> compile_fx_file(const std::string& path, DiagnosticEngine& diags);

/// A new value for a constant binding (`fc = 2 kHz`), as `fxc run --set fc=500Hz` gives it:
/// a number with an optional unit.
struct ConstantOverride {
  std::string name;
  std::string value;
};

/// compile_fx_source with the constant bindings named in `overrides` replaced by their new
/// values. A name that is not bound to a constant, or a value that is not a number with an
/// optional unit, is an error.
std::optional<ir::Graph> compile_fx_source(std::string_view text, const std::string& file,
                                           const std::vector<ConstantOverride>& overrides,
                                           DiagnosticEngine& diags);
std::optional<ir::Graph> compile_fx_file(const std::string& path,
                                         const std::vector<ConstantOverride>& overrides,
                                         DiagnosticEngine& diags);

/// compile_fx_source with the constants named in `values` (live parameters, in their units:
/// frontend/fx_parameters.h) set to those values.
std::optional<ir::Graph> compile_fx_source(std::string_view text, const std::string& file,
                                           const ParamValues& values, DiagnosticEngine& diags);
/// Both: `overrides` replace the written values first, then `values` are set.
std::optional<ir::Graph> compile_fx_source(std::string_view text, const std::string& file,
                                           const std::vector<ConstantOverride>& overrides,
                                           const ParamValues& values, DiagnosticEngine& diags);

/// Replaces the values of the constant bindings named in `overrides` in `ast`, as
/// compile_fx_source does; reports (code "fx-set") what cannot be replaced and returns false.
bool apply_constant_overrides(Ast& ast, const std::vector<ConstantOverride>& overrides, DiagnosticEngine& diags);

/// Why `text` is not a program at all (binary data: an audio file or an array given in the
/// program's place, named by its format where its signature says), or nothing.
std::optional<std::string> binary_content(std::string_view text);
/// Why `text`, lexed with the reports in `lexing`, is binary data after all: the lexer gave up
/// on bytes that are not UTF-8. Nothing for text (a stray Latin-1 byte in a comment reads).
std::optional<std::string> binary_after_lexing(std::string_view text, const std::vector<Token>& tokens,
                                               const DiagnosticEngine& lexing);

/// The contents of the file at `path`, or nullopt after reporting (code "fx-io") why it
/// cannot be read.
std::optional<std::string> read_fx_text(const std::string& path, DiagnosticEngine& diags);

}  // namespace fxc::frontend
