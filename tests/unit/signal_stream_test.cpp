// SPDX-License-Identifier: Apache-2.0
// Signal files read and written a block at a time (formats/signal_stream.h): the bytes and
// samples of the whole reads and writes, in pieces of any size, and the files only a whole
// read can take.
#include "formats/signal_stream.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "formats/signal_file.h"
#include "support/file_io.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace fxc;

namespace {

using fxc::test::TempDir;

// Loud enough to clip in places (the quantisers' edges), distinct on every channel.
Signal test_signal(std::size_t channels, std::size_t samples, DType dtype) {
  Signal s(channels, samples, dtype);
  for (std::size_t c = 0; c < channels; ++c)
    for (std::size_t i = 0; i < samples; ++i) {
      const double v = 1.1 * std::sin(0.013 * static_cast<double>(i + 1) * static_cast<double>(c + 1)) +
                       1e-3 * std::cos(1.7 * static_cast<double>(i));
      if (dtype == DType::f64) s.f64(c)[i] = v;
      else s.f32(c)[i] = static_cast<float>(v);
    }
  return s;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Frames [start, start + frames) of `s`, as their own signal.
Signal slice(const Signal& s, std::size_t start, std::size_t frames) {
  Signal out(s.channels(), frames, s.dtype());
  for (std::size_t c = 0; c < s.channels(); ++c)
    for (std::size_t i = 0; i < frames; ++i) {
      if (s.dtype() == DType::f64) out.f64(c)[i] = s.f64(c)[start + i];
      else out.f32(c)[i] = s.f32(c)[start + i];
    }
  return out;
}

// Uneven pieces that cross libsndfile's chunks: 1, 7, 65536 + 3, then the rest.
std::vector<std::size_t> pieces(std::size_t total) {
  std::vector<std::size_t> sizes;
  for (std::size_t size : {std::size_t{1}, std::size_t{7}, std::size_t{65539}}) {
    if (total == 0) break;
    sizes.push_back(std::min(size, total));
    total -= sizes.back();
  }
  if (total) sizes.push_back(total);
  return sizes;
}

// `signal` written to `path` through a writer, in pieces(), each from its own signal (so that
// a writer that kept a pointer into an earlier piece would write garbage).
void write_in_pieces(const std::string& path, const Signal& signal, std::optional<double> fs_hz,
                     const WriteOptions& options) {
  auto written = write_file_atomically(path, [&](int fd, const std::string&) -> Expected<std::monostate, std::string> {
    auto writer = open_signal_writer(fd, lower_extension(path), signal.channels(), signal.samples(), signal.dtype(),
                                     fs_hz, options);
    if (!writer) return Unexpected{writer.error()};
    std::size_t start = 0;
    for (std::size_t size : pieces(signal.samples())) {
      const Signal piece = slice(signal, start, size);
      // Half of the pieces are written from an offset inside a larger signal.
      if (auto ok = start % 2 ? (*writer)->write(piece, 0, size) : (*writer)->write(signal, start, size); !ok) return ok;
      start += size;
    }
    return (*writer)->finish();
  });
  REQUIRE_MESSAGE(written, (written ? "" : written.error()));
}

// The whole file read through a reader in pieces(), into `dtype`.
Signal read_in_pieces(const std::string& path, DType dtype) {
  auto reader = open_signal_reader(path);
  REQUIRE_MESSAGE(reader, (reader ? "" : reader.error()));
  REQUIRE(*reader);
  Signal all((*reader)->channels(), (*reader)->frames(), dtype);
  std::size_t start = 0;
  for (std::size_t size : pieces((*reader)->frames())) {
    Signal piece((*reader)->channels(), size, dtype);
    auto ok = (*reader)->read(piece, size);
    REQUIRE_MESSAGE(ok, (ok ? "" : ok.error()));
    for (std::size_t c = 0; c < piece.channels(); ++c)
      for (std::size_t i = 0; i < size; ++i) {
        if (dtype == DType::f64) all.f64(c)[start + i] = piece.f64(c)[i];
        else all.f32(c)[start + i] = piece.f32(c)[i];
      }
    start += size;
  }
  return all;
}

bool same_samples(const Signal& a, const Signal& b) {
  if (a.channels() != b.channels() || a.samples() != b.samples() || a.dtype() != b.dtype()) return false;
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t i = 0; i < a.samples(); ++i)
      if (std::memcmp(a.dtype() == DType::f64 ? static_cast<const void*>(&a.f64(c)[i]) : &a.f32(c)[i],
                      b.dtype() == DType::f64 ? static_cast<const void*>(&b.f64(c)[i]) : &b.f32(c)[i],
                      size_of(a.dtype())) != 0)
        return false;
  return true;
}

}  // namespace

