// SPDX-License-Identifier: Apache-2.0
// `fxc run --set NAME=VALUE`: constant bindings replaced before lowering.
#include <doctest/doctest.h>

#include "frontend/fx_file.h"

namespace fxc {
namespace {

const char* kGraph = "input x : 1\nfc = 2 kHz\ng = -3 dB\neq = lowpass(fc)\noutput x | eq | gain(g)\n";

TEST_CASE("an override replaces a constant binding") {
  DiagnosticEngine diags;
  auto g = frontend::compile_fx_source(kGraph, "s.fx", {{"fc", "500Hz"}, {"g", "0 dB"}}, diags);
  REQUIRE_MESSAGE(g, diags.str());
  CHECK(std::get<ir::Biquad>(g->node(1).op).f0_hz == 500);
  CHECK(std::get<ir::Gain>(g->node(2).op).gain == 1.0);
}

TEST_CASE("bad overrides are errors") {
  DiagnosticEngine diags;
  CHECK_FALSE(frontend::compile_fx_source(kGraph, "s.fx", {{"fx", "1"}}, diags));
  CHECK(diags.str() == "error: the setting fx=1: the graph binds no constant 'fx' [fx-set]\nnote: did you mean 'fc'?\n");
  DiagnosticEngine d2;
  CHECK_FALSE(frontend::compile_fx_source(kGraph, "s.fx", {{"eq", "1"}}, d2));
  CHECK(d2.str().find("'eq' is bound to a signal or chain, not a number") != std::string::npos);
  DiagnosticEngine derived;
  CHECK_FALSE(frontend::compile_fx_source("input x\nroom = 0.5\nwet = 0.3\ng = 0.28 * room + wet\noutput g * x\n",
                                          "s.fx", {{"g", "2"}}, derived));
  CHECK(derived.str().find("'g' is computed from 'room', 'wet', not written as a number: set them instead") !=
        std::string::npos);
  // Through another computed number; and a signal scaled by a constant is no number.
  DiagnosticEngine twice;
  CHECK_FALSE(frontend::compile_fx_source("input x\nroom = 0.5\nh = room + 1\ng = 0.5 * h\noutput g * x\n", "s.fx",
                                          {{"g", "2"}}, twice));
  CHECK(twice.str().find("'g' is computed from 'room', not written as a number") != std::string::npos);
  DiagnosticEngine scaled;
  CHECK_FALSE(frontend::compile_fx_source("input x\nroom = 0.5\ny = room * x\noutput y\n", "s.fx", {{"y", "2"}},
                                          scaled));
  CHECK(scaled.str().find("'y' is bound to a signal or chain, not a number") != std::string::npos);
  DiagnosticEngine literal;
  CHECK_FALSE(frontend::compile_fx_source("input x\nd = 2 * 10 ms\noutput x | delay(d)\n", "s.fx", {{"d", "0.1"}},
                                          literal));
  CHECK(literal.str().find("'d' is computed from numbers, not written as one") != std::string::npos);
  DiagnosticEngine d3;
  CHECK_FALSE(frontend::compile_fx_source(kGraph, "s.fx", {{"fc", "1 kHz kHz"}}, d3));
  CHECK(d3.str() == "error: the setting fc=1 kHz kHz: expected a number with an optional unit, such as 500Hz or -3dB [fx-set]\n");
}

}  // namespace
}  // namespace fxc
