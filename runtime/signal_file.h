// SPDX-License-Identifier: Apache-2.0
// Reading and writing signals as files: the format follows the extension (.npy goes to the
// NumPy reader and writer, everything else to libsndfile). Outputs are written atomically.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "ir/dtype.h"
#include "runtime/signal.h"
#include "support/expected.h"

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

/// Fills a new file beside `path` through `write` (given the open descriptor and the temporary
/// file's name), flushes it to disk and renames it over `path`. If `write` or anything after
/// it fails, the temporary file is removed and `path` is left as it was. `write` returns the
/// reason on failure; the result's message is "cannot write 'PATH': REASON".
Expected<std::monostate, std::string> write_file_atomically(
    const std::string& path, const std::function<Expected<std::monostate, std::string>(
                                 int fd, const std::string& temp_path)>& write);

/// The whole of a file, as bytes. Errors read "cannot read 'PATH': REASON".
Expected<std::string, std::string> read_whole_file(const std::string& path);

/// Writes all `size` bytes to `fd`, resuming after short writes and interrupted calls.
/// Returns the system's reason on failure (e.g. "No space left on device").
Expected<std::monostate, std::string> write_all(int fd, const void* data, std::size_t size);

}  // namespace fxc
