// SPDX-License-Identifier: Apache-2.0
#include "passes/pipeline.h"

#include <chrono>
#include <fmt/format.h>
#include <ostream>

#include "ir/print.h"
#include "ir/verify.h"
#include "passes/design_filters.h"
#include "passes/eliminate_dead_nodes.h"
#include "passes/fold_gains.h"
#include "passes/fuse_chains.h"
#include "passes/fuse_fir_chains.h"
#include "passes/fuse_iir_cascades.h"
#include "passes/fuse_loops.h"
#include "passes/infer_types.h"
#include "passes/merge_identical_nodes.h"
#include "passes/select_strategy.h"
#include "passes/split_precision.h"
#include "support/strings.h"
#include "support/trace.h"

namespace fxc::passes {
namespace {

// The pipeline, in order. Reads as the recipe of compilation.
constexpr PassInfo kPasses[] = {
    {"infer-types", infer_types, "bind channel counts and the sample type"},
    {"design-filters", design_filters, "design filter specifications at the sample rate"},
    {"eliminate-dead-nodes", eliminate_dead_nodes, "remove nodes no output depends on"},
    {"merge-identical", merge_identical_nodes, "compute identical branches once"},
    {"fold-gains", fold_gains, "fold constant gains into filters, sums and each other"},
    {"fuse-iir", fuse_iir_cascades, "merge IIR filters in series into one SOS cascade"},
    {"fuse-fir", fuse_fir_chains, "merge FIR filters in series by convolving their taps"},
    {"fuse-chains", fuse_chains, "make each linear run of stages one kernel"},
    {"fuse-loops", fuse_loops, "run a loop through one mix as one kernel, sample by sample"},
    {"split-precision", split_precision, "run float32 chains' float64-state sections apart: a chain of their own (CPU), a float64 first stage (GPU)"},
    {"select-strategy", select_strategy, "choose how each kernel runs, and say why"},
};

}  // namespace

std::span<const PassInfo> all_passes() { return kPasses; }

const PassInfo* find_pass(std::string_view name) {
  for (const PassInfo& p : kPasses)
    if (p.name == name) return &p;
  return nullptr;
}

std::optional<ir::Graph> run_pipeline(const ir::Graph& graph, PassContext& context,
                                      const PipelineOptions& options) {
  std::vector<const PassInfo*> chosen;
  if (options.passes.empty()) {
    for (const PassInfo& p : kPasses) chosen.push_back(&p);
  } else {
    std::vector<std::string_view> names;
    for (const PassInfo& p : kPasses) names.push_back(p.name);
    for (const std::string& name : options.passes) {
      if (const PassInfo* p = find_pass(name)) {
        chosen.push_back(p);
        continue;
      }
      Diagnostic& d = context.diags.error({}, "unknown pass '" + name + "'", "fxc-passes");
      if (auto near = nearest_name(name, names))
        d.notes.push_back({Severity::note, {}, "did you mean '" + *near + "'?", "", {}});
    }
    if (context.diags.has_errors()) return std::nullopt;
  }

  using Clock = std::chrono::steady_clock;
  std::vector<std::pair<std::string_view, double>> times;
  ir::Graph current = graph;
  std::optional<ir::Graph> result;
  bool ok = true;
  ir::PrintOptions print{.locations = options.print_locations};
  if (options.print_after_all && options.log)
    *options.log << "// -----// IR before the pipeline //----- //\n" << ir::to_text(current, print);
  for (const PassInfo* pass : chosen) {
    std::size_t errors = context.diags.error_count();
    auto start = Clock::now();
    std::optional<TraceSpan> span;
    if (Trace::global().enabled())
      span.emplace(std::string(pass->name), "passes", Trace::Args{{"graph", graph.name}});
    ir::Graph next = pass->run(current, context);
    span.reset();
    times.emplace_back(pass->name, std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (context.diags.error_count() > errors || !ir::verify(next, context.diags)) {
      ok = false;
      break;
    }
    if (options.print_after_all && options.log) {
      std::string before = ir::to_text(current, print), after = ir::to_text(next, print);
      *options.log << "// -----// IR after " << pass->name << " //----- //\n"
                   << (before == after ? "(unchanged)\n" : after);
    }
    current = std::move(next);
  }
  if (options.time_passes && options.log) {
    double total = 0;
    for (const auto& [name, ms] : times) total += ms;
    *options.log << fmt::format("===-- pass execution timing --===\n{:>10}  {:>6}  {}\n", "ms",
                                "%", "pass");
    for (const auto& [name, ms] : times)
      *options.log << fmt::format("{:>10.3f}  {:>5.1f}%  {}\n", ms,
                                  total > 0 ? 100 * ms / total : 0.0, name);
    *options.log << fmt::format("{:>10.3f}  {:>5.1f}%  total\n", total, 100.0);
  }
  if (ok) result = std::move(current);
  return result;
}

}  // namespace fxc::passes
