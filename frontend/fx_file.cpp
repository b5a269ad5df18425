// SPDX-License-Identifier: Apache-2.0
// The .fx entry points: read, lex, parse, lower, verify.
#include "frontend/fx_file.h"

#include <algorithm>
#include <functional>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/fx_library.h"
#include "frontend/fx_parameters.h"
#include "ir/routing_channels.h"
#include "frontend/lexer.h"
#include "frontend/lower_to_ir.h"
#include "frontend/parser.h"
#include "ir/verify.h"
#include "support/deep_stack.h"
#include "support/file_io.h"
#include "support/strings.h"

namespace fxc::frontend {

std::optional<std::string> read_fx_text(const std::string& path, DiagnosticEngine& diags) {
  auto text = read_whole_file(path, AlsoRead::pipes_and_terminals);
  if (!text) {
    diags.error({}, text.error(), "fx-io");
    return std::nullopt;
  }
  return std::move(*text);
}

namespace {

// Moves the diagnostics of `local` to `diags` in file order. The lexer, the parser and the
// lowering each run over the whole file, so their reports would otherwise come in three runs;
// a stable sort by line keeps the order within a line. Reports without a line go last.
// Reports in other files (those it imports) follow the file's own, in the order found. A
// mistake in a function's body is found at each call: it is reported once, with the note of
// every call ("in this call").
void report_in_file_order(const DiagnosticEngine& local, DiagnosticEngine& diags, const std::string& file) {
  std::vector<Diagnostic> all;
  for (const Diagnostic& d : local.diagnostics()) {
    auto same = std::find_if(all.begin(), all.end(), [&](const Diagnostic& seen) {
      return d.loc.valid() && seen.severity == d.severity && seen.loc == d.loc && seen.message == d.message &&
             seen.code == d.code;
    });
    if (same == all.end()) {
      all.push_back(d);
      continue;
    }
    for (const Diagnostic& n : d.notes)
      if (std::none_of(same->notes.begin(), same->notes.end(),
                       [&](const Diagnostic& m) { return m.loc == n.loc && m.message == n.message; }))
        same->notes.push_back(n);
  }
  std::stable_sort(all.begin(), all.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    auto key = [&](const Diagnostic& d) {
      bool other = d.loc.valid() && d.loc.file != file;
      return std::pair<bool, std::uint32_t>{other, d.loc.valid() && !other ? d.loc.line : UINT32_MAX};
    };
    return key(a) < key(b);
  });
  for (Diagnostic& d : all) diags.report(std::move(d));
}

struct Parsed {
  Ast ast;
  bool had_errors = false;
};

Parsed parse_text(std::string_view text, const std::string& file, DiagnosticEngine& diags) {
  if (std::optional<std::string> why = binary_content(text)) {
    diags.error({}, "cannot read '" + file + "': " + *why, "fx-lex");
    return {Ast{file, {}}, true};
  }
  DiagnosticEngine lexing;
  std::vector<Token> tokens = lex(text, file, lexing);
  if (std::optional<std::string> why = binary_after_lexing(text, tokens, lexing)) {
    diags.error({}, "cannot read '" + file + "': " + *why, "fx-lex");
    return {Ast{file, {}}, true};
  }
  diags.add_source(file, std::string(text));
  for (const Diagnostic& d : lexing.diagnostics()) diags.report(d);
  Parsed out{parse(std::move(tokens), file, diags), false};
  out.had_errors = diags.has_errors();
  return out;
}

}  // namespace

// Binary data holds a NUL byte (the lexer would make an error of every such byte). A program
// never holds one, so no program is refused that the lexer would have taken.
std::optional<std::string> binary_content(std::string_view text) {
  std::size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return std::nullopt;
  struct Signature {
    std::string_view magic, what;
  };
  static constexpr Signature kSignatures[] = {{"RIFF", "a WAV audio file"},   {"RIFX", "a WAV audio file"},
                                              {"RF64", "a WAV audio file"},   {"fLaC", "a FLAC audio file"},
                                              {"OggS", "an Ogg audio file"},  {"FORM", "an AIFF audio file"},
                                              {"\x93NUMPY", "a .npy array"}, {"ID3", "an MP3 file"}};
  for (const Signature& s : kSignatures)
    if (text.substr(0, s.magic.size()) == s.magic) return "it is " + std::string(s.what) + ", not a .fx program";
  long long line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
  return "it holds binary data (a NUL byte on line " + std::to_string(line) + "), not the text of a .fx program";
}

