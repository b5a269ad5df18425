// SPDX-License-Identifier: Apache-2.0
// Batches compiled and run: many signals through one graph, one dispatch (CPU) or launch
// (GPU) per kernel for the lot (runtime/batch.h lays them out).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "driver/compile_request.h"
#include "ir/graph.h"
#include "runtime/batch.h"
#include "runtime/gpu_device.h"
#include "support/diagnostics.h"

namespace fxc {

/// Runs every item through `graph` at once on the CPU: compiled for the items' channels side
/// by side and their longest length (`request.channels` and `batch` are set from the items),
/// then execute_cpu_batch. Items must agree on channel counts; errors go to `diags`.
std::optional<std::vector<std::vector<Signal>>> run_batch(const ir::Graph& graph,
                                                          const std::vector<BatchItem>& items,
                                                          CompileRequest request, DiagnosticEngine& diags);

/// A batch of `items` signals of `frames` frames each in caller memory, on the CPU: for each
/// graph input `input_channels[i]` channels, its pointer array holding item b's channel c at
/// b x channels + c (the rows of a C-order (items, channels, frames) array); outputs likewise.
/// Compiled as run_batch compiles (the graph widened to the batch) and run straight on that
/// memory: nothing is copied. Samples are the graph's dtype. Errors go to `diags`.
bool run_batch_into(const ir::Graph& graph, const std::vector<int>& input_channels, std::size_t items,
                    std::size_t frames, std::span<const void* const* const> inputs,
                    std::span<void* const* const> outputs, CompileRequest request, DiagnosticEngine& diags);

/// The same on the GPU: compile_batch_for_cuda, then execute_cuda_batch.
std::optional<std::vector<std::vector<Signal>>> run_batch_cuda(const ir::Graph& graph,
                                                               const std::vector<BatchItem>& items,
                                                               CompileRequest request,
                                                               std::shared_ptr<GpuDevice> device,
                                                               DiagnosticEngine& diags);

}  // namespace fxc
