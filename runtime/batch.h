// SPDX-License-Identifier: Apache-2.0
// Batches: many signals through one compiled graph, one dispatch per kernel for the lot.
#pragma once

#include <optional>
#include <vector>

#include "codegen/cpu/cpu_compiler.h"
#include "ir/graph.h"
#include "runtime/signal.h"
#include "support/diagnostics.h"
#include "support/expected.h"

namespace fxc {

/// One item of a batch: a signal for each graph input (same length and channel counts within
/// the item; items may differ in length).
using BatchItem = std::vector<Signal>;

// A batch runs every item through a graph at once (driver/run_batch.h compiles it): the
// items' channels laid side by side, as if the graph had items x channels channels, the
// shorter items padded with zeros to the longest (every stage is causal, so the padding never
// reaches an item's own samples), and each chain runs as one kernel dispatch over all of them.
// These are the steps around the compile, shared by the CPU and the CUDA batch.

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

/// Runs `items` through `scheduled` (widen_batch's graph after the pipeline) and its kernels
/// from zero state, `longest` samples: the kernels read and write the items' own memory;
/// only a shorter item, or one of another dtype, is copied (padded), and its outputs cut from
/// scratch. Returns each item's outputs, cut to its length.
Expected<std::vector<std::vector<Signal>>, std::string> execute_cpu_batch(const ir::Graph& scheduled,
                                                                          const codegen::CpuKernels& kernels,
                                                                          const std::vector<BatchItem>& items,
                                                                          std::size_t longest);

}  // namespace fxc