std::optional<std::string> binary_after_lexing(std::string_view text, const std::vector<Token>& tokens,
                                               const DiagnosticEngine& lexing) {
  // The lexer gives up after 20 unexpected characters; where most of those are bytes that are
  // not UTF-8 (an error token "\xNN" of 0x80 or more), the file is no text at all (an MP3
  // without a NUL byte, a compressed file), and twenty reports of single bytes would say less
  // than one. Text with stray bytes (a Latin-1 comment) reads as it did, and text with other
  // stray characters gets its reports.
  constexpr std::size_t kGivenUpAfter = 20;
  std::size_t not_utf8 = 0;
  for (const Token& t : tokens)
    if (t.kind == TokenKind::error && t.text.size() == 4 && t.text.starts_with("\\x") &&
        std::string_view("89abcdef").find(t.text[2]) != std::string_view::npos)
      ++not_utf8;
  if (lexing.error_count() <= kGivenUpAfter || 2 * not_utf8 < kGivenUpAfter) return std::nullopt;
  std::optional<std::size_t> bad = first_invalid_utf8(text);
  if (!bad) return std::nullopt;
  long long line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(*bad), '\n');
  return "it holds binary data (the byte 0x" + hex_digits(static_cast<unsigned char>(text[*bad])) + " on line " +
         std::to_string(line) + " is not UTF-8), not the text of a .fx program";
}

// The parser recurses once per level of nesting, to the depth the language allows, whatever
// stack the caller has: on_deep_stack (here and in compile_edited) gives it the stack it needs.
std::optional<Ast> parse_fx_source(std::string_view text, const std::string& file,
                                   DiagnosticEngine& diags) {
  return on_deep_stack([&]() -> std::optional<Ast> {
    DiagnosticEngine local;
    Parsed parsed = parse_text(text, file, local);
    diags.add_source(file, std::string(text));
    report_in_file_order(local, diags, file);
    if (parsed.had_errors) return std::nullopt;
    return std::move(parsed.ast);
  });
}

std::optional<Ast> parse_fx_file(const std::string& path, DiagnosticEngine& diags) {
  std::optional<std::string> text = read_fx_text(path, diags);
  if (!text) return std::nullopt;
  return parse_fx_source(*text, path, diags);
}

std::optional<ir::Graph> compile_fx_source(std::string_view text, const std::string& file,
                                           DiagnosticEngine& diags) {
  return compile_fx_source(text, file, std::vector<ConstantOverride>{}, diags);
}

