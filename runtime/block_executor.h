// SPDX-License-Identifier: Apache-2.0
// A scheduled graph run in real time: blocks of up to a fixed length through memory that is
// all allocated when the executor is made, so that process() allocates nothing, takes no
// lock, starts no thread and cannot fail: an audio callback may call it. New parameter values
// come from control threads and are taken at block boundaries without a lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "codegen/cpu/cpu_compiler.h"
#include "ir/graph.h"
#include "support/expected.h"

namespace fxc {

/// Blocks through a compiled graph with CpuStream's results: consecutive blocks give what one
/// run over the whole signal gives (execute_cpu), bit for bit for the sequential,
/// channel-lanes and wavefront strategies and direct FIRs; within float rounding for FFT
/// convolution, whose steps fall where blocks begin. The state's bytes are CpuStream's.
///
/// Threads: process(), reset(), save_state() and load_state() belong to one thread at a time
/// (the audio thread, or any thread while it is idle); stage_values() may be called from any
/// number of other threads at any time.
class BlockExecutor {
 public:
  /// The most memory one executor may take (block buffers, state, delay lines at their
  /// longest, FFT work): 1 GiB. More is almost surely a delay parameter's maximum in the wrong
  /// unit, and would be a long stall to allocate and fault in.
  static constexpr std::size_t kMaxMemoryBytes = std::size_t{1} << 30;

  /// Allocates everything for blocks of up to `max_block` frames of `scheduled` (the output of
  /// the whole pass pipeline, run with a length that never picks the chunked scan) and its
  /// `kernels`: the evaluation order, block buffers (shared between nodes whose values do not
  /// live at the same time), every chain's state in its compute type, FFT plans and work, and
  /// each delay line at its full length: the longer of its length in `scheduled` and
  /// `max_delay_lengths[chain node][k]` (k counts the chain's delay stages; in samples), so
  /// that stage_values() may later set any length up to that. `max_frames` > 0 bounds the
  /// frames the stream will run in all (an offline stream of a known length): a line then
  /// holds at most that many, since a line holds only what it can have seen (a delay longer
  /// than the stream gives silence at no cost); running more frames than that grows the lines,
  /// which allocates. Fails for a chunked-scan chain, a maximum that names no delay, or more
  /// than kMaxMemoryBytes.
  static Expected<BlockExecutor, std::string> create(
      const ir::Graph& scheduled, std::shared_ptr<const codegen::CpuKernels> kernels, std::size_t max_block,
      const std::map<ir::NodeId, std::vector<std::int64_t>>& max_delay_lengths = {}, std::size_t max_frames = 0);

  BlockExecutor(BlockExecutor&&) noexcept;
  BlockExecutor& operator=(BlockExecutor&&) noexcept;
  ~BlockExecutor();

  /// Runs `frames` frames: per graph input (scheduled.inputs() order) and output a planar
  /// pointer array, one pointer per channel, in the graph's dtype. More frames than
  /// max_block() run as several blocks. Takes the newest values staged before the call. An
  /// output may be an input's memory (in place): each channel exactly the same-index channel
  /// of an input, or overlapping no input; outputs must not overlap one another. With the
  /// wrong number of inputs or outputs it does nothing. Allocates nothing, locks nothing, and
  /// runs kernels with flush-to-zero and denormals-are-zero (restoring the caller's mode).
  void process(std::span<const void* const* const> inputs, std::span<void* const* const> outputs,
               std::size_t frames) noexcept;

  /// Back to zero state (filter memories, delay lines, FFT histories), as after create(), with
  /// the values last taken. Allocates nothing.
  void reset() noexcept;

  /// New values for the same shape (coefficients, gains, sum weights, delay lengths):
  /// `scheduled` must have the executor's structural hash (ir::structural_hash) and delay
  /// lengths within the maxima given to create(). The values are worked out on the calling
  /// thread and published without a lock; process() takes the newest at the start of its next
  /// call. A delay whose length changes restarts its line from zeros then; the sections keep
  /// their state, so filters do not click. Fails, publishing nothing, for another shape or a
  /// delay too long. Thread-safe.
  Expected<std::monostate, std::string> stage_values(const ir::Graph& scheduled);

  /// The state as bytes, in CpuStream::save_state's format (`fxc run --save-state` files), as
  /// the next block would start from it: a delay whose length values staged since the last
  /// block change restarts its line there, so that the state's delay lengths are the newest
  /// set, which load_state checks it against. Reads the state (call it with the audio thread
  /// idle), takes nothing from the handover.
  std::string save_state() const;
  /// Replaces the state with one from save_state (this class's or CpuStream's) for the same
  /// graph shape. Fails, keeping the current state, for bytes that are damaged, truncated, or
  /// from another shape or sample type. Allocates.
  Expected<std::monostate, std::string> load_state(std::string_view bytes);

  std::size_t max_block() const;
  /// About how much memory create() allocated, in bytes (what kMaxMemoryBytes bounds; the
  /// kernels are not included).
  std::size_t memory_bytes() const;

 private:
  struct Impl;
  explicit BlockExecutor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fxc
