// SPDX-License-Identifier: Apache-2.0
// Lowering .fx to the IR: node kinds and operands, payloads from every stage, units,
// fan-out, chain reuse, sums, channel counts and locations.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "frontend/fx_file.h"
#include "frontend/stage_table.h"
#include "ir/verify.h"

namespace fxc::frontend {
namespace {

ir::Graph compile_ok(const std::string& text) {
  DiagnosticEngine diags;
  std::optional<ir::Graph> g = compile_fx_source(text, "l.fx", diags);
  REQUIRE_MESSAGE(g.has_value(), diags.str());
  CHECK(diags.diagnostics().empty());
  DiagnosticEngine verify_diags;
  CHECK_MESSAGE(ir::verify(*g, verify_diags), verify_diags.str());
  return std::move(*g);
}

std::string compile_error(const std::string& text) {
  DiagnosticEngine diags;
  CHECK_FALSE(compile_fx_source(text, "l.fx", diags).has_value());
  CHECK(diags.has_errors());
  return diags.str();
}

std::vector<std::string_view> kinds(const ir::Graph& g) {
  std::vector<std::string_view> out;
  for (const ir::Node& n : g.nodes()) out.push_back(ir::kind_name(n.op));
  return out;
}

// The one node of kind T in `g` (the stage under test).
template <class T>
const ir::Node& only(const ir::Graph& g) {
  const ir::Node* found = nullptr;
  for (const ir::Node& n : g.nodes())
    if (ir::holds<T>(n)) {
      REQUIRE(found == nullptr);
      found = &n;
    }
  REQUIRE(found != nullptr);
  return *found;
}

// The payload of the single stage in "input x; output x | STAGE".
template <class T>
T stage(const std::string& call) {
  ir::Graph g = compile_ok("input x\noutput x | " + call + "\n");
  return std::get<T>(only<T>(g).op);
}

TEST_CASE("fx lowering: the contract's vocal example") {
  ir::Graph g = compile_ok(
      "# A vocal chain: rumble filter, presence boost, soft limiter, and a dry/wet mix.\n"
      "graph vocal\n"
      "input x : 2\n"
      "\n"
      "clean = x | butter(4, 80 Hz, highpass)\n"
      "tone  = clean | peaking(3 kHz, 1.0, 4 dB) | highshelf(10 kHz, -2 dB)\n"
      "wet   = tone | tanh() | gain(-3 dB)\n"
      "output 0.7 * wet + 0.3 * (x | delay(5 ms))\n");
  CHECK(g.name == "vocal");
  CHECK(kinds(g) == std::vector<std::string_view>{"input", "iir_design", "biquad", "biquad", "tanh",
                                                  "gain", "gain", "delay", "gain", "sum",
                                                  "output"});
  // Follow the operands from the output back to the input.
  const ir::Node& out = g.node(g.outputs().at(0));
  CHECK(std::get<ir::Output>(out.op).name.empty());
  const ir::Node& sum = g.node(out.operands.at(0));
  CHECK(std::get<ir::Sum>(sum.op).weights == std::vector<double>{1, 1});
  REQUIRE(sum.operands.size() == 2);
  const ir::Node& wet_gain = g.node(sum.operands[0]);
  CHECK(std::get<ir::Gain>(wet_gain.op).gain == 0.7);
  const ir::Node& dry_gain = g.node(sum.operands[1]);
  CHECK(std::get<ir::Gain>(dry_gain.op).gain == 0.3);
  const ir::Node& delay = g.node(dry_gain.operands.at(0));
  CHECK(std::get<ir::Delay>(delay.op).amount == doctest::Approx(0.005));
  CHECK(std::get<ir::Delay>(delay.op).unit == ir::DelayUnit::seconds);
  CHECK(delay.operands == std::vector<ir::NodeId>{0});
  const ir::Node& wet = g.node(wet_gain.operands.at(0));
  CHECK(std::get<ir::Gain>(wet.op).gain == doctest::Approx(std::pow(10.0, -3.0 / 20)));
  const ir::Node& tanh = g.node(wet.operands.at(0));
  CHECK(ir::holds<ir::Tanh>(tanh));
  const ir::Node& shelf = g.node(tanh.operands.at(0));
  CHECK(std::get<ir::Biquad>(shelf.op).type == design::BiquadType::highshelf);
  CHECK(std::get<ir::Biquad>(shelf.op).gain_db == -2);
  const ir::Node& peak = g.node(shelf.operands.at(0));
  CHECK(std::get<ir::Biquad>(peak.op).f0_hz == 3000);
  const ir::Node& hp = g.node(peak.operands.at(0));
  CHECK(std::get<ir::IirDesign>(hp.op).btype == design::BandType::highpass);
  CHECK(hp.operands == std::vector<ir::NodeId>{0});
  // The input feeds two users (fan-out), and every node has two channels.
  CHECK(g.users()[0].size() == 2);
  for (const ir::Node& n : g.nodes()) CHECK(n.type.channels == 2);
  // Locations: the stage call, the operator, the argument.
  CHECK(hp.loc == SourceLoc{"l.fx", 5, 13});
  CHECK(hp.arg_locs.at("Wn") == SourceLoc{"l.fx", 5, 23});
  CHECK(hp.arg_locs.at("btype") == SourceLoc{"l.fx", 5, 30});
  CHECK(wet_gain.loc == SourceLoc{"l.fx", 8, 12});
  CHECK(wet_gain.arg_locs.at("g") == SourceLoc{"l.fx", 8, 8});
  CHECK(sum.loc == SourceLoc{"l.fx", 8, 18});
  CHECK(g.node(0).loc == SourceLoc{"l.fx", 3, 7});
  CHECK(out.loc == SourceLoc{"l.fx", 8, 1});
}

TEST_CASE("fx lowering: IIR designs, positional and by keyword") {
  auto b = stage<ir::IirDesign>("butter(4, 80 Hz, highpass)");
  CHECK(b.family == design::IirFamily::butter);
  CHECK(b.order == 4);
  CHECK(b.cutoff_hz == std::vector<double>{80});
  CHECK(b.btype == design::BandType::highpass);
  auto k = stage<ir::IirDesign>("butter(btype=\"bandpass\", Wn=[1 kHz, 2kHz], N=2)");
  CHECK(k.order == 2);
  CHECK(k.btype == design::BandType::bandpass);
  CHECK(k.cutoff_hz == std::vector<double>{1000, 2000});
  auto c1 = stage<ir::IirDesign>("cheby1(5, 0.5 dB, 3 kHz)");
  CHECK(c1.family == design::IirFamily::cheby1);
  CHECK(c1.rp_db == 0.5);
  CHECK(c1.btype == design::BandType::lowpass);
  auto c2 = stage<ir::IirDesign>("cheby2(N=5, rs=40, Wn=3 kHz, btype=highpass)");
  CHECK(c2.family == design::IirFamily::cheby2);
  CHECK(c2.rs_db == 40);
  auto e = stage<ir::IirDesign>("ellip(4, 1, 60 dB, [500, 900], bandstop)");
  CHECK(e.family == design::IirFamily::ellip);
  CHECK(e.rp_db == 1);
  CHECK(e.rs_db == 60);
  CHECK(e.cutoff_hz == std::vector<double>{500, 900});
  CHECK(e.btype == design::BandType::bandstop);
  auto be = stage<ir::IirDesign>("bessel(3, 1 kHz, norm=mag)");
  CHECK(be.family == design::IirFamily::bessel);
  CHECK(be.norm == design::BesselNorm::mag);
  CHECK(stage<ir::IirDesign>("bessel(3, 1 kHz, lowpass, delay)").norm == design::BesselNorm::delay);
}

TEST_CASE("fx lowering: cookbook biquads") {
  auto lp = stage<ir::Biquad>("lowpass(1 kHz)");
  CHECK(lp.type == design::BiquadType::lowpass);
  CHECK(lp.f0_hz == 1000);
  CHECK(lp.q == 0.7071067811865476);
  CHECK(stage<ir::Biquad>("highpass(200, 0.5)").q == 0.5);
  CHECK(stage<ir::Biquad>("bandpass(f0=2 kHz, q=2)").type == design::BiquadType::bandpass);
  CHECK(stage<ir::Biquad>("notch(60 Hz, 30)").type == design::BiquadType::notch);
  CHECK(stage<ir::Biquad>("allpass(1 kHz)").type == design::BiquadType::allpass);
  auto pk = stage<ir::Biquad>("peaking(1 kHz, 1, 6 dB)");
  CHECK(pk.type == design::BiquadType::peaking);
  CHECK(pk.gain_db == 6);
  CHECK(stage<ir::Biquad>("peaking(1 kHz, gain=-3)").gain_db == -3);  // bare number is dB
  auto ls = stage<ir::Biquad>("lowshelf(100 Hz, 3 dB, 0.8)");
  CHECK(ls.type == design::BiquadType::lowshelf);
  CHECK(ls.gain_db == 3);
  CHECK(ls.q == 0.8);
  auto hs = stage<ir::Biquad>("highshelf(f0=10 kHz, gain=-2 dB)");
  CHECK(hs.type == design::BiquadType::highshelf);
  CHECK(hs.q == 0.7071067811865476);
}

TEST_CASE("fx lowering: raw coefficients") {
  auto s = stage<ir::SosCascade>("sos([[2, 0, 0, 2, -1, 0.5], [1, 1, 0, 1, 0, 0]])");
  REQUIRE(s.sections.size() == 2);
  CHECK(s.sections[0] == design::Section{1, 0, 0, -0.5, 0.25});  // divided by a0 = 2
  CHECK_FALSE(s.allow_unstable);
  CHECK(stage<ir::SosCascade>("sos([[1, 0, 0, 1, -2, 1.5]], allow_unstable=true)").allow_unstable);
  auto t = stage<ir::TransferFunction>("tf([1, 2, 1], [1, -0.5])");
  CHECK(t.b == std::vector<double>{1, 2, 1});
  CHECK(t.a == std::vector<double>{1, -0.5});
  CHECK(stage<ir::TransferFunction>("tf(b=[1], a=[1, 0.1], allow_unstable=true)").allow_unstable);
  CHECK(stage<ir::FirFilter>("fir([0.25, 0.5, 0.25])").taps ==
        std::vector<double>{0.25, 0.5, 0.25});
  CHECK(stage<ir::FirFilter>("fir(h=[1])").taps == std::vector<double>{1});
}

TEST_CASE("fx lowering: firwin") {
  auto f = stage<ir::FirDesign>("firwin(101, 1 kHz)");
  CHECK(f.numtaps == 101);
  CHECK(f.cutoff_hz == std::vector<double>{1000});
  CHECK(f.window == design::Window::hamming);
  CHECK(f.pass_zero);
  auto k =
      stage<ir::FirDesign>("firwin(numtaps=63, cutoff=[1 kHz, 2 kHz], window=kaiser, beta=8.6)");
  CHECK(k.window == design::Window::kaiser);
  CHECK(k.kaiser_beta == 8.6);
  CHECK(k.cutoff_hz == std::vector<double>{1000, 2000});
  auto h = stage<ir::FirDesign>("firwin(31, 2 kHz, \"hann\", false)");
  CHECK(h.window == design::Window::hann);
  CHECK_FALSE(h.pass_zero);
}

TEST_CASE("fx lowering: gain, delay, tanh and clip, with their units") {
  CHECK(stage<ir::Gain>("gain(0.5)").gain == 0.5);
  CHECK(stage<ir::Gain>("gain(-0.5)").gain == -0.5);
  CHECK(stage<ir::Gain>("gain(-6 dB)").gain == doctest::Approx(0.501187233627));
  CHECK(stage<ir::Gain>("gain(g=20 dB)").gain == doctest::Approx(10));
  auto d = stage<ir::Delay>("delay(3)");
  CHECK(d.amount == 3);
  CHECK(d.unit == ir::DelayUnit::samples);
  CHECK(stage<ir::Delay>("delay(3 samples)").unit == ir::DelayUnit::samples);
  CHECK(stage<ir::Delay>("delay(0)").amount == 0);
  auto s = stage<ir::Delay>("delay(d=2 s)");
  CHECK(s.amount == 2);
  CHECK(s.unit == ir::DelayUnit::seconds);
  CHECK(stage<ir::Delay>("delay(5ms)").amount == doctest::Approx(0.005));
  stage<ir::Tanh>("tanh()");
  auto c = stage<ir::Clip>("clip(-0.5, hi=0.75)");
  CHECK(c.lo == -0.5);
  CHECK(c.hi == 0.75);
}

TEST_CASE("fx lowering: a signal used twice is one node with two users") {
  ir::Graph g =
      compile_ok("input x\ny = x | tanh()\noutput a = y | gain(2)\noutput b = y | gain(3)\n");
  CHECK(kinds(g) ==
        std::vector<std::string_view>{"input", "tanh", "gain", "output", "gain", "output"});
  CHECK(g.users()[1] == std::vector<ir::NodeId>{2, 4});
}

TEST_CASE("fx lowering: a named chain is instantiated afresh at each use") {
  ir::Graph g = compile_ok(
      "input x : 2\ninput y : 2\neq = lowpass(8 kHz) | gain(0.5)\n"
      "output x | eq\noutput y | eq\n");
  CHECK(kinds(g) == std::vector<std::string_view>{"input", "input", "biquad", "gain", "output",
                                                  "biquad", "gain", "output"});
  CHECK(g.node(2).operands == std::vector<ir::NodeId>{0});
  CHECK(g.node(5).operands == std::vector<ir::NodeId>{1});
  // Both copies point at the chain's definition.
  CHECK(g.node(2).loc == g.node(5).loc);
  CHECK(g.node(2).loc == SourceLoc{"l.fx", 3, 6});
  // A chain of chains, and a constant times a chain (the chain followed by a gain).
  ir::Graph h = compile_ok("input x\na = tanh()\nb = a | a\nc = 0.5 * b\noutput x | c\n");
  CHECK(kinds(h) == std::vector<std::string_view>{"input", "tanh", "tanh", "gain", "output"});
  CHECK(std::get<ir::Gain>(h.node(3).op).gain == 0.5);
}

TEST_CASE("fx lowering: '+' and '-' flatten into one sum") {
  ir::Graph g = compile_ok("input a\ninput b\ninput c\noutput a + b - c\n");
  const ir::Node& sum = only<ir::Sum>(g);
  CHECK(sum.operands == std::vector<ir::NodeId>{0, 1, 2});
  CHECK(std::get<ir::Sum>(sum.op).weights == std::vector<double>{1, 1, -1});
  CHECK(sum.loc == SourceLoc{"l.fx", 4, 10});
  // Parentheses keep their own sum.
  ir::Graph p = compile_ok("input a\ninput b\ninput c\noutput a - (b + c)\n");
  CHECK(kinds(p) ==
        std::vector<std::string_view>{"input", "input", "input", "sum", "sum", "output"});
  CHECK(std::get<ir::Sum>(p.node(4).op).weights == std::vector<double>{1, -1});
}

TEST_CASE("fx lowering: constant gains, with and without dB") {
  ir::Graph g = compile_ok("input x\noutput -6 dB * x\n");
  CHECK(std::get<ir::Gain>(only<ir::Gain>(g).op).gain == doctest::Approx(0.501187233627));
  ir::Graph h = compile_ok("input x\noutput -0.5 * x\n");
  CHECK(std::get<ir::Gain>(only<ir::Gain>(h).op).gain == -0.5);
  ir::Graph r = compile_ok("input x\noutput x * 2 * 3\n");
  CHECK(kinds(r) == std::vector<std::string_view>{"input", "gain", "gain", "output"});
  ir::Graph c = compile_ok("input x\noutput 2 * 3 * x\n");  // constants fold
  CHECK(std::get<ir::Gain>(only<ir::Gain>(c).op).gain == 6);
  // 0.5 * x | tanh() is 0.5 * (x | tanh()).
  ir::Graph p = compile_ok("input x\noutput 0.5 * x | tanh()\n");
  CHECK(kinds(p) == std::vector<std::string_view>{"input", "tanh", "gain", "output"});
}

TEST_CASE("fx lowering: number arithmetic across units of one quantity, and scaling by a plain number") {
  // Hz and kHz, s and ms add (the result in the first term's unit); a plain number scales a
  // number with a unit; --set giving `d` in seconds keeps `d + 1 ms` working.
  ir::Graph g = compile_ok("input x\nf = 1 kHz + 500 Hz\nd = 10 ms\ne = d + 0.001 s\nt = 2 * d\n"
                           "output x | lowpass(f) | delay(e) | delay(t)\n");
  CHECK(std::get<ir::Biquad>(only<ir::Biquad>(g).op).f0_hz == doctest::Approx(1500));
  std::vector<double> delays;
  for (const ir::Node& n : g.nodes())
    if (const auto* d = std::get_if<ir::Delay>(&n.op)) delays.push_back(d->amount);
  REQUIRE(delays.size() == 2);
  CHECK(delays[0] == doctest::Approx(0.011));
  CHECK(delays[1] == doctest::Approx(0.02));
  CHECK(compile_error("input x\nd = 10 ms + 5 Hz\noutput x | delay(d)\n")
            .find("cannot add numbers in different units (10 ms and 5 Hz)") != std::string::npos);
  CHECK(compile_error("input x\nd = 3 samples + 1 ms\noutput x | delay(d)\n").find("different units") !=
        std::string::npos);
  // Two numbers with units have no product; the name bound to it adds no second error.
  std::string both = compile_error("input x\nt = 10 ms * 2 Hz\noutput x | delay(t)\n");
  CHECK(both.find("cannot multiply 10 ms by 2 Hz") != std::string::npos);
  CHECK(both.find("error:", both.find("error:") + 1) == std::string::npos);
}

TEST_CASE("fx lowering: a name bound to a constant can be an argument") {
  ir::Graph g = compile_ok("input x\nfc = 2 kHz\nlevel = -3 dB\noutput level * x | lowpass(fc)\n");
  CHECK(std::get<ir::Biquad>(only<ir::Biquad>(g).op).f0_hz == 2000);
  CHECK(only<ir::Biquad>(g).arg_locs.at("f0") == SourceLoc{"l.fx", 4, 28});
  CHECK(std::get<ir::Gain>(only<ir::Gain>(g).op).gain == doctest::Approx(0.707945784384));
}

TEST_CASE("fx lowering: channel counts propagate and are checked at '+'") {
  ir::Graph g = compile_ok("input x : 3\ninput y\noutput x | tanh()\noutput y | tanh()\n");
  CHECK(g.node(0).type.channels == 3);
  CHECK(g.node(2).type.channels == 3);
  CHECK(g.node(4).type.channels == 0);  // unknown until bound
  std::string err = compile_error("input a : 2\ninput b : 1\noutput a + b\n");
  CHECK(err.find("l.fx:3:10: error: cannot add signals with different channel counts (2 and 1)") ==
        0);
  // An input of unknown count may meet any count.
  compile_ok("input a : 2\ninput b\noutput a - b\n");
}

TEST_CASE("fx lowering: named outputs and output names") {
  ir::Graph g = compile_ok("input x\noutput low = x | lowpass(1 kHz)\noutput x - low\n");
  std::vector<ir::NodeId> outs = g.outputs();
  REQUIRE(outs.size() == 2);
  CHECK(std::get<ir::Output>(g.node(outs[0]).op).name == "low");
  CHECK(std::get<ir::Output>(g.node(outs[1]).op).name.empty());
  // The named output's signal is reused, not the output node.
  CHECK(g.node(outs[1]).operands.size() == 1);
  const ir::Node& sum = g.node(g.node(outs[1]).operands[0]);
  CHECK(sum.operands == std::vector<ir::NodeId>{0, 1});
}

TEST_CASE("fx lowering: semantic errors") {
  struct Case {
    const char* text;
    const char* message;
  };
  for (Case c : {
           Case{"input x\noutput y\n", "unknown name 'y'"},
           Case{"input x\ny = x\ny = x\noutput y\n", "'y' is already defined"},
           Case{"input x\noutput lowpass(1 kHz)\n",
                "this is a chain with no input signal; apply it to a signal with 'x | ...'"},
           Case{"input x\ny = x\noutput x | y\n", "'y' is a signal, not a stage or a chain"},
           Case{"input x\noutput 0.5\n", "an output must be a signal, found the number 0.5"},
           Case{"input x\noutput x * x\n", "both sides are signals"},
           Case{"input x\ny = x\n", "the graph has no output"},
           Case{"output tanh()\n", "the graph has no input"},
           Case{"input x\ngraph g\noutput x\n", "'graph' must be the first statement"},
           Case{"input x\noutput x | peakin(1 kHz, 1, 3 dB)\n", "unknown stage 'peakin'"},
           Case{"input x\noutput x | butter(0, 1 kHz)\n", "order must be at least 1, got 0"},
           Case{"input x\noutput 3 kHz * x\n", "expected a gain"},
           Case{"fn f(a, a) { return in | gain(a) }\ninput x\noutput x | f(2, 3)\n",
                "'f' has two parameters named 'a'"},
           Case{"fn f(a, a = 2) { return in | gain(a) }\ninput x\noutput x | f(2)\n",
                "'f' has two parameters named 'a'"},
           Case{"fn f(a) { in = a\n return in }\ninput x\noutput x | f(3)\n",
                "'in' is the signal piped into a function; a binding cannot take its name"},
           Case{"fn f(in) { return in }\ninput x\noutput x | f(3)\n",
                "'in' is the signal piped into a function; a parameter cannot take its name"},
       }) {
    INFO(c.text);
    CHECK(compile_error(c.text).find(c.message) != std::string::npos);
  }
}

TEST_CASE("fx lowering: the stage table lists every stage of the contract") {
  std::vector<std::string_view> names = stage_names();
  for (std::string_view s :
       {"butter",   "cheby1", "cheby2",  "ellip",   "bessel",   "lowpass",   "highpass",
        "bandpass", "notch",  "allpass", "peaking", "lowshelf", "highshelf", "sos",
        "tf",       "fir",    "firwin",  "gain",    "delay",    "tanh",      "clip",
        "envelope", "compressor", "expander", "gate", "limiter"})
    CHECK(find_stage(s) != nullptr);
  CHECK(names.size() == 32);
  CHECK(signature(*find_stage("compressor")) ==
        "compressor(threshold, ratio, attack, release, knee=0 dB, makeup=0 dB, key=none, link=none)");
  CHECK(signature(*find_stage("limiter")) == "limiter(ceiling, release, lookahead=0 ms, key=none, link=none)");
  CHECK(signature(*find_stage("butter")) == "butter(N, Wn, btype=lowpass)");
  CHECK(signature(*find_stage("lowshelf")) == "lowshelf(f0, gain, q=0.7071067811865476)");
  CHECK(signature(*find_stage("tanh")) == "tanh()");
}

TEST_CASE("fx lowering: files") {
  DiagnosticEngine diags;
  CHECK_FALSE(compile_fx_file("/nonexistent/graph.fx", diags).has_value());
  CHECK(diags.str().rfind("error: cannot read '/nonexistent/graph.fx'", 0) == 0);
  // The examples shipped with fxc compile and verify.
  std::filesystem::path examples =
      std::filesystem::path(FXC_TEST_DATA_DIR) / ".." / ".." / "examples";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(examples)) {
    if (entry.path().extension() != ".fx") continue;
    INFO(entry.path().string());
    DiagnosticEngine d;
    std::optional<ir::Graph> g = compile_fx_file(entry.path().string(), d);
    CHECK_MESSAGE(g.has_value(), d.str());
    ++count;
  }
  CHECK(count >= 3);
}

}  // namespace
}  // namespace fxc::frontend
