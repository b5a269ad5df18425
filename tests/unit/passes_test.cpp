// SPDX-License-Identifier: Apache-2.0
// Before/after tests of each pass, written as text IR and compared structurally.
#include <doctest/doctest.h>

#include <sstream>

#include "pass_test_support.h"

namespace fxc {
namespace {

using test::check_passes;

const std::string kIn = "%0 = input {name=\"x\"} : 1ch f64\n";
std::string sos(int id, int operand, const std::string& sections) {
  return "%" + std::to_string(id) + " = sos %" + std::to_string(operand) + " {sections=" +
         sections + ", allow_unstable=false} : 1ch f64\n";
}
std::string out(int id, int operand, const std::string& name = "y") {
  return "%" + std::to_string(id) + " = output %" + std::to_string(operand) + " {name=\"" + name +
         "\"} : 1ch f64\n";
}
std::string node(int id, const std::string& rest) {
  return "%" + std::to_string(id) + " = " + rest + " : 1ch f64\n";
}

const std::string kA = "[[0.5, 0.25, 0, -0.5, 0.25]]";
const std::string kB = "[[1, 2, 1, 0.25, 0.125]]";
const std::string kAB = "[[0.5, 0.25, 0, -0.5, 0.25], [1, 2, 1, 0.25, 0.125]]";

TEST_CASE("fuse-iir merges sos nodes in series") {
  check_passes({"fuse-iir"}, kIn + sos(1, 0, kA) + sos(2, 1, kB) + out(3, 2),
               kIn + sos(1, 0, kAB) + out(2, 1));
}

TEST_CASE("fuse-iir respects a fan-out point") {
  std::string g = kIn + sos(1, 0, kA) + sos(2, 1, kB) + out(3, 2) + out(4, 1, "tap");
  check_passes({"fuse-iir"}, g, g);
}

TEST_CASE("fuse-iir stops at a non-linear stage") {
  std::string g = kIn + sos(1, 0, kA) + node(2, "tanh %1") + sos(3, 2, kB) + out(4, 3);
  check_passes({"fuse-iir"}, g, g);
}

TEST_CASE("fuse-fir convolves taps") {
  check_passes({"fuse-fir"},
               kIn + node(1, "fir %0 {taps=[1, 1]}") + node(2, "fir %1 {taps=[1, -1]}") + out(3, 2),
               kIn + node(1, "fir %0 {taps=[1, 0, -1]}") + out(2, 1));
}

TEST_CASE("fold-gains: gains in series multiply, unit gains vanish") {
  check_passes({"fold-gains"},
               kIn + node(1, "gain %0 {gain=2}") + node(2, "gain %1 {gain=3}") + out(3, 2),
               kIn + node(1, "gain %0 {gain=6}") + out(2, 1));
  check_passes({"fold-gains"},
               kIn + node(1, "gain %0 {gain=2}") + node(2, "gain %1 {gain=0.5}") + out(3, 2),
               kIn + out(1, 0));
}

TEST_CASE("fold-gains: into sos b coefficients and fir taps, on either side") {
  std::string scaled = "[[1, 0.5, 0, -0.5, 0.25]]";  // kA's b times 2
  check_passes({"fold-gains"}, kIn + node(1, "gain %0 {gain=2}") + sos(2, 1, kA) + out(3, 2),
               kIn + sos(1, 0, scaled) + out(2, 1));
  check_passes({"fold-gains"}, kIn + sos(1, 0, kA) + node(2, "gain %1 {gain=2}") + out(3, 2),
               kIn + sos(1, 0, scaled) + out(2, 1));
  check_passes({"fold-gains"},
               kIn + node(1, "fir %0 {taps=[1, 2]}") + node(2, "gain %1 {gain=0.25}") + out(3, 2),
               kIn + node(1, "fir %0 {taps=[0.25, 0.5]}") + out(2, 1));
}

TEST_CASE("fold-gains: a gain before a fan-out is not folded into one branch") {
  std::string g = kIn + node(1, "gain %0 {gain=2}") + sos(2, 1, kA) + out(3, 2) + out(4, 1, "z");
  check_passes({"fold-gains"}, g, g);
}

TEST_CASE("fold-gains: gains fold into sum weights") {
  check_passes({"fold-gains"},
               "%0 = input {name=\"x\"} : 1ch f64\n%1 = input {name=\"w\"} : 1ch f64\n" +
                   node(2, "gain %0 {gain=0.7}") + node(3, "tanh %1") + node(4, "gain %3 {gain=0.3}") +
                   node(5, "sum %2, %4 {weights=[1, -1]}") + node(6, "gain %5 {gain=2}") + out(7, 6),
               "%0 = input {name=\"x\"} : 1ch f64\n%1 = input {name=\"w\"} : 1ch f64\n" +
                   node(2, "tanh %1") + node(3, "sum %0, %2 {weights=[1.4, -0.6]}") + out(4, 3));
}

TEST_CASE("fold-gains: a gain read only by sums folds into each of them") {
  // Freeverb's 0.015 before its eight combs: one pass over memory less.
  const std::string two_in = "%0 = input {name=\"x\"} : 1ch f64\n%1 = input {name=\"w\"} : 1ch f64\n";
  check_passes({"fold-gains"},
               two_in + node(2, "gain %0 {gain=0.5}") + node(3, "sum %2, %1 {weights=[1, 1]}") +
                   node(4, "sum %1, %2 {weights=[3, -2]}") + node(5, "tanh %3") + node(6, "tanh %4") +
                   node(7, "sum %5, %6 {weights=[1, 1]}") + out(8, 7),
               two_in + node(2, "sum %0, %1 {weights=[0.5, 1]}") + node(3, "sum %1, %0 {weights=[3, -1]}") +
                   node(4, "tanh %2") + node(5, "tanh %3") + node(6, "sum %4, %5 {weights=[1, 1]}") + out(7, 6));
  // One user that is not a sum keeps the gain where it is.
  const std::string kept = two_in + node(2, "gain %0 {gain=0.5}") + node(3, "sum %2, %1 {weights=[1, 1]}") +
                           node(4, "tanh %2") + node(5, "sum %3, %4 {weights=[1, 1]}") + out(6, 5);
  check_passes({"fold-gains"}, kept, kept);
}

TEST_CASE("a sum of equally-filtered branches filters once") {
  // (x | f) * 0.5 + (x | f) * 0.25, with f written twice: one filter, its b scaled by 0.75.
  check_passes({"merge-identical", "fold-gains", "eliminate-dead-nodes"},
               kIn + sos(1, 0, kA) + sos(2, 0, kA) + node(3, "gain %1 {gain=0.5}") +
                   node(4, "gain %2 {gain=0.25}") + node(5, "sum %3, %4 {weights=[1, 1]}") +
                   out(6, 5),
               kIn + sos(1, 0, "[[0.375, 0.1875, 0, -0.5, 0.25]]") + out(2, 1));
}

TEST_CASE("eliminate-dead-nodes keeps unused inputs and drops unused branches") {
  check_passes({"eliminate-dead-nodes"},
               kIn + "%1 = input {name=\"unused\"} : 1ch f64\n" + node(2, "tanh %0") + out(3, 0),
               kIn + "%1 = input {name=\"unused\"} : 1ch f64\n" + out(2, 0));
}

TEST_CASE("fuse-chains makes a linear run one kernel and respects fan-out") {
  check_passes({"fuse-chains"},
               kIn + sos(1, 0, kA) + node(2, "gain %1 {gain=2}") + node(3, "tanh %2") +
                   node(4, "fir %3 {taps=[1, 2]}") + node(5, "delay %4 {amount=3, unit=samples}") +
                   out(6, 5),
               kIn +
                   node(1, "chain %0 {stages=[sos{sections=" + kA +
                               ", allow_unstable=false}, gain{gain=2}, tanh{}, fir{taps=[1, 2]}, "
                               "delay{amount=3, unit=samples}], strategy=none, chunk_length=0, "
                               "fir_method=none, fft_block=0, state_precision=signal, reason=\"\"}") +
                   out(2, 1));
  check_passes({"fuse-chains"}, kIn + node(1, "tanh %0") + node(2, "gain %1 {gain=2}") + out(3, 2) +
                                    node(4, "clip %1 {lo=-1, hi=1}") + out(5, 4, "z"),
               kIn +
                   node(1, "chain %0 {stages=[tanh{}], strategy=none, chunk_length=0, "
                           "fir_method=none, fft_block=0, state_precision=signal, reason=\"\"}") +
                   node(2, "chain %1 {stages=[gain{gain=2}], strategy=none, chunk_length=0, "
                           "fir_method=none, fft_block=0, state_precision=signal, reason=\"\"}") +
                   out(3, 2) +
                   node(4, "chain %1 {stages=[clip{lo=-1, hi=1}], strategy=none, chunk_length=0, "
                           "fir_method=none, fft_block=0, state_precision=signal, reason=\"\"}") +
                   out(5, 4, "z"));
}

TEST_CASE("fuse-chains: a FIR from fir_alone_min_taps taps joins FIRs and memoryless stages only (CPU)") {
  // fir_alone_min_taps 3: [1, 2, 1] is long, [1, 2] short. Each case: the stages, then how
  // many chains they make on the CPU and on a GPU (where a FIR up to the FFT's taps joins any).
  struct Case {
    const char* what;
    std::string body;
    int cpu_chains, gpu_chains;
  };
  const Case cases[] = {
      {"long FIR, tanh, gain: one chain (time lanes)",
       node(1, "fir %0 {taps=[1, 2, 1]}") + node(2, "tanh %1") + node(3, "gain %2 {gain=2}") + out(4, 3), 1, 1},
      {"long FIR after a section: apart", sos(1, 0, kA) + node(2, "fir %1 {taps=[1, 2, 1]}") + out(3, 2), 2, 1},
      {"long FIR, tanh, then a delay: the delay apart",
       node(1, "fir %0 {taps=[1, 2, 1]}") + node(2, "tanh %1") + node(3, "delay %2 {amount=3, unit=samples}") +
           out(4, 3),
       2, 1},
      {"short FIR after a section: one chain", sos(1, 0, kA) + node(2, "fir %1 {taps=[1, 2]}") + out(3, 2), 1, 1},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.what));
    for (passes::TargetKind kind : {passes::TargetKind::cpu, passes::TargetKind::cuda}) {
      DiagnosticEngine diags;
      passes::PassContext context{diags, {48000.0, 0, DType::f64}};
      context.thresholds.fir_alone_min_taps = 3;
      if (kind == passes::TargetKind::cuda) context.target = passes::cuda_target();
      auto result = passes::run_pipeline(test::parse_ir(kIn + c.body), context, {.passes = {"fuse-chains"}});
      REQUIRE_MESSAGE(result, diags.str());
      int chains = 0;
      for (const ir::Node& n : result->nodes()) chains += std::holds_alternative<ir::Chain>(n.op);
      CHECK(chains == (kind == passes::TargetKind::cpu ? c.cpu_chains : c.gpu_chains));
    }
  }
}

