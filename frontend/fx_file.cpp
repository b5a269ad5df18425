// The .fx entry points: read, lex, parse, lower, verify.
#include "frontend/fx_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/lexer.h"
#include "frontend/lower_to_ir.h"
#include "frontend/parser.h"
#include "ir/verify.h"

namespace fxc::frontend {
namespace {

// The file's contents, or nullopt after reporting why it could not be read.
std::optional<std::string> read_file(const std::string& path, DiagnosticEngine& diags) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    diags.error({}, "cannot read '" + path + "': it is a directory", "fx-io");
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diags.error({}, "cannot read '" + path + "': " + std::strerror(errno), "fx-io");
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    diags.error({}, "cannot read '" + path + "': read error", "fx-io");
    return std::nullopt;
  }
  return text.str();
}

// Moves the diagnostics of `local` to `diags` in file order. The lexer, the parser and the
// lowering each run over the whole file, so their reports would otherwise come in three runs;
// a stable sort by line keeps the order within a line. Reports without a line go last.
void report_in_file_order(const DiagnosticEngine& local, DiagnosticEngine& diags) {
  std::vector<Diagnostic> all = local.diagnostics();
  std::stable_sort(all.begin(), all.end(), [](const Diagnostic& a, const Diagnostic& b) {
    auto key = [](const Diagnostic& d) { return d.loc.valid() ? d.loc.line : UINT32_MAX; };
    return key(a) < key(b);
  });
  for (Diagnostic& d : all) diags.report(std::move(d));
}

struct Parsed {
  Ast ast;
  bool had_errors = false;
};

Parsed parse_text(std::string_view text, const std::string& file, DiagnosticEngine& diags) {
  diags.add_source(file, std::string(text));
  Parsed out{parse(lex(text, file, diags), file, diags), false};
  out.had_errors = diags.has_errors();
  return out;
}

}  // namespace

std::optional<Ast> parse_fx_source(std::string_view text, const std::string& file,
                                   DiagnosticEngine& diags) {
  DiagnosticEngine local;
  Parsed parsed = parse_text(text, file, local);
  diags.add_source(file, std::string(text));
  report_in_file_order(local, diags);
  if (parsed.had_errors) return std::nullopt;
  return std::move(parsed.ast);
}

std::optional<Ast> parse_fx_file(const std::string& path, DiagnosticEngine& diags) {
  std::optional<std::string> text = read_file(path, diags);
  if (!text) return std::nullopt;
  return parse_fx_source(*text, path, diags);
}

std::optional<ir::Graph> compile_fx_source(std::string_view text, const std::string& file,
                                           DiagnosticEngine& diags) {
  DiagnosticEngine local;
  Parsed parsed = parse_text(text, file, local);
  // Lower even after a syntax error, so the semantic errors of the rest are reported too.
  std::optional<ir::Graph> graph = lower_to_ir(parsed.ast, local, parsed.had_errors);
  diags.add_source(file, std::string(text));
  report_in_file_order(local, diags);
  if (parsed.had_errors || !graph) return std::nullopt;
  if (!ir::verify(*graph, diags)) return std::nullopt;
  return graph;
}

std::optional<ir::Graph> compile_fx_file(const std::string& path, DiagnosticEngine& diags) {
  std::optional<std::string> text = read_file(path, diags);
  if (!text) return std::nullopt;
  return compile_fx_source(*text, path, diags);
}

}  // namespace fxc::frontend
