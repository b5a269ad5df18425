// SPDX-License-Identifier: Apache-2.0
// One run of a scheduled graph's kernels over some samples: the one place that calls chain
// and sum kernels, shared by whole-signal runs (execute_cpu, execute_cpu_into), CpuStream and
// BlockExecutor. The caller owns the plan, values, state and memory; a run allocates nothing
// (the chunked scan aside, which real-time runners refuse).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "runtime/execution_plan.h"
#include "runtime/fft_convolution.h"
#include "runtime/graph_values.h"
#include "runtime/partitioned_convolution.h"
#include "runtime/stream_state.h"

namespace fxc {

/// The caller's signals of one run: per input and output a planar pointer array (one pointer
/// per channel) in the graph's dtype. The run covers samples [offset, offset + frames).
struct CallerSignals {
  std::span<const void* const* const> inputs;
  std::span<void* const* const> outputs;
  std::size_t offset = 0;
  std::size_t frames = 0;
};

/// What a run borrows from its owner, sized once for a plan (size_run_memory) so that a run
/// allocates nothing.
struct RunMemory {
  std::vector<std::byte*> slots;  ///< per plan slot: slot_channels x stride samples
  std::size_t stride = 0;         ///< samples between the channels of a slot
  std::vector<void*> table;       ///< channel pointers of every node (plan.row)
  std::vector<const void*> sum_inputs;
  std::vector<void*> delay_lines;
  std::vector<char> direct;       ///< per output: its source computes into the caller's memory
  /// The copies of outputs that are an input as it is: (to, from) per channel.
  std::vector<std::pair<std::byte*, const std::byte*>> passed_through;
  /// By node: FFT overlap-save chains, in the graph's signal type (one of the two lists).
  std::vector<std::unique_ptr<FftConvolver<float>>> fft_f32;
  std::vector<std::unique_ptr<FftConvolver<double>>> fft_f64;
  /// By node: partitioned convolutions (an FFT block not above the taps), the same way.
  std::vector<std::unique_ptr<PartitionedConvolver<float>>> partitioned_f32;
  std::vector<std::unique_ptr<PartitionedConvolver<double>>> partitioned_f64;

  template <class T>
  std::vector<std::unique_ptr<FftConvolver<T>>>& fft() {
    if constexpr (std::is_same_v<T, float>) return fft_f32;
    else return fft_f64;
  }
  template <class T>
  std::vector<std::unique_ptr<PartitionedConvolver<T>>>& partitioned() {
    if constexpr (std::is_same_v<T, float>) return partitioned_f32;
    else return partitioned_f64;
  }
};

/// Sizes `memory`'s tables and FFT work for `plan`; the slots are left to the owner.
void size_run_memory(const ir::Graph& scheduled, const ExecutionPlan& plan, RunMemory& memory);

/// Decides, into memory.direct, which outputs' sources compute straight into the caller's
/// output memory. An output may share memory with an input (in-place processing) when each
/// of its channels is exactly an input channel of the same index or overlaps none, and no step
/// after its source reads that input; otherwise its source computes into a slot and the output
/// is copied at the end. Outputs must not overlap one another.
void choose_direct_outputs(const ExecutionPlan& plan, const CallerSignals& io, std::size_t sample_bytes,
                           RunMemory& memory) noexcept;

/// Whether slot `slot` holds a value in a run with memory.direct as chosen: the owner of a
/// whole-signal run provides only those.
bool slot_in_use(const ExecutionPlan& plan, const RunMemory& memory, int slot);

/// The threads a run with `threads` gives `step` over `frames` frames (1 for all but a chain
/// with a kernel split across channels or time): a whole run cut into pieces makes them long
/// enough to give each step as many as the whole signal does.
int step_threads(const ir::Graph& scheduled, const ExecutionPlan& plan, const ExecutionPlan::Step& step,
                 DType signal, std::size_t frames, int threads);

struct RunOptions {
  bool trace = false;  ///< a span per kernel in the global trace (allocates)
  int threads = 1;     ///< for the chunked scan
};

/// Runs every step of `plan` once over `io`, from and into `state` (every chain ready), with
/// flush-to-zero and denormals-are-zero set for the run and the caller's mode restored after.
/// The steps of a loop (plan.loops) run together in blocks of at most the loop's shortest
/// feedback delay: per block, each feedback node's value is copied from its line, the loop's
/// steps run, and each feedback node's operand is copied into the line.
/// The chunked scan (whole signals only) allocates; nothing else does.
template <class T>
void run_graph(const ir::Graph& scheduled, const ExecutionPlan& plan, const GraphValues& values,
               GraphState<T>& state, const CallerSignals& io, RunMemory& memory, const RunOptions& options);

}  // namespace fxc