TEST_CASE("print-after-all says (unchanged) for passes that changed nothing") {
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, 0, DType::f64}};
  std::ostringstream log;
  auto g = test::parse_ir(kIn + node(1, "tanh %0") + out(2, 1));
  auto result = passes::run_pipeline(
      g, context, {.passes = {"fuse-iir", "fuse-chains"}, .print_after_all = true, .log = &log});
  REQUIRE(result);
  std::string text = log.str();
  CHECK(text.find("// -----// IR after fuse-iir //----- //\n(unchanged)\n") != std::string::npos);
  CHECK(text.find("// -----// IR after fuse-chains //----- //\ngraph t\n") != std::string::npos);
}

TEST_CASE("time-passes prints a table with every pass and a total") {
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, 0, DType::f64}};
  std::ostringstream log;
  auto result = passes::run_pipeline(test::parse_ir(kIn + out(1, 0)), context,
                                     {.time_passes = true, .log = &log});
  REQUIRE(result);
  for (const passes::PassInfo& p : passes::all_passes())
    CHECK(log.str().find(std::string(p.name)) != std::string::npos);
  CHECK(log.str().find("total") != std::string::npos);
}

TEST_CASE("design-filters: a time becomes the nearest sample, halves up, also where the product rounds below") {
  // 0.3 ms is 0.0003 s, and 0.0003 x 5000 is 1.4999999999999998 in float64: the half it means
  // still rounds up, and just below a half rounds down. (Feedback delays and a dynamics stage's
  // hold and lookahead share the rule: design_filters.cpp, nearest_sample.)
  // 20000.0005 s is 100000002.5 samples, and 100000002.49999999 in float64: the slack grows
  // with the product.
  const std::vector<std::pair<double, double>> cases = {
      {0.0003, 2}, {0.0015, 8}, {0.00029, 1}, {0.0001, 1}, {0, 0}, {20000.0005, 100000003}, {20000.0004, 100000002}};
  for (const auto& [seconds, samples] : cases) {
    CAPTURE(seconds);
    DiagnosticEngine diags;
    passes::PassContext context{diags, {5000.0, 0, DType::f64}};
    auto result = passes::run_pipeline(
        test::parse_ir(kIn + node(1, "delay %0 {amount=" + std::to_string(seconds) + ", unit=seconds}") + out(2, 1)),
        context, {.passes = {"design-filters"}});
    REQUIRE_MESSAGE(result, diags.str());
    CHECK(std::get<ir::Delay>(result->node(1).op).amount == samples);
  }
}

TEST_CASE("an unknown pass name is an error with a suggestion") {
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, 0, DType::f64}};
  CHECK_FALSE(passes::run_pipeline(test::parse_ir(kIn + out(1, 0)), context, {.passes = {"fuse-irr"}}));
  CHECK(diags.str() == "error: unknown pass 'fuse-irr' [fxc-passes]\nnote: did you mean 'fuse-iir'?\n");
}

}  // namespace
}  // namespace fxc
