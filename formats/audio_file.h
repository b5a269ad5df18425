// SPDX-License-Identifier: Apache-2.0
// Audio files through libsndfile: reading anything it recognises, writing WAV (RF64 when
// larger than 4 GiB), FLAC, Ogg and AIFF with a chosen sample encoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "ir/dtype.h"
#include "formats/signal_file.h"
#include "formats/signal_stream.h"
#include "support/expected.h"

namespace fxc {

/// Reads an audio file, normalised to [-1, 1) for integer encodings, converted to `dtype`.
/// Errors read "cannot read 'PATH': REASON".
Expected<SignalFile, std::string> read_audio_file(const std::string& path, DType dtype);

/// The same from an open descriptor (a regular file or a memory file, read from its current
/// offset); `name` stands for the file in messages.
Expected<SignalFile, std::string> read_audio_fd(int fd, const std::string& name, DType dtype);

/// How an audio output is stored: the container named by the extension and the encoding.
struct AudioFormat {
  int sf_format = 0;        ///< libsndfile SF_FORMAT_* container | subtype
  std::string description;  ///< e.g. "WAV float"
};

/// True when `extension` (lower case, with the dot) names an audio container fxc writes.
bool is_audio_extension(const std::string& extension);

/// The format for `extension` (lower case, with the dot) and `subtype` (the container's
/// default when unset). The error names the subtypes the container allows.
Expected<AudioFormat, std::string> audio_format_for(const std::string& extension,
                                                    const std::optional<std::string>& subtype);

/// Why `format` cannot hold `channels` channels (FLAC holds 8, Ogg Vorbis and Opus 255, the
/// others libsndfile's 1024): "FLAC holds at most 8 channels, not 9 (write .wav, up to 1024,
/// or .npy)"; nothing when it can.
std::optional<std::string> channels_beyond(const AudioFormat& format, std::size_t channels);

/// Writes `signal` to the open descriptor `fd`. Returns the reason on failure.
Expected<std::monostate, std::string> write_audio(int fd, const Signal& signal,
                                                  double sample_rate_hz, const AudioFormat& format);

/// The same a block at a time (signal_stream.h): `channels` x `frames` samples of `dtype`
/// (which, with the format, decides how samples are handed to libsndfile, as write_audio's
/// signal's does). Returns the reason on failure.
Expected<std::unique_ptr<SignalWriter>, std::string> open_audio_writer(int fd, std::size_t channels,
                                                                       std::size_t frames, DType dtype,
                                                                       double sample_rate_hz,
                                                                       const AudioFormat& format);

/// How a WAV's fmt chunk describes an encoding: its format tag (1 integer PCM, 3 IEEE float,
/// 6 A-law, 7 μ-law) and bits per sample.
struct WavEncoding {
  std::uint16_t tag = 0;
  std::uint16_t bits = 0;
};

/// The fmt chunk's fields for `format` (audio_format_for(".wav", ...)).
WavEncoding wav_encoding(const AudioFormat& format);

/// The WAV format a fmt chunk describes ("WAV pcm16", ...); the reason where fxc does not read
/// that encoding from a stream (ADPCM, GSM, ...).
Expected<AudioFormat, std::string> wav_format_of(WavEncoding encoding);

/// The samples of a WAV's data chunk on `fd` from where it stands (a pipe whose header was
/// read: formats/wav_pipe.h), `channels` interleaved in `format`'s encoding, converted as a
/// WAV file's are read.
class WavSampleReader {
 public:
  virtual ~WavSampleReader() = default;
  /// Reads up to `frames` frames into samples [0, n) of `into`'s channels and returns n:
  /// fewer only where the stream ended (0 after its end). Waits for them on a pipe.
  virtual Expected<std::size_t, std::string> read(Signal& into, std::size_t frames) = 0;
};
Expected<std::unique_ptr<WavSampleReader>, std::string> open_wav_sample_reader(int fd, std::size_t channels,
                                                                               double sample_rate_hz,
                                                                               const AudioFormat& format);

/// The samples of a WAV's data chunk written to `fd` from where it stands (after a header
/// written by formats/wav_pipe.h), encoded as a WAV file's are; each write's frames are handed
/// to the descriptor before it returns (a live stream's frames leave with their block).
Expected<std::unique_ptr<SignalWriter>, std::string> open_wav_sample_writer(int fd, std::size_t channels, DType dtype,
                                                                            double sample_rate_hz,
                                                                            const AudioFormat& format);

/// An audio file on the open regular file `fd` read a block at a time; nullptr where its
/// header gives no usable length (read_audio_fd reads those whole). `name` stands for it in
/// messages.
Expected<std::unique_ptr<SignalReader>, std::string> open_audio_reader(int fd, const std::string& name);

}  // namespace fxc
