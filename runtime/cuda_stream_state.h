// SPDX-License-Identifier: Apache-2.0
// A CUDA stream's state between blocks as its device buffers hold it (CudaStream::snapshot),
// and the conversions between it and the CPU runtime's StreamState, so that a GPU stream's
// state is saved and loaded as the bytes of runtime/stream_state_bytes.h: one format for
// every target (`fxc run --save-state` on either, a Processor's save_state()).
//
// The kernels keep each chain's state in codegen::layout_of's layout, as the CPU kernels do:
// sections' memories, FIR and lookahead rings with their positions, and delay lines of the
// delay's full length. Three things differ, and are converted here:
// - a CPU delay line holds only what it has seen (grow_delay_lines); on the device it is its
//   whole length, the unseen cells zeros, which is what the shorter line means;
// - an elementwise chain (chain_elementwise) keeps its lines in time order, the oldest first,
//   with positions 0: a ring read from its position;
// - a FIR run by FFT keeps a ring of its last `taps` inputs on the device and a history of
//   its newest inputs (fft_history_length) with a block phase on the CPU. The history from a
//   ring has zeros before the ring's inputs and phase 0, which the outputs to come do not see
//   (they read the newest taps - 1 inputs) but a CPU partitioned convolution's FFT frames do:
//   there the outputs go on within the FFTs' rounding, as across a change of block length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/cuda_executor.h"
#include "runtime/stream_state.h"
#include "support/expected.h"

namespace fxc {

/// The bytes of one kernel's state buffers, empty where it has none (sums, routes).
struct CudaKernelState {
  std::vector<std::uint8_t> state;      ///< [channel][state_per_channel], the kernel's state type
  std::vector<std::uint8_t> positions;  ///< [channel][delays + rings], int64
  std::vector<std::uint8_t> lines;      ///< [channel][delay][max(length, 1)]; feedback: [cell][channel]
};

struct CudaStreamState {
  std::vector<CudaKernelState> kernels;  ///< by kernel index
};

/// The state `snapshot` of a stream of `program` holds, for the stream's graph `scheduled`
/// (its current values), as the CPU runtime keeps it.
Expected<StreamState, std::string> host_stream_state(const CudaProgram& program, const ir::Graph& scheduled,
                                                     const CudaStreamState& snapshot);

/// The device state for `state` (from load_stream_state for `scheduled`), in buffers of the
/// sizes `like` (the stream's own snapshot) has.
Expected<CudaStreamState, std::string> device_stream_state(const CudaProgram& program, const ir::Graph& scheduled,
                                                           const StreamState& state, const CudaStreamState& like);

}  // namespace fxc
