// SPDX-License-Identifier: Apache-2.0
// WAV streams on a pipe (formats/wav_pipe.h, `fxc run --live-pipe`): headers read from a real
// pipe in every encoding, with chunks before the samples and WAVE_FORMAT_EXTENSIBLE, the
// samples a whole read of the same file gives, the placeholder lengths, the writer's bytes,
// and the damaged headers.
#include "formats/wav_pipe.h"

#include <doctest/doctest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "formats/signal_file.h"
#include "support/file_io.h"
#include "temp_dir.h"

using namespace fxc;

namespace {

using fxc::test::TempDir;

Signal test_signal(std::size_t channels, std::size_t samples) {
  Signal s(channels, samples, DType::f64);
  for (std::size_t c = 0; c < channels; ++c)
    for (std::size_t i = 0; i < samples; ++i)
      s.f64(c)[i] = 0.9 * std::sin(0.01 * static_cast<double>(i + 1) * static_cast<double>(c + 1));
  return s;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::uint32_t le32(const std::string& b, std::size_t at) {
  std::uint32_t v = 0;
  for (int k = 3; k >= 0; --k) v = v << 8 | static_cast<unsigned char>(b[at + static_cast<std::size_t>(k)]);
  return v;
}
std::string le32s(std::uint32_t v) {
  std::string s;
  for (int k = 0; k < 4; ++k) s.push_back(static_cast<char>(v >> (8 * k)));
  return s;
}

// `bytes` on the read end of a pipe, written by a thread (so that a reader waits on it as on
// a live stream); the thread is joined when this goes.
class Piped {
 public:
  explicit Piped(std::string bytes) {
    REQUIRE(::pipe(fds_) == 0);
    writer_ = std::thread([this, b = std::move(bytes)] {
      // A reader that stops early closes its end: EPIPE for this thread, not SIGPIPE.
      sigset_t pipe_signal;
      sigemptyset(&pipe_signal);
      sigaddset(&pipe_signal, SIGPIPE);
      pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
      (void)write_all(fds_[1], b.data(), b.size());
      ::close(fds_[1]);
    });
  }
  ~Piped() {
    ::close(fds_[0]);  // a writer still blocked gets EPIPE
    writer_.join();
  }
  int fd() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
  std::thread writer_;
};

// Every frame of the stream on `fd`, read `piece` frames at a time.
Signal read_all(WavPipeReader& reader, std::size_t piece) {
  std::vector<Signal> pieces;
  std::size_t total = 0;
  while (true) {
    Signal part(reader.channels(), piece, DType::f64);
    auto got = reader.read(part, piece);
    REQUIRE_MESSAGE(got.has_value(), (got ? std::string() : got.error()));
    if (*got == 0) break;
    Signal kept(reader.channels(), *got, DType::f64);
    for (std::size_t c = 0; c < reader.channels(); ++c)
      for (std::size_t i = 0; i < *got; ++i) kept.f64(c)[i] = part.f64(c)[i];
    pieces.push_back(std::move(kept));
    total += *got;
    if (*got < piece) break;
  }
  Signal all(reader.channels(), total, DType::f64);
  std::size_t at = 0;
  for (const Signal& p : pieces) {
    for (std::size_t c = 0; c < p.channels(); ++c)
      for (std::size_t i = 0; i < p.samples(); ++i) all.f64(c)[at + i] = p.f64(c)[i];
    at += p.samples();
  }
  return all;
}

bool same(const Signal& a, const Signal& b) {
  if (a.channels() != b.channels() || a.samples() != b.samples()) return false;
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t i = 0; i < a.samples(); ++i)
      if (a.at(c, i) != b.at(c, i)) return false;
  return true;
}

// The fmt chunk of `wav` rewritten as WAVE_FORMAT_EXTENSIBLE (40 bytes, the tag in the GUID).
std::string extensible(const std::string& wav) {
  const std::size_t fmt = wav.find("fmt ");
  const std::uint32_t size = le32(wav, fmt + 4);
  std::string body = wav.substr(fmt + 8, 16);
  const std::string tag = body.substr(0, 2);
  body[0] = '\xfe';
  body[1] = '\xff';
  body += std::string("\x16\x00", 2);  // cbSize 22
  body += body.substr(14, 2);            // valid bits
  body += std::string(4, '\0');         // channel mask
  body += tag + std::string("\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71", 14);  // the GUID
  std::string out = wav.substr(0, fmt) + "fmt " + le32s(40) + body + wav.substr(fmt + 8 + size + (size & 1));
  return out;
}

}  // namespace

