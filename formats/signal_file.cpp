// SPDX-License-Identifier: Apache-2.0
#include "formats/signal_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "formats/audio_file.h"
#include "formats/npy_file.h"

namespace fxc {
namespace {


constexpr const char* kExpectedExtensions = "(expected .wav, .flac, .ogg, .aiff or .npy)";

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

Unexpected<std::string> cannot_write(const std::string& path, const std::string& reason) {
  return Unexpected{"cannot write '" + path + "': " + reason};
}

}  // namespace

Expected<SignalFile, std::string> read_signal_file(const std::string& path, DType dtype) {
  if (lower_extension(path) == ".npy") {
    auto signal = read_npy_file(path, dtype);
    if (!signal) return Unexpected{signal.error()};
    return SignalFile{std::move(signal).value(), std::nullopt};
  }
  return read_audio_file(path, dtype);
}

Expected<std::monostate, std::string> check_output_format(const std::string& path,
                                                          const WriteOptions& options) {
  // Where the file goes, checked now rather than after the whole computation.
  if (auto place = check_write_place(path); !place) return place;
  std::string ext = lower_extension(path);
  if (ext.empty())
    return cannot_write(path, std::string("the name has no extension ") + kExpectedExtensions);
  if (ext == ".npy") {
    if (options.subtype)
      return cannot_write(path,
                          "--subtype does not apply to .npy output (its dtype is that of "
                          "the computation, --dtype)");
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
    return write_file_atomically(path,
                                 [&](int fd, const std::string&) { return write_npy(fd, signal); });

  if (!sample_rate_hz)
    return cannot_write(path, "an audio file needs a sample rate (give one with --fs)");
  auto format = audio_format_for(ext, options.subtype);
  if (!format) return cannot_write(path, format.error());
  return write_file_atomically(path, [&](int fd, const std::string&) {
    return write_audio(fd, signal, *sample_rate_hz, *format);
  });
}

}  // namespace fxc
