// SPDX-License-Identifier: Apache-2.0
#include "formats/wav_pipe.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <algorithm>

#include "support/file_io.h"

namespace fxc {
namespace {

std::uint32_t le32(const unsigned char* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}
std::uint16_t le16(const unsigned char* p) { return static_cast<std::uint16_t>(p[0] | p[1] << 8); }

void put_le32(std::string& out, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<char>(v >> (8 * k)));
}
void put_le16(std::string& out, std::uint16_t v) {
  out.push_back(static_cast<char>(v & 0xFF));
  out.push_back(static_cast<char>(v >> 8));
}

// Exactly `size` bytes from `fd` (waiting for them on a pipe); false where the stream ended first.
Expected<bool, std::string> read_exactly(int fd, unsigned char* into, std::size_t size) {
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::read(fd, into + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unexpected{std::string(std::strerror(errno))};
    if (n == 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Chunks before the samples (LIST, fact, ...) are skipped; more than this is no WAV header.
constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t{64} << 20;

}  // namespace

Expected<std::unique_ptr<WavPipeReader>, std::string> open_wav_pipe_reader(int fd, const std::string& name) {
  auto fail = [&](const std::string& reason) { return Unexpected{"cannot read '" + name + "': " + reason}; };
  unsigned char riff[12];
  auto got = read_exactly(fd, riff, sizeof riff);
  if (!got) return fail(got.error());
  if (!*got) return fail("the stream ended before a WAV header");
  if (std::memcmp(riff, "\x93NUMPY", 6) == 0)
    return fail("it is a .npy array, which stores each channel whole, one after another, so it cannot be run as "
                "it comes: send WAV (--pipe-format wav upstream), or run without --live-pipe");
  if (std::memcmp(riff, "RIFF", 4) != 0 || std::memcmp(riff + 8, "WAVE", 4) != 0)
    return fail(std::string("not a WAV stream (RIFF/WAVE)") +
                (std::memcmp(riff, "RF64", 4) == 0 ? ": RF64 is not read as it comes" : "") +
                ": --live-pipe reads WAV from standard input; run other formats without it");
  const std::uint32_t riff_size = le32(riff + 4);
  std::optional<WavEncoding> encoding;
  std::uint16_t channels = 0, block_align = 0;
  std::uint32_t rate = 0;
  std::uint64_t skipped = 0;
  std::uint64_t consumed = sizeof riff;  // the stream's bytes before this chunk
  while (true) {
    unsigned char head[8];
    got = read_exactly(fd, head, sizeof head);
    if (!got) return fail(got.error());
    if (!*got) return fail("the stream ended before its samples (no data chunk)");
    const std::uint32_t size = le32(head + 4);
    if (std::memcmp(head, "data", 4) == 0) {
      if (!encoding) return fail("its data chunk comes before its fmt chunk");
      auto format = wav_format_of(*encoding);
      if (!format) return fail(format.error());
      if (channels == 0) return fail("the stream has no channels");
      if (channels > 1024) return fail("the stream has " + std::to_string(channels) + " channels; WAV holds at most 1024");
      if (rate == 0 || rate > 0x7FFFFFFFu) return fail("the stream has no valid sample rate (" + std::to_string(rate) + " Hz)");
      const std::size_t frame_bytes = std::size_t{channels} * (encoding->bits / 8);
      if (block_align != frame_bytes)
        return fail("its fmt chunk's block size " + std::to_string(block_align) + " is not " +
                    std::to_string(channels) + " channels of " + std::to_string(encoding->bits) + " bits");
      auto reader = std::unique_ptr<WavPipeReader>(new WavPipeReader());
      reader->name_ = name;
      reader->channels_ = channels;
      reader->sample_rate_hz_ = rate;
      reader->subtype_ = format->description.substr(format->description.find(' ') + 1);
      // Placeholders of writers that stream: 0 where the RIFF size says nothing either or
      // ends with this chunk (where it says that chunks follow, metadata after an empty data
      // chunk, the stream is an empty WAV), and sizes from 0x7FFF0000 up (sox's, arecord's,
      // ffmpeg's 0xFFFFFFFF), as a whole read takes them (formats/signal_file.cpp). A stream
      // read to its end that ends here is empty all the same.
      const bool riff_unknown = riff_size == 0 || riff_size >= 0x7FFF0000u || riff_size <= consumed;  // (consumed + 8 bytes, less the first 8)
      const bool placeholder = (size == 0 && riff_unknown) || size >= 0x7FFF0000u;
      if (!placeholder) reader->frames_ = size / frame_bytes;
      auto samples = open_wav_sample_reader(fd, channels, rate, *format);
      if (!samples) return fail(samples.error());
      reader->samples_ = std::move(samples).value();
      return reader;
    }
    if (std::memcmp(head, "fmt ", 4) == 0) {
      if (size < 16 || size > 4096) return fail("its fmt chunk is damaged (" + std::to_string(size) + " bytes)");
      unsigned char fmt[4096 + 1];
      got = read_exactly(fd, fmt, size + (size & 1));
      if (!got) return fail(got.error());
      if (!*got) return fail("the stream ended in its fmt chunk");
      std::uint16_t tag = le16(fmt);
      channels = le16(fmt + 2);
      rate = le32(fmt + 4);
      block_align = le16(fmt + 12);
      const std::uint16_t bits = le16(fmt + 14);
      // WAVE_FORMAT_EXTENSIBLE: the format tag is the sub-format GUID's first two bytes.
      if (tag == 0xFFFE && size >= 40) tag = le16(fmt + 24);
      encoding = WavEncoding{tag, bits};
      consumed += 8 + std::uint64_t{size} + (size & 1);
      continue;
    }
    skipped += 8 + std::uint64_t{size} + (size & 1);
    consumed += 8 + std::uint64_t{size} + (size & 1);
    if (skipped > kMaxHeaderBytes) return fail("no data chunk in its first 64 MiB");
    unsigned char discard[1 << 16];
    for (std::uint64_t left = std::uint64_t{size} + (size & 1); left > 0;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, sizeof discard));
      got = read_exactly(fd, discard, n);
      if (!got) return fail(got.error());
      if (!*got) return fail("the stream ended before its samples (no data chunk)");
      left -= n;
    }
  }
}

Expected<std::size_t, std::string> WavPipeReader::read(Signal& into, std::size_t frames) {
  const std::size_t want = frames_ ? std::min(frames, *frames_ - read_) : frames;
  auto got = samples_->read(into, want);
  if (!got) return Unexpected{"cannot read '" + name_ + "': " + got.error()};
  read_ += *got;
  if (frames_ && *got < want)
    return Unexpected{"cannot read '" + name_ + "': truncated: the header promises " + std::to_string(*frames_) +
                      " frames but only " + std::to_string(read_) + " could be read"};
  return *got;
}

Expected<std::unique_ptr<SignalWriter>, std::string> open_wav_pipe_writer(int fd, std::size_t channels, DType dtype,
                                                                          double sample_rate_hz,
                                                                          const WriteOptions& options) {
  auto format = audio_format_for(".wav", options.subtype);
  if (!format) return Unexpected{format.error()};
  const WavEncoding encoding = wav_encoding(*format);
  auto samples = open_wav_sample_writer(fd, channels, dtype, sample_rate_hz, *format);  // checks the rate and channels
  if (!samples) return Unexpected{samples.error()};
  const auto frame_bytes = static_cast<std::uint32_t>(channels * (encoding.bits / 8));
  const auto rate = static_cast<std::uint32_t>(sample_rate_hz);
  std::string header = "RIFF";
  put_le32(header, 0xFFFFFFFFu);
  header += "WAVEfmt ";
  put_le32(header, 16);
  put_le16(header, encoding.tag);
  put_le16(header, static_cast<std::uint16_t>(channels));
  put_le32(header, rate);
  put_le32(header, static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{rate} * frame_bytes, 0xFFFFFFFFu)));
  put_le16(header, static_cast<std::uint16_t>(frame_bytes));
  put_le16(header, encoding.bits);
  header += "data";
  put_le32(header, 0xFFFFFFFFu);
  if (auto ok = write_all(fd, header.data(), header.size()); !ok) return Unexpected{ok.error()};
  return std::move(samples).value();
}

}  // namespace fxc
