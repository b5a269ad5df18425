// SPDX-License-Identifier: Apache-2.0
// split_precision: a float32 chain's float64-state sections in a kernel of their own, where
// the cost model says it pays, and never across a non-linear stage.
#include <doctest/doctest.h>

#include "accuracy_support.h"
#include "test_graphs.h"
#include "design/filter_design.h"
#include "frontend/dsl.h"
#include "frontend/fx_file.h"
#include "passes/cost_model.h"
#include "passes/pipeline.h"
#include "passes/precision_estimate.h"
#include "driver/kernel_cache.h"
#include "runtime/cpu_executor.h"
#include "runtime/reference_interpreter.h"

namespace fxc {
namespace {

using namespace fxc::literals;

// The whole pipeline on an AVX2-class target (8 float32 lanes, 4 float64).
ir::Graph scheduled(const ir::Graph& graph, int channels, DType dtype,
                    passes::TargetKind target = passes::TargetKind::cpu, double fs = 44100) {
  DiagnosticEngine diags;
  passes::PassContext context{diags, {fs, channels, dtype}};
  context.target = {target, 32, 2};
  auto result = passes::run_pipeline(graph, context);
  REQUIRE(result);
  return std::move(*result);
}

std::size_t kernels(const ir::Graph& scheduled) { return test::chains_of(scheduled).size(); }

int sections_of(const ir::Chain& chain) {
  int n = 0;
  for (const ir::Stage& s : chain.stages)
    if (auto* sos = std::get_if<ir::SosCascade>(&s)) n += static_cast<int>(sos->sections.size());
  return n;
}

double max_radius(const ir::Chain& chain) {
  double r = 0;
  for (const ir::Stage& s : chain.stages)
    if (auto* sos = std::get_if<ir::SosCascade>(&s)) r = std::max(r, design::max_pole_radius(sos->sections));
  return r;
}

}  // namespace

TEST_CASE("W1 on 8 float32 channels at 44.1 kHz: the six near-unit-circle sections alone in float64 state") {
  ir::Graph graph = scheduled(test::w1_graph(), 8, DType::f32);
  auto chains = test::chains_of(graph);
  REQUIRE(chains.size() == 2);
  CHECK(chains[0]->state_precision == ir::StatePrecision::f64);
  CHECK(sections_of(*chains[0]) == 6);
  CHECK(chains[1]->state_precision == ir::StatePrecision::signal);
  CHECK(sections_of(*chains[1]) == 9);
  CHECK(max_radius(*chains[1]) < 0.99);
  CHECK(chains[1]->reason == "8 channels fill 8 f32 lanes");
}

TEST_CASE("chains stay whole where splitting would not pay or is not allowed") {
  // Two or four channels fill no more float32 vectors than float64 ones: nothing to gain.
  CHECK(kernels(scheduled(test::w1_graph(), 2, DType::f32)) == 1);
  CHECK(kernels(scheduled(test::w1_graph(), 4, DType::f32)) == 1);
  CHECK(kernels(scheduled(test::w1_graph(), 1, DType::f32)) == 1);
  // Float64 signals, the GPU: one kernel.
  CHECK(kernels(scheduled(test::w1_graph(), 8, DType::f64)) == 1);
  CHECK(kernels(scheduled(test::w1_graph(), 8, DType::f32, passes::TargetKind::cuda)) == 1);
  Flow x = input("x");
  // A near-unit-circle section after a tanh cannot move in front of it.
  ir::Graph after_tanh_graph = scheduled(
      make_graph("t", {output("y", x | butter(5, 5_kHz) | butter(5, 4_kHz) | tanh() | butter(4, 20_Hz, highpass))}),
      8, DType::f32);
  auto after_tanh = test::chains_of(after_tanh_graph);
  REQUIRE(after_tanh.size() == 1);
  CHECK(after_tanh[0]->state_precision == ir::StatePrecision::f64);
  // Before it, they move; the tanh stays in the float32 kernel, after the sections it followed.
  ir::Graph before_tanh_graph = scheduled(
      make_graph("b", {output("y", x | butter(4, 20_Hz, highpass) | butter(5, 5_kHz) | butter(5, 4_kHz) | tanh())}),
      8, DType::f32);
  auto before_tanh = test::chains_of(before_tanh_graph);
  REQUIRE(before_tanh.size() == 2);
  CHECK(std::holds_alternative<ir::Tanh>(before_tanh[1]->stages.back()));
  // The float32 part must measure float64 quality: W1's lowpasses at 48 kHz lose 5.9e-7 in
  // float32 (44.1 kHz: 4.1e-7), over the 5e-7 the split allows; an 8th-order elliptic lowpass
  // at 23.5 kHz (every pole inside r = 0.99, next to a 30 Hz highpass) loses far more.
  CHECK(kernels(scheduled(test::w1_graph(), 8, DType::f32, passes::TargetKind::cpu, 48000)) == 1);
  CHECK(kernels(scheduled(
            make_graph("e", {output("y", x | butter(4, 30_Hz, highpass) | ellip(8, 0.5_dB, 70_dB, 23.5_kHz))}), 8,
            DType::f32, passes::TargetKind::cpu, 48000)) == 1);
  // A live chain's precision is decided over its parameters' ranges: it stays whole.
  ir::Graph live = test::w1_graph();
  for (ir::NodeId id = 0; id < live.size(); ++id) live.node(id).live = true;
  CHECK(kernels(scheduled(live, 8, DType::f32)) == 1);
}

TEST_CASE("on a GPU the split is inside the chain: its float64 sections first, state_precision mixed") {
  ir::Graph graph = scheduled(test::w1_graph(), 8, DType::f32, passes::TargetKind::cuda);
  auto chains = test::chains_of(graph);
  REQUIRE(chains.size() == 1);
  const ir::Chain& chain = *chains[0];
  CHECK(chain.state_precision == ir::StatePrecision::mixed);
  REQUIRE(std::holds_alternative<ir::SosCascade>(chain.stages[0]));
  const auto& hot = std::get<ir::SosCascade>(chain.stages[0]);
  CHECK(hot.sections.size() == 6);
  CHECK(design::max_pole_radius(hot.sections) >= 0.99);
  ir::Chain rest = chain;
  rest.stages.erase(rest.stages.begin());
  CHECK(sections_of(rest) == 9);
  CHECK(max_radius(rest) < 0.99);
  CHECK(chain.reason.find("float64 state for the first 6 of 15 sections (pole radius 0.999") != std::string::npos);
  // The precision of the first chain of `g` (kept alive here: chains_of points into it).
  auto precision = [](const ir::Graph& g) { return test::chains_of(g).at(0)->state_precision; };
  // No cost to weigh: the same kernel makes the same pass over the signal. One channel too.
  CHECK(precision(scheduled(test::w1_graph(), 1, DType::f32, passes::TargetKind::cuda)) == ir::StatePrecision::mixed);
  // Where the float32 part would not keep float64 quality (W1's lowpasses at 48 kHz: 5.9e-7),
  // after a tanh, on float64 signals and for live chains, the chain stays whole.
  CHECK(precision(scheduled(test::w1_graph(), 8, DType::f32, passes::TargetKind::cuda, 48000)) ==
        ir::StatePrecision::f64);
  Flow x = input("x");
  ir::Graph after_tanh = scheduled(
      make_graph("t", {output("y", x | butter(5, 5_kHz) | tanh() | butter(4, 20_Hz, highpass))}), 8, DType::f32,
      passes::TargetKind::cuda);
  CHECK(precision(after_tanh) == ir::StatePrecision::f64);
  // A FIR or a lookahead limiter after the sections would read its float64 taps and rings as
  // float at every tap: the chain stays whole. A compressor without lookahead does not.
  for (const char* tail : {"fir", "limiter", "compressor"}) {
    CAPTURE(tail);
    Flow hot = x | butter(2, 5_kHz) | butter(2, 5_Hz);
    Flow y = std::string(tail) == "fir"       ? hot | fir({0.25, 0.5, 0.25})
             : std::string(tail) == "limiter" ? hot | limiter(-1_dB, 50_ms, 1_ms)
                                              : hot | compressor(-20_dB, 4, 10_ms, 100_ms);
    ir::Graph g = scheduled(make_graph("tail", {output("y", y)}), 2, DType::f32, passes::TargetKind::cuda, 48000);
    CHECK(precision(g) == (std::string(tail) == "compressor" ? ir::StatePrecision::mixed : ir::StatePrecision::f64));
  }
  CHECK(precision(scheduled(test::w1_graph(), 8, DType::f64, passes::TargetKind::cuda)) == ir::StatePrecision::signal);
  ir::Graph live = test::w1_graph();
  for (ir::NodeId id = 0; id < live.size(); ++id) live.node(id).live = true;
  CHECK(precision(scheduled(live, 8, DType::f32, passes::TargetKind::cuda)) == ir::StatePrecision::f64);
}

TEST_CASE("the split_error threshold bounds the float32 part, and 0 turns the split off") {
  // The scheduled W1 (a graph, so that its chains outlive the call).
  auto run = [](passes::TargetKind target, const char* split_error) {
    DiagnosticEngine diags;
    passes::PassContext context{diags, {44100, 8, DType::f32}};
    context.target = {target, 32, 2};
    REQUIRE_FALSE(context.thresholds.set("split_error", split_error));
    auto result = passes::run_pipeline(test::w1_graph(), context);
    REQUIRE(result);
    return std::move(*result);
  };
  // W1's lowpasses measure 4.1e-7 at 44.1 kHz: split at the default 5e-7, not at 4e-7 or 0.
  CHECK(kernels(run(passes::TargetKind::cpu, "5e-7")) == 2);
  CHECK(kernels(run(passes::TargetKind::cpu, "4e-7")) == 1);
  CHECK(kernels(run(passes::TargetKind::cpu, "0")) == 1);
  const ir::Graph gpu_split = run(passes::TargetKind::cuda, "5e-7"), gpu_whole = run(passes::TargetKind::cuda, "0");
  CHECK(test::chains_of(gpu_split).at(0)->state_precision == ir::StatePrecision::mixed);
  CHECK(test::chains_of(gpu_whole).at(0)->state_precision == ir::StatePrecision::f64);
  passes::StrategyThresholds t;
  CHECK(t.set("split_error", "-1"));  // a message
}

TEST_CASE("on the CPU the split needs its float32 part to run in float32") {
  // The float32 chain chooses its own precision, from its sections' error alone: where that
  // says float64 (here every float32 error is too much), splitting would add a pass and keep
  // float64's width, so W1 on 8 channels stays one float64 chain.
  auto run = [](const char* f64_state_error) {
    DiagnosticEngine diags;
    passes::PassContext context{diags, {44100, 8, DType::f32}};
    context.target = {passes::TargetKind::cpu, 32, 2};
    REQUIRE_FALSE(context.thresholds.set("f64_state_error", f64_state_error));
    auto result = passes::run_pipeline(test::w1_graph(), context);
    REQUIRE(result);
    return std::move(*result);
  };
  const ir::Graph strict = run("1e-12");
  auto chains = test::chains_of(strict);
  REQUIRE(chains.size() == 1);
  CHECK(chains[0]->state_precision == ir::StatePrecision::f64);
  CHECK(sections_of(*chains[0]) == 15);
  const ir::Graph usual = run("3e-5");
  auto parts = test::chains_of(usual);
  REQUIRE(parts.size() == 2);
  CHECK(parts[1]->state_precision == ir::StatePrecision::signal);
}

TEST_CASE("split chains compute what the reference interpreter does") {
  // Against the float64 interpreter on 16 channels of noise, relative RMS: the split chain at
  // the bound of a float32 chain with float64 state (docs/errors.md: the output rounding,
  // 2^-24, and float32 sections far from the unit circle).
  // (Eight float32 sections beside two float64 ones: enough for the split to pay on 16 channels.)
  for (ir::Graph graph : {make_graph("w4x", {output("y", input("x") | butter(4, 80_Hz, highpass) | butter(8, 12_kHz) |
                                                          butter(8, 11_kHz))}),
                          make_graph("tanh", {output("y", input("x") | butter(4, 30_Hz, highpass) | butter(8, 12_kHz) |
                                                          butter(8, 11_kHz) | gain(0.5) | tanh())})}) {
    CAPTURE(graph.name);
    test::CompiledCpu compiled = test::compile_cpu(graph, 16, DType::f32, 48000);  // splits with AVX2 and AVX-512 lanes
    REQUIRE(test::chains_of(compiled.scheduled).size() == 2);
    std::vector<Signal> inputs = test::noise_inputs(1, 16, 48000, DType::f32, 7);
    std::vector<Signal> f32_inputs;
    for (const Signal& s : inputs) f32_inputs.push_back(s.converted(DType::f32));
    auto got = execute_cpu(compiled.scheduled, *compiled.kernels, f32_inputs);
    REQUIRE(got);
    DiagnosticEngine diags;
    auto want = run_reference(compiled.designed, 48000, inputs, diags);
    REQUIRE(want);
    double error = test::relative_rms_error(*got, *want);
    INFO("relative RMS error " << error);
    CHECK(error < 1e-6);
  }
}

TEST_CASE("in time chunks the split pays on few channels: W1's chain on one and two") {
  // Time chunks fill the lanes whatever the channels, so the float32 sections run at twice
  // float64's width, and the slow sections' fix-up leaves them out (one thread, split against
  // whole: 1.6-2.0x on one channel x 10 s). Shorter signals run a wavefront: whole.
  for (int channels : {1, 2}) {
    CAPTURE(channels);
    DiagnosticEngine diags;
    passes::PassContext context{diags, {44100, channels, DType::f32}};
    context.target = {passes::TargetKind::cpu, 32, 2};
    context.binding.length_samples = 441000;
    auto ten_seconds = passes::run_pipeline(test::w1_graph(), context);
    REQUIRE(ten_seconds);
    auto chains = test::chains_of(*ten_seconds);
    REQUIRE(chains.size() == 2);
    CHECK(chains[0]->state_precision == ir::StatePrecision::f64);
    CHECK(sections_of(*chains[0]) == 6);
    for (const ir::Chain* chain : chains) CHECK(chain->strategy == ir::IirStrategy::chunked_scan);
  }
  DiagnosticEngine diags;
  passes::PassContext context{diags, {44100, 1, DType::f32}};
  context.target = {passes::TargetKind::cpu, 32, 2};
  context.binding.length_samples = 44100;
  auto one_second = passes::run_pipeline(test::w1_graph(), context);
  REQUIRE(one_second);
  REQUIRE(test::chains_of(*one_second).size() == 1);
  CHECK(test::chains_of(*one_second)[0]->strategy == ir::IirStrategy::section_wavefront);
  // A graph with a loop runs in pieces on the CPU, none of its chains in time chunks: W1's
  // chain beside an echo is weighed as a wavefront, as it runs, and stays whole.
  auto with_loop = frontend::compile_fx_source(R"(graph w1loop
input x : 1
e = x + 0.5 * (e | delay(250 ms) | lowpass(3 kHz))
output y = x | cheby1(4, 0.1 dB, 20 Hz, highpass) | cheby1(4, 0.1 dB, 60 Hz, highpass) | cheby1(4, 0.1 dB, 65 Hz, highpass) | butter(5, 5000 Hz) | butter(5, 4900 Hz) | butter(5, 4850 Hz)
output z = e
)",
                                               "w1loop.fx", diags);
  REQUIRE_MESSAGE(with_loop, diags.str());
  context.binding.length_samples = 441000;
  auto scheduled_loop = passes::run_pipeline(*with_loop, context);
  REQUIRE(scheduled_loop);
  int f64_chains = 0;
  for (const ir::Chain* chain : test::chains_of(*scheduled_loop))
    if (chain->state_precision == ir::StatePrecision::f64) {
      ++f64_chains;
      CHECK(sections_of(*chain) == 15);
      CHECK(chain->strategy == ir::IirStrategy::section_wavefront);
    }
  CHECK(f64_chains == 1);
  // Beside a fused loop, the graph is 2 steps and runs whole: W1's chain on one channel would
  // split in time chunks, but a split is a third step, which would put the graph in pieces
  // (passes::cpu_runs_in_pieces) and cost both parts their chunks (1 ch x 120 s, one thread:
  // 106 ms split in pieces, against 59 ms whole in time chunks). It stays whole.
  auto with_fused_loop = frontend::compile_fx_source(R"(graph w1fused
input x : 1
h = x | cheby1(4, 0.1 dB, 20 Hz, highpass) | cheby1(4, 0.1 dB, 60 Hz, highpass) | cheby1(4, 0.1 dB, 65 Hz, highpass) | butter(5, 5000 Hz) | butter(5, 4900 Hz) | butter(5, 4850 Hz)
y = h + 0.5 * (y | delay(1 ms) | lowpass(3 kHz))
output y
)",
                                                     "w1fused.fx", diags);
  REQUIRE_MESSAGE(with_fused_loop, diags.str());
  auto scheduled_fused = passes::run_pipeline(*with_fused_loop, context);
  REQUIRE(scheduled_fused);
  CHECK_FALSE(passes::cpu_runs_in_pieces(*scheduled_fused));
  const auto fused_chains = test::chains_of(*scheduled_fused);
  REQUIRE(fused_chains.size() == 2);  // W1's chain, whole, and the fused loop
  CHECK(sections_of(*fused_chains[0]) == 15);
  CHECK(fused_chains[0]->strategy == ir::IirStrategy::chunked_scan);
}

