// Runs a scheduled graph with compiled CPU kernels: one kernel call per chain node.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "codegen/cpu/cpu_compiler.h"
#include "ir/graph.h"
#include "runtime/signal.h"
#include "support/expected.h"

namespace fxc {

/// Runs `scheduled` (the output of the whole pass pipeline, bound to the inputs' channel
/// counts and a dtype) on `inputs`, in the order of scheduled.inputs(). Inputs are converted
/// to the graph's dtype; outputs have it. Sums run in the runtime, chains in `kernels`.
/// Flush-to-zero and denormals-are-zero are set around each kernel call and restored.
Expected<std::vector<Signal>, std::string> execute_cpu(const ir::Graph& scheduled,
                                                       const codegen::CpuKernels& kernels,
                                                       std::span<const Signal> inputs);

}  // namespace fxc
