// SPDX-License-Identifier: Apache-2.0
// Reading and writing signals as files: the format follows the extension (.npy goes to the
// NumPy reader and writer, everything else to libsndfile). Outputs are written atomically.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <variant>

#include "ir/dtype.h"
#include "runtime/signal.h"
#include "support/expected.h"
#include "support/file_io.h"  // write_file_atomically, read_whole_file: the atomic writes of outputs

namespace fxc {

/// A signal and, where the file stores one, its sample rate (.npy files have none).
struct SignalFile {
  Signal signal;
  std::optional<double> sample_rate_hz;
};

struct WriteOptions {
  /// Sample encoding of audio outputs (`--subtype`): pcm8, pcm16, pcm24, pcm32, float, double,
  /// ulaw, alaw, vorbis, opus. Unset: the container's default (see docs/file-formats.md).
  std::optional<std::string> subtype;
};

/// Reads `path` and converts its samples to `dtype`. Errors read "cannot read 'PATH': REASON".
Expected<SignalFile, std::string> read_signal_file(const std::string& path, DType dtype);

/// Writes `signal` to `path` in the format its extension names (.wav .flac .ogg .aiff/.aif
/// .npy). Audio formats need `sample_rate_hz`. Either the whole file appears at `path` or,
/// on any error, nothing changes there.
Expected<std::monostate, std::string> write_signal_file(const std::string& path,
                                                        const Signal& signal,
                                                        std::optional<double> sample_rate_hz,
                                                        const WriteOptions& options);

/// Checks what can be checked before there is a signal (the extension, the subtype), so a
/// command can fail before a long computation rather than after it.
Expected<std::monostate, std::string> check_output_format(const std::string& path,
                                                          const WriteOptions& options);

}  // namespace fxc
