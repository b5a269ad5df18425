// SPDX-License-Identifier: Apache-2.0
// From a bound graph to a program loaded on a GPU: the pass pipeline for the CUDA target,
// then the kernel cache's cubin for the device's architecture.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "driver/compile_request.h"
#include "ir/graph.h"
#include "runtime/batch.h"
#include "runtime/cuda_executor.h"
#include "runtime/gpu_device.h"
#include "support/diagnostics.h"

namespace fxc {

using CudaCompileRequest = CompileRequest;

/// The pass pipeline for passes::cuda_target(), the cubin from the kernel cache
/// (`request.cache_directory`, empty for memory only; NVRTC on a miss), and
/// load_cuda_program. Where the driver refuses the cubin in a way PTX may avoid, PTX for the
/// device instead, with a warning (docs/cuda.md, "PTX fallback"; never run on a GPU). Errors
/// and cache warnings go to `diags`. `same_shape`: a program compiled before from this graph
/// with other values; where the new schedule has its shape (ir::structural_hash), a copy of it
/// for the new values is returned: no kernel compiled or loaded.
std::optional<std::shared_ptr<const CudaProgram>> compile_for_cuda(
    const ir::Graph& graph, const CudaCompileRequest& request, std::shared_ptr<GpuDevice> device,
    DiagnosticEngine& diags, const std::shared_ptr<const CudaProgram>& same_shape = nullptr);

/// A batch (runtime/batch.h) on the GPU: `graph` compiled for the items' channels laid side by
/// side (items x channels per input), for their longest length. `request.channels` and
/// `batch` are set from the items. Errors go to `diags`.
std::optional<std::shared_ptr<const CudaProgram>> compile_batch_for_cuda(const ir::Graph& graph,
                                                                         const std::vector<BatchItem>& items,
                                                                         CudaCompileRequest request,
                                                                         std::shared_ptr<GpuDevice> device,
                                                                         DiagnosticEngine& diags);

/// The same for a batch known by its shape only (its arrays are in GPU memory): `items` items
/// of `frames` frames, input i with `input_channels[i]` channels per item. `same_shape` as
/// for compile_for_cuda: this batch compiled before for other values.
std::optional<std::shared_ptr<const CudaProgram>> compile_batch_for_cuda(
    const ir::Graph& graph, std::span<const int> input_channels, std::size_t items, std::size_t frames,
    CudaCompileRequest request, std::shared_ptr<GpuDevice> device, DiagnosticEngine& diags,
    const std::shared_ptr<const CudaProgram>& same_shape = nullptr);

}  // namespace fxc
