// SPDX-License-Identifier: Apache-2.0
// Runs a scheduled graph with compiled CPU kernels: one kernel call per chain node. A run can
// be one whole signal (execute_cpu) or the blocks of a stream (CpuStream), whose filter, FIR
// and delay state carries from block to block.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "codegen/cpu/cpu_compiler.h"
#include "ir/graph.h"
#include "runtime/signal.h"
#include "support/expected.h"

namespace fxc {

/// Runs `scheduled` (the output of the whole pass pipeline, bound to the inputs' channel
/// counts and a dtype) on `inputs`, in the order of scheduled.inputs(), from zero state.
/// Inputs are converted to the graph's dtype; outputs have it. Chains and sums run in
/// `kernels` (a lone FFT FIR in the runtime). Flush-to-zero and denormals-are-zero are set
/// around each kernel call.
Expected<std::vector<Signal>, std::string> execute_cpu(const ir::Graph& scheduled,
                                                       const codegen::CpuKernels& kernels,
                                                       std::span<const Signal> inputs);

/// The state of every chain of a graph between blocks (opaque).
struct StreamState;

/// A compiled graph run block by block. Blocks may have any length (0 included) and all
/// inputs of one block the same length. The outputs of consecutive blocks, concatenated, equal
/// the output of the whole signal: bit for bit for the sequential, channel-lanes and
/// wavefront strategies; within float rounding for the chunked scan and FFT convolution,
/// whose arithmetic depends on where blocks begin.
class CpuStream {
 public:
  CpuStream(ir::Graph scheduled, std::shared_ptr<const codegen::CpuKernels> kernels);
  ~CpuStream();
  CpuStream(CpuStream&&) noexcept;
  CpuStream& operator=(CpuStream&&) noexcept;

  Expected<std::vector<Signal>, std::string> process(std::span<const Signal> block);

  /// Back to zero state, as before the first block.
  void reset();

  /// A copy of the state, to restore later (for example to replay from a point).
  std::shared_ptr<const StreamState> snapshot() const;
  void restore(const StreamState& state);

  /// The state as bytes, to keep in a file and load into a stream of the same graph shape in
  /// another process (same machine architecture: numbers are in host byte order). The
  /// coefficients are not part of it: they are the stream's graph's.
  std::string save_state() const;
  /// Replaces the state with one from save_state. Fails, and keeps the current state, for
  /// bytes that are damaged, truncated, or from a graph of another shape or sample type.
  Expected<std::monostate, std::string> load_state(std::string_view bytes);

  /// New values for the same shape (a new cutoff, gain, or --set): `scheduled` must have the
  /// stream's structural hash. The state is kept, so the filter continues from where it was
  /// with its new coefficients from the next block on.
  Expected<std::monostate, std::string> update_values(const ir::Graph& scheduled);

  const ir::Graph& graph() const { return scheduled_; }

 private:
  ir::Graph scheduled_;
  std::shared_ptr<const codegen::CpuKernels> kernels_;
  std::unique_ptr<StreamState> state_;
};

}  // namespace fxc
