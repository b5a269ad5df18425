// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the .fx frontend (lexer, parser, AST dumps, lowering, verification) and the
// rendering of its diagnostics.
//
// Checks: no crash, no sanitizer report, no exception escaping (fxc reports user errors as
// diagnostics; an InternalError is a bug), through everything `fxc dump --emit ast` and
// `--emit ir` print (text, JSON, dot). A file that compiles must also parse.
//
// An input that starts with the line "#!set NAME=VALUE" is also compiled with that constant
// override, as `fxc run --set NAME=VALUE` does (the line is a comment to the .fx lexer).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/ast_dump.h"
#include "frontend/fx_file.h"
#include "fuzz/fuzz_support.h"
#include "ir/export.h"
#include "ir/print.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fxc;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  DiagnosticEngine parse_diags;
  auto ast = frontend::parse_fx_source(text, "fuzz.fx", parse_diags);
  (void)parse_diags.str();
  if (ast) {
    (void)frontend::ast_to_text(*ast);
    // As `fxc dump --emit ast --format json` does: a string literal that is not UTF-8 is
    // replaced, not thrown on (fuzz-regressions/fuzz_fx_parser/ast_json_invalid_utf8.fx).
    (void)frontend::ast_to_json(*ast).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)frontend::ast_to_dot(*ast);
  }

  DiagnosticEngine diags;
  auto graph = frontend::compile_fx_source(text, "fuzz.fx", diags);
  (void)diags.str();
  if (graph) {
    if (!ast) fuzz::property_failed("compile_fx_source succeeded where parse_fx_source failed",
                                    parse_diags.str());
    (void)ir::to_text(*graph);
    (void)ir::to_json(*graph).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)ir::to_dot(*graph);
  }

  constexpr std::string_view kSet = "#!set ";
  if (text.substr(0, kSet.size()) == kSet) {
    std::string_view line = text.substr(kSet.size());
    line = line.substr(0, line.find('\n'));
    const std::size_t eq = line.find('=');
    if (eq != std::string_view::npos) {
      std::vector<frontend::ConstantOverride> overrides{
          {std::string(line.substr(0, eq)), std::string(line.substr(eq + 1))}};
      DiagnosticEngine set_diags;
      auto with_set = frontend::compile_fx_source(text, "fuzz.fx", overrides, set_diags);
      (void)set_diags.str();
      if (with_set) (void)ir::to_text(*with_set);
    }
  }
  return 0;
}
