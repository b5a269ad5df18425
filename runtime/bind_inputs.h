// SPDX-License-Identifier: Apache-2.0
// Binding a graph to the signals it will run on: their channel counts.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/signal.h"
#include "support/diagnostics.h"

namespace fxc {

/// `graph` with each input declared without a channel count given its signal's count. An
/// input declared with a count that differs from its signal's is reported at the
/// declaration, naming `sources[i]` (a file name) when given; signals of different lengths
/// are an error too.
std::optional<ir::Graph> bind_inputs(const ir::Graph& graph, std::span<const Signal> signals,
                                     DiagnosticEngine& diags,
                                     std::span<const std::string> sources = {});

}  // namespace fxc
