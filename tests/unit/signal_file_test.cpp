// SPDX-License-Identifier: Apache-2.0
// Signal files: audio and .npy round trips, the .npy reader's checks, and the promise that a
// failed write changes nothing on disk.
#include "expected_text.h"
#include "formats/signal_file.h"
#include "temp_dir.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sndfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "formats/audio_file.h"
#include "formats/npy_file.h"
#include "worse.h"

using fxc::test::worse;

namespace fs = std::filesystem;
using namespace fxc;

namespace {

using fxc::test::TempDir;

// Distinct, non-trivial values in (-1, 1) on every channel.
Signal test_signal(std::size_t channels, std::size_t samples, DType dtype) {
  Signal s(channels, samples, dtype);
  for (std::size_t c = 0; c < channels; ++c)
    for (std::size_t i = 0; i < samples; ++i) {
      double v = 0.8 * std::sin(0.01 * (i + 1) * (c + 1) + 0.3 * c) + 1e-3 * std::cos(1.7 * i);
      if (dtype == DType::f64)
        s.f64(c)[i] = v;
      else
        s.f32(c)[i] = static_cast<float>(v);
    }
  return s;
}

double max_abs_difference(const Signal& a, const Signal& b) {
  REQUIRE(a.channels() == b.channels());
  REQUIRE(a.samples() == b.samples());
  double worst = 0;
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t i = 0; i < a.samples(); ++i)
      worst = worse(worst, std::abs(a.at(c, i) - b.at(c, i)));
  return worst;
}