bool apply_constant_overrides(Ast& ast, const std::vector<ConstantOverride>& overrides,
                     DiagnosticEngine& diags) {
  bool ok = true;
  for (const ConstantOverride& o : overrides) {
    std::vector<std::string_view> constants;
    BindingStmt* target = nullptr;
    for (Stmt& stmt : ast.statements)
      if (auto* b = std::get_if<BindingStmt>(&stmt.node)) {
        if (b->value.as<NumberExpr>()) constants.push_back(b->name);
        if (b->name == o.name) target = b;
      }
    // Named as a setting, not as --set: Options::settings and Python's keywords give them too.
    std::string what = "the setting " + o.name + "=" + o.value + ": ";
    if (!target) {
      Diagnostic& d = diags.error({}, what + "the graph binds no constant '" + o.name + "'", "fx-set");
      if (auto near = nearest_name(o.name, constants))
        d.notes.push_back({Severity::note, {}, "did you mean '" + *near + "'?", "", {}});
      ok = false;
      continue;
    }
    if (!target->value.as<NumberExpr>()) {
      // A number computed from constants (`g = 0.28 * room + 0.7`, or through another such
      // number) is set through them; anything else in it (a signal, a call) makes it no number.
      std::vector<std::string> uses;
      std::function<bool(const Expr&, int)> numeric = [&](const Expr& e, int depth) -> bool {
        if (depth > 64) return false;
        if (e.as<NumberExpr>()) return true;
        if (const auto* b = e.as<BinaryExpr>())
          return b->op != BinaryOp::pipe && numeric(*b->lhs, depth + 1) && numeric(*b->rhs, depth + 1);
        const auto* n = e.as<NameExpr>();
        if (!n) return false;
        for (const Stmt& stmt : ast.statements)
          if (const auto* bound = std::get_if<BindingStmt>(&stmt.node); bound && bound->name == n->name) {
            if (!bound->value.as<NumberExpr>()) return numeric(bound->value, depth + 1);
            if (std::find(uses.begin(), uses.end(), n->name) == uses.end()) uses.push_back(n->name);
            return true;
          }
        return false;
      };

      const bool computed = numeric(target->value, 0);
      std::string uses_text;
      for (const std::string& u : uses) uses_text += (uses_text.empty() ? "'" : ", '") + u + "'";
      diags.error(target->name_loc,
                  what + "'" + o.name + "' is " +
                      (!computed      ? std::string("bound to a signal or chain, not a number")
                       : uses.empty() ? std::string("computed from numbers, not written as one: write it as one number")
                                      : "computed from " + uses_text + ", not written as a number: set " +
                                            (uses.size() == 1 ? "it" : "them") + " instead") +
                      "; only NAME = NUMBER bindings can be set",
                  "fx-set");
      ok = false;
      continue;
    }
    DiagnosticEngine scratch;
    Ast value = parse(lex("v = " + o.value + "\n", "--set", scratch), "--set", scratch);
    const BindingStmt* parsed = value.statements.size() == 1 ? std::get_if<BindingStmt>(&value.statements[0].node) : nullptr;
    if (scratch.has_errors() || !parsed || !parsed->value.as<NumberExpr>()) {
      diags.error({}, what + "expected a number with an optional unit, such as 500Hz or -3dB", "fx-set");
      ok = false;
      continue;
    }
    SourceLoc where = target->value.loc;  // errors about the value point at the binding
    Unit unit = target->value.as<NumberExpr>()->unit;
    // A constant with a range keeps its unit: the range's bare numbers are read in the value's
    // unit, so a value in another one would move the range with it (`feedback = 0.5 in [0,
    // 0.95]` set to 0.9 dB, a gain of 1.11, would pass as 0.9 dB inside [0 dB, 0.95 dB]).
    const auto* given = parsed->value.as<NumberExpr>();
    const ParamUnit declared = param_value_of(*target->value.as<NumberExpr>()).unit;
    if (target->range && given->unit != Unit::none && param_value_of(*given).unit != declared) {
      const std::string in_units = declared == ParamUnit::hz        ? "Hz or kHz"
                                   : declared == ParamUnit::seconds ? "s or ms"
                                                                    : std::string(unit_text(declared));
      diags.error(where,
                  what + "'" + o.name + "' has a declared range " +
                      (declared == ParamUnit::number
                           ? std::string("of plain numbers: give it a plain number")
                           : "in " + std::string(unit_text(declared)) + ": give it in " + in_units +
                                 " (a plain number is read in " + std::string(unit_text(declared)) + ")") +
                      ", not in " + std::string(unit_text(given->unit)),
                  "fx-set");
      ok = false;
      continue;
    }
    target->value = clone(parsed->value);
    // A bare number is in the constant's unit, as Program::set takes it: Hz for a constant
    // written in kHz, seconds for one in ms (`fc = 2 kHz`, --set fc=500 is 500 Hz).
    if (auto* number = target->value.as<NumberExpr>(); number && number->unit == Unit::none)
      number->unit = unit == Unit::khz ? Unit::hz : unit == Unit::ms ? Unit::s : unit;
    target->value.loc = where;
  }
  return ok;
}