TEST_CASE("A file written in pieces holds the bytes of the whole write, in every format") {
  TempDir dir;
  struct Case {
    const char* name;
    std::optional<std::string> subtype;
    std::size_t channels;
    DType dtype;
  };
  // pcm8 AIFF of one channel and an odd length takes the header repair; Ogg the fixed serial.
  const Case cases[] = {
      {"a.npy", std::nullopt, 3, DType::f32},        {"b.npy", std::nullopt, 2, DType::f64},
      {"c.wav", std::nullopt, 2, DType::f32},        {"d.wav", std::string("pcm24"), 2, DType::f64},
      {"e.wav", std::string("double"), 1, DType::f32}, {"f.flac", std::nullopt, 2, DType::f32},
      {"g.aiff", std::string("pcm8"), 1, DType::f64}, {"h.wav", std::string("ulaw"), 3, DType::f32},
      {"i.ogg", std::nullopt, 2, DType::f32},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::size_t frames = 70001;  // odd, and past one libsndfile chunk
    const Signal signal = test_signal(c.channels, frames, c.dtype);
    const std::string whole = dir / (std::string("whole_") + c.name), streamed = dir / (std::string("streamed_") + c.name);
    REQUIRE(write_signal_file(whole, signal, 48000.0, WriteOptions{c.subtype}));
    write_in_pieces(streamed, signal, 48000.0, WriteOptions{c.subtype});
    CHECK(bytes_of(streamed) == bytes_of(whole));
  }
}

TEST_CASE("A file read in pieces gives the samples of the whole read, converted alike") {
  TempDir dir;
  const Signal stereo64 = test_signal(2, 70001, DType::f64), stereo32 = test_signal(2, 70001, DType::f32);
  REQUIRE(write_signal_file(dir / "a.npy", stereo64, std::nullopt, {}));
  REQUIRE(write_signal_file(dir / "b.npy", stereo32, std::nullopt, {}));
  REQUIRE(write_signal_file(dir / "c.wav", stereo64, 44100.0, WriteOptions{std::string("pcm24")}));
  REQUIRE(write_signal_file(dir / "d.flac", stereo32, 44100.0, {}));
  REQUIRE(write_signal_file(dir / "e.wav", stereo64, 44100.0, WriteOptions{std::string("double")}));
  // NumPy's other layouts: Fortran order (interleaved frames) and big-endian samples.
  auto npy_with = [&](const std::string& name, const std::string& dict, auto sample_bytes) {
    std::string header = dict;
    header.append(118 - header.size() - 1, ' ');
    header += '\n';
    std::string file = std::string("\x93NUMPY\x01\x00", 8) + char(header.size() & 0xff) + char(header.size() >> 8) + header;
    file += sample_bytes();
    std::ofstream(dir / name, std::ios::binary) << file;
  };
  npy_with("f.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 70001), }", [&] {
    std::string bytes;
    for (std::size_t i = 0; i < 70001; ++i)
      for (std::size_t c = 0; c < 2; ++c) bytes.append(reinterpret_cast<const char*>(&stereo32.f32(c)[i]), 4);
    return bytes;
  });
  npy_with("g.npy", "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 70001), }", [&] {
    std::string bytes;
    for (std::size_t c = 0; c < 2; ++c)
      for (std::size_t i = 0; i < 70001; ++i) {
        char b[8];
        std::memcpy(b, &stereo64.f64(c)[i], 8);
        std::reverse(b, b + 8);
        bytes.append(b, 8);
      }
    return bytes;
  });
  for (const char* name : {"a.npy", "b.npy", "c.wav", "d.flac", "e.wav", "f.npy", "g.npy"})
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(name);
      CAPTURE(dtype == DType::f32);
      auto whole = read_signal_file(dir / name, dtype);
      REQUIRE_MESSAGE(whole, (whole ? "" : whole.error()));
      auto reader = open_signal_reader(dir / name);
      REQUIRE(reader);
      REQUIRE(*reader);
      CHECK((*reader)->sample_rate_hz() == whole->sample_rate_hz);
      CHECK(same_samples(read_in_pieces(dir / name, dtype), whole->signal));
    }
}

