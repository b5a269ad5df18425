// Batches: many signals through one compiled graph, one dispatch per kernel for the lot.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "runtime/compile_cpu.h"
#include "runtime/signal.h"
#include "support/diagnostics.h"

namespace fxc {

/// One item of a batch: a signal for each graph input (same length and channel counts within
/// the item; items may differ in length).
using BatchItem = std::vector<Signal>;

/// Runs every item through `graph` at once: the items' channels are laid side by side, as if
/// the graph had items x channels channels, the shorter items padded with zeros to the
/// longest (every stage is causal, so the padding never reaches an item's own samples), and
/// each chain runs as one kernel dispatch over all of them. Returns each item's outputs, cut
/// to its length. Items must agree on channel counts. `request.channels` and `batch` are set
/// from the items.
std::optional<std::vector<std::vector<Signal>>> run_batch(const ir::Graph& graph,
                                                          const std::vector<BatchItem>& items,
                                                          CpuCompileRequest request,
                                                          DiagnosticEngine& diags);

}  // namespace fxc
