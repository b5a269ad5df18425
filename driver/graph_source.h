// SPDX-License-Identifier: Apache-2.0
// Where a Program's graph comes from (.fx text or DSL expressions), kept so that the graph can
// be lowered again for new live-parameter values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <fxc/dsl.h>

#include "frontend/parameters.h"
#include "ir/graph.h"
#include "support/diagnostics.h"

namespace fxc::driver {

class GraphSource {
 public:
  /// `.fx` text named `file` in diagnostics. Parse errors and bad ranges go to `diags`.
  static std::optional<GraphSource> from_fx(std::string text, std::string file, DiagnosticEngine& diags);
  /// DSL expressions; a parameter name declared twice differently is an error.
  static std::optional<GraphSource> from_dsl(std::string name, std::vector<Output> outputs,
                                             DiagnosticEngine& diags);

  /// The live parameters, in declaration order.
  const std::vector<ParamDecl>& params() const { return params_; }

  /// The verified graph with the parameters at `values` (the others at their declared
  /// values). Errors (a value a stage refuses is found later, by design_filters) go to `diags`.
  std::optional<ir::Graph> lower(const ParamValues& values, DiagnosticEngine& diags) const;

 private:
  std::string fx_text_, file_;
  std::string graph_name_;
  std::vector<Output> outputs_;
  bool is_dsl_ = false;
  std::vector<ParamDecl> params_;
};

}  // namespace fxc::driver