TEST_CASE("A WAV read from a pipe as it comes gives the whole read's samples, in every encoding") {
  TempDir dir;
  const Signal x = test_signal(3, 5000);
  for (const char* subtype : {"pcm8", "pcm16", "pcm24", "pcm32", "float", "double", "ulaw", "alaw"}) {
    CAPTURE(subtype);
    const std::string path = (dir.path / (std::string(subtype) + ".wav")).string();
    REQUIRE(write_signal_file(path, x, 44100, WriteOptions{std::string(subtype)}));
    const Signal want = read_signal_file(path, DType::f64).value().signal;
    const std::string wav = bytes_of(path);
    // A LIST chunk of an odd size (its pad byte) between fmt and data.
    const std::size_t data = wav.find("data");
    const std::string with_list = wav.substr(0, data) + "LIST" + le32s(5) + "abcde" + std::string(1, '\0') + wav.substr(data);
    for (const std::string& bytes : {wav, with_list, extensible(wav)}) {
      Piped pipe(bytes);
      auto reader = open_wav_pipe_reader(pipe.fd(), "<stdin>");
      REQUIRE_MESSAGE(reader.has_value(), (reader ? std::string() : reader.error()));
      CHECK((*reader)->channels() == 3);
      CHECK((*reader)->sample_rate_hz() == 44100);
      CHECK((*reader)->subtype() == subtype);
      CHECK((*reader)->frames() == std::optional<std::size_t>(5000));
      CHECK(same(read_all(**reader, 777), want));
    }
  }
}

TEST_CASE("A WAV stream's placeholder lengths read to the end; a real length stops there or fails short") {
  TempDir dir;
  const Signal x = test_signal(2, 3000);
  const std::string path = (dir.path / "x.wav").string();
  REQUIRE(write_signal_file(path, x, 48000, WriteOptions{std::string("pcm16")}));
  const Signal want = read_signal_file(path, DType::f64).value().signal;
  const std::string wav = bytes_of(path);
  const std::size_t data = wav.find("data");
  auto with_sizes = [&](std::uint32_t riff, std::uint32_t size, const std::string& tail = {}) {
    return wav.substr(0, 4) + le32s(riff) + wav.substr(8, data - 4) + le32s(size) + wav.substr(data + 8) + tail;
  };
  // 0 with no RIFF size (a writer that never came back), arecord's and sox's near 2^31, ffmpeg's 0xFFFFFFFF.
  for (auto [riff, size] : {std::pair<std::uint32_t, std::uint32_t>{0, 0}, {0x7FFFFFFF, 0x7FFFF000},
                            {0xFFFFFFFF, 0xFFFFFFFF}, {0, 0x7FFF0000}}) {
    CAPTURE(size);
    Piped pipe(with_sizes(riff, size));
    auto reader = open_wav_pipe_reader(pipe.fd(), "<stdin>");
    REQUIRE(reader.has_value());
    CHECK_FALSE((*reader)->frames().has_value());
    CHECK(same(read_all(**reader, 1000), want));
  }
  {
    // A real length shorter than the stream: its frames, and what follows is not read.
    Piped pipe(with_sizes(static_cast<std::uint32_t>(wav.size() - 8), 4 * 1000, std::string(64, '\x11')));
    auto reader = open_wav_pipe_reader(pipe.fd(), "<stdin>");
    REQUIRE(reader.has_value());
    const Signal got = read_all(**reader, 300);
    REQUIRE(got.samples() == 1000);
    CHECK(got.at(1, 999) == want.at(1, 999));
  }
  {
    // A data size of 0 where the RIFF size says that chunks follow the data: an empty WAV
    // with metadata after its data, not a placeholder.
    Piped pipe(with_sizes(static_cast<std::uint32_t>(data + 8 + 12 - 8), 0).substr(0, data + 8) + "LIST" + le32s(4) +
               "INFO");
    auto reader = open_wav_pipe_reader(pipe.fd(), "<stdin>");
    REQUIRE(reader.has_value());
    CHECK((*reader)->frames() == std::optional<std::size_t>(0));
    CHECK(read_all(**reader, 100).samples() == 0);
  }
  {
    // A RIFF size that ends with the data chunk's header (a writer that set it before the
    // samples) says nothing about them: to the end, as a whole read takes it.
    Piped pipe(with_sizes(static_cast<std::uint32_t>(data + 8 - 8), 0));
    auto reader = open_wav_pipe_reader(pipe.fd(), "<stdin>");
    REQUIRE(reader.has_value());
    CHECK_FALSE((*reader)->frames().has_value());
    CHECK(same(read_all(**reader, 1000), want));
  }
  {
    // Shorter than its header says: the frames there, then the error.
    Piped pipe(wav.substr(0, wav.size() - 400));
    auto reader = open_wav_pipe_reader(pipe.fd(), "<stdin>");
    REQUIRE(reader.has_value());
    Signal part(2, 2000, DType::f64);
    CHECK((*reader)->read(part, 2000).value() == 2000);
    auto short_read = (*reader)->read(part, 2000);
    REQUIRE_FALSE(short_read.has_value());
    CHECK(short_read.error() == "cannot read '<stdin>': truncated: the header promises 3000 frames but only 2900 could be read");
  }
}

