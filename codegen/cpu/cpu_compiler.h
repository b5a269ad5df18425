// SPDX-License-Identifier: Apache-2.0
// The CPU backend: chain kernels as LLVM IR, optimized for the host and compiled to machine
// code, loaded into an ORC LLJIT. No LLVM type appears in this header.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_abi.h"
#include "ir/graph.h"
#include "support/expected.h"

namespace fxc::codegen {

/// The LLVM IR of every chain kernel of a scheduled graph, before (or after) optimization:
/// what `fxc dump --emit llvm` prints.
Expected<std::string, std::string> emit_cpu_llvm_ir(const ir::Graph& scheduled, bool optimized);

/// Machine code for a graph's chain kernels, loaded and callable.
class CpuKernels {
 public:
  virtual ~CpuKernels() = default;
  /// The kernel of the chain at node `id`, or nullptr if the graph had no chain there.
  virtual FxcChainKernel kernel(ir::NodeId id) const = 0;
  /// The relocatable object file the kernels were loaded from (for the disk cache).
  virtual const std::string& object_code() const = 0;
};

/// Runs body(i) for every i in [0, count), possibly several at once on other threads, and
/// returns when all are done (the driver passes its worker pool; codegen starts no thread).
using ParallelFor = std::function<void(std::size_t count, const std::function<void(std::size_t)>& body)>;

/// Generates, optimizes (LLVM's O1 pipeline, host CPU) and compiles the chain kernels of `scheduled`. With
/// `modules` > 1 and a `parallel`, the kernels are split into up to that many LLVM modules of
/// about equal size, each with its own context and target machine, optimized and compiled side
/// by side: LLVM's time is per module, so two cores compile a two-kernel graph in about half
/// the time. The object code is then a bundle of the modules' objects (load_cpu_kernels reads
/// both forms).
Expected<std::shared_ptr<const CpuKernels>, std::string> compile_cpu_kernels(
    const ir::Graph& scheduled, std::size_t modules = 1, const ParallelFor& parallel = {});

/// Loads kernels from the object code made by compile_cpu_kernels (one object file, or a
/// bundle of several) for a graph with chains at `chain_ids`, without generating or
/// optimizing IR (a disk-cache hit).
Expected<std::shared_ptr<const CpuKernels>, std::string> load_cpu_kernels(
    const std::string& object_code, const std::vector<ir::NodeId>& chain_ids);

/// The version of the code this backend generates, part of every cache key: raise it whenever
/// the generated code or its ABI changes, so no process loads kernels of another generation.
inline constexpr int kCpuCodegenVersion = 9;

/// The host CPU name and features as LLVM sees them (part of a cache key).
std::string cpu_target_id();
/// "LLVM 19.1.7".
std::string llvm_version_string();

}  // namespace fxc::codegen
