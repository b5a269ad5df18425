// SPDX-License-Identifier: Apache-2.0
// Where a Program's graph comes from (.fx text or DSL expressions), kept so that the graph can
// be lowered again for new live-parameter values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <fxc/dsl.h>
#include <fxc/program.h>

#include "frontend/fx_file.h"
#include "frontend/parameters.h"
#include "ir/graph.h"
#include "support/diagnostics.h"

namespace fxc::driver {

class GraphSource {
 public:
  /// `.fx` text named `file` in diagnostics, with `overrides` replacing constants' written
  /// values (`fxc run --set`, Options::settings). Parse errors, overrides that do not apply
  /// and bad ranges go to `diags`.
  static std::optional<GraphSource> from_fx(std::string text, std::string file,
                                            std::vector<frontend::ConstantOverride> overrides,
                                            DiagnosticEngine& diags);
  /// DSL expressions; a parameter name declared twice differently is an error.
  static std::optional<GraphSource> from_dsl(std::string name, std::vector<Output> outputs,
                                             DiagnosticEngine& diags);

  bool is_dsl() const { return is_dsl_; }
  /// The name of a graph `lowered` from this source: its own (`graph NAME`, the DSL's), else
  /// the .fx file name's stem ("eq" for "dir/eq.fx").
  std::string name_of(const ir::Graph& lowered) const;
  /// An engine that shows this source's lines under its diagnostics.
  DiagnosticEngine diagnostics() const;

  /// The live parameters, in declaration order.
  const std::vector<ParamDecl>& params() const { return params_; }

  /// The verified graph with the parameters at `values` (the others at their declared
  /// values). Errors (a value a stage refuses is found later, by design_filters) go to `diags`.
  std::optional<ir::Graph> lower(const ParamValues& values, DiagnosticEngine& diags) const;

 private:
  // from_fx on the calling thread's stack.
  static std::optional<GraphSource> from_fx_here(std::string text, std::string file,
                                                 std::vector<frontend::ConstantOverride> overrides,
                                                 DiagnosticEngine& diags);

  std::string fx_text_, file_;
  std::vector<frontend::ConstantOverride> overrides_;
  std::string graph_name_;
  std::vector<Output> outputs_;
  bool is_dsl_ = false;
  std::vector<ParamDecl> params_;
};

/// The public description of parameter `id` at `value`.
ParamInfo param_info(const ParamDecl& param, int id, double value);

/// `settings` (Options::settings: "NAME=VALUE") as constant overrides; throws Error for one
/// without '='.
std::vector<frontend::ConstantOverride> overrides_from(const std::vector<std::string>& settings);

}  // namespace fxc::driver