namespace {

// Parses `text`, lets `edit` change the AST (new constant values; it returns false after
// reporting a problem), checks the parameters' ranges, and lowers and verifies the result.
template <class Edit>
std::optional<ir::Graph> compile_edited_here(std::string_view text, const std::string& file, DiagnosticEngine& diags,
                                             Edit edit) {
  DiagnosticEngine local;
  Parsed parsed = parse_text(text, file, local);
  if (!resolve_imports(parsed.ast, local)) parsed.had_errors = true;
  if (!edit(parsed.ast, local)) parsed.had_errors = true;
  fx_parameters(parsed.ast, local);  // reports bad ranges (and a new value outside one)
  if (local.has_errors()) parsed.had_errors = true;
  // Lower even after a syntax error, so the semantic errors of the rest are reported too.
  std::optional<ir::Graph> graph = lower_to_ir(parsed.ast, local, parsed.had_errors);
  diags.add_source(file, std::string(text));
  // The imported files' texts too: errors in a function's body (here, or from a pass later)
  // show their line and caret.
  for (const auto& [name, source] : local.sources())
    if (name != file) diags.add_source(name, source);
  report_in_file_order(local, diags, file);
  if (parsed.had_errors || !graph) return std::nullopt;
  // Channel counts the source declares are known here: a routing stage that does not fit them
  // is the user's mistake (fx-channels, as infer-types reports it for counts known later), not
  // a malformed graph for ir::verify.
  bool channels_fit = true;
  for (ir::NodeId id = 0; id < graph->size(); ++id)
    if (const std::string why = ir::routing_channel_mismatch(*graph, id); !why.empty()) {
      ir::note_calls(diags.error(graph->node(id).loc, why, "fx-channels"), graph->node(id));
      channels_fit = false;
    }
  if (!channels_fit) return std::nullopt;
  if (!ir::verify(*graph, diags)) return std::nullopt;
  return graph;
}

// Every compile of .fx text comes here. Parsing and lowering recurse once per level of
// nesting (kMaxExpressionDepth, and the lowering's limit through function calls), and the
// tree is freed recursively too: all of it runs on a stack sized for those depths, not on the
// caller's (a worker thread's 2 MB, a plugin host's 256 KB).
template <class Edit>
std::optional<ir::Graph> compile_edited(std::string_view text, const std::string& file, DiagnosticEngine& diags,
                                        Edit edit) {
  return on_deep_stack([&] { return compile_edited_here(text, file, diags, edit); });
}

}  // namespace

std::optional<ir::Graph> compile_fx_source(std::string_view text, const std::string& file,
                                           const std::vector<ConstantOverride>& overrides,
                                           DiagnosticEngine& diags) {
  return compile_edited(text, file, diags,
                        [&](Ast& ast, DiagnosticEngine& local) { return apply_constant_overrides(ast, overrides, local); });
}

std::optional<ir::Graph> compile_fx_source(std::string_view text, const std::string& file,
                                           const ParamValues& values, DiagnosticEngine& diags) {
  return compile_edited(text, file, diags, [&](Ast& ast, DiagnosticEngine&) {
    set_parameter_values(ast, values);
    return true;
  });
}

std::optional<ir::Graph> compile_fx_source(std::string_view text, const std::string& file,
                                           const std::vector<ConstantOverride>& overrides,
                                           const ParamValues& values, DiagnosticEngine& diags) {
  return compile_edited(text, file, diags, [&](Ast& ast, DiagnosticEngine& local) {
    bool ok = apply_constant_overrides(ast, overrides, local);
    set_parameter_values(ast, values);
    return ok;
  });
}

std::optional<ir::Graph> compile_fx_file(const std::string& path, DiagnosticEngine& diags) {
  return compile_fx_file(path, {}, diags);
}

std::optional<ir::Graph> compile_fx_file(const std::string& path,
                                         const std::vector<ConstantOverride>& overrides,
                                         DiagnosticEngine& diags) {
  std::optional<std::string> text = read_fx_text(path, diags);
  if (!text) return std::nullopt;
  return compile_fx_source(*text, path, overrides, diags);
}

}  // namespace fxc::frontend
