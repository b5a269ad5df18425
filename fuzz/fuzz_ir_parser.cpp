// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the text IR reader (ir::parse_graph), the verifier and the printer.
//
// Checks: no crash, no sanitizer report, no exception escaping; and the round trip the IR
// promises (ir/print.h): a graph that parses and verifies prints, with and without
// locations, to text that parses again, verifies again and prints to the same text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "ir/parse.h"
#include "ir/print.h"
#include "ir/verify.h"

namespace {

void check_round_trip(const fxc::ir::Graph& graph, const fxc::ir::PrintOptions& options) {
  using namespace fxc;
  const std::string text = ir::to_text(graph, options);
  DiagnosticEngine diags;
  auto again = ir::parse_graph(text, "printed.ir", diags);
  if (!again) fuzz::property_failed("the printed IR does not parse", text, diags.str());
  if (!ir::verify(*again, diags))
    fuzz::property_failed("the printed IR parses but does not verify", text, diags.str());
  const std::string text_again = ir::to_text(*again, options);
  if (text_again != text)
    fuzz::property_failed("print, parse, print gives different text", text, text_again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fxc;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  DiagnosticEngine diags;
  auto graph = ir::parse_graph(text, "fuzz.ir", diags);
  if (!graph) {
    (void)diags.str();
    return 0;
  }
  const bool valid = ir::verify(*graph, diags);
  (void)diags.str();
  if (!valid) return 0;
  check_round_trip(*graph, {.locations = true});
  check_round_trip(*graph, {.locations = false});
  (void)ir::to_text(*graph, {.locations = false, .shape_only = true});  // the cache key's form
  return 0;
}
