// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the .fx frontend (lexer, parser, AST dumps, lowering, verification) and the
// rendering of its diagnostics.
//
// Checks: no crash, no sanitizer report, no exception escaping (fxc reports user errors as
// diagnostics; an InternalError is a bug), through everything `fxc dump --emit ast` and
// `--emit ir` print (text, JSON, dot). Properties: a file that compiles also parses; every
// error of the parse points inside the text (a line that exists, a column at most one past
// its end); the lowered graph's text IR parses back and prints the same (what the golden tier
// checks on every IR it prints), and compiling the same text again gives the same IR.
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
#include "ir/parse.h"
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
    (void)frontend::ast_to_json_text(*ast);
    (void)frontend::ast_to_dot(*ast);
  }

  // Where each line of the text ends, to check the parse's locations against.
  std::vector<std::size_t> line_lengths{0};
  for (char c : text) {
    if (c == '\n') line_lengths.push_back(0);
    else ++line_lengths.back();
  }
  for (const Diagnostic& d : parse_diags.diagnostics()) {
    if (!d.loc.valid() || d.loc.file != "fuzz.fx") continue;
    if (d.loc.line > line_lengths.size() || d.loc.col == 0 || d.loc.col > line_lengths[d.loc.line - 1] + 1)
      fuzz::property_failed("a parse diagnostic points outside the text", d.message,
                            std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col));
  }

  DiagnosticEngine diags;
  auto graph = frontend::compile_fx_source(text, "fuzz.fx", diags);
  (void)diags.str();
  if (graph) {
    if (!ast) fuzz::property_failed("compile_fx_source succeeded where parse_fx_source failed",
                                    parse_diags.str());
    const std::string printed = ir::to_text(*graph);
    (void)ir::to_json(*graph).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)ir::to_dot(*graph);
    DiagnosticEngine ir_diags;
    auto reparsed = ir::parse_graph(printed, "lowered.ir", ir_diags);
    if (!reparsed) fuzz::property_failed("the lowered graph's text does not parse", printed, ir_diags.str());
    if (ir::to_text(*reparsed) != printed)
      fuzz::property_failed("print, parse, print of the lowered graph differs", printed, ir::to_text(*reparsed));
    DiagnosticEngine again_diags;
    auto again = frontend::compile_fx_source(text, "fuzz.fx", again_diags);
    if (!again || ir::to_text(*again) != printed)
      fuzz::property_failed("compiling the same text twice gives another graph", printed,
                            again ? ir::to_text(*again) : again_diags.str());
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
