// SPDX-License-Identifier: Apache-2.0
#include "formats/signal_file.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/audio_file.h"
#include "formats/npy_file.h"
#include "support/file_io.h"

namespace fxc {
namespace {


constexpr const char* kExpectedExtensions = "(expected .wav, .flac, .ogg, .aiff or .npy)";
constexpr const char* kNoSubtypeForNpy =
    "a subtype does not apply to .npy output: its dtype is the computation's (--dtype, or dtype= in Python)";
constexpr const char* kNoSampleRate = "an audio file needs a sample rate (give one with --fs, or fs= in Python)";

Unexpected<std::string> cannot_write(const std::string& path, const std::string& reason) {
  return Unexpected{"cannot write '" + path + "': " + reason};
}

// A file in memory with a descriptor, for the readers and writers that take one: standard
// input is read whole into one (so that libsndfile may seek), and standard output written
// through one.
struct MemoryFile {
  int fd = ::memfd_create("fxc-signal", MFD_CLOEXEC);
  ~MemoryFile() {
    if (fd >= 0) ::close(fd);
  }
  MemoryFile() = default;
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
};

}  // namespace

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

bool is_npy_bytes(std::string_view bytes) { return bytes.substr(0, 6) == std::string_view("\x93NUMPY", 6); }

namespace {

std::uint32_t le32(const std::string& b, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
}

void put_le32(std::string& b, std::size_t at, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) b[at + static_cast<std::size_t>(k)] = static_cast<char>(v >> (8 * k));
}

// Whether bytes [at, end) may be metadata after a data chunk rather than samples: whole RIFF
// chunks (a four-character printable name and a size that fits, padded to even), or what a
// tagger leaves (a chunk whose size is off, zero padding). Samples almost never start with
// four printable characters or are all zeros.
bool whole_chunks(const std::string& b, std::size_t at);
bool may_be_metadata(const std::string& b, std::size_t at) {
  if (whole_chunks(b, at)) return true;
  bool printable = b.size() - at >= 8;
  for (std::size_t k = 0; printable && k < 4; ++k)
    printable = static_cast<unsigned char>(b[at + k]) >= 0x20 && static_cast<unsigned char>(b[at + k]) <= 0x7E;
  return printable || b.find_first_not_of('\0', at) == std::string::npos;
}

bool whole_chunks(const std::string& b, std::size_t at) {
  while (at < b.size()) {
    if (b.size() - at < 8) return false;
    for (std::size_t k = 0; k < 4; ++k)
      if (const unsigned char c = static_cast<unsigned char>(b[at + k]); c < 0x20 || c > 0x7E) return false;
    const std::size_t size = le32(b, at + 4);
    if (size > b.size() - at - 8) return false;
    at += 8 + size + (size & 1);
  }
  return at == b.size() || at == b.size() + 1;  // a last odd chunk may lack its pad byte
}

// A WAV written to a pipe by a program that did not know its length leaves the data chunk's
// size at 0 (read as no samples: the stream lost without a word) or near 2^31 (read as
// truncated). In a stream held whole, such a placeholder means "to the end": it becomes the
// bytes that are there. (0xFFFFFFFF, ffmpeg's, libsndfile reads so already.) A file on disk
// with a size of 0 is read so too (read_signal_file); one near 2^31 that is short is refused as
// truncated.
std::string with_streamed_wav_length(std::string bytes) {
  if (bytes.size() < 12 || bytes.compare(0, 4, "RIFF") != 0 || bytes.compare(8, 4, "WAVE") != 0) return bytes;
  for (std::size_t at = 12; at + 8 <= bytes.size();) {
    const std::uint32_t size = le32(bytes, at + 4);
    if (bytes.compare(at, 4, "data") == 0) {
      const std::size_t rest = bytes.size() - (at + 8);
      // Not where the RIFF size describes these bytes and what follows the data chunk may be
      // metadata: an empty WAV with a LIST or id3 chunk after its data keeps its empty data.
      // Bytes after an empty data chunk that cannot be metadata are its samples.
      const std::uint32_t riff = le32(bytes, 4);
      const bool riff_unknown = riff == 0 || riff >= 0x7FFF0000u || riff != bytes.size() - 8;
      const bool placeholder =
          (size == 0 && rest > 0 && (riff_unknown || !may_be_metadata(bytes, at + 8))) ||
          (riff_unknown && size >= 0x7FFF0000u && size != 0xFFFFFFFFu && size > rest);
      if (placeholder && rest <= 0xFFFFFFF0u && bytes.size() - 8 <= 0xFFFFFFFFu) {
        put_le32(bytes, at + 4, static_cast<std::uint32_t>(rest));
        put_le32(bytes, 4, static_cast<std::uint32_t>(bytes.size() - 8));
      }
      return bytes;
    }
    at += 8 + static_cast<std::size_t>(size) + (size & 1);
  }
  return bytes;
}

}  // namespace

Expected<SignalFile, std::string> read_signal_bytes(const std::string& given, const std::string& name, DType dtype) {
  const std::string bytes = with_streamed_wav_length(given);
  MemoryFile file;
  if (file.fd < 0) return Unexpected{"cannot read '" + name + "': " + std::strerror(errno)};
  if (auto ok = write_all(file.fd, bytes.data(), bytes.size()); !ok)
    return Unexpected{"cannot read '" + name + "': " + ok.error()};
  if (::lseek(file.fd, 0, SEEK_SET) != 0) return Unexpected{"cannot read '" + name + "': " + std::strerror(errno)};
  if (is_npy_bytes(bytes)) {
    auto signal = read_npy_fd(file.fd, name, dtype);
    if (!signal) return Unexpected{signal.error()};
    return SignalFile{std::move(signal).value(), std::nullopt, std::nullopt};
  }
  return read_audio_fd(file.fd, name, dtype);
}

