// SPDX-License-Identifier: Apache-2.0
// The canonical text form: print, parse, print gives the same text; parse errors are clear.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "ir/parse.h"
#include "ir/print.h"
#include "ir/verify.h"
#include "test_graphs.h"

namespace fxc {
namespace {

std::string round_trip(const std::string& text) {
  DiagnosticEngine diags;
  auto graph = ir::parse_graph(text, "test.fxir", diags);
  REQUIRE_MESSAGE(graph, diags.str());
  return ir::to_text(*graph);
}

std::string parse_error(const std::string& text) {
  DiagnosticEngine diags;
  diags.add_source("bad.fxir", text);
  auto graph = ir::parse_graph(text, "bad.fxir", diags);
  CHECK_FALSE(graph);
  return diags.str();
}

TEST_CASE("print, parse, print gives the same text for every test graph") {
  for (const ir::Graph& g : {test::vocal_graph(), test::every_kind_graph()}) {
    std::string text = ir::to_text(g);
    CHECK(round_trip(text) == text);
    std::string bare = ir::to_text(g, {.locations = false});
    CHECK(round_trip(bare) == bare);
  }
}

TEST_CASE("floats read back exactly") {
  const double values[] = {0.1,
                           1.0 / 3.0,
                           -0.0,
                           1e-300,
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::max(),
                           0.7071067811865476,
                           -123456.789e10};
  ir::Graph g;
  g.name = "floats";
  ir::NodeId in = g.add({ir::Input{"x"}, {}, {1, DType::f64}, {}, {}, {}});
  ir::NodeId prev = in;
  for (double v : values) prev = g.add({ir::Gain{v}, {prev}, {1, DType::f64}, {}, {}, {}});
  g.add({ir::Output{"y"}, {prev}, {1, DType::f64}, {}, {}, {}});

  DiagnosticEngine diags;
  auto parsed = ir::parse_graph(ir::to_text(g), "floats.fxir", diags);
  REQUIRE(parsed);
  for (std::size_t i = 0; i < std::size(values); ++i) {
    double got = std::get<ir::Gain>(parsed->node(static_cast<ir::NodeId>(i + 1)).op).gain;
    CHECK(std::signbit(got) == std::signbit(values[i]));
    CHECK(got == values[i]);
  }
}

TEST_CASE("locations and origins survive the round trip") {
  std::string text =
      "graph g\n"
      "%0 = input {name=\"x\"} : 1ch f64 loc(\"a b.fx\":3:7)\n"
      "%1 = gain %0 {gain=2} : 1ch f64 loc(\"a b.fx\":4:1) origins(\"a b.fx\":4:1, \"a b.fx\":5:9)\n"
      "%2 = output %1 {name=\"y\"} : 1ch f64\n";
  CHECK(round_trip(text) == text);
}

TEST_CASE("forward references are allowed and renumbered in definition order") {
  std::string text =
      "graph g\n"
      "%7 = output %3 {name=\"y\"} : ?ch f32\n"
      "%3 = input {name=\"x\"} : ?ch f32\n";
  CHECK(round_trip(text) ==
        "graph g\n"
        "%0 = output %1 {name=\"y\"} : ?ch f32\n"
        "%1 = input {name=\"x\"} : ?ch f32\n");
}

TEST_CASE("shape-only text hides values and labels") {
  ir::Graph g = test::vocal_graph();
  std::string shape = ir::to_text(g, {.locations = false, .shape_only = true});
  CHECK(shape.find("graph ?") == 0);
  CHECK(shape.find("cutoff_hz=<1 x ?>") != std::string::npos);
  CHECK(shape.find("order=4") != std::string::npos);
  CHECK(shape.find("\"x\"") == std::string::npos);
}

TEST_CASE("parse errors name the problem and its place") {
  CHECK(parse_error("graph g\n%0 = inptu {name=\"x\"} : 1ch f64\n") ==
        "bad.fxir:2:6: error: unknown node kind 'inptu' [ir-parse]\n"
        "%0 = inptu {name=\"x\"} : 1ch f64\n"
        "     ^\n"
        "note: did you mean 'input'?\n");
  CHECK(parse_error("graph g\n%0 = gain {} : 1ch f64\n").find("lacks attribute 'gain'") !=
        std::string::npos);
  CHECK(parse_error("graph g\n%0 = tanh {foo=1} : 1ch f64\n")
            .find("2:12: error: unknown attribute 'foo' for a node of kind 'tanh'") !=
        std::string::npos);
  CHECK(parse_error("graph g\n%0 = tanh %4 : 1ch f64\n")
            .find("2:11: error: operand %4 is not defined") != std::string::npos);
  CHECK(parse_error("graph g\n%0 = input {name=\"x\"} : 1ch f64\n%0 = tanh %0 : 1ch f64\n")
            .find("node %0 is defined twice") != std::string::npos);
  CHECK(parse_error("graph g\n%0 = gain %0 {gain=abc} : 1ch f64\n")
            .find("2:20: error: expected a number") != std::string::npos);
  CHECK(parse_error("graph g\n%0 = sos %0 {sections=[[1, 2]], allow_unstable=false} : 1ch f64\n")
            .find("expected a section [b0, b1, b2, a1, a2]") != std::string::npos);
  CHECK(parse_error("graph g\n%0 = tanh %0 : 1ch f16\n")
            .find("expected a sample type 'f32' or 'f64'") != std::string::npos);
  CHECK(parse_error("%0 = tanh %0 : 1ch f64\n").find("expected 'graph NAME'") != std::string::npos);
  CHECK(parse_error("graph g\n%0 = iir_design %0 {family=buter, order=1, btype=lowpass, "
                    "cutoff_hz=[1], rp_db=0, rs_db=0, norm=phase} : 1ch f64\n")
            .find("expected one of butter, cheby1, cheby2, ellip, bessel") != std::string::npos);
}

TEST_CASE("several parse errors are reported in one run") {
  DiagnosticEngine diags;
  auto graph = ir::parse_graph("graph g\n%0 = nope : 1ch f64\n%1 = nada : 1ch f64\n", "x", diags);
  CHECK_FALSE(graph);
  CHECK(diags.error_count() == 2);
}

}  // namespace
}  // namespace fxc
