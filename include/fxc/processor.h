// SPDX-License-Identifier: Apache-2.0
// fxc::Processor: a Program's graph run block by block in real time, with live parameters.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fxc/param_value.h>
#include <fxc/signal.h>
#include <fxc/types.h>

namespace fxc {

class Program;

/// A stream of blocks through one compiled graph, for an audio callback.
///
/// prepare() allocates everything; process() then allocates nothing, takes no lock, starts
/// no thread and cannot fail: an audio thread may call it. The state (filter memories, delay
/// lines) carries from block to block, so consecutive blocks give what one run over the whole
/// signal gives (bit for bit for the sequential, channel-lanes and wavefront strategies and
/// direct FIRs; within float rounding for FFT convolution).
///
/// set() may be called from any other thread at any time: it designs the new coefficients on
/// the calling thread and hands them to the audio thread, which takes them at the start of
/// its next block, without a lock. One Processor serves one audio thread. The control calls
/// (set(), prepare(), save_state(), load_state()) take turns on a lock of their own: a set()
/// during a prepare() waits for it, and its value holds in the new blocks.
///
/// On a Program compiled for Target::cuda the blocks run on the GPU (docs/cuda.md): prepare()
/// allocates the device buffers and the page-locked staging for max_block frames, and each
/// call copies its block in, replays the CUDA graph recorded for its length (recorded by the
/// first call of that length), copies the outputs back and waits for them. There a call may
/// allocate (a length it has not seen: its graph and tables; the first call in the other
/// sample type: its conversion buffers), takes a lock only to take the values set() staged,
/// which are written into the device's buffers at its start (a delay line whose length
/// changes is replaced there, whatever prepare() reserved), and a device error cannot be thrown:
/// that call's outputs and every later call's are zeros, and device_error() says why, until
/// prepare() makes a new stream. save_state() and load_state() copy the device's state to
/// and from the host in the CPU's format: a state saved on one target loads on the other where
/// both schedule the graph to the same shape (docs/streaming.md).
class Processor {
 public:
  explicit Processor(const Program& program);
  Processor(Processor&&) noexcept;
  Processor& operator=(Processor&&) noexcept;
  ~Processor();

  /// Allocates for blocks of up to `max_block` frames (0: the Program's Options::max_block,
  /// else 4096; on Target::cuda, else the piece length of Program::run from host memory,
  /// as many frames as 128 MiB holds for the inputs and outputs together, or `max_frames`
  /// where that is shorter, so that calls of whole such blocks give Program::run's output
  /// bit for bit) and resets the state: block buffers, every filter's state, and each delay
  /// line at the longest its parameters' declared ranges reach (a delay whose parameter has
  /// no range: its current length). Throws Error when that is more than 1 GiB (a delay range
  /// in the wrong unit) or the block is longer than 2^24 frames. Call it before process().
  /// `max_frames` > 0 promises that the stream runs at most that many frames in all (an
  /// offline stream of a known length, as `fxc run --block` is): delay lines then reserve no
  /// more than that, so a delay longer than the stream costs nothing. Past it (before a
  /// reset()), process() may allocate.
  void prepare(std::size_t max_block = 0, std::size_t max_frames = 0);
  std::size_t max_block() const;

  /// Processes `frames` frames: for each graph input a planar pointer array (one pointer per
  /// channel), for each output likewise. More frames than max_block() are processed in
  /// several steps. Outputs may be the inputs' memory. Samples of the other sample type than
  /// the Program's are converted through buffers made by prepare(). Before prepare(), with
  /// the wrong number of inputs or outputs, or with a null pointer array or channel pointer,
  /// the outputs are zeros (those it can reach) and the state does not move. With 0 frames no
  /// pointer is read (they may be null) and values set() staged are taken.
  void process(std::span<const float* const* const> inputs, std::span<float* const* const> outputs,
               std::size_t frames) noexcept;
  void process(std::span<const double* const* const> inputs,
               std::span<double* const* const> outputs, std::size_t frames) noexcept;
  /// One input, one output.
  void process(const float* const* input, float* const* output, std::size_t frames) noexcept;
  void process(const double* const* input, double* const* output, std::size_t frames) noexcept;

  /// Throws the Error Program::run would give for whole signals a host is about to stream
  /// through process(): their number, each one's channel count (the graph's declaration,
  /// and this Processor's ports after prepare()), equal lengths. process() cannot check the
  /// pointers it is given; this is the check to make first (`fxc run --block` makes it).
  void check_inputs(const std::vector<Signal>& inputs) const;

  /// Back to zero state, as after prepare(). Call it on the audio thread (or while it is idle).
  void reset() noexcept;

  /// Target::cuda: the first error a call met on the device ("" if none, and always on the
  /// CPU). From that call on, process() writes zeros; prepare() starts again.
  std::string device_error() const;

  /// A new parameter value, in the parameter's unit (see Program::set). Thread-safe; takes
  /// effect at the start of the next block. Throws Error for an unknown name, a value the
  /// parameter or its stage refuses, or a delay longer than prepare() reserved (declare the
  /// parameter's range); the running values are then unchanged.
  void set(std::string_view name, double value);
  void set(int id, double value);
  void set(std::string_view name, std::string_view value_with_unit);
  /// Several values, staged together: the block that takes them takes all of them (one at a
  /// time, a block could begin between two). A value refused keeps every value as it was.
  void set(const std::vector<ParamValue>& values);
  /// The value set() last gave the parameter (or its starting value), in its unit. Throws
  /// Error for an unknown name.
  double get(std::string_view name) const;

  /// The state as bytes, to continue later in a Processor of the same graph shape, on this
  /// target or the other (`fxc run --save-state` writes the same format). Call with the audio
  /// thread idle. The
  /// state is the one the next block starts from: a delay whose length set() changed since
  /// the last block restarts its line there, so that the state loads where those values are
  /// set.
  std::string save_state() const;
  /// Throws Error, keeping the current state, for bytes that are damaged, from another shape,
  /// or saved at other delay lengths than this Processor's newest values.
  void load_state(std::string_view bytes);

  struct Impl;

 private:
  /// *impl_; throws Error on a Processor moved from (process() and reset() do nothing there).
  Impl& impl() const;
  /// Every set(): by parameter id, in the parameters' units.
  void set_values(const std::vector<std::pair<int, double>>& values);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fxc