Expected<std::string, std::string> encode_signal(const Signal& signal, const std::string& extension,
                                                 std::optional<double> sample_rate_hz, const WriteOptions& options) {
  const std::string name = "<stdout>";
  if (extension == ".npy" && options.subtype)
    return cannot_write(name, kNoSubtypeForNpy);
  if (extension != ".npy" && !is_audio_extension(extension))
    return cannot_write(name, "unknown output format '" + extension + "' " + std::string(kExpectedExtensions));
  if (signal.channels() == 0) return cannot_write(name, "the signal has no channels");
  MemoryFile file;
  if (file.fd < 0) return cannot_write(name, std::strerror(errno));
  Expected<std::monostate, std::string> written = std::monostate{};
  if (extension == ".npy") {
    written = write_npy(file.fd, signal);
  } else {
    if (!sample_rate_hz) return cannot_write(name, kNoSampleRate);
    auto format = audio_format_for(extension, options.subtype);
    if (!format) return cannot_write(name, format.error());
    written = write_audio(file.fd, signal, *sample_rate_hz, *format);
  }
  if (!written) return cannot_write(name, written.error());
  off_t size = ::lseek(file.fd, 0, SEEK_END);
  if (size < 0 || ::lseek(file.fd, 0, SEEK_SET) != 0) return cannot_write(name, std::strerror(errno));
  std::string bytes(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return cannot_write(name, n < 0 ? std::strerror(errno) : "the memory file ended early");
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

bool audio_subtype_available(const std::string& extension, const std::string& subtype) {
  return is_audio_extension(extension) && audio_format_for(extension, subtype).has_value();
}

Expected<SignalFile, std::string> read_signal_file(const std::string& path, DType dtype) {
  if (lower_extension(path) == ".npy") {
    auto signal = read_npy_file(path, dtype);
    if (!signal) return Unexpected{signal.error()};
    return SignalFile{std::move(signal).value(), std::nullopt, std::nullopt};
  }
  // A pipe (a FIFO, `<(...)`, /dev/stdin) cannot seek, which libsndfile's FLAC reader needs, and
  // may carry a streamed WAV's placeholder length: it is read whole, as `-i -` is.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
    auto bytes = read_whole_file(path, AlsoRead::pipes);
    if (!bytes) return Unexpected{bytes.error()};
    return read_signal_bytes(*bytes, path, dtype);
  }
  auto file = read_audio_file(path, dtype);
  // A WAV saved from a pipe (`prog > take.wav`) keeps the writer's data size of 0: libsndfile
  // reads no samples, which would be an empty signal and an empty output without a word. Such
  // a file is read as a stream is, to its end (rare, so the whole file is read again).
  if (file && file->signal.samples() == 0 && S_ISREG(st.st_mode) && st.st_size > 44) {
    auto bytes = read_whole_file(path, AlsoRead::nothing);
    if (bytes && with_streamed_wav_length(*bytes) != *bytes) return read_signal_bytes(*bytes, path, dtype);
  }
  return file;
}

Expected<std::monostate, std::string> check_output_format(const std::string& path,
                                                          const WriteOptions& options) {
  // Where the file goes, checked now rather than after the whole computation.
  if (auto place = check_write_place(path); !place) return place;
  return check_output_encoding(path, options);
}

Expected<std::monostate, std::string> check_output_channels(const std::string& path, std::size_t channels,
                                                            const WriteOptions& options, const std::string& name) {
  const std::string ext = lower_extension(path);
  if (!is_audio_extension(ext)) return std::monostate{};
  auto format = audio_format_for(ext, options.subtype);
  if (!format) return cannot_write(name.empty() ? path : name, format.error());
  if (std::optional<std::string> beyond = channels_beyond(*format, channels))
    return cannot_write(name.empty() ? path : name, *beyond);
  return std::monostate{};
}

Expected<std::monostate, std::string> check_output_encoding(const std::string& path, const WriteOptions& options) {
  std::string ext = lower_extension(path);
  if (ext.empty())
    return cannot_write(path, std::string("the name has no extension ") + kExpectedExtensions);
  if (ext == ".npy") {
    if (options.subtype)
      return cannot_write(path, kNoSubtypeForNpy);
    return std::monostate{};
  }
  if (!is_audio_extension(ext))
    return cannot_write(
        path, "unknown output extension '" + ext + "' " + std::string(kExpectedExtensions));
  auto format = audio_format_for(ext, options.subtype);
  if (!format) return cannot_write(path, format.error());
  return std::monostate{};
}

Expected<std::monostate, std::string> write_signal_file(const std::string& path,
                                                        const Signal& signal,
                                                        std::optional<double> sample_rate_hz,
                                                        const WriteOptions& options) {
  if (auto checked = check_output_format(path, options); !checked) return checked;
  if (signal.channels() == 0) return cannot_write(path, "the signal has no channels");

  std::string ext = lower_extension(path);
  if (ext == ".npy")
    return write_file_atomically(
        path, [&](int fd, const std::string&) { return write_npy(fd, signal); }, options.at_link);

  if (!sample_rate_hz)
    return cannot_write(path, kNoSampleRate);
  auto format = audio_format_for(ext, options.subtype);
  if (!format) return cannot_write(path, format.error());
  return write_file_atomically(
      path, [&](int fd, const std::string&) { return write_audio(fd, signal, *sample_rate_hz, *format); },
      options.at_link);
}

}  // namespace fxc
