// SPDX-License-Identifier: Apache-2.0
// Properties of the whole pipeline: on 500 seeded random graphs the optimized graph computes
// what the designed, unoptimized graph computes; fusion collapses what it should.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "expected_text.h"
#include "frontend/dsl.h"
#include "ir/print.h"
#include "passes/pipeline.h"
#include "random_graphs.h"
#include "runtime/reference_interpreter.h"

namespace fxc {
namespace {

using namespace fxc::literals;

double rms(const Signal& s) {
  double sum = 0;
  for (std::size_t c = 0; c < s.channels(); ++c)
    for (double v : s.f64(c)) sum += v * v;
  return std::sqrt(sum / std::max<std::size_t>(1, s.channels() * s.samples()));
}

std::optional<ir::Graph> run(const ir::Graph& g, const std::vector<std::string>& passes,
                             int channels, DiagnosticEngine& diags) {
  passes::PassContext context{diags, {48000.0, channels, DType::f64}};
  return passes::run_pipeline(g, context, {.passes = passes});
}

TEST_CASE("the optimized graph computes what the designed graph computes (500 random graphs)") {
  // Tolerance: 1e-9 relative RMS. Fusion keeps the arithmetic of each section; only gain
  // folding, tap convolution and weight merging round differently, by a few ulps per
  // operation. The floor (1e-3 of the input's RMS) keeps outputs that cancel to almost
  // nothing (a - a) from turning rounding noise into a large relative error.
  int graphs_with_fusion = 0;
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    CAPTURE(seed);
    ir::Graph g = test::random_graph(seed);
    int channels = g.node(g.inputs()[0]).type.channels;
    DiagnosticEngine diags;
    auto designed = run(g, {"infer-types", "design-filters"}, channels, diags);
    REQUIRE_MESSAGE(designed, diags.str() << ir::to_text(g));
    auto optimized = run(g, {}, channels, diags);
    REQUIRE_MESSAGE(optimized, diags.str());
    if (optimized->size() < designed->size()) ++graphs_with_fusion;

    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> noise(-1, 1);
    std::vector<Signal> inputs;
    for (std::size_t i = 0; i < designed->inputs().size(); ++i) {
      Signal s(channels, 300);
      for (int c = 0; c < channels; ++c)
        for (double& v : s.f64(c)) v = noise(rng);
      inputs.push_back(std::move(s));
    }
    auto want = interpret(*designed, inputs);
    auto got = interpret(*optimized, inputs);
    REQUIRE(want);
    REQUIRE(got);
    REQUIRE(want->size() == got->size());
    for (std::size_t o = 0; o < want->size(); ++o) {
      Signal diff = (*want)[o];
      for (std::size_t c = 0; c < diff.channels(); ++c)
        for (std::size_t n = 0; n < diff.samples(); ++n) diff.f64(c)[n] -= (*got)[o].f64(c)[n];
      double floor = 1e-3 * rms(inputs[0]);
      CHECK_MESSAGE(rms(diff) <= 1e-9 * std::max(rms((*want)[o]), floor),
                    "output " << o << " differs: " << rms(diff) << " vs " << rms((*want)[o])
                              << "\n" << ir::to_text(*designed, {.locations = false}));
    }
  }
  CHECK(graphs_with_fusion > 250);  // the generator exercises the passes, not just the oracle
}

std::size_t count_kind(const ir::Graph& g, std::string_view kind) {
  std::size_t n = 0;
  for (const ir::Node& node : g.nodes()) n += ir::kind_name(node.op) == kind;
  return n;
}

TEST_CASE("a cascade of D IIR filters is one node, for D = 1..64") {
  for (int d = 1; d <= 64; ++d) {
    CAPTURE(d);
    Chain chain = butter(2, Frequency{100.0 + d});
    std::size_t sections = 1;
    for (int i = 1; i < d; ++i) {
      chain = chain | (i % 2 ? peaking(Frequency{200.0 * i}, 1.0, 1_dB) : butter(3, Frequency{5000.0 + i}));
      sections += i % 2 ? 1 : 2;
    }
    Flow x = input("x", 2);
    DiagnosticEngine diags;
    auto fused = run(make_graph("cascade", {output("y", x | chain)}),
                     {"infer-types", "design-filters", "fuse-iir"}, 2, diags);
    REQUIRE_MESSAGE(fused, diags.str());
    REQUIRE(count_kind(*fused, "sos") == 1);
    for (const ir::Node& n : fused->nodes())
      if (auto* s = std::get_if<ir::SosCascade>(&n.op)) {
        CHECK(s->sections.size() == sections);
        CHECK(n.origins.size() == (d == 1 ? 0u : static_cast<std::size_t>(d)));
      }
    auto kernel = run(make_graph("cascade", {output("y", x | chain)}), {}, 2, diags);
    REQUIRE(kernel);
    CHECK(count_kind(*kernel, "chain") == 1);
  }
}

TEST_CASE("a tanh in the middle gives two IIR runs around it, in one kernel") {
  Flow x = input("x", 1);
  ir::Graph g = make_graph(
      "t", {output("y", x | butter(2, 1_kHz) | lowpass(2_kHz) | tanh() | highpass(50_Hz) |
                            butter(4, 30_Hz, highpass))});
  DiagnosticEngine diags;
  auto fused = run(g, {"infer-types", "design-filters", "fuse-iir"}, 1, diags);
  REQUIRE(fused);
  CHECK(count_kind(*fused, "sos") == 2);
  auto kernel = run(g, {}, 1, diags);
  REQUIRE(kernel);
  REQUIRE(count_kind(*kernel, "chain") == 1);
  for (const ir::Node& n : kernel->nodes())
    if (auto* c = std::get_if<ir::Chain>(&n.op)) {
      REQUIRE(c->stages.size() == 3);
      CHECK(std::holds_alternative<ir::Tanh>(c->stages[1]));
      CHECK(std::get<ir::SosCascade>(c->stages[0]).sections.size() == 2);
      CHECK(std::get<ir::SosCascade>(c->stages[2]).sections.size() == 3);
    }
}

TEST_CASE("a fan-out point splits kernels") {
  Flow x = input("x", 1);
  Flow shared = x | butter(2, 1_kHz);
  ir::Graph g = make_graph("f", {output("a", shared | butter(2, 100_Hz)), output("b", shared | tanh())});
  DiagnosticEngine diags;
  auto kernel = run(g, {}, 1, diags);
  REQUIRE(kernel);
  CHECK(count_kind(*kernel, "chain") == 3);
  CHECK(count_kind(*kernel, "sos") == 0);
}

}  // namespace
}  // namespace fxc
