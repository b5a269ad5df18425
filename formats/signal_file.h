// SPDX-License-Identifier: Apache-2.0
// Reading and writing signals as files: the format follows the extension (.npy goes to the
// NumPy reader and writer, everything else to libsndfile). Outputs are written atomically.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
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
  /// An audio file's sample encoding as `--subtype` names it ("pcm16", "float", "vorbis",
  /// ...); unset for .npy files and for encodings fxc does not write (ADPCM, GSM, MPEG, ...).
  std::optional<std::string> subtype;
};

struct WriteOptions {
  /// Sample encoding of audio outputs (`--subtype`): pcm8, pcm16, pcm24, pcm32, float, double,
  /// ulaw, alaw, vorbis, opus. Unset: the container's default (see docs/file-formats.md).
  std::optional<std::string> subtype;
  /// A symbolic link at the name: followed for a user's output, replaced for a name of fxc's
  /// own (a pending output: support/file_io.h).
  AtLink at_link = AtLink::follow;
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

/// True when `bytes` start as a .npy file does ("\x93NUMPY"); anything else is read as audio.
bool is_npy_bytes(std::string_view bytes);

/// Reads a whole file held in memory (standard input): .npy by its magic bytes, else audio
/// through libsndfile (WAV, FLAC, ... recognised by their headers). `name` stands for it in
/// messages ("cannot read '<stdin>': ..."). A WAV whose data size is a placeholder (0, or near
/// 2^31, as written to a pipe before the length was known) is read to the end of the bytes.
Expected<SignalFile, std::string> read_signal_bytes(const std::string& bytes, const std::string& name, DType dtype);

/// The bytes `write_signal_file` would write to a file with this `extension` (".wav", ".npy",
/// ...): what a command writes to standard output.
Expected<std::string, std::string> encode_signal(const Signal& signal, const std::string& extension,
                                                 std::optional<double> sample_rate_hz, const WriteOptions& options);

/// True when the audio container of `extension` (lower case, with the dot) can hold `subtype`.
bool audio_subtype_available(const std::string& extension, const std::string& subtype);

/// The extension of `path` in lower case, with the dot ("" when it has none).
std::string lower_extension(const std::string& path);

/// Whether an output of `path`'s format holds `channels` channels (FLAC 8, Ogg 255, WAV and
/// AIFF 1024, .npy any): known once the graph is, before anything runs. Errors read "cannot
/// write 'PATH': FLAC holds at most 8 channels, not 9 (...)".
/// `name` stands for the output in messages (`<stdout>` for a pipe); empty: `path`.
Expected<std::monostate, std::string> check_output_channels(const std::string& path, std::size_t channels,
                                                            const WriteOptions& options, const std::string& name = {});

/// Checks the extension and the subtype of an output, not where it goes: check_output_format
/// without the directory (for outputs whose directories are made later).
Expected<std::monostate, std::string> check_output_encoding(const std::string& path, const WriteOptions& options);

/// Checks what can be checked before there is a signal (the extension, the subtype), so a
/// command can fail before a long computation rather than after it.
Expected<std::monostate, std::string> check_output_format(const std::string& path,
                                                          const WriteOptions& options);

}  // namespace fxc
