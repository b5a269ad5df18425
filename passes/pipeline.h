// SPDX-License-Identifier: Apache-2.0
// The pass pipeline: the list of passes, and a runner that verifies the graph after every
// pass and can print it after each one or time each one.
#pragma once

#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

using PassFunction = ir::Graph (*)(const ir::Graph&, PassContext&);

struct PassInfo {
  std::string_view name;         ///< command-line name, e.g. "design-filters"
  PassFunction run;
  std::string_view description;  ///< one line, for --help and docs
};

/// Every pass, in default pipeline order.
std::span<const PassInfo> all_passes();
const PassInfo* find_pass(std::string_view name);

struct PipelineOptions {
  /// The passes to run, by name; empty means the default pipeline.
  std::vector<std::string> passes;
  bool print_after_all = false;  ///< print the IR after each pass ("(unchanged)" if same)
  bool time_passes = false;      ///< print a table of per-pass wall times at the end
  bool print_locations = true;   ///< with print_after_all: include loc(...) in the IR
  std::ostream* log = nullptr;   ///< where printing goes; required when either flag is set
};

/// Runs the passes in order, verifying after each. Returns nullopt after the first pass that
/// reports an error or leaves an invalid graph (the diagnostics say why). An unknown pass
/// name is reported as an error before anything runs.
std::optional<ir::Graph> run_pipeline(const ir::Graph& graph, PassContext& context,
                                      const PipelineOptions& options = {});

}  // namespace fxc::passes
