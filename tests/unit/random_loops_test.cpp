// SPDX-License-Identifier: Apache-2.0
// The property tests of version 2's loops and routing: random programs (random_graphs.h)
// through the passes (the optimized graph computes what the designed one does, on the
// sample-by-sample interpreter), compiled for the CPU (equal to the reference interpreter),
// streamed in random blocks (equal to the whole run) and batched (equal to each item alone).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <fxc/fxc.h>

#include "frontend/fx_file.h"
#include "passes/pipeline.h"
#include "random_graphs.h"
#include "runtime/reference_interpreter.h"
#include "worse.h"

using fxc::test::worse;

namespace fxc {
namespace {

Signal noise(int channels, std::size_t samples, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Signal s(static_cast<std::size_t>(channels), samples);
  for (int c = 0; c < channels; ++c)
    for (double& v : s.f64(static_cast<std::size_t>(c))) v = u(rng);
  return s;
}

// Largest |a - b| relative to max(largest |b|, floor).
double relative(const Signal& a, const Signal& b, double floor = 1e-3) {
  REQUIRE(a.channels() == b.channels());
  REQUIRE(a.samples() == b.samples());
  double worst = 0, scale = floor;
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t n = 0; n < a.samples(); ++n) {
      worst = worse(worst, std::abs(a.at(c, n) - b.at(c, n)));
      scale = std::max(scale, std::abs(b.at(c, n)));
    }
  return worst / scale;
}

std::optional<ir::Graph> through(const ir::Graph& g, std::vector<std::string> passes, int channels,
                                 DiagnosticEngine& diags) {
  passes::PassContext context{diags, {48000.0, channels, DType::f64}};
  return passes::run_pipeline(g, context, {.passes = std::move(passes)});
}

constexpr int kPrograms = 150;

TEST_CASE("random looped and routed programs: the passes keep what the designed graph computes") {
  int looped = 0, routed = 0;
  for (std::uint64_t seed = 1; seed <= kPrograms; ++seed) {
    std::string text = test::random_looped_program(seed);
    CAPTURE(text);
    DiagnosticEngine diags;
    auto g = frontend::compile_fx_source(text, "random.fx", diags);
    REQUIRE_MESSAGE(g, diags.str());
    int channels = g->node(g->inputs()[0]).type.channels;
    auto designed = through(*g, {"infer-types", "design-filters"}, channels, diags);
    auto optimized = through(*g, {}, channels, diags);
    REQUIRE_MESSAGE((designed && optimized), diags.str());
    for (const ir::Node& n : optimized->nodes()) {
      looped += ir::holds<ir::Feedback>(n);
      routed += ir::is_routing(n.op);
    }
    std::vector<Signal> inputs{noise(channels, 400, seed)};
    auto want = interpret(*designed, inputs);
    auto got = interpret(*optimized, inputs);
    REQUIRE_MESSAGE(want, want.error());
    REQUIRE_MESSAGE(got, got.error());
    REQUIRE(want->size() == got->size());
    for (std::size_t o = 0; o < want->size(); ++o) CHECK(relative((*got)[o], (*want)[o]) < 1e-9);
  }
  CHECK(looped > kPrograms / 2);  // the generator makes loops and routing, not just filters
  CHECK(routed > kPrograms / 2);
}

TEST_CASE("random looped and routed programs: compiled equals the reference and streams and batches equal single runs") {
  for (std::uint64_t seed = 1; seed <= kPrograms; ++seed) {
    std::string text = test::random_looped_program(seed);
    CAPTURE(text);
    Options cpu;
    cpu.sample_rate_hz = 48000;
    cpu.dtype = DType::f64;
    cpu.cache_directory = "none";
    Options reference = cpu;
    reference.target = Target::reference;
    Program program = Program::from_source(text, cpu);
    int channels = program.inputs()[0].channels;
    std::vector<Signal> x{noise(channels, 700, seed + 1000)};
    std::vector<Signal> want = Program::from_source(text, reference).run(x);
    std::vector<Signal> got = program.run(x);
    REQUIRE(got.size() == want.size());
    std::mt19937 rng(static_cast<unsigned>(seed));
    std::vector<Signal> blocks = program.run_in_blocks(x, std::uniform_int_distribution<std::size_t>(1, 90)(rng));
    std::vector<Signal> other{noise(channels, 500, seed + 2000)};
    auto batch = program.run_batch({x, other});
    std::vector<Signal> other_alone = program.run(other);
    for (std::size_t o = 0; o < want.size(); ++o) {
      CHECK(relative(got[o], want[o]) < 1e-10);
      CHECK(relative(blocks[o], got[o]) < 1e-13);
      CHECK(relative(batch[0][o], got[o]) < 1e-13);
      CHECK(relative(batch[1][o], other_alone[o]) < 1e-13);
    }
  }
}

}  // namespace
}  // namespace fxc
