// SPDX-License-Identifier: Apache-2.0
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
/// each chain runs as one kernel dispatch over all of them. The kernels read and write the
/// items' own memory: only a shorter item, or one of another dtype, is copied (padded), and
/// its outputs cut from scratch. Returns each item's outputs, cut to its length. Items must agree on channel counts. `request.channels` and `batch` are set
/// from the items.
std::optional<std::vector<std::vector<Signal>>> run_batch(const ir::Graph& graph,
                                                          const std::vector<BatchItem>& items,
                                                          CpuCompileRequest request,
                                                          DiagnosticEngine& diags);

// The steps of run_batch around the run, shared with the CUDA batch
// (runtime/cuda_executor.h, run_batch_cuda).

/// `graph` bound to the items' channel counts (declared counts checked) with every input's
/// channels multiplied by the number of items, and the longest item's length. Errors (items
/// that do not match the graph or each other) go to `diags`.
struct WideBatch {
  ir::Graph graph;
  std::size_t longest = 0;
};
std::optional<WideBatch> widen_batch(const ir::Graph& graph, const std::vector<BatchItem>& items,
                                     DiagnosticEngine& diags);

/// The items' signals side by side as channels (item b's channel c at b x channels + c), in
/// `dtype`, each padded with zeros to `longest`.
std::vector<Signal> lay_out_batch(const std::vector<BatchItem>& items, std::size_t longest, DType dtype);

/// The outputs of a run on lay_out_batch's signals, split back into each item's outputs cut
/// to its length.
std::vector<std::vector<Signal>> split_batch(const std::vector<Signal>& wide, const std::vector<BatchItem>& items);

}  // namespace fxc
