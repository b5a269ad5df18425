// SPDX-License-Identifier: Apache-2.0
// The verifier rejects each malformed graph with its own message.
#include <doctest/doctest.h>

#include "ir/parse.h"
#include "ir/verify.h"
#include "test_graphs.h"

namespace fxc {
namespace {

// Verifies IR text and returns the rendered diagnostics ("" when the graph is valid).
std::string verify_text(const std::string& body) {
  DiagnosticEngine diags;
  auto graph = ir::parse_graph("graph g\n" + body, "v.fxir", diags);
  REQUIRE_MESSAGE(graph, diags.str());
  ir::verify(*graph, diags);
  return diags.str();
}

void check_rejects(const std::string& body, const std::string& message) {
  std::string out = verify_text(body);
  CHECK_MESSAGE(out.find(message) != std::string::npos, "expected '" << message << "' in:\n"
                                                                      << out);
}

const std::string kIn = "%0 = input {name=\"x\"} : 2ch f64\n";
const std::string kIn32 = "%0 = input {name=\"x\"} : 2ch f32\n";

TEST_CASE("valid graphs pass") {
  DiagnosticEngine diags;
  CHECK(ir::verify(test::vocal_graph(), diags));
  CHECK(ir::verify(test::every_kind_graph(), diags));
  CHECK(diags.str() == "");
  CHECK(verify_text(kIn + "%1 = output %0 {name=\"y\"} : 2ch f64\n") == "");
}

TEST_CASE("each malformed graph gets its own message") {
  check_rejects(kIn + "%1 = gain {gain=2} : 2ch f64\n%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (gain): takes 1 operand, has 0");
  check_rejects(kIn + "%1 = sum {weights=[]} : 2ch f64\n%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (sum): takes at least one operand, has none");
  check_rejects(kIn + "%1 = gain %2 {gain=2} : 2ch f64\n%2 = gain %1 {gain=2} : 2ch f64\n"
                      "%3 = output %2 {name=\"y\"} : 2ch f64\n",
                "%1 (gain): the graph has a cycle through no feedback node");
  check_rejects(kIn + "%1 = sum %0, %0 {weights=[1]} : 2ch f64\n"
                      "%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (sum): has 1 weights for 2 operands");
  check_rejects(kIn + "%1 = input {name=\"z\"} : 3ch f64\n%2 = sum %0, %1 {weights=[1, 1]} : 2ch f64\n"
                      "%3 = output %2 {name=\"y\"} : 2ch f64\n",
                "%2 (sum): operands have different channel counts (2 and 3)");
  check_rejects(kIn + "%1 = tanh %0 : 1ch f64\n%2 = output %1 {name=\"y\"} : 1ch f64\n",
                "%1 (tanh): has 1 channels but its operand has 2");
  check_rejects(kIn, "the graph has no output");
  check_rejects("%0 = input {name=\"\"} : 1ch f64\n%1 = output %0 {name=\"y\"} : 1ch f64\n",
                "%0 (input): an input needs a name");
  check_rejects(kIn + "%1 = input {name=\"x\"} : 2ch f64\n%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (input): the name 'x' is used twice");
  check_rejects(kIn + "%1 = output %0 {name=\"x\"} : 2ch f64\n",
                "%1 (output): the name 'x' is used twice");
  check_rejects(kIn + "%1 = output %0 {name=\"y\"} : 2ch f64\n%2 = gain %1 {gain=1} : 2ch f64\n"
                      "%3 = output %2 {name=\"z\"} : 2ch f64\n",
                "%2 (gain): reads output %1; outputs have no users");
  check_rejects(kIn + "%1 = gain %1 {gain=1} : 2ch f64\n%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (gain): the graph has a cycle through no feedback node");
  check_rejects(kIn + "%1 = sos %0 {sections=[], allow_unstable=false} : 2ch f64\n"
                      "%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (sos): has no sections");
  check_rejects(kIn + "%1 = tf %0 {b=[1], a=[0, 1], allow_unstable=false} : 2ch f64\n"
                      "%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (tf): a[0] must not be 0");
  check_rejects(kIn + "%1 = fir %0 {taps=[]} : 2ch f64\n%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (fir): has no taps");
  check_rejects(kIn + "%1 = gain %0 {gain=nan} : 2ch f64\n%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (gain): gain must be finite");
  check_rejects(kIn + "%1 = clip %0 {lo=1, hi=-1} : 2ch f64\n%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (clip): lower bound exceeds upper bound");
  check_rejects(kIn + "%1 = delay %0 {amount=1.5, unit=samples} : 2ch f64\n"
                      "%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (delay): a delay in samples must be a whole number");
  check_rejects(kIn + "%1 = delay %0 {amount=-1, unit=samples} : 2ch f64\n"
                      "%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (delay): delay must be a finite number >= 0");
  check_rejects(kIn + "%1 = iir_design %0 {family=butter, order=0, btype=lowpass, cutoff_hz=[1], "
                      "rp_db=0, rs_db=0, norm=phase} : 2ch f64\n%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (iir_design): order must be at least 1");
  check_rejects(kIn + "%1 = iir_design %0 {family=butter, order=2, btype=bandpass, cutoff_hz=[1], "
                      "rp_db=0, rs_db=0, norm=phase} : 2ch f64\n%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (iir_design): bandpass needs 2 cutoff frequencies, has 1");
  check_rejects(kIn + "%1 = tanh %0 : 2ch f32\n%2 = output %1 {name=\"y\"} : 2ch f32\n",
                "the graph mixes f32 and f64 nodes");
  check_rejects(kIn + "%1 = chain %0 {stages=[gain{gain=2}, sos{sections=[[1, 0, 0, -0.5, 0]], "
                      "allow_unstable=false}], strategy=gpu_thread_per_channel, chunk_length=0, fir_method=none, "
                      "fft_block=0, state_precision=mixed, reason=\"\"} : 2ch f64\n"
                      "%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (chain): state_precision mixed needs an sos cascade as the first stage");
  check_rejects(kIn + "%1 = chain %0 {stages=[sos{sections=[[1, 0, 0, -0.5, 0]], allow_unstable=false}], "
                      "strategy=gpu_chunked_wavefront, chunk_length=256, fir_method=none, fft_block=0, "
                      "state_precision=signal, reason=\"\"} : 2ch f64\n%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (chain): gpu_chunked_wavefront pipelines 2 steps or more, this chain has 1");
  check_rejects(kIn + "%1 = chain %0 {stages=[sos{sections=[[1, 0, 0, -0.5, 0]], allow_unstable=false}, "
                      "gain{gain=2}], strategy=gpu_thread_per_channel, chunk_length=0, fir_method=none, "
                      "fft_block=0, state_precision=mixed, reason=\"\"} : 2ch f64\n"
                      "%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (chain): state_precision mixed is for float32 chains");
  // Float pairs: the same rules as mixed, and pairs covers sos cascades and gains only.
  check_rejects(kIn32 + "%1 = chain %0 {stages=[gain{gain=2}, sos{sections=[[1, 0, 0, -0.5, 0]], "
                      "allow_unstable=false}], strategy=gpu_thread_per_channel, chunk_length=0, fir_method=none, "
                      "fft_block=0, state_precision=mixed_pairs, reason=\"\"} : 2ch f32\n"
                      "%2 = output %1 {name=\"y\"} : 2ch f32\n",
                "%1 (chain): state_precision mixed_pairs needs an sos cascade as the first stage");
  check_rejects(kIn32 + "%1 = chain %0 {stages=[sos{sections=[[1, 0, 0, -0.5, 0]], allow_unstable=false}, tanh{}], "
                      "strategy=gpu_thread_per_channel, chunk_length=0, fir_method=none, fft_block=0, "
                      "state_precision=pairs, reason=\"\"} : 2ch f32\n%2 = output %1 {name=\"y\"} : 2ch f32\n",
                "%1 (chain): state_precision pairs is for chains of sos cascades and gains, not tanh");
  check_rejects(kIn + "%1 = chain %0 {stages=[sos{sections=[[1, 0, 0, -0.5, 0]], allow_unstable=false}], "
                      "strategy=gpu_thread_per_channel, chunk_length=0, fir_method=none, fft_block=0, "
                      "state_precision=pairs, reason=\"\"} : 2ch f64\n%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (chain): state_precision pairs is for float32 chains");
  check_rejects(kIn32 + "%1 = chain %0 {stages=[gain{gain=2}], strategy=gpu_thread_per_channel, chunk_length=0, "
                        "fir_method=none, fft_block=0, state_precision=pairs, reason=\"\"} : 2ch f32\n"
                        "%2 = output %1 {name=\"y\"} : 2ch f32\n",
                "%1 (chain): state_precision pairs needs an sos cascade");
  check_rejects(kIn + "%1 = chain %0 {stages=[fir{taps=[0.5, 0.25, 0.125, 0.0625]}], strategy=none, chunk_length=0, "
                      "fir_method=fft_overlap_save, fft_block=3, state_precision=signal, reason=\"\"} : 2ch f64\n"
                      "%2 = output %1 {name=\"y\"} : 2ch f64\n",
                "%1 (chain): FFT overlap-save needs an FFT block that is a power of two, at least 2");
  CHECK(verify_text(kIn32 + "%1 = chain %0 {stages=[sos{sections=[[1, 0, 0, -0.5, 0]], allow_unstable=false}, "
                            "gain{gain=2}], strategy=gpu_thread_per_channel, chunk_length=0, fir_method=none, "
                            "fft_block=0, state_precision=pairs, reason=\"\"} : 2ch f32\n"
                            "%2 = output %1 {name=\"y\"} : 2ch f32\n") == "");
  check_rejects("%0 = input {name=\"x\"} : 1ch f64\n%1 = gain %2 {gain=1} : 1ch f64\n"
                "%2 = gain %1 {gain=1} : 1ch f64\n%3 = output %2 {name=\"y\"} : 1ch f64\n",
                "the graph has a cycle");
}

TEST_CASE("an output that does not depend on an input is rejected") {
  // Parsed text cannot express a source-less node other than input, so build it directly.
  ir::Graph g;
  g.name = "g";
  g.add({ir::Input{"x"}, {}, {1, DType::f64}, {}, {}, {}});
  ir::NodeId lonely = g.add({ir::Sum{{}}, {}, {1, DType::f64}, {}, {}, {}});
  g.add({ir::Output{"y"}, {lonely}, {1, DType::f64}, {}, {}, {}});
  DiagnosticEngine diags;
  CHECK_FALSE(ir::verify(g, diags));
  CHECK(diags.str().find("%1 (sum): takes at least one operand, has none") != std::string::npos);
}

// A loop with nothing fed into it, mixed into a fed output: the output depends on the input,
// the loop on nothing. Only outputs were checked before 2026-11-29, and the reference
// interpreter crashed on such a graph.
TEST_CASE("a loop that no input reaches is rejected where an output reads it") {
  const std::string in = "%0 = input {name=\"x\"} : 1ch f64\n";
  const std::string loop = "%1 = feedback %2 {amount=1, unit=samples, reason=\"\"} : 1ch f64\n"
                           "%2 = gain %1 {gain=0.5} : 1ch f64\n";
  check_rejects(in + loop + "%3 = sum %0, %2 {weights=[1, 1]} : 1ch f64\n%4 = output %3 {name=\"y\"} : 1ch f64\n",
                "%1 (feedback): does not depend on any input");
  // Fed, it passes; unread, it is dead code for the passes to drop.
  CHECK(verify_text(in + "%1 = feedback %3 {amount=1, unit=samples, reason=\"\"} : 1ch f64\n%2 = gain %1 {gain=0.5} : 1ch f64\n"
                         "%3 = sum %0, %2 {weights=[1, 1]} : 1ch f64\n%4 = output %3 {name=\"y\"} : 1ch f64\n") == "");
  CHECK(verify_text(in + loop + "%3 = output %0 {name=\"y\"} : 1ch f64\n") == "");
}

TEST_CASE("an operand out of range is reported, not dereferenced") {
  ir::Graph g;
  g.add({ir::Input{"x"}, {}, {1, DType::f64}, {}, {}, {}});
  g.add({ir::Output{"y"}, {42}, {1, DType::f64}, {}, {}, {}});
  DiagnosticEngine diags;
  CHECK_FALSE(ir::verify(g, diags));
  CHECK(diags.str().find("%1 (output): operand %42 does not exist") != std::string::npos);
}

TEST_CASE("verifier errors carry the node's source location") {
  using namespace fxc::literals;
  Flow x = input("x", 1);
  ir::Graph g = make_graph("g", {output("y", x | clip(1.0, -1.0))});
  DiagnosticEngine diags;
  CHECK_FALSE(ir::verify(g, diags));
  REQUIRE(diags.diagnostics().size() == 1);
  CHECK(diags.diagnostics()[0].loc.file.find("ir_verify_test.cpp") != std::string::npos);
  CHECK(diags.diagnostics()[0].loc.line == static_cast<std::uint32_t>(__LINE__ - 5));
}

}  // namespace
}  // namespace fxc