TEST_CASE("A reader of a file shorter than its header says fails as the whole read does; one that says less stops there") {
  TempDir dir;
  const Signal mono = test_signal(1, 300000, DType::f32);
  REQUIRE(write_signal_file(dir / "full.flac", mono, 48000.0, {}));
  const std::string full = bytes_of(dir / "full.flac");
  // Cut: the first pieces read, then the file ends before the header's 300000 frames.
  std::ofstream(dir / "cut.flac", std::ios::binary) << full.substr(0, full.size() * 6 / 10);
  auto reader = open_signal_reader(dir / "cut.flac");
  REQUIRE(reader);
  REQUIRE(*reader);
  Signal piece(1, 100000, DType::f32);
  REQUIRE((*reader)->read(piece, 100000));
  Expected<std::monostate, std::string> failed = std::monostate{};
  for (int k = 0; k < 2 && failed; ++k) failed = (*reader)->read(piece, 100000);
  REQUIRE_FALSE(failed);
  // The whole read's error, in its words (libsndfile's FLAC decoder: "lost sync").
  auto whole_cut = read_signal_file(dir / "cut.flac", DType::f32);
  REQUIRE_FALSE(whole_cut);
  CHECK(failed.error() == whole_cut.error());
  CHECK(failed.error().rfind("cannot read '" + (dir / "cut.flac") + "': ", 0) == 0);

  // STREAMINFO's total (the low 36 bits of the 8 bytes at 18) says 100000: libsndfile stops
  // there on either path, so the two agree (the reader's check for frames past a header's
  // count guards readers that would go on; none of libsndfile's 1.2 formats was found to).
  std::string shorter = full;
  std::uint64_t word = 0;
  for (int k = 0; k < 8; ++k) word = word << 8 | static_cast<unsigned char>(shorter[18 + k]);
  word = (word & ~((std::uint64_t{1} << 36) - 1)) | 100000;
  for (int k = 7; k >= 0; --k, word >>= 8) shorter[18 + k] = static_cast<char>(word & 0xff);
  std::ofstream(dir / "short_header.flac", std::ios::binary) << shorter;
  auto whole = read_signal_file(dir / "short_header.flac", DType::f32);
  REQUIRE(whole);
  CHECK(whole->signal.samples() == 100000);
  CHECK(same_samples(read_in_pieces(dir / "short_header.flac", DType::f32), whole->signal));
}

TEST_CASE("Files only a whole read can take give no reader, and missing files the whole read's error") {
  TempDir dir;
  // A WAV saved from a pipe: its data size a placeholder of 0, its samples after it.
  const Signal mono = test_signal(1, 1000, DType::f32);
  REQUIRE(write_signal_file(dir / "piped.wav", mono, 48000.0, {}));
  std::string bytes = bytes_of(dir / "piped.wav");
  const std::size_t data = bytes.find("data");
  REQUIRE(data != std::string::npos);
  std::memset(&bytes[data + 4], 0, 4);
  std::ofstream(dir / "piped.wav", std::ios::binary) << bytes;
  auto placeholder = open_signal_reader(dir / "piped.wav");
  REQUIRE(placeholder);
  CHECK_FALSE(*placeholder);

  REQUIRE(::mkfifo((dir / "fifo.wav").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((dir / "fifo.npy").c_str(), 0600) == 0);
  for (const char* name : {"fifo.wav", "fifo.npy"}) {
    auto fifo = open_signal_reader(dir / name);
    REQUIRE(fifo);
    CHECK_FALSE(*fifo);
  }
  for (const char* name : {"missing.wav", "missing.npy"}) {
    auto missing = open_signal_reader(dir / name);
    REQUIRE_FALSE(missing);
    CHECK(missing.error() == "cannot read '" + (dir / name) + "': No such file or directory");
  }
  // An empty audio file is read whole (a length of 0 may be a placeholder); an empty .npy
  // file's length is its shape's.
  REQUIRE(write_signal_file(dir / "empty.wav", Signal(2, 0, DType::f32), 48000.0, {}));
  auto empty = open_signal_reader(dir / "empty.wav");
  REQUIRE(empty);
  CHECK_FALSE(*empty);
  REQUIRE(write_signal_file(dir / "empty.npy", Signal(2, 0, DType::f32), std::nullopt, {}));
  auto empty_npy = open_signal_reader(dir / "empty.npy");
  REQUIRE(empty_npy);
  REQUIRE(*empty_npy);
  CHECK((*empty_npy)->frames() == 0);
  CHECK((*empty_npy)->channels() == 2);
}
