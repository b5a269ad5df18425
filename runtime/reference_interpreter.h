// SPDX-License-Identifier: Apache-2.0
// The reference interpreter: a plain float64 evaluator of a designed graph, one channel at a
// time, in the most obviously correct way. It is the oracle every backend is tested against.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/signal.h"
#include "support/diagnostics.h"
#include "support/expected.h"

namespace fxc {

/// Evaluates `graph`, which must contain no specification nodes (run design_filters first).
/// `inputs` follow the order of graph.inputs(); all have the same length, and each has the
/// channel count its input node declares (any count where it declares none). float32 inputs
/// are upcast. The outputs (float64) follow the order of graph.outputs().
Expected<std::vector<Signal>, std::string> interpret(const ir::Graph& graph,
                                                     std::span<const Signal> inputs);

/// Binds `graph` to the inputs' channel counts and `sample_rate_hz`, designs its filters and
/// interprets it. Errors (bad parameters, mismatched inputs) go to `diags`.
std::optional<std::vector<Signal>> run_reference(const ir::Graph& graph, double sample_rate_hz,
                                                 std::span<const Signal> inputs,
                                                 DiagnosticEngine& diags);

}  // namespace fxc
