// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the whole compiler on a .fx file, as `fxc run --target ref` drives it: the
// frontend, the pass pipeline (bound to 48000 Hz, 1 channel, float64), the optimized graph's
// text, JSON and dot, and the reference interpreter on 64 samples, for both the designed and
// the optimized graph.
//
// Checks: no crash, no hang, no sanitizer report, no exception escaping (an InternalError is a
// bug); and the property the golden tier checks on every printed IR: the optimized graph's
// text parses back and prints to the same text. Outputs are not compared: a fuzzed graph may
// legitimately be unstable or overflow.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/fx_file.h"
#include "fuzz/fuzz_support.h"
#include "ir/export.h"
#include "ir/parse.h"
#include "ir/print.h"
#include "passes/pipeline.h"
#include "runtime/reference_interpreter.h"

namespace {

constexpr double kSampleRateHz = 48000;
constexpr std::size_t kSamples = 64;

// One signal per input of `graph`, with the channel count the input declares (1 where it
// declares none, as the binding says): an impulse, then a ramp, so filters see both.
std::vector<fxc::Signal> make_inputs(const fxc::ir::Graph& graph) {
  std::vector<fxc::Signal> inputs;
  for (fxc::ir::NodeId id : graph.inputs()) {
    const int declared = graph.node(id).type.channels;
    fxc::Signal s(static_cast<std::size_t>(declared > 0 ? declared : 1), kSamples);
    for (std::size_t c = 0; c < s.channels(); ++c) {
      auto x = s.f64(c);
      x[0] = 1.0;
      for (std::size_t n = 1; n < kSamples; ++n) x[n] = static_cast<double>(n) / kSamples - 0.5;
    }
    inputs.push_back(std::move(s));
  }
  return inputs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fxc;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  DiagnosticEngine diags;
  auto graph = frontend::compile_fx_source(text, "fuzz.fx", diags);
  if (!graph) return 0;

  passes::PassContext context{diags, {kSampleRateHz, 1, DType::f64}};
  auto optimized = passes::run_pipeline(*graph, context);
  (void)diags.str();

  const std::vector<Signal> inputs = make_inputs(*graph);
  DiagnosticEngine run_diags;
  auto reference = run_reference(*graph, kSampleRateHz, inputs, run_diags);
  (void)run_diags.str();

  if (!optimized) return 0;
  // As `fxc dump --format json` does: bytes that are not UTF-8 are replaced.
  (void)ir::to_json(*optimized).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  (void)ir::to_dot(*optimized);
  const std::string printed = ir::to_text(*optimized);
  DiagnosticEngine parse_diags;
  auto reparsed = ir::parse_graph(printed, "optimized.ir", parse_diags);
  if (!reparsed)
    fuzz::property_failed("the optimized graph's text does not parse", printed, parse_diags.str());
  const std::string printed_again = ir::to_text(*reparsed);
  if (printed_again != printed)
    fuzz::property_failed("print, parse, print of the optimized graph differs", printed,
                          printed_again);

  // The optimized graph is bound to one channel per input; interpret it on such inputs.
  std::vector<Signal> mono;
  for (std::size_t i = 0; i < optimized->inputs().size(); ++i) {
    const int channels = optimized->node(optimized->inputs()[i]).type.channels;
    mono.emplace_back(static_cast<std::size_t>(channels > 0 ? channels : 1), kSamples);
    mono.back().f64(0)[0] = 1.0;
  }
  (void)interpret(*optimized, mono);
  return 0;
}
