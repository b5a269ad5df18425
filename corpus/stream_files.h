// SPDX-License-Identifier: Apache-2.0
// `fxc run --block` (one file, or each file of a corpus), the state files and `--target cuda`
// on files: inputs read and outputs written a chunk at a time around the Processor's blocks,
// so that memory does not grow with the file; the next chunk read and the last written while
// one runs.
#pragma once

#include <fxc/fxc.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "corpus/pending_outputs.h"
#include "formats/signal_stream.h"

namespace fxc::corpus {

/// The frames a stream of calls of `block` over `frames` prepares its Processor for: the
/// block, at most the signal's length, at least 1, at most 2^20 frames (2^24 on the GPU; the
/// Processor splits longer calls). `fxc run` and a corpus run agree on it, and so on the bytes.
inline std::size_t prepared_frames(std::size_t block, std::size_t frames, bool cuda) {
  return std::clamp<std::size_t>(std::min(block, frames), 1, cuda ? std::size_t{1} << 24 : std::size_t{1} << 20);
}

/// What a streamed file stands as before its frames are read: its channels without samples,
/// its rate and encoding.
inline SignalFile without_samples(const SignalReader& reader, DType dtype) {
  return SignalFile{Signal(reader.channels(), 0, dtype), reader.sample_rate_hz(), reader.subtype()};
}

/// Whether every output can be written a block at a time: a file or a new name, not standard
/// output, a device or a pipe (which are written whole, as they always were).
bool outputs_streamable(const std::vector<std::string>& outputs);

/// Opens every input to be read a block at a time; empty where any can only be read whole
/// (standard input, a pipe, a length its header does not give): then all are read whole.
Expected<std::vector<std::unique_ptr<SignalReader>>, std::string> open_streamed_inputs(
    const std::vector<std::string>& inputs);

struct StreamedFiles {
  std::vector<std::unique_ptr<SignalReader>>* readers = nullptr;
  const std::vector<std::string>* inputs = nullptr;   ///< names, for the warnings
  const std::vector<std::string>* outputs = nullptr;  ///< one per output port
  std::vector<std::size_t> output_channels;          ///< per output port
  std::size_t frames = 0;  ///< of every input, and so of every output
  std::size_t block = 0;   ///< frames per Processor call
  DType dtype = DType::f32;
  std::optional<double> sample_rate_hz;
  std::vector<WriteOptions> write_options;  ///< per output port
};

struct StreamedRun {
  std::vector<std::string> warnings;  ///< one per input that holds NaN or infinite samples
  double peak = 0;                    ///< the largest |sample| written, over all outputs
};

/// Runs `processor` over the inputs' frames in calls of `files.block` frames (the calls a
/// whole-signal stream makes, so the output is the same to the bit), and writes the outputs
/// under `pending`'s names as they come (reading and writing on threads of their own, one
/// chunk ahead and behind; the processor runs on the calling thread); `progress(frames done)`
/// after each block. Errors are whole messages ("cannot read 'IN': ...", "cannot write 'OUT':
/// ..."); nothing is committed.
Expected<StreamedRun, std::string> stream_files(Processor& processor, const StreamedFiles& files,
                                                             PendingOutputs& pending,
                                                             const std::function<void(std::size_t)>& progress);

}  // namespace fxc::corpus
