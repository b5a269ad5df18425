// SPDX-License-Identifier: Apache-2.0
// Signal files read and written a block at a time, so that memory does not grow with the file
// (`fxc run --block`): the formats, conversions and bytes of signal_file.h's whole reads and
// writes, which are themselves made of these writers (one way to encode a file).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "formats/signal_file.h"
#include "ir/dtype.h"
#include "runtime/signal.h"
#include "support/expected.h"

namespace fxc {

/// A signal file read from its start a block at a time.
class SignalReader {
 public:
  virtual ~SignalReader() = default;
  std::size_t channels() const { return channels_; }
  /// The frames the file holds, as its header says (checked against the data as it is read).
  std::size_t frames() const { return frames_; }
  /// Audio files store one; .npy files none.
  std::optional<double> sample_rate_hz() const { return sample_rate_hz_; }
  /// An audio file's encoding, as a whole read's SignalFile::subtype names it; .npy files none.
  const std::optional<std::string>& subtype() const { return subtype_; }

  /// Reads the next `frames` frames into samples [0, frames) of each of `into`'s channels
  /// (channels() of them), converted to `into`'s dtype as a whole read converts them. Errors read "cannot read 'PATH': REASON": fewer frames than the header
  /// promised (a truncated file), or, after the last, more than it said.
  virtual Expected<std::monostate, std::string> read(Signal& into, std::size_t frames) = 0;

 protected:
  std::size_t channels_ = 0;
  std::size_t frames_ = 0;
  std::optional<double> sample_rate_hz_;
  std::optional<std::string> subtype_;
};

/// Opens `path` to be read a block at a time. nullptr, not an error, where only a whole read
/// can take the file: not a regular file (a pipe), or an audio file whose header gives no
/// usable length (a WAV saved from a pipe, whose data size is a placeholder); read_signal_file
/// reads those. Errors are read_signal_file's, in its words.
Expected<std::unique_ptr<SignalReader>, std::string> open_signal_reader(const std::string& path);

/// A signal file written from its start a block at a time; its length is known when it opens
/// (a header states it, and a WAV beyond 4 GiB is RF64 from the first byte).
class SignalWriter {
 public:
  virtual ~SignalWriter() = default;
  /// Appends frames [start, start + frames) of each of `from`'s channels.
  virtual Expected<std::monostate, std::string> write(const Signal& from, std::size_t start,
                                                      std::size_t frames) = 0;
  /// After the last frames (as many in all as the writer was opened for): completes the file
  /// (the final header, Ogg's last pages).
  virtual Expected<std::monostate, std::string> finish() = 0;
};

/// A writer onto the open descriptor `fd` (at offset 0, readable as well for the formats fxc
/// puts right after libsndfile) of a file in the format `extension` names (".wav", ".npy",
/// ...), of `channels` x `frames` samples: an .npy file of `dtype`, an audio file encoded as
/// `options.subtype`. Errors are reasons, without the file's name (the caller's
/// write_file_atomically adds it), as write_signal_file gives them.
Expected<std::unique_ptr<SignalWriter>, std::string> open_signal_writer(int fd, const std::string& extension,
                                                                        std::size_t channels, std::size_t frames,
                                                                        DType dtype,
                                                                        std::optional<double> sample_rate_hz,
                                                                        const WriteOptions& options);

}  // namespace fxc
