// SPDX-License-Identifier: Apache-2.0
#include "formats/signal_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "formats/audio_file.h"
#include "formats/npy_file.h"

namespace fxc {

Expected<std::unique_ptr<SignalReader>, std::string> open_signal_reader(const std::string& path) {
  // Anything but a regular file is left to the whole read without being opened here: opening a
  // FIFO and closing it again would let its writer start and then lose what it wrote.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Unexpected{"cannot read '" + path + "': " + std::strerror(errno)};
  if (!S_ISREG(st.st_mode)) return std::unique_ptr<SignalReader>();
  if (lower_extension(path) == ".npy") return open_npy_reader(path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Unexpected{"cannot read '" + path + "': " + std::strerror(errno)};
  auto reader = open_audio_reader(fd, path);
  ::close(fd);  // libsndfile keeps a descriptor of its own
  return reader;
}

Expected<std::unique_ptr<SignalWriter>, std::string> open_signal_writer(int fd, const std::string& extension,
                                                                        std::size_t channels, std::size_t frames,
                                                                        DType dtype,
                                                                        std::optional<double> sample_rate_hz,
                                                                        const WriteOptions& options) {
  if (extension == ".npy") return open_npy_writer(fd, channels, frames, dtype);
  if (!sample_rate_hz) return Unexpected{std::string("an audio file needs a sample rate (give one with --fs)")};
  auto format = audio_format_for(extension, options.subtype);
  if (!format) return Unexpected{format.error()};
  return open_audio_writer(fd, channels, frames, dtype, *sample_rate_hz, *format);
}

}  // namespace fxc
