// SPDX-License-Identifier: Apache-2.0
// A WAV stream on a pipe, read and written a block at a time as the audio comes
// (`fxc run --live-pipe`): libsndfile reads a WAV from a pipe but cannot write one, and reads
// a data size of 0 (which programs that stream leave) as no samples; so the header is fxc's
// here and the samples libsndfile's, encoded and converted as in a WAV file.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "formats/audio_file.h"
#include "formats/signal_file.h"
#include "formats/signal_stream.h"
#include "ir/dtype.h"
#include "runtime/signal.h"
#include "support/expected.h"

namespace fxc {

/// A WAV stream read from its start as it arrives.
class WavPipeReader {
 public:
  std::size_t channels() const { return channels_; }
  double sample_rate_hz() const { return sample_rate_hz_; }
  /// The encoding, as SignalFile::subtype names it ("pcm16", "float", ...).
  const std::string& subtype() const { return subtype_; }
  /// The frames the header gives; unset where it gives a placeholder (0 with no RIFF size,
  /// or from 0x7FFF0000 bytes up: the stream runs to its end).
  std::optional<std::size_t> frames() const { return frames_; }

  /// Reads up to `frames` frames into samples [0, n) of `into`'s channels (channels() of
  /// them) and returns n, waiting for them: fewer only at the stream's end (0 after it).
  /// Errors read "cannot read 'NAME': REASON" (a stream shorter than its header's length).
  Expected<std::size_t, std::string> read(Signal& into, std::size_t frames);

 private:
  friend Expected<std::unique_ptr<WavPipeReader>, std::string> open_wav_pipe_reader(int, const std::string&);
  std::string name_;
  std::size_t channels_ = 0;
  double sample_rate_hz_ = 0;
  std::string subtype_;
  std::optional<std::size_t> frames_;
  std::size_t read_ = 0;
  std::unique_ptr<WavSampleReader> samples_;
};

/// Reads the header of the WAV stream on `fd` (consuming exactly the bytes up to its samples)
/// and opens its samples. `name` stands for it in messages ("cannot read '<stdin>': ...").
Expected<std::unique_ptr<WavPipeReader>, std::string> open_wav_pipe_reader(int fd, const std::string& name);

/// Writes the header of a WAV stream of unknown length to `fd` (the RIFF and data sizes
/// 0xFFFFFFFF, as ffmpeg leaves them: libsndfile, fxc and other readers read such a file to
/// its end) and returns the writer of its samples, in `options.subtype` (WAV's float by
/// default), each write's frames sent before it returns. finish() writes nothing more.
Expected<std::unique_ptr<SignalWriter>, std::string> open_wav_pipe_writer(int fd, std::size_t channels, DType dtype,
                                                                          double sample_rate_hz,
                                                                          const WriteOptions& options);

}  // namespace fxc
