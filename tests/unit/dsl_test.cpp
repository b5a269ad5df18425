// SPDX-License-Identifier: Apache-2.0
// The C++ pipe DSL builds the graph the expression describes, with the user's locations.
#include <doctest/doctest.h>

#include "frontend/dsl.h"
#include "ir/print.h"
#include "ir/verify.h"
#include "test_graphs.h"

namespace fxc {
namespace {

using namespace fxc::literals;

std::vector<std::string_view> kinds(const ir::Graph& g) {
  std::vector<std::string_view> out;
  for (const ir::Node& n : g.nodes()) out.push_back(ir::kind_name(n.op));
  return out;
}

TEST_CASE("a pipe becomes a path of nodes in order") {
  Flow x = input("x", 2);
  Chain eq = butter(4, 80_Hz, highpass) | peaking(1_kHz, 1.0, 3_dB);
  ir::Graph g = make_graph("eq", {output("y", x | eq)});
  CHECK(kinds(g) == std::vector<std::string_view>{"input", "iir_design", "biquad", "output"});
  const auto& hp = std::get<ir::IirDesign>(g.node(1).op);
  CHECK(hp.order == 4);
  CHECK(hp.btype == design::BandType::highpass);
  CHECK(hp.cutoff_hz == std::vector<double>{80});
  const auto& peak = std::get<ir::Biquad>(g.node(2).op);
  CHECK(peak.type == design::BiquadType::peaking);
  CHECK(peak.f0_hz == 1000);
  CHECK(peak.gain_db == 3);
  CHECK(g.node(2).operands == std::vector<ir::NodeId>{1});
  CHECK(g.node(0).type.channels == 2);
  DiagnosticEngine diags;
  CHECK(ir::verify(g, diags));
}

TEST_CASE("a flow used twice is one node with two users; a chain used twice is two copies") {
  Flow x = input("x", 1);
  Chain lp = lowpass(1_kHz);
  Flow shared = x | tanh();
  ir::Graph g = make_graph("g", {output("a", shared | lp), output("b", shared | lp)});
  CHECK(kinds(g) ==
        std::vector<std::string_view>{"input", "tanh", "biquad", "output", "biquad", "output"});
  CHECK(g.users()[1] == std::vector<ir::NodeId>{2, 4});
}

TEST_CASE("mixing and scaling") {
  Flow x = input("x", 1), y = input("y", 1);
  ir::Graph g = make_graph("mix", {output("d", 0.5 * x - y * 2.0), output("l", -6_dB * x)});
  const auto& sum = std::get<ir::Sum>(g.node(4).op);
  CHECK(sum.weights == std::vector<double>{1, -1});
  CHECK(std::get<ir::Gain>(g.node(1).op).gain == 0.5);
  CHECK(std::get<ir::Gain>(g.node(3).op).gain == 2.0);
  CHECK(std::get<ir::Gain>(g.node(6).op).gain == doctest::Approx(0.5011872336272722).epsilon(1e-15));
}

TEST_CASE("a constant times a chain is the chain followed by a gain") {
  Flow x = input("x", 1);
  ir::Graph g = make_graph("g", {output("y", x | (0.25 * highpass(100_Hz)))});
  CHECK(kinds(g) == std::vector<std::string_view>{"input", "biquad", "gain", "output"});
}

TEST_CASE("BandWord is a band type and a cookbook stage") {
  design::BandType t = highpass;
  CHECK(t == design::BandType::highpass);
  Chain c = highpass(200_Hz, 2.0);
  ir::Op op = c.stages()[0]->op();  // op() builds the op: keep it while b refers to it
  const auto& b = std::get<ir::Biquad>(op);
  CHECK(b.type == design::BiquadType::highpass);
  CHECK(b.q == 2.0);
  CHECK(std::get<ir::Biquad>(lowpass(1_kHz).stages()[0]->op()).q == kDefaultQ);
}

TEST_CASE("stages record the caller's file and line") {
  Chain c = butter(2, 1_kHz);
  int line = __LINE__ - 1;
  CHECK(c.stages()[0]->loc.file.find("dsl_test.cpp") != std::string::npos);
  CHECK(c.stages()[0]->loc.line == static_cast<std::uint32_t>(line));
}

TEST_CASE("units convert as the language says") {
  CHECK((5_ms).seconds == doctest::Approx(0.005));
  CHECK((2_kHz).hz == 2000);
  CHECK((1.5_kHz).hz == 1500);
  Chain d = delay(64_samples);
  CHECK(std::get<ir::Delay>(d.stages()[0]->op()).unit == ir::DelayUnit::samples);
  CHECK(std::get<ir::Gain>(gain(-6_dB).stages()[0]->op()).gain == doctest::Approx(0.501187).epsilon(1e-6));
}

TEST_CASE("the vocal example verifies and prints") {
  ir::Graph g = test::vocal_graph();
  DiagnosticEngine diags;
  CHECK(ir::verify(g, diags));
  std::string text = ir::to_text(g, {.locations = false});
  CHECK(text.find("%1 = iir_design %0 {family=butter, order=4, btype=highpass, cutoff_hz=[80], "
                  "rp_db=0, rs_db=0, norm=phase} : 2ch f64") != std::string::npos);
}

}  // namespace
}  // namespace fxc
