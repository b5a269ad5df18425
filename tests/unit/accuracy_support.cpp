// SPDX-License-Identifier: Apache-2.0
#include "accuracy_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "expected_text.h"
#include "passes/pipeline.h"
#include "worse.h"

using fxc::test::worse;

namespace fxc::test {

std::vector<Signal> noise_inputs(std::size_t inputs, int channels, std::size_t samples, DType dtype,
                                 std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Signal> out;
  for (std::size_t i = 0; i < inputs; ++i) {
    Signal s(static_cast<std::size_t>(channels), samples);
    for (int c = 0; c < channels; ++c)
      for (double& v : s.f64(static_cast<std::size_t>(c))) v = u(rng);
    out.push_back(dtype == DType::f32 ? s.converted(DType::f32).converted(DType::f64) : s);
  }
  return out;
}

double relative_rms_error(const std::vector<Signal>& got, const std::vector<Signal>& want, double floor) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (std::size_t o = 0; o < want.size(); ++o) {
    REQUIRE(got[o].channels() == want[o].channels());
    REQUIRE(got[o].samples() == want[o].samples());
    for (std::size_t c = 0; c < want[o].channels(); ++c) {
      double err = 0, ref = 0;
      for (std::size_t n = 0; n < want[o].samples(); ++n) {
        double d = got[o].at(c, n) - want[o].at(c, n);
        err += d * d;
        ref += want[o].at(c, n) * want[o].at(c, n);
      }
      if (want[o].samples() == 0) continue;
      double count = static_cast<double>(want[o].samples());
      // A NaN anywhere makes the error NaN, and the worst NaN.
      double e = std::sqrt(err / count) / std::max(std::sqrt(ref / count), floor);
      worst = worse(worst, e);
    }
  }
  return worst;
}

CompiledCpu compile_cpu(const ir::Graph& graph, int channels, DType dtype, std::int64_t length,
                        const passes::StrategyThresholds& thresholds, KernelCache* cache) {
  DiagnosticEngine diags;
  passes::PassContext oracle{diags, {48000.0, channels, DType::f64}};
  auto designed = passes::run_pipeline(graph, oracle, {.passes = {"infer-types", "design-filters"}});
  REQUIRE_MESSAGE(designed, diags.str());
  passes::PassContext context{diags, {48000.0, channels, dtype}};
  context.binding.length_samples = length;
  context.thresholds = thresholds;
  auto scheduled = passes::run_pipeline(graph, context);
  REQUIRE_MESSAGE(scheduled, diags.str());
  KernelCache memory_only("");
  auto kernels = (cache ? cache : &memory_only)->cpu_kernels(*scheduled, diags);
  REQUIRE(kernels);
  return {std::move(*designed), std::move(*scheduled), *kernels};
}

std::vector<const ir::Chain*> chains_of(const ir::Graph& scheduled) {
  std::vector<const ir::Chain*> out;
  for (const ir::Node& node : scheduled.nodes())
    if (const auto* chain = std::get_if<ir::Chain>(&node.op)) out.push_back(chain);
  return out;
}

}  // namespace fxc::test