TEST_CASE("A WAV written to a pipe holds the file's sample bytes after a header that says 'to the end'") {
  TempDir dir;
  const Signal x = test_signal(2, 4000);
  for (const char* subtype : {"pcm8", "pcm16", "pcm24", "pcm32", "float", "double", "ulaw", "alaw"}) {
    CAPTURE(subtype);
    const std::string file = (dir.path / "file.wav").string(), live = (dir.path / "live.wav").string();
    REQUIRE(write_signal_file(file, x, 48000, WriteOptions{std::string(subtype)}));
    auto written = write_file_atomically(live, [&](int fd, const std::string&) -> Expected<std::monostate, std::string> {
      auto writer = open_wav_pipe_writer(fd, 2, DType::f64, 48000, WriteOptions{std::string(subtype)});
      if (!writer) return Unexpected{writer.error()};
      for (std::size_t at = 0; at < 4000; at += 999)
        if (auto ok = (*writer)->write(x, at, std::min<std::size_t>(999, 4000 - at)); !ok) return ok;
      return (*writer)->finish();
    });
    REQUIRE_MESSAGE(written.has_value(), (written ? std::string() : written.error()));
    const std::string a = bytes_of(file), b = bytes_of(live);
    REQUIRE(b.size() > 44);
    CHECK(le32(b, 4) == 0xFFFFFFFFu);
    CHECK(b.substr(36, 4) == "data");
    CHECK(le32(b, 40) == 0xFFFFFFFFu);
    CHECK(a.substr(a.size() - (b.size() - 44)) == b.substr(44));
    CHECK(same(read_signal_file(live, DType::f64).value().signal, read_signal_file(file, DType::f64).value().signal));
  }
  auto refused = open_wav_pipe_writer(1, 2, DType::f32, 48000.5, WriteOptions{});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().find("whole number of Hz") != std::string::npos);
}

TEST_CASE("A WAV stream's damaged or unsupported header is an error that says why") {
  TempDir dir;
  const std::string path = (dir.path / "x.wav").string();
  REQUIRE(write_signal_file(path, test_signal(2, 100), 48000, WriteOptions{std::string("pcm16")}));
  const std::string wav = bytes_of(path);
  const std::size_t fmt = wav.find("fmt "), data = wav.find("data");
  std::string adpcm = wav, misaligned = wav;
  adpcm[fmt + 8] = 2;  // format tag 2: Microsoft ADPCM
  misaligned[fmt + 8 + 12] = 3;  // block align 3 for 2 x 16 bits
  const std::string data_first = wav.substr(0, 12) + wav.substr(data);
  std::string many = wav;
  many[fmt + 8 + 2] = '\x01';
  many[fmt + 8 + 3] = '\x04';  // 1025 channels
  struct Case {
    std::string bytes, message;
  };
  const std::vector<Case> cases = {
      {"", "the stream ended before a WAV header"},
      {std::string("\x93NUMPY", 6) + std::string(100, ' '), "it is a .npy array"},
      {std::string(100, 'x'), "not a WAV stream (RIFF/WAVE)"},
      {"RF64" + wav.substr(4), "RF64 is not read as it comes"},
      {adpcm, "(WAV format tag 2, 16 bits) is not one fxc reads from a stream"},
      {misaligned, "block size 3 is not 2 channels of 16 bits"},
      {data_first, "its data chunk comes before its fmt chunk"},
      {many, "the stream has 1025 channels; WAV holds at most 1024"},
      {wav.substr(0, fmt + 12), "the stream ended in its fmt chunk"},
      {wav.substr(0, data), "the stream ended before its samples (no data chunk)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.message);
    Piped pipe(c.bytes);
    auto reader = open_wav_pipe_reader(pipe.fd(), "<stdin>");
    REQUIRE_FALSE(reader.has_value());
    CHECK(reader.error().rfind("cannot read '<stdin>': ", 0) == 0);
    CHECK(reader.error().find(c.message) != std::string::npos);
  }
}
