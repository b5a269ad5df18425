// SPDX-License-Identifier: Apache-2.0
#include "frontend/fx_library.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>

#include "frontend/fx_file.h"
#include "frontend/lexer.h"
#include "frontend/parser.h"
#include "support/deep_stack.h"

namespace fxc::frontend {
namespace {

constexpr const char* kCode = "fx-import";
constexpr std::string_view kStandardPrefix = "std/";

struct Source {
  std::string key;   // the file once, whatever path reached it: "std/reverb.fx", or the canonical path
  std::string name;  // the name errors and carets use: "std/reverb.fx", or the path as found
  std::string text;
};

std::string standard_names() {
  std::string out;
  for (const auto& [name, text] : standard_library()) out += (out.empty() ? "" : ", ") + std::string(kStandardPrefix) + name;
  return out;
}

// The file `path` names, imported from `from` (a file name, or "" for text without one).
std::optional<Source> find(const std::string& path, const std::string& from, const ImportStmt& at,
                           DiagnosticEngine& diags) {
  if (path.starts_with(kStandardPrefix)) {
    auto it = standard_library().find(std::string_view(path).substr(kStandardPrefix.size()));
    if (it != standard_library().end()) return Source{path, path, std::string(it->second)};
    diags.error(at.path_loc, "the standard library has no file '" + path + "'", kCode)
        .notes.push_back({Severity::note, {}, "it has " + standard_names(), {}, {}});
    return std::nullopt;
  }
  namespace fs = std::filesystem;
  fs::path base = from.empty() || from.starts_with(kStandardPrefix) ? fs::path() : fs::path(from).parent_path();
  fs::path full = base / path;
  std::error_code ec;
  if (!fs::is_regular_file(full, ec)) {
    const bool exists = fs::exists(full, ec);
    const std::string why = !exists                      ? "no such file"
                            : fs::is_directory(full, ec) ? "it is a directory"
                                                         : "not a regular file";
    Diagnostic& d = diags.error(at.path_loc, "cannot import '" + path + "': " + why + " (looked for " +
                                                 full.string() + ")",
                                kCode);
    if (standard_library().count(path))
      d.notes.push_back({Severity::note, {}, "the standard library's file is 'std/" + path + "'", {}, {}});
    return std::nullopt;
  }
  std::ifstream in(full, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    diags.error(at.path_loc, "cannot read '" + full.string() + "'", kCode);
    return std::nullopt;
  }
  if (std::optional<std::string> why = binary_content(text.str())) {
    diags.error(at.path_loc, "cannot import '" + path + "': " + *why, kCode);
    return std::nullopt;
  }
  return Source{fs::weakly_canonical(full, ec).string(), full.lexically_normal().string(), text.str()};
}

}  // namespace

bool resolve_imports(Ast& ast, DiagnosticEngine& diags) {
  std::size_t errors = diags.error_count();
  std::set<std::string> seen;
  std::function<void(const Ast&)> visit = [&](const Ast& file) {
    for (const Stmt& s : file.statements) {
      const auto* im = std::get_if<ImportStmt>(&s.node);
      if (!im) continue;
      std::optional<Source> source = find(im->path, file.file, *im, diags);
      if (!source) ast.import_failed = true;
      if (!source || !seen.insert(source->key).second) continue;
      DiagnosticEngine lexing;
      std::vector<Token> tokens = lex(source->text, source->name, lexing);
      if (std::optional<std::string> why = binary_after_lexing(source->text, tokens, lexing)) {
        diags.error(im->path_loc, "cannot import '" + im->path + "': " + *why, kCode);
        ast.import_failed = true;
        continue;
      }
      diags.add_source(source->name, source->text);
      for (const Diagnostic& d : lexing.diagnostics()) diags.report(d);
      auto imported = std::make_shared<Ast>(parse(std::move(tokens), source->name, diags));
      for (const Stmt& stmt : imported->statements)
        if (!std::holds_alternative<FnStmt>(stmt.node) && !std::holds_alternative<ImportStmt>(stmt.node))
          diags.error(stmt.loc, "an imported file holds only functions ('fn') and imports", kCode)
              .notes.push_back({Severity::note, im->path_loc, "imported here", {}, {}});
      visit(*imported);
      ast.imported.push_back(std::move(imported));
    }
  };
  visit(ast);
  return diags.error_count() == errors;
}

std::string imported_texts(std::string_view text, const std::string& name) {
  if (text.find("import") == std::string_view::npos) return {};
  // It parses the whole text, to the depth the language allows (fx_file.cpp's compile_edited).
  return on_deep_stack([&] {
    DiagnosticEngine diags;
    Ast ast = parse(lex(text, name, diags), name, diags);
    std::string out;
    auto put = [&out](std::string_view field) {
      out += std::to_string(field.size()) + ':';  // lengths first: no field can fake another
      out += field;
    };
    if (!resolve_imports(ast, diags)) put(diags.str());
    for (const auto& file : ast.imported) {
      put(file->file);
      if (file->file.starts_with(kStandardPrefix)) continue;
      auto it = diags.sources().find(file->file);
      put(it == diags.sources().end() ? std::string_view() : std::string_view(it->second));
    }
    return out;
  });
}

}  // namespace fxc::frontend
