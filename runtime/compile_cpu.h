// From a bound graph to runnable CPU kernels: the pass pipeline, then the kernel cache.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "codegen/cpu/cpu_compiler.h"
#include "ir/graph.h"
#include "passes/pipeline.h"

namespace fxc {

struct CpuCompileRequest {
  double sample_rate_hz = 48000;
  DType dtype = DType::f32;
  int channels = 0;                     ///< for inputs declared without a count
  std::optional<std::int64_t> length_samples;  ///< guides the strategy choice
  int batch = 1;
  std::string cache_directory;          ///< empty: memory cache only
  passes::StrategyThresholds thresholds;
  passes::PipelineOptions pipeline;     ///< passes to run, printing, timing
  bool fusion = true;                   ///< false: one kernel per stage (for comparisons)
};

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
