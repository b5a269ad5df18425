// SPDX-License-Identifier: Apache-2.0
// From a bound graph to runnable CPU kernels: the pass pipeline, then the kernel cache.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "codegen/cpu/cpu_compiler.h"
#include "ir/graph.h"
#include "passes/pipeline.h"
#include "driver/compile_request.h"

namespace fxc {

using CpuCompileRequest = CompileRequest;

struct CompiledCpuGraph {
  ir::Graph scheduled;
  std::shared_ptr<const codegen::CpuKernels> kernels;
};

/// Runs the pipeline on `graph` bound as requested and gets its kernels from the cache
/// (compiling them on a miss). Errors and cache warnings go to `diags`.
std::optional<CompiledCpuGraph> compile_for_cpu(const ir::Graph& graph,
                                                const CpuCompileRequest& request,
                                                DiagnosticEngine& diags);

}  // namespace fxc