TEST_CASE("the float32 part keeps float64 quality where it runs: after the float64 sections") {
  // A graph of the random precision test (float32_precision_test.cpp) at 192 kHz: a wide
  // band-stop near Nyquist measures within 5e-7 in float32 on noise (its output alone is near
  // silence, under the measurement's floor), but not on the output of the 433 Hz lowpass the
  // split would put before it (1.7e-4 against the interpreter, split).
  Flow x = input("x");
  const ir::Graph graph = make_graph(
      "r", {output("y", x | cheby2(3, Level{56.770581648814144}, Band{Frequency{37286.23444618507}, Frequency{94080}},
                                   design::BandType::bandstop) |
                             butter(8, Frequency{433.14985919831656}))});
  constexpr double fs = 192000;
  constexpr std::int64_t length = 48000;
  auto schedule = [&](const char* split_error) {
    DiagnosticEngine diags;
    passes::PassContext context{diags, {fs, 1, DType::f32}};
    context.target = {passes::TargetKind::cpu, 32, 2};
    context.binding.length_samples = length;
    REQUIRE_FALSE(context.thresholds.set("split_error", split_error));
    auto result = passes::run_pipeline(graph, context);
    REQUIRE(result);
    return std::move(*result);
  };
  // Allowed any error, it splits (one channel in time chunks: it would pay), and shows why it
  // must not: the same sections measure within the bound alone and far over it where they run.
  const ir::Graph loose = schedule("1");
  auto parts = test::chains_of(loose);
  REQUIRE(parts.size() == 2);
  auto sections = [](const ir::Chain& chain) {
    std::vector<design::Section> all;
    for (const ir::Stage& s : chain.stages)
      if (auto* sos = std::get_if<ir::SosCascade>(&s)) all.insert(all.end(), sos->sections.begin(), sos->sections.end());
    return all;
  };
  const double alone = passes::float32_state_error(sections(*parts[1]));
  const double after = passes::float32_state_error_after(sections(*parts[0]), sections(*parts[1]));
  MESSAGE("the band-stop in float32: " << alone << " on noise, " << after << " after the lowpass");
  CHECK(alone <= 5e-7);
  CHECK(after > 5e-7);
  // At the default bound it stays whole, and computes what the interpreter does.
  const ir::Graph kept = schedule("5e-7");
  REQUIRE(test::chains_of(kept).size() == 1);
  DiagnosticEngine diags;
  KernelCache cache("");
  auto kernels = cache.cpu_kernels(kept, diags);
  REQUIRE(kernels);
  std::vector<Signal> inputs = test::noise_inputs(1, 1, static_cast<std::size_t>(length), DType::f32, 11);
  std::vector<Signal> narrow{inputs[0].converted(DType::f32)};
  auto got = execute_cpu(kept, **kernels, narrow);
  REQUIRE(got);
  passes::PassContext designing{diags, {fs, 1, DType::f64}};
  auto designed = passes::run_pipeline(graph, designing, {.passes = {"infer-types", "design-filters"}});
  REQUIRE(designed);
  auto want = run_reference(*designed, fs, inputs, diags);
  REQUIRE(want);
  const double error = test::relative_rms_error(*got, *want);
  INFO("relative RMS error " << error);
  CHECK(error < 1e-6);
}

}  // namespace fxc
