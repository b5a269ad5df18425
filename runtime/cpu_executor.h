// SPDX-License-Identifier: Apache-2.0
// Runs a scheduled graph with compiled CPU kernels: one kernel call per chain node. A run can
// be one whole signal (execute_cpu, execute_cpu_into) or the blocks of a stream (CpuStream;
// runtime/block_executor.h for real time), whose filter, FIR and delay state carries from
// block to block. All of them run through runtime/run_graph.h.
#pragma once

#include <memory>
#include <mutex>
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

/// As execute_cpu, into the caller's memory: per input and output a planar pointer array
/// (one pointer per channel, the channel counts of scheduled.inputs() and outputs()) of
/// `frames` samples in the graph's dtype. The kernel that computes an output writes it there
/// directly; intermediates use as little memory as their lifetimes allow. An output may be an
/// input's memory (in place): each channel exactly the same-index channel of an input, or
/// overlapping no input. Outputs must not overlap one another.
Expected<std::monostate, std::string> execute_cpu_into(const ir::Graph& scheduled,
                                                       const codegen::CpuKernels& kernels,
                                                       std::span<const void* const* const> inputs,
                                                       std::span<void* const* const> outputs,
                                                       std::size_t frames);

struct RunMemory;      // runtime/run_graph.h
struct ExecutionPlan;  // runtime/execution_plan.h

/// A whole run (execute_cpu, CpuRunner, CpuStream) whose kernels pass values on through
/// memory of its own (slots) goes in pieces of this many frames, so that the slots are this
/// long rather than the signal's, and the values a kernel writes are still in cache when the
/// next reads them: 2^16 frames, doubled until every step gets as many threads in a piece
/// as over `frames` (run_graph.h, step_threads). Graphs with a chunked scan or an FFT FIR run
/// whole: in pieces, their rounding would follow the pieces (and so the thread count).
std::size_t slot_piece_frames(const ir::Graph& scheduled, const ExecutionPlan& plan, DType signal, std::size_t frames,
                              int threads);

/// The whole-signal runs of one scheduled graph, as execute_cpu and execute_cpu_into, with
/// what does not depend on the signal made once, at the first run: the execution plan, the
/// values (an FFT FIR's taps transformed) and the FFT plans and work memory, which a finished
/// run leaves for the next. What a Program keeps per set of values: planned per call, a FIR
/// of 24001 taps spent more of a one-second run on its plans than on its transforms. run() and
/// run_into() may be called from several threads at once; each run takes work memory no
/// other run holds.
class CpuRunner {
 public:
  CpuRunner(ir::Graph scheduled, std::shared_ptr<const codegen::CpuKernels> kernels);
  ~CpuRunner();
  CpuRunner(const CpuRunner&) = delete;
  CpuRunner& operator=(const CpuRunner&) = delete;

  Expected<std::vector<Signal>, std::string> run(std::span<const Signal> inputs) const;
  Expected<std::monostate, std::string> run_into(std::span<const void* const* const> inputs,
                                                 std::span<void* const* const> outputs, std::size_t frames) const;

  const ir::Graph& graph() const { return scheduled_; }

 private:
  struct Prepared;  // the plan and values
  const Prepared& prepared() const;

  ir::Graph scheduled_;
  std::shared_ptr<const codegen::CpuKernels> kernels_;
  mutable std::once_flag prepare_once_;
  mutable std::unique_ptr<Prepared> prepared_;
  mutable std::mutex idle_mutex_;
  mutable std::vector<std::unique_ptr<RunMemory>> idle_;  ///< work memory no run holds
};

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
  /// The same for new values that select_strategy scheduled differently (a cutoff that moves
  /// a pole past f64_state_pole_radius, or changes the filter's decay and so the strategy or
  /// chunk length): `scheduled` must have the stream's stages, orders, channels and dtype;
  /// `kernels` are its kernels. Every chain's state carries over, converted between float32
  /// and float64 where its state precision changed, so the filter continues as with
  /// update_values.
  Expected<std::monostate, std::string> update_values(const ir::Graph& scheduled,
                                                      std::shared_ptr<const codegen::CpuKernels> kernels);

  const ir::Graph& graph() const { return scheduled_; }

 private:
  struct Run;  // the plan, values and work memory (runtime/run_graph.h)
  ir::Graph scheduled_;
  std::shared_ptr<const codegen::CpuKernels> kernels_;
  std::unique_ptr<StreamState> state_;
  std::unique_ptr<Run> run_;
};

}  // namespace fxc
