// SPDX-License-Identifier: Apache-2.0
// Helpers for before/after tests of single passes written as text IR.
#pragma once

#include <doctest/doctest.h>

#include "ir/parse.h"
#include "ir/print.h"
#include "ir/structural_equal.h"
#include "ir/verify.h"
#include "passes/pass_context.h"
#include "passes/pipeline.h"

namespace fxc::test {

inline ir::Graph parse_ir(const std::string& body) {
  DiagnosticEngine diags;
  auto g = ir::parse_graph("graph t\n" + body, "test.fxir", diags);
  REQUIRE_MESSAGE(g, diags.str());
  REQUIRE_MESSAGE(ir::verify(*g, diags), diags.str());
  return std::move(*g);
}

/// Runs the passes named in `passes` on `before` and checks the result equals `after`
/// structurally (within `tolerance` for numbers).
inline void check_passes(const std::vector<std::string>& passes, const std::string& before,
                         const std::string& after, double tolerance = 1e-15) {
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, 0, DType::f64}};
  auto result = passes::run_pipeline(parse_ir(before), context, {.passes = passes});
  REQUIRE_MESSAGE(result, diags.str());
  std::string why;
  CHECK_MESSAGE(ir::structurally_equal(*result, parse_ir(after), tolerance, &why),
                why << "\nafter the passes:\n"
                    << ir::to_text(*result, {.locations = false}));
}

}  // namespace fxc::test