bool bit_identical(const Signal& a, const Signal& b) {
  if (a.channels() != b.channels() || a.samples() != b.samples() || a.dtype() != b.dtype())
    return false;
  for (std::size_t c = 0; c < a.channels(); ++c) {
    bool same = a.dtype() == DType::f32
                    ? std::memcmp(a.f32(c).data(), b.f32(c).data(), a.samples() * 4) == 0
                    : std::memcmp(a.f64(c).data(), b.f64(c).data(), a.samples() * 8) == 0;
    if (!same) return false;
  }
  return true;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// A hand-made .npy: any version, any header text, any data bytes.
std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  std::size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  std::size_t n = header.size();
  for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

template <class T>
std::string raw(const std::vector<T>& values, bool swap = false) {
  std::string bytes(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  if (swap)
    for (std::size_t i = 0; i < bytes.size(); i += sizeof(T))
      std::reverse(bytes.begin() + i, bytes.begin() + i + sizeof(T));
  return bytes;
}

std::string error_of(const Expected<SignalFile, std::string>& r) {
  REQUIRE_FALSE(r.has_value());
  return r.error();
}
std::string error_of(const Expected<std::monostate, std::string>& r) {
  REQUIRE_FALSE(r.has_value());
  return r.error();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A stereo float WAV of `s` with the RIFF and data sizes given (placeholders, wrong ones).
std::string float_wav_with_sizes(const Signal& s, std::uint32_t riff, std::uint32_t data) {
  std::string bytes = "RIFF" + std::string(4, '\0') + "WAVEfmt " + std::string(4, '\0');
  auto put = [&](std::size_t at, std::uint32_t v, int n) {
    for (int k = 0; k < n; ++k) bytes[at + static_cast<std::size_t>(k)] = static_cast<char>(v >> (8 * k));
  };
  put(4, riff, 4);
  put(16, 16, 4);
  const std::uint16_t fmt[] = {3, 2};  // IEEE float, 2 channels
  bytes.append(reinterpret_cast<const char*>(fmt), 4);
  const std::uint32_t rate[] = {48000, 48000 * 8};
  bytes.append(reinterpret_cast<const char*>(rate), 8);
  const std::uint16_t block[] = {8, 32};
  bytes.append(reinterpret_cast<const char*>(block), 4);
  bytes += "data" + std::string(4, '\0');
  put(bytes.size() - 4, data, 4);
  for (std::size_t i = 0; i < s.samples(); ++i)
    for (std::size_t c = 0; c < 2; ++c) bytes.append(reinterpret_cast<const char*>(&s.f32(c)[i]), 4);
  return bytes;
}

}  // namespace

TEST_CASE("WAV float round trip is exact for f32 and within float rounding for f64") {
  TempDir dir;
  const Signal s32 = test_signal(2, 1000, DType::f32);
  REQUIRE(write_signal_file(dir / "a.wav", s32, 48000.0, {}));
  auto back = read_signal_file(dir / "a.wav", DType::f32);
  REQUIRE(back);
  CHECK(back->sample_rate_hz == 48000.0);
  CHECK(bit_identical(back->signal, s32));

  const Signal s64 = test_signal(2, 1000, DType::f64);
  REQUIRE(write_signal_file(dir / "b.wav", s64, 44100.0, {}));
  auto back64 = read_signal_file(dir / "b.wav", DType::f64);
  REQUIRE(back64);
  CHECK(back64->sample_rate_hz == 44100.0);
  CHECK(back64->signal.dtype() == DType::f64);
  // The file holds float32: rounding to nearest costs at most half an ulp, 2^-25 below 1.0.
  CHECK(max_abs_difference(back64->signal, s64) <= std::ldexp(1.0, -25));
  // Each sample is the nearest float32 (a cast, as libsndfile's own double path writes it),
  // big-endian AIFF too.
  CHECK(bit_identical(back64->signal, s64.converted(DType::f32).converted(DType::f64)));
  REQUIRE(write_signal_file(dir / "c.aiff", s64, 44100.0, {}));
  auto aiff = read_signal_file(dir / "c.aiff", DType::f64);
  REQUIRE(aiff);
  CHECK(bit_identical(aiff->signal, s64.converted(DType::f32).converted(DType::f64)));
  CHECK(dir.entries() == std::vector<std::string>{"a.wav", "b.wav", "c.aiff"});
}

TEST_CASE("WAV pcm16 round trip is within one 16-bit step") {
  TempDir dir;
  const Signal s = test_signal(1, 2000, DType::f64);
  REQUIRE(write_signal_file(dir / "a.wav", s, 48000.0, WriteOptions{"pcm16"}));
  auto back = read_signal_file(dir / "a.wav", DType::f64);
  REQUIRE(back);
  // fxc rounds to the nearest step of 1/32768 and libsndfile reads k / 32768: half a step.
  CHECK(max_abs_difference(back->signal, s) <= 0.5 / 32768 + 1e-15);
  CHECK(max_abs_difference(back->signal, s) > 0);  // it really was quantised
}

TEST_CASE("integer encodings round to the nearest step, without bias, and clip; NaN is -1") {
  TempDir dir;
  std::mt19937 random(11);
  std::uniform_real_distribution<double> u(-1.2, 1.2);
  Signal s(1, 20000, DType::f64);
  for (double& v : s.f64(0)) v = u(random);
  s.f64(0)[0] = 1.0;
  s.f64(0)[1] = -1.0;
  s.f64(0)[2] = std::nan("");
  s.f64(0)[3] = -std::numeric_limits<double>::infinity();
  struct Case {
    const char* file;
    const char* subtype;
    int bits;
  };
  for (Case c : {Case{"a8.wav", "pcm8", 8}, Case{"a16.wav", "pcm16", 16}, Case{"a24.wav", "pcm24", 24},
                 Case{"a32.wav", "pcm32", 32}, Case{"a16.flac", "pcm16", 16}, Case{"a24.flac", "pcm24", 24},
                 Case{"a16.aiff", "pcm16", 16}}) {
    CAPTURE(c.file);
    const double full = std::ldexp(1.0, c.bits - 1);
    // Halfway between two steps, either sign: ties go to the even step.
    for (std::size_t m = 0; m < 8; ++m)
      s.f64(0)[4 + m] = (m % 2 ? -1.0 : 1.0) * (static_cast<double>(m / 2) + 0.5) / full;
    REQUIRE(write_signal_file(dir / c.file, s, 48000.0, WriteOptions{c.subtype}));
    auto back = read_signal_file(dir / c.file, DType::f64);
    REQUIRE(back);
    double bias = 0;
    bool exact = true;
    for (std::size_t i = 0; i < s.samples(); ++i) {
      double v = s.at(0, i);
      v = std::isnan(v) ? -1.0 : std::clamp(v, -1.0, 1.0);
      const double want = std::clamp(std::nearbyint(v * full), -full, full - 1) / full;
      exact = exact && back->signal.at(0, i) == want;
      if (std::abs(v) < 1) bias += back->signal.at(0, i) - v;
    }
    CHECK(exact);
    CHECK(back->signal.at(0, 4) == 0.0);          // 0.5 steps: 0
    CHECK(back->signal.at(0, 6) == 2.0 / full);   // 1.5 steps: 2
    CHECK(back->signal.at(0, 7) == -2.0 / full);  // -1.5 steps: -2
    CHECK(std::abs(bias / static_cast<double>(s.samples())) < 0.05 / full);  // truncation gave -0.5 / full
  }
  // μ-law and A-law: loud samples clip with their sign (they wrapped around, or crashed).
  Signal loud(1, 4, DType::f64);
  loud.f64(0)[0] = 1e6;
  loud.f64(0)[1] = -1e6;
  loud.f64(0)[2] = 1.5;
  loud.f64(0)[3] = -1.5;
  for (const char* subtype : {"ulaw", "alaw"}) {
    CAPTURE(subtype);
    REQUIRE(write_signal_file(dir / "law.wav", loud, 8000.0, WriteOptions{subtype}));
    auto back = read_signal_file(dir / "law.wav", DType::f64);
    REQUIRE(back);
    for (std::size_t i = 0; i < 4; ++i) CHECK(back->signal.at(0, i) == doctest::Approx(i % 2 ? -0.98 : 0.98).epsilon(0.01));
  }
}

// What programs writing a WAV to a pipe leave in its header before they know the length.
TEST_CASE("a WAV on standard input whose data size is a placeholder is read to its end") {
  const Signal s = test_signal(2, 4800, DType::f32);
  auto wav_with_sizes = [&](std::uint32_t riff, std::uint32_t data) { return float_wav_with_sizes(s, riff, data); };
  for (auto [riff, data] : {std::pair<std::uint32_t, std::uint32_t>{0, 0}, {0x7FFFFFFF, 0x7FFFFFFF - 36},
                            {0xFFFFFFFF, 0xFFFFFFFF}, {36 + 38400, 38400},
                            // The RIFF size right, the data size left at 0: the samples after
                            // it form no chunks (they were read as none).
                            {36 + 38400, 0}}) {
    CAPTURE(data);
    auto back = read_signal_bytes(wav_with_sizes(riff, data), "<stdin>", DType::f32);
    REQUIRE(back);
    CHECK(back->signal.samples() == 4800);
    CHECK(bit_identical(back->signal, s));
  }
  // A size that is no placeholder and more than there is: truncated, refused as before.
  CHECK_FALSE(read_signal_bytes(wav_with_sizes(36 + 76800, 76800), "<stdin>", DType::f32));
  // An empty WAV whose RIFF size is right and whose data chunk is followed by metadata keeps
  // its empty data: the metadata is no samples.
  std::string empty = wav_with_sizes(0, 0).substr(0, 44) + "LIST" + std::string("\x04\0\0\0", 4) + "INFO";
  for (int k = 0; k < 4; ++k) empty[4 + static_cast<std::size_t>(k)] = static_cast<char>((empty.size() - 8) >> (8 * k));
  auto none = read_signal_bytes(empty, "<stdin>", DType::f32);
  REQUIRE(none);
  CHECK(none->signal.samples() == 0);
  // Also when a tagger got that chunk's size wrong, or left zero padding: metadata, not samples.
  for (std::string after : {"LIST" + std::string("\x40\0\0\0", 4) + "INFO", std::string(12, '\0')}) {
    std::string tagged = wav_with_sizes(0, 0).substr(0, 44) + after;
    for (int k = 0; k < 4; ++k) tagged[4 + static_cast<std::size_t>(k)] = static_cast<char>((tagged.size() - 8) >> (8 * k));
    auto still_none = read_signal_bytes(tagged, "<stdin>", DType::f32);
    REQUIRE(still_none);
    CHECK(still_none->signal.samples() == 0);
  }
}

TEST_CASE("a WAV file saved from a pipe, and any audio through a FIFO, reads as the stream would") {
  // `prog > take.wav` keeps the streaming writer's data size of 0: until 2026-11-29 such a file
  // read as no samples and made an empty output with exit status 0 (its bytes on standard
  // input read whole).
  TempDir dir;
  const Signal s = test_signal(2, 4800, DType::f32);
  for (std::uint32_t riff : {0u, 36u + 38400u, 0xFFFFFFFFu}) {
    CAPTURE(riff);
    write_bytes((dir / "zero.wav"), float_wav_with_sizes(s, riff, 0));
    auto back = read_signal_file((dir / "zero.wav"), DType::f32);
    REQUIRE(back);
    CHECK(bit_identical(back->signal, s));
  }
  // An empty WAV with metadata after its data chunk stays empty, on disk as on a pipe.
  std::string empty = float_wav_with_sizes(s, 0, 0).substr(0, 44) + "LIST" + std::string("\x04\0\0\0", 4) + "INFO";
  for (int k = 0; k < 4; ++k) empty[4 + static_cast<std::size_t>(k)] = static_cast<char>((empty.size() - 8) >> (8 * k));
  write_bytes((dir / "empty.wav"), empty);
  auto none = read_signal_file((dir / "empty.wav"), DType::f32);
  REQUIRE(none);
  CHECK(none->signal.samples() == 0);
  // A FIFO cannot seek, which libsndfile's FLAC reader needs: it is read whole first (until
  // 2026-11-29, "flac decoder lost sync"; `-i -` read it).
  REQUIRE(write_signal_file(dir / "s.flac", s, 48000.0, {}));
  const std::string fifo = dir / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string flac = read_bytes((dir / "s.flac"));
  std::thread writer([&] { write_bytes(fifo, flac); });
  auto piped = read_signal_file(fifo, DType::f32);
  writer.join();
  REQUIRE(piped);
  auto direct = read_signal_file((dir / "s.flac"), DType::f32);
  REQUIRE(direct);
  CHECK(bit_identical(piped->signal, direct->signal));
}

TEST_CASE("integer outputs clip out-of-range samples instead of wrapping around") {
  TempDir dir;
  Signal s(1, 4, DType::f64);
  s.f64(0)[0] = 1.5;
  s.f64(0)[1] = -1.5;
  s.f64(0)[2] = 0.25;
  REQUIRE(write_signal_file(dir / "a.wav", s, 48000.0, WriteOptions{"pcm16"}));
  auto back = read_signal_file(dir / "a.wav", DType::f64);
  REQUIRE(back);
  CHECK(back->signal.at(0, 0) > 0.999);
  CHECK(back->signal.at(0, 1) < -0.999);
}

// libsndfile 1.2.0 counts an odd-length 8-bit AIFF's pad byte as a frame: fxc corrects the
// header, so the file holds the frames written and a reader finds no extra zero.
TEST_CASE("8-bit AIFF outputs of an odd number of bytes keep their frame count") {
  TempDir dir;
  for (std::size_t channels : {1u, 2u, 3u})
    for (std::size_t samples : {1u, 7u, 8u, 4801u})
      for (const char* subtype : {"pcm8", "ulaw", "alaw", "pcm16"}) {
        CAPTURE(channels);
        CAPTURE(samples);
        CAPTURE(subtype);
        const Signal s = test_signal(channels, samples, DType::f64);
        REQUIRE(write_signal_file(dir / "a.aiff", s, 8000.0, WriteOptions{subtype}));
        auto back = read_signal_file(dir / "a.aiff", DType::f64);
        REQUIRE(back);
        CHECK(back->signal.channels() == channels);
        CHECK(back->signal.samples() == samples);
        CHECK(max_abs_difference(back->signal, s) < 0.04);  // μ-law's coarsest step near 0.8
        // The chunks as AIFF lays them out: SSND's size counts its samples, not the pad.
        std::ifstream in(dir / "a.aiff", std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::size_t ssnd = bytes.find("SSND");
        REQUIRE(ssnd != std::string::npos);
        std::uint32_t size = 0;
        for (int k = 0; k < 4; ++k) size = size << 8 | static_cast<unsigned char>(bytes[ssnd + 4 + k]);
        const std::size_t sample_bytes = std::string(subtype) == "pcm16" ? 2 : 1;
        CHECK(size == 8 + channels * samples * sample_bytes);
        CHECK(bytes.size() % 2 == 0);
      }
  // A device written in place (an output linked to /dev/null) is left as libsndfile wrote it.
  fs::create_symlink("/dev/null", dir / "null.aiff");
  CHECK(write_signal_file(dir / "null.aiff", test_signal(1, 4801, DType::f64), 8000.0, WriteOptions{"pcm8"}));
}

TEST_CASE("FLAC (pcm24 by default), AIFF (float) and Ogg Vorbis round trips") {
  TempDir dir;
  const Signal s = test_signal(2, 4800, DType::f32);

  REQUIRE(write_signal_file(dir / "a.flac", s, 96000.0, {}));
  auto flac = read_signal_file(dir / "a.flac", DType::f32);
  REQUIRE(flac);
  CHECK(flac->sample_rate_hz == 96000.0);
  // 24-bit quantisation: within one step of 2^-23.
  CHECK(max_abs_difference(flac->signal, s) <= std::ldexp(1.0, -23));

  REQUIRE(write_signal_file(dir / "a.aiff", s, 48000.0, {}));
  auto aiff = read_signal_file(dir / "a.aiff", DType::f32);
  REQUIRE(aiff);
  CHECK(bit_identical(aiff->signal, s));

  REQUIRE(write_signal_file(dir / "a.ogg", s, 48000.0, {}));
  auto ogg = read_signal_file(dir / "a.ogg", DType::f32);
  REQUIRE(ogg);
  // Lossy: only the shape and the rate are exact.
  CHECK(ogg->signal.channels() == 2);
  CHECK(ogg->signal.samples() == s.samples());
  CHECK(ogg->sample_rate_hz == 48000.0);
}

TEST_CASE("one signal written twice gives the same bytes, in every container; an empty one a readable file") {
  // Until 2026-11-29 a float WAV's or AIFF's PEAK chunk held the second it was written and an
  // Ogg stream's serial number came from the time of day (each page's CRC with it), and FLAC
  // with no samples was a file of 0 bytes.
  TempDir dir;
  const Signal s = test_signal(2, 4800, DType::f32);
  for (const char* ext : {".wav", ".aiff", ".flac", ".ogg"}) {
    CAPTURE(ext);
    REQUIRE(write_signal_file(dir / (std::string("a") + ext), s, 48000.0, {}));
    REQUIRE(write_signal_file(dir / (std::string("b") + ext), s, 48000.0, {}));
    const std::string a = read_bytes(dir / (std::string("a") + ext));
    CHECK(a == read_bytes(dir / (std::string("b") + ext)));
    CHECK(a.find("PEAK") == std::string::npos);
    auto back = read_signal_file(dir / (std::string("a") + ext), DType::f32);
    REQUIRE(back);  // libogg checks each page's CRC: the rewritten ones must hold
    CHECK(back->signal.samples() == 4800);
    const Signal empty(2, 0, DType::f32);
    REQUIRE(write_signal_file(dir / (std::string("e") + ext), empty, 48000.0, {}));
    auto none = read_signal_file(dir / (std::string("e") + ext), DType::f32);
    REQUIRE(none);
    CHECK(none->signal.samples() == 0);
    CHECK(none->signal.channels() == 2);
    CHECK(none->sample_rate_hz == 48000.0);
  }
  // The Ogg stream decodes to what it did with libsndfile's own serial numbers: only the serial
  // and the CRCs changed (the decoded samples of a lossy stream are compared with themselves).
  auto ogg_a = read_signal_file(dir / "a.ogg", DType::f32);
  auto ogg_b = read_signal_file(dir / "b.ogg", DType::f32);
  REQUIRE(ogg_a);
  REQUIRE(ogg_b);
  CHECK(bit_identical(ogg_a->signal, ogg_b->signal));
}

// A file far smaller than its header's frame count (digital silence compresses beyond 64
// samples per byte in FLAC) is read as one of unknown length: every frame is collected as it
// comes, none is allocated on the header's word. The samples must be the same either way.
TEST_CASE("a frame count the file's size cannot hold is read as an unknown length, to the same samples") {
  TempDir dir;
  Signal s(2, 12'000'000, DType::f32);  // 24 M samples: past the 2^24 always trusted, and 64 x the file
  for (std::size_t c = 0; c < 2; ++c)
    for (std::size_t i : {std::size_t{0}, std::size_t{6'000'001}, s.samples() - 1})
      s.f32(c)[i] = c ? -0.25f : 0.5f;
  REQUIRE(write_signal_file(dir / "quiet.flac", s, 96000.0, {}));
  CHECK(std::filesystem::file_size(dir / "quiet.flac") * 64 + (std::size_t{1} << 24) < 2 * s.samples());
  auto back = read_signal_file(dir / "quiet.flac", DType::f32);
  REQUIRE(back);
  CHECK(bit_identical(back->signal, s));
  auto wide = read_signal_file(dir / "quiet.flac", DType::f64);
  REQUIRE(wide);
  CHECK(wide->signal.at(1, 6'000'001) == -0.25);
  CHECK(wide->signal.at(0, s.samples() - 1) == 0.5);
}

TEST_CASE("multichannel WAV keeps each channel in its place") {
  TempDir dir;
  const Signal s = test_signal(6, 777, DType::f32);
  REQUIRE(write_signal_file(dir / "six.WAV", s, 48000.0, WriteOptions{"float"}));
  auto back = read_signal_file(dir / "six.WAV", DType::f32);
  REQUIRE(back);
  CHECK(back->signal.channels() == 6);
  CHECK(bit_identical(back->signal, s));
}

TEST_CASE(".npy round trips are bit-exact for f32 and f64, mono and multichannel") {
  TempDir dir;
  for (DType dtype : {DType::f32, DType::f64})
    for (std::size_t channels : {1u, 3u}) {
      CAPTURE(name(dtype));
      CAPTURE(channels);
      const Signal s = test_signal(channels, 1001, dtype);
      REQUIRE(write_signal_file(dir / "x.npy", s, std::nullopt, {}));
      auto back = read_signal_file(dir / "x.npy", dtype);
      REQUIRE(back);
      CHECK_FALSE(back->sample_rate_hz.has_value());
      CHECK(bit_identical(back->signal, s));
    }
}

TEST_CASE(".npy output is version 1.0, always 2-D, data 64-byte aligned") {
  TempDir dir;
  const Signal s = test_signal(1, 5, DType::f32);
  REQUIRE(write_signal_file(dir / "x.npy", s, std::nullopt, {}));
  const std::string bytes = read_bytes(dir / "x.npy");
  REQUIRE(bytes.size() > 10);
  CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_size =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  CHECK((10 + header_size) % 64 == 0);
  CHECK(bytes.size() == 10 + header_size + 5 * 4);
  const std::string header = bytes.substr(10, header_size);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 5), }";
  CHECK(header == dict + std::string(header_size - dict.size() - 1, ' ') + "\n");
}

TEST_CASE(".npy input: 1-D, versions 2.0 and 3.0, big-endian, Fortran order, conversion") {
  TempDir dir;
  const std::vector<float> mono = {0.5f, -0.25f, 0.125f};
  write_bytes(dir / "mono.npy",
              npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", raw(mono)));
  auto m = read_signal_file(dir / "mono.npy", DType::f32);
  REQUIRE(m);
  CHECK(m->signal.channels() == 1);
  CHECK(m->signal.samples() == 3);
  CHECK(m->signal.at(0, 1) == -0.25);

  const std::vector<double> two = {1, 2, 3, 4, 5, 6};  // C order: rows are channels
  for (int major : {2, 3}) {
    write_bytes(
        dir / "v.npy",
        npy_bytes("{\"descr\":\"<f8\",\"fortran_order\":False,\"shape\":(2,3)}", raw(two), major));
    auto v = read_signal_file(dir / "v.npy", DType::f64);
    REQUIRE(v);
    CHECK(v->signal.at(1, 0) == 4);
  }

  write_bytes(dir / "be.npy",
              npy_bytes("{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }",
                        raw(two, std::endian::native == std::endian::little)));
  auto be = read_signal_file(dir / "be.npy", DType::f64);
  REQUIRE(be);
  CHECK(be->signal.at(0, 2) == 3);
  CHECK(be->signal.at(1, 2) == 6);

  // Fortran order stores [2, 3] column by column: frames interleaved (what np.save(x.T) gives
  // for an x of [samples, channels]).
  const std::vector<double> interleaved = {1, 4, 2, 5, 3, 6};
  write_bytes(dir / "f.npy", npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
                                       raw(interleaved)));
  auto f = read_signal_file(dir / "f.npy", DType::f64);
  REQUIRE(f);
  for (std::size_t c = 0; c < 2; ++c)
    for (std::size_t i = 0; i < 3; ++i) CHECK(f->signal.at(c, i) == two[c * 3 + i]);

  auto narrowed = read_signal_file(dir / "v.npy", DType::f32);
  REQUIRE(narrowed);
  CHECK(narrowed->signal.dtype() == DType::f32);
  CHECK(narrowed->signal.at(1, 2) == 6);
}

TEST_CASE("reading: missing, unreadable and unrecognised files") {
  TempDir dir;
  CHECK(error_of(read_signal_file(dir / "missing.wav", DType::f32)) ==
        "cannot read '" + dir / "missing.wav" + "': No such file or directory");
  CHECK(error_of(read_signal_file(dir / "missing.npy", DType::f32)) ==
        "cannot read '" + dir / "missing.npy" + "': No such file or directory");
  CHECK(error_of(read_signal_file(dir.path.string(), DType::f32)) ==
        "cannot read '" + dir.path.string() + "': it is a directory");

  write_bytes(dir / "garbage.wav", "this is not audio at all, just some text\n");
  CHECK(error_of(read_signal_file(dir / "garbage.wav", DType::f32)) ==
        "cannot read '" + dir / "garbage.wav" +
            "': not a format libsndfile recognises (WAV, FLAC, Ogg, AIFF, ...)");
  write_bytes(dir / "garbage.npy", "this is not an array either\n");
  CHECK(error_of(read_signal_file(dir / "garbage.npy", DType::f32)) ==
        "cannot read '" + dir / "garbage.npy" +
            "': not a .npy file (no \\x93NUMPY magic at the start)");
}

TEST_CASE("a failed read leaves the caller's descriptor open (libsndfile closes its own copy)") {
  TempDir dir;
  write_bytes(dir / "junk.wav", "RIFF, but not really a WAV file");
  const int fd = ::open((dir / "junk.wav").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  CHECK(contains(error_of(read_audio_fd(fd, "junk.wav", DType::f32)), "not a format libsndfile recognises"));
  CHECK(::fcntl(fd, F_GETFD) != -1);  // libsndfile 1.2 closes a descriptor it fails to open
  CHECK(::close(fd) == 0);
}

// fxc run --jobs reads files on several threads: each read must get its own file and its own
// reason, though libsndfile keeps the reason for a failed open in a global.
TEST_CASE("reads on several threads at once each report their own file") {
  TempDir dir;
  write_bytes(dir / "junk.wav", "RIFF, but not really a WAV file");
  REQUIRE(write_signal_file(dir / "good.wav", test_signal(2, 4000, DType::f32), 8000.0, {}));
  std::string damaged = read_bytes(dir / "good.wav");
  damaged[22] = 0;  // WAV's channel count: zero channels
  write_bytes(dir / "damaged.wav", damaged);
  const std::string junk_error = error_of(read_signal_file(dir / "junk.wav", DType::f32));
  const std::string damaged_error = error_of(read_signal_file(dir / "damaged.wav", DType::f32));
  REQUIRE(contains(junk_error, "not a format libsndfile recognises"));
  REQUIRE(contains(damaged_error, "a damaged or unsupported header"));

  std::vector<std::string> wrong[3];
  auto reader = [&](int which) {
    for (int i = 0; i < 300; ++i) {
      if (which == 0) {
        std::string e = error_of(read_signal_file(dir / "junk.wav", DType::f32));
        if (e != junk_error) wrong[0].push_back(e);
      } else if (which == 1) {
        std::string e = error_of(read_signal_file(dir / "damaged.wav", DType::f32));
        if (e != damaged_error) wrong[1].push_back(e);
      } else {
        auto r = read_signal_file(dir / "good.wav", DType::f32);
        if (!r || r->signal.samples() != 4000) wrong[2].push_back(r ? "short" : r.error());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back(reader, t);
  for (std::thread& t : threads) t.join();
  for (const auto& w : wrong) {
    CHECK(w.size() == 0);
    if (!w.empty()) MESSAGE(w.front());
  }
}

TEST_CASE("reading: a truncated WAV is an error, not a shorter signal") {
  TempDir dir;
  REQUIRE(write_signal_file(dir / "a.wav", test_signal(2, 1000, DType::f32), 48000.0, {}));
  const std::string bytes = read_bytes(dir / "a.wav");
  write_bytes(dir / "cut.wav", bytes.substr(0, bytes.size() / 2));
  const std::string e = error_of(read_signal_file(dir / "cut.wav", DType::f32));
  CHECK(contains(e, "cannot read '" + dir / "cut.wav" + "': truncated: the header promises 8000"));
}

TEST_CASE("reading: truncated RF64, W64, AU and CAF files are errors too") {
  // libsndfile reads each as a shorter file and says so only in its log, in other words than
  // WAV's; until 2026-11-29 these ran on what was there (RF64 is what fxc writes past 4 GiB).
  TempDir dir;
  const Signal s = test_signal(2, 30000, DType::f64);
  std::vector<double> frames;
  for (std::size_t i = 0; i < s.samples(); ++i)
    for (std::size_t c = 0; c < 2; ++c) frames.push_back(s.f64(c)[i]);
  for (auto [name, format] : {std::pair{"a.rf64", SF_FORMAT_RF64}, {"a.w64", SF_FORMAT_W64}, {"a.au", SF_FORMAT_AU},
                              {"a.caf", SF_FORMAT_CAF}}) {
    CAPTURE(name);
    SF_INFO info{};
    info.samplerate = 48000;
    info.channels = 2;
    info.format = format | SF_FORMAT_PCM_16;
    SNDFILE* file = sf_open((dir / name).c_str(), SFM_WRITE, &info);
    REQUIRE(file);
    CHECK(sf_writef_double(file, frames.data(), 30000) == 30000);
    sf_close(file);
    auto whole = read_signal_file(dir / name, DType::f64);
    REQUIRE(whole);
    CHECK(whole->signal.samples() == 30000);
    const std::string bytes = read_bytes(dir / name);
    write_bytes(dir / "cut", bytes.substr(0, bytes.size() - 1000));
    CHECK(contains(error_of(read_signal_file(dir / "cut", DType::f64)), "truncated: the header promises "));
  }
}

TEST_CASE("reading .npy: every malformed header and size is refused with its reason") {
  TempDir dir;
  const std::string p = dir / "bad.npy";
  auto error_for = [&](const std::string& bytes) {
    write_bytes(p, bytes);
    std::string e = error_of(read_signal_file(p, DType::f64));
    const std::string prefix = "cannot read '" + p + "': ";
    REQUIRE(e.substr(0, prefix.size()) == prefix);
    return e.substr(prefix.size());
  };
  const std::string data6 = raw(std::vector<double>(6, 0.5));

  CHECK(error_for(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                            data6.substr(0, 40))) ==
        "truncated .npy file: shape (2, 3) needs 48 bytes of data but only 40 follow the header");
  CHECK(error_for(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                            data6 + "xx")) == "2 unexpected bytes after the data of shape (2, 3)");
  CHECK(error_for(npy_bytes("{'descr': '<i2', 'fortran_order': False, 'shape': (6,), }", data6)) ==
        "unsupported dtype '<i2' (expected float32 '<f4' or float64 '<f8')");
  CHECK(error_for(
            npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "")) ==
        "unsupported dtype (a structured type); expected float32 '<f4' or float64 '<f8'");
  CHECK(error_for(
            npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3), }", data6)) ==
        "shape (1, 2, 3) has 3 dimensions; expected [samples] or [channels, samples]");
  CHECK(error_for(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", "")) ==
        "shape () has 0 dimensions; expected [samples] or [channels, samples]");
  CHECK(error_for(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5), }", "")) ==
        "shape (0, 5) has no channels");
  CHECK(
      error_for(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (48000, 2), }", "")) ==
      "shape (48000, 2) looks like [samples, channels]; fxc expects [channels, samples] (save "
      "x.T)");
  // 2^32 * 2^32 overflows 64 bits; 2^61 samples of 8 bytes does too.
  CHECK(error_for(npy_bytes(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", "")) ==
        "shape (4294967296, 4294967296) is too large");
  CHECK(error_for(npy_bytes(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", "")) ==
        "shape (2305843009213693952,) is too large");
  CHECK(contains(error_for(npy_bytes(
                     "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", "")),
                 "truncated .npy file"));
  CHECK(contains(error_for(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': "
                                     "(99999999999999999999999,), }",
                                     "")),
                 "'shape' is not a tuple of non-negative integers"));
  CHECK(error_for(npy_bytes("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (6,), }", data6)) ==
        "malformed .npy header: 'fortran_order' is not True or False");
  CHECK(error_for(npy_bytes("{'descr': '<f8', 'shape': (6,), }", data6)) ==
        "malformed .npy header: the header lacks 'descr', 'fortran_order' or 'shape'");
  CHECK(error_for(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), 'x': 1}",
                            data6)) == "malformed .npy header: unexpected key 'x' in the header");
  CHECK(error_for(npy_bytes("['not', 'a', 'dict']", data6)) ==
        "malformed .npy header: the header is not a dictionary");

  std::string future =
      npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", data6);
  future[6] = 4;
  CHECK(error_for(future) == "unsupported .npy format version 4.0 (expected 1.0, 2.0 or 3.0)");

  // A header length that claims far more than any plain array needs, or than the file holds.
  std::string absurd = "\x93NUMPY\x02";
  absurd += std::string("\x00\xff\xff\xff\x7f", 5);
  CHECK(error_for(absurd + "{}") ==
        "the .npy header claims 2147483647 bytes, too many to be a plain array header");
  std::string short_header = std::string("\x93NUMPY\x01\x00\x00\x01", 10) + "{'descr'";
  CHECK(error_for(short_header) == "truncated .npy header");
  CHECK(error_for(std::string("\x93NUM", 5)) ==
        "not a .npy file (no \\x93NUMPY magic at the start)");
}

TEST_CASE("writing: unknown extensions, subtypes and missing sample rates") {
  TempDir dir;
  const Signal s = test_signal(1, 10, DType::f32);
  CHECK(error_of(write_signal_file(dir / "out.xyz", s, 48000.0, {})) ==
        "cannot write '" + dir / "out.xyz" +
            "': unknown output extension '.xyz' (expected .wav, .flac, .ogg, .aiff or .npy)");
  CHECK(error_of(write_signal_file(dir / "out", s, 48000.0, {})) ==
        "cannot write '" + dir / "out" +
            "': the name has no extension (expected .wav, .flac, .ogg, .aiff or .npy)");
  CHECK(error_of(write_signal_file(dir / "out.wav", s, std::nullopt, {})) ==
        "cannot write '" + dir / "out.wav" +
            "': an audio file needs a sample rate (give one with --fs, or fs= in Python)");
  CHECK(contains(error_of(write_signal_file(dir / "out.wav", s, 48000.0, WriteOptions{"pcm12"})),
                 "unknown subtype 'pcm12' (expected one of pcm8, pcm16, pcm24, pcm32, float,"));
  CHECK(contains(error_of(write_signal_file(dir / "out.flac", s, 48000.0, WriteOptions{"float"})),
                 "subtype 'float' is not available for .flac (available: pcm8, pcm16, pcm24)"));
  CHECK(contains(error_of(write_signal_file(dir / "out.npy", s, 48000.0, WriteOptions{"pcm16"})),
                 "a subtype does not apply to .npy output"));
  CHECK(contains(error_of(write_signal_file(dir / "out.wav", s, 44100.5, {})),
                 "audio files store the sample rate as a whole number of Hz"));
  CHECK(error_of(write_signal_file(dir / "out.npy", Signal(), std::nullopt, {})) ==
        "cannot write '" + dir / "out.npy" + "': the signal has no channels");
  CHECK(check_output_format(dir / "ok.flac", WriteOptions{"pcm16"}));
  CHECK_FALSE(check_output_format(dir / "ok.ogg", WriteOptions{"pcm16"}));
  CHECK(dir.entries().empty());
}

TEST_CASE("writing: a directory that does not exist, or a directory as the output") {
  TempDir dir;
  const Signal s = test_signal(1, 10, DType::f32);
  const std::string missing = dir / "no-such-dir";
  CHECK(error_of(write_signal_file(missing + "/out.wav", s, 48000.0, {})) ==
        "cannot write '" + missing + "/out.wav': directory '" + missing + "' does not exist");
  CHECK(error_of(write_signal_file(missing + "/out.npy", s, std::nullopt, {})) ==
        "cannot write '" + missing + "/out.npy': directory '" + missing + "' does not exist");
  fs::create_directory(dir / "taken.wav");
  CHECK(error_of(write_signal_file(dir / "taken.wav", s, 48000.0, {})) ==
        "cannot write '" + dir / "taken.wav" + "': it is a directory");
}

TEST_CASE("a failed write leaves an existing output untouched and no temporary file") {
  TempDir dir;
  const std::string out = dir / "out.wav";
  write_bytes(out, "precious");
  // The sample rate is refused only after the temporary file exists: the failure is late.
  const std::string e =
      error_of(write_signal_file(out, test_signal(2, 100, DType::f32), 44100.5, {}));
  CHECK(contains(e, "cannot write '" + out + "': audio files store the sample rate as a whole number of Hz"));
  CHECK(read_bytes(out) == "precious");
  CHECK(dir.entries() == std::vector<std::string>{"out.wav"});

  // And a successful one replaces it.
  REQUIRE(write_signal_file(out, test_signal(2, 100, DType::f32), 44100.0, {}));
  CHECK(read_bytes(out) != "precious");
  CHECK(dir.entries() == std::vector<std::string>{"out.wav"});
}

TEST_CASE("write_file_atomically removes its temporary file when the writer fails") {
  TempDir dir;
  std::string seen_temp;
  auto r = write_file_atomically(dir / "x.bin", [&](int fd, const std::string& temp) {
    seen_temp = temp;
    CHECK(fs::path(temp).parent_path() == dir.path);
    CHECK(fs::path(temp).filename().string().rfind(".x.bin.tmp-", 0) == 0);
    REQUIRE(write_all(fd, "half", 4));
    return Expected<std::monostate, std::string>(Unexpected{std::string("writer gave up")});
  });
  CHECK(error_of(r) == "cannot write '" + dir / "x.bin" + "': writer gave up");
  CHECK_FALSE(seen_temp.empty());
  CHECK(dir.entries().empty());
}

TEST_CASE("a full disk is reported, not ignored") {
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  REQUIRE_MESSAGE(fd >= 0, "/dev/full (every Linux has it) cannot be opened");
  const Signal s = test_signal(2, 100000, DType::f64);
  CHECK(error_of(write_npy(fd, s)) == "No space left on device");
  auto format = audio_format_for(".wav", std::nullopt);
  REQUIRE(format);
  CHECK(contains(error_of(write_audio(fd, s, 48000.0, *format)), "No space left on device"));
  ::close(fd);
}

// Pending outputs are written under names fxc makes (.fxc-pending-PID-N-NAME): a link found at
// one (a stray, or a trap set for a predictable name) is replaced, never written through.
TEST_CASE("a name of fxc's own that is a symbolic link is replaced, and what it leads to is kept") {
  TempDir dir;
  write_bytes(dir / "victim.txt", "a user's file");
  fs::create_symlink("victim.txt", dir.path / ".fxc-pending-1-0-out.npy");
  fs::create_symlink("/dev/null", dir.path / ".fxc-pending-1-1-out.npy");
  WriteOptions own;
  own.at_link = AtLink::replace;
  for (const char* name : {".fxc-pending-1-0-out.npy", ".fxc-pending-1-1-out.npy"}) {
    REQUIRE(write_signal_file(dir / name, test_signal(1, 4, DType::f64), std::nullopt, own));
    CHECK(fs::is_regular_file(fs::symlink_status(dir.path / name)));
    auto back = read_signal_file(dir / name, DType::f64);
    REQUIRE(back);
    CHECK(back->signal.samples() == 4);
  }
  CHECK(read_whole_file(dir / "victim.txt").value() == "a user's file");
}

// A link made in advance to send an output elsewhere, before that file exists.
TEST_CASE("writing through a symbolic link to a file not written yet writes that file and keeps the link") {
  TempDir dir;
  fs::create_directory(dir.path / "results");
  fs::create_symlink("results/new.npy", dir.path / "link.npy");
  REQUIRE(write_signal_file(dir / "link.npy", test_signal(1, 4, DType::f64), std::nullopt, {}));
  CHECK(fs::is_symlink(dir.path / "link.npy"));
  CHECK(fs::is_regular_file(fs::symlink_status(dir.path / "results/new.npy")));
  CHECK(file_identity(dir / "link.npy") == file_identity(dir / "results/new.npy"));
}

// `..` in a link's target, after a directory that is itself a link, is the kernel's to
// resolve: from the directory the link leads to, not from the text (a decoy file at the
// textual place was overwritten).
TEST_CASE("a link through a linked directory with '..' in its target is followed as the kernel follows it") {
  TempDir dir;
  fs::create_directories(dir.path / "data/real");
  fs::create_directories(dir.path / "data/other");
  fs::create_directories(dir.path / "work/other");
  fs::create_symlink("../data/real", dir.path / "work/linkdir");
  fs::create_symlink("../other/o.npy", dir.path / "data/real/out.npy");  // -> data/other/o.npy
  write_bytes(dir / "work/other/o.npy", "decoy");                          // where the text says
  REQUIRE(write_signal_file(dir / "work/linkdir/out.npy", test_signal(1, 4, DType::f64), std::nullopt, {}));
  CHECK(read_whole_file(dir / "work/other/o.npy").value() == "decoy");
  auto back = read_signal_file(dir / "data/other/o.npy", DType::f64);
  REQUIRE(back);
  CHECK(back->signal.samples() == 4);
  CHECK(file_identity(dir / "work/linkdir/out.npy") == file_identity(dir / "data/other/o.npy"));
}

TEST_CASE("writing through a symbolic link replaces the file it names, not the link") {
  TempDir dir;
  write_bytes(dir / "real.npy", "old");
  fs::create_symlink("real.npy", dir.path / "link.npy");
  REQUIRE(write_signal_file(dir / "link.npy", test_signal(1, 4, DType::f64), std::nullopt, {}));
  CHECK(fs::is_symlink(dir.path / "link.npy"));
  auto back = read_signal_file(dir / "real.npy", DType::f64);
  REQUIRE(back);
  CHECK(back->signal.samples() == 4);
  CHECK(dir.entries() == std::vector<std::string>{"link.npy", "real.npy"});
}

// What the fxc command's SIGINT/SIGTERM handler removes: every file listed as unfinished, and
// nothing listed no longer (an interrupted run left its half-written hidden files behind).
TEST_CASE("remove_unfinished_files removes the files being written, and only those") {
  TempDir dir;
  write_bytes(dir / "temp.part", "half");
  write_bytes(dir / "placed.wav", "whole");
  write_bytes(dir / "kept.txt", "a user's file");
  {
    UnfinishedFile writing(dir / "temp.part");
    UnfinishedFile done(dir / "placed.wav");
    done.finish();  // renamed into place: no longer the handler's
    remove_unfinished_files();
    CHECK(dir.entries() == std::vector<std::string>{"kept.txt", "placed.wav"});
  }
  // Written through write_file_atomically: listed while written, unlisted once renamed.
  REQUIRE(write_file_atomically(dir / "out.bin", [&](int fd, const std::string&) {
    remove_unfinished_files();  // as if interrupted now: the temporary file goes
    return write_all(fd, "x", 1);
  }).has_value() == false);
  CHECK(dir.entries() == std::vector<std::string>{"kept.txt", "placed.wav"});
  REQUIRE(write_file_atomically(dir / "out.bin", [&](int fd, const std::string&) { return write_all(fd, "x", 1); }));
  remove_unfinished_files();
  CHECK(dir.entries() == std::vector<std::string>{"kept.txt", "out.bin", "placed.wav"});
}
