// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of corpus runs (docs/corpora.md): fxc run over directories and globs,
// output names, failures, resume, shards, pipes, progress, and memory that does not grow with
// the number of files. Each test works in a fresh directory.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "e2e_support.h"
#include "formats/signal_file.h"
#include "run_command.h"

namespace fs = std::filesystem;
using fxc::test::CommandResult;
using fxc::test::read_file_bytes;
using namespace fxc::e2e;

namespace {

// Noise of `seconds` at `fs_hz`, written in `subtype`.
void write_noise(const fs::path& path, double fs_hz, std::size_t channels, double seconds, unsigned seed,
                 std::optional<std::string> subtype = "pcm16") {
  fxc::Signal s(channels, static_cast<std::size_t>(seconds * fs_hz), fxc::DType::f64);
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> noise(-0.4, 0.4);
  for (std::size_t c = 0; c < channels; ++c)
    for (double& x : s.f64(c)) x = noise(random);
  fs::create_directories(path.parent_path());
  auto ok = fxc::write_signal_file(path.string(), s, fs_hz, fxc::WriteOptions{std::move(subtype)});
  REQUIRE(ok.has_value());
}

// Every regular file under `root`, relative to it, sorted.
std::vector<std::string> files_under(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), root).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

constexpr const char* kStereoLowpass = "input x : 2\noutput y = x | butter(4, 6 kHz) | gain(-1 dB)\n";

// corpus/a.wav, corpus/x/b.wav, corpus/x/y/c.flac: stereo, 48 and 44.1 kHz.
void make_corpus(const TempDir& dir) {
  write_noise(dir / "corpus/a.wav", 48000, 2, 0.2, 1);
  write_noise(dir / "corpus/x/b.wav", 44100, 2, 0.3, 2);
  write_noise(dir / "corpus/x/y/c.flac", 48000, 2, 0.1, 3);
  write_text(dir / "g.fx", kStereoLowpass);
}

}  // namespace

TEST_CASE("a corpus in nested directories: --out-dir mirrors them and each output is a one-file run's") {
  TempDir dir;
  make_corpus(dir);
  CommandResult r = run_fxc({"run", "g.fx", "-i", "corpus", "--out-dir", "out"}, dir.path());
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.find("fxc run: 3 files: 3 written, 0 skipped, 0 failed; ") == 0);
  CHECK(files_under(dir / "out") == std::vector<std::string>{"a.wav", "x/b.wav", "x/y/c.flac"});
  // Each as `fxc run g.fx -i IN -o OUT` writes it, with the input's subtype.
  for (const char* name : {"a.wav", "x/b.wav", "x/y/c.flac"}) {
    CAPTURE(name);
    std::string single = std::string("single_") + fs::path(name).filename().string();
    require_success(run_fxc({"run", "g.fx", "-i", "corpus/" + std::string(name), "-o", single, "--subtype", "pcm16"},
                            dir.path()));
    CHECK(read_file_bytes(dir / "out" / name) == read_file_bytes(dir / single));
  }
  // A pattern, with the glob expanded by fxc (as a shell without ** would pass it).
  r = run_fxc({"run", "g.fx", "-i", "corpus/**/*.wav", "-o", "eq/{dir}/{stem}_eq.npy"}, dir.path());
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  CHECK(files_under(dir / "eq") == std::vector<std::string>{"a_eq.npy", "x/b_eq.npy"});
  require_success(run_fxc({"run", "g.fx", "-i", "corpus/x/b.wav", "-o", "b_single.npy"}, dir.path()));
  CHECK(read_file_bytes(dir / "eq/x/b_eq.npy") == read_file_bytes(dir / "b_single.npy"));
}

TEST_CASE("--jobs 2 writes the same bytes as --jobs 1") {
  TempDir dir;
  write_text(dir / "g.fx", kStereoLowpass);
  for (int i = 0; i < 12; ++i)
    write_noise(dir / ("c/" + std::to_string(i % 3) + "/f" + std::to_string(i) + ".wav"), i % 2 ? 44100 : 48000, 2,
                0.05 + 0.01 * i, static_cast<unsigned>(10 + i));
  for (const char* jobs : {"1", "2"}) {
    CommandResult r = run_fxc({"run", "g.fx", "-i", "c", "--out-dir", std::string("j") + jobs, "--jobs", jobs}, dir.path());
    INFO(show(r));
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("12 written") != std::string::npos);
  }
  std::vector<std::string> names = files_under(dir / "j1");
  REQUIRE(names.size() == 12);
  CHECK(files_under(dir / "j2") == names);
  for (const std::string& n : names) CHECK(read_file_bytes(dir / "j1" / n) == read_file_bytes(dir / "j2" / n));
}

TEST_CASE("a corpus run reports each failed file with its path, writes the others and exits 1") {
  TempDir dir;
  write_text(dir / "g.fx", kStereoLowpass);
  write_noise(dir / "c/good1.wav", 48000, 2, 0.1, 1);
  write_noise(dir / "c/good2.wav", 44100, 2, 0.1, 2);
  write_noise(dir / "c/mono.wav", 48000, 1, 0.1, 3);         // input x : 2
  write_noise(dir / "c/narrow.wav", 8000, 2, 0.1, 4);        // 6 kHz is above 4 kHz Nyquist
  write_bytes(dir / "c/junk.wav", "RIFF, but not really a WAV file");
  CommandResult r = run_fxc({"run", "g.fx", "-i", "c", "--out-dir", "out", "--jobs", "2"}, dir.path());
  INFO(show(r));
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("error: cannot read 'c/junk.wav': ") != std::string::npos);
  CHECK(r.err.find("'c/mono.wav' has 1") != std::string::npos);
  CHECK(r.err.find("error: 'c/narrow.wav' (8000 Hz, 2 channel(s)): g.fx:2:") != std::string::npos);
  CHECK(r.err.find("fxc run: 5 files: 2 written, 0 skipped, 3 failed; ") != std::string::npos);
  CHECK(files_under(dir / "out") == std::vector<std::string>{"good1.wav", "good2.wav"});
}

TEST_CASE("--skip-existing resumes a corpus run: files whose outputs exist are left alone") {
  TempDir dir;
  make_corpus(dir);
  fs::create_directories(dir / "out/x");
  write_bytes(dir / "out/x/b.wav", "done before");
  CommandResult r = run_fxc({"run", "g.fx", "-i", "corpus", "--out-dir", "out", "--skip-existing"}, dir.path());
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("fxc run: 3 files: 2 written, 1 skipped, 0 failed; ") == 0);
  CHECK(read_file_bytes(dir / "out/x/b.wav") == "done before");
  CHECK(fs::exists(dir / "out/x/y/c.flac"));
  // Without it every output is written again.
  r = run_fxc({"run", "g.fx", "-i", "corpus", "--out-dir", "out"}, dir.path());
  CHECK(r.err.find("3 written, 0 skipped") != std::string::npos);
  CHECK(read_file_bytes(dir / "out/x/b.wav") != "done before");
}

TEST_CASE("--progress always shows the files, the audio done and the time left, never shows nothing") {
  TempDir dir;
  make_corpus(dir);
  CommandResult r = run_fxc({"run", "g.fx", "-i", "corpus", "--out-dir", "out", "--progress", "always"}, dir.path());
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  // Standard error is not a terminal here: a line per file, then the summary.
  CHECK(r.err.find("[##############################] 3/3 files, ") != std::string::npos);
  CHECK(r.err.find(" of audio, 0 s left\n") != std::string::npos);
  CHECK(r.err.find("\r") == std::string::npos);  // no terminal control in a log
  r = run_fxc({"run", "g.fx", "-i", "corpus", "--out-dir", "out2", "--progress", "never"}, dir.path());
  CHECK(r.err.find("files, ") == std::string::npos);
  r = run_fxc({"run", "g.fx", "-i", "corpus", "--out-dir", "out3"}, dir.path());  // auto, not a terminal
  CHECK(r.err.find("files, ") == std::string::npos);
}

TEST_CASE("a corpus run removes what an interrupted run left beside its outputs") {
  // A killed run leaves an output's pending file and the temporary it was written through;
  // the next run of those outputs removes them once the outputs are written.
  TempDir dir;
  make_corpus(dir);
  fs::create_directories(dir / "out/x");
  for (const char* name : {"out/x/.fxc-pending-4242-0-b.wav", "out/x/..fxc-pending-4242-1-b.wav.tmp-Ab12Cd"}) {
    write_bytes(dir / name, "half");
    fs::last_write_time(dir / name, fs::file_time_type::clock::now() - std::chrono::hours(1));
  }
  CommandResult r = run_fxc({"run", "g.fx", "-i", "corpus", "--out-dir", "out"}, dir.path());
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  CHECK(files_under(dir / "out/x").size() == 2);  // b.wav and y/c.flac: nothing hidden is left
  CHECK_FALSE(fs::exists(dir / "out/x/.fxc-pending-4242-0-b.wav"));
  CHECK_FALSE(fs::exists(dir / "out/x/..fxc-pending-4242-1-b.wav.tmp-Ab12Cd"));
}

TEST_CASE("--shard I/N runs file k of the sorted list in shard k mod N + 1") {
  TempDir dir;
  write_text(dir / "g.fx", kStereoLowpass);
  std::vector<std::string> all;
  for (int i = 0; i < 7; ++i) {
    std::string name = "f" + std::to_string(i) + ".wav";
    write_noise(dir / "c" / name, 48000, 2, 0.02, static_cast<unsigned>(i));
    all.push_back(name);
  }
  std::set<std::string> seen;
  for (int index = 1; index <= 3; ++index) {
    std::string out = "s" + std::to_string(index);
    CommandResult r = run_fxc({"run", "g.fx", "-i", "c", "--out-dir", out, "--shard", std::to_string(index) + "/3"},
                              dir.path());
    INFO(show(r));
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> expected;
    for (std::size_t k = static_cast<std::size_t>(index - 1); k < all.size(); k += 3) expected.push_back(all[k]);
    CHECK(files_under(dir / out) == expected);
    for (const std::string& n : expected) CHECK(seen.insert(n).second);
  }
  CHECK(seen.size() == all.size());
  check_failure(run_fxc({"run", "g.fx", "-i", "c", "--out-dir", "o", "--shard", "4/3"}, dir.path()), 2,
                "--shard expects I/N with 1 <= I <= N");
}

TEST_CASE("a corpus run gives a compile's warning once, not once per file") {
  // A damaged cache entry was reported for every file (13 times for a 13-file corpus): a
  // shape's later files copy its Program, warnings and all.
  TempDir dir;
  for (int i = 0; i < 4; ++i) write_noise(dir / ("c/f" + std::to_string(i) + ".wav"), 48000, 2, 0.1, 10 + i);
  write_text(dir / "g.fx", kStereoLowpass);
  const std::vector<std::string> env{"FXC_CACHE_DIR=" + (dir / "kc").string()};
  REQUIRE(run_fxc({"run", "g.fx", "-i", "c", "--out-dir", "o1"}, dir.path(), env).exit_code == 0);
  int damaged = 0;
  for (const auto& e : fs::directory_iterator(dir / "kc"))
    if (e.path().extension() == ".o") {
      std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(100);
      f.put('\x5a');
      ++damaged;
    }
  REQUIRE(damaged > 0);
  CommandResult r = run_fxc({"run", "g.fx", "-i", "c", "--out-dir", "o2", "--jobs", "1"}, dir.path(), env);
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  std::size_t warnings = 0;
  for (std::size_t at = r.err.find("is damaged"); at != std::string::npos; at = r.err.find("is damaged", at + 1))
    ++warnings;
  CHECK(warnings == static_cast<std::size_t>(damaged));
  CHECK(files_under(dir / "o2") == files_under(dir / "o1"));
  // An --out-dir that is a file: one error before anything runs, not one per file.
  write_text(dir / "afile", "x");
  r = run_fxc({"run", "g.fx", "-i", "c", "--out-dir", "afile"}, dir.path(), env);
  check_failure(r, 1, "error: --out-dir 'afile' is not a directory");
  CHECK(r.err.find("f1.wav") == std::string::npos);
}

TEST_CASE("corpus mode's command-line errors, and -i with several values after one flag") {
  TempDir dir;
  make_corpus(dir);
  check_failure(run_fxc({"run", "g.fx", "-i", "corpus", "-o", "x.wav"}, dir.path()), 2,
                "error: -i 'corpus' is a directory: a corpus run needs --out-dir DIR");
  check_failure(run_fxc({"run", "g.fx", "-i", "corpus/*.wav", "-o", "x.wav"}, dir.path()), 2, "is a glob pattern");
  write_noise(dir / "corpus/x/a.wav", 48000, 2, 0.1, 4);
  check_failure(run_fxc({"run", "g.fx", "-i", "corpus", "-o", "out/{stem}.wav"}, dir.path()), 2,
                "error: 'corpus/a.wav' and 'corpus/x/a.wav' map to the same output 'out/a.wav'");
  check_failure(run_fxc({"run", "g.fx", "-i", "corpus/*.wav", "-o", "out/{bad}.wav"}, dir.path()), 2,
                "unknown field '{bad}'");
  check_failure(run_fxc({"run", "g.fx", "-i", "corpus", "--out-dir", "corpus"}, dir.path()), 2,
                "would replace the input");
  check_failure(run_fxc({"run", "g.fx", "-i", "nothing/*.wav", "--out-dir", "o"}, dir.path()), 1,
                "error: 'nothing/*.wav' matches no file");
  check_failure(run_fxc({"run", "g.fx", "-i", "corpus", "--out-dir", "o", "--block", "0"}, dir.path()), 1,
                "error: --block must be at least 1, got 0");
  check_failure(run_fxc({"run", "g.fx", "-i", "corpus", "--out-dir", "o", "--block", "64", "--target", "ref"},
                        dir.path()),
                1, "--block runs compiled kernels: use it with --target cpu or cuda");
  check_failure(run_fxc({"run", "g.fx", "-i", "corpus/a.wav", "-o", "x.wav", "--jobs", "2"}, dir.path()), 2,
                "--jobs runs the files of a corpus in parallel");
  write_text(dir / "two.fx", "input a : 2\ninput b : 2\noutput y = a + b\n");
  check_failure(run_fxc({"run", "two.fx", "-i", "corpus", "--out-dir", "o"}, dir.path()), 1,
                "a corpus runs graphs with exactly one input, and 'two.fx' has 2");
  CHECK_FALSE(fs::exists(dir / "o"));
  CHECK_FALSE(fs::exists(dir / "out"));
  // -i a b (a shell's expansion of a glob) with --out-dir, and the old batch with one flag.
  CommandResult r = run_fxc({"run", "g.fx", "-i", "corpus/a.wav", "corpus/x/b.wav", "--out-dir", "flat"}, dir.path());
  INFO(show(r));
  CHECK(r.exit_code == 0);
  CHECK(files_under(dir / "flat") == std::vector<std::string>{"a.wav", "b.wav"});
  require_success(run_fxc({"run", "g.fx", "-i", "corpus/a.wav", "corpus/x/b.wav", "-o", "a1.npy", "-o", "b1.npy",
                           "--fs", "48000", "--batch"},
                          dir.path()));
  require_success(run_fxc({"run", "g.fx", "-i", "corpus/a.wav", "-o", "a2.npy"}, dir.path()));
  CHECK(read_file_bytes(dir / "a1.npy").size() == read_file_bytes(dir / "a2.npy").size());
}

TEST_CASE("--block in a corpus run streams each file, to a one-file --block run's bytes") {
  TempDir dir;
  make_corpus(dir);
  // A float WAV over several of the stream's chunks, and one whose header gives no length (as a
  // program writing to a pipe leaves it): read whole, then run in the same blocks.
  write_noise(dir / "corpus/long.wav", 48000, 2, 12.0, 4, "float");
  write_noise(dir / "corpus/piped.wav", 48000, 2, 0.3, 5, "float");
  write_noise(dir / "corpus/short.wav", 48000, 2, 0.005, 6, "float");  // 240 frames: less than a block
  {
    std::string bytes = read_file_bytes(dir / "corpus/piped.wav");
    const std::size_t data = bytes.find("data");
    REQUIRE(data != std::string::npos);
    // A data size of 0 with samples after it: the length unknown until the end (libsndfile
    // clamps a size near 2^31 to the file's, which a reader then takes).
    for (int k = 4; k < 8; ++k) bytes[data + k] = '\0';
    std::ofstream(dir / "corpus/piped.wav", std::ios::binary) << bytes;
  }
  write_text(dir / "d.fx", "input x : 2\noutput y = x | butter(4, 2 kHz) | delay(3 ms) | tanh()\n");
  for (const char* jobs : {"1", "2"}) {
    CAPTURE(jobs);
    const std::string out = std::string("blocks") + jobs;
    CommandResult r = run_fxc({"run", "d.fx", "-i", "corpus", "--out-dir", out, "--block", "1000", "--jobs", jobs},
                              dir.path());
    INFO(show(r));
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("fxc run: 6 files: 6 written, 0 skipped, 0 failed; ") == 0);
    for (const char* name : {"a.wav", "x/b.wav", "x/y/c.flac", "long.wav", "piped.wav", "short.wav"}) {
      CAPTURE(name);
      const std::string single = std::string("single_") + fs::path(name).filename().string();
      require_success(run_fxc({"run", "d.fx", "-i", "corpus/" + std::string(name), "-o", single, "--block", "1000",
                               "--subtype", std::string(name).find(".wav") != std::string::npos &&
                                                    std::string(name).find("b.wav") == std::string::npos &&
                                                    std::string(name) != "a.wav"
                                                ? "float"
                                                : "pcm16"},
                              dir.path()));
      CHECK(read_file_bytes(dir / out / name) == read_file_bytes(dir / single));
    }
  }
  // Files of one shape compile their stream's kernels once, the others waiting for them, with
  // --jobs 2 too (a fresh cache: a compile is counted where it runs).
  for (int i = 0; i < 4; ++i) write_noise(dir / ("same/f" + std::to_string(i) + ".wav"), 48000, 2, 0.1, 20 + i);
  {
    CommandResult r = run_fxc({"run", "d.fx", "-i", "same", "--out-dir", "same_out", "--block", "512", "--jobs", "2",
                               "--stats", "--cache-dir", (dir / "fresh_cache").string()},
                              dir.path());
    INFO(show(r));
    REQUIRE(r.exit_code == 0);
    CHECK(stats_counter(r.err, "compiles") == 1);
  }
  // A job's memory does not grow with its file: 128 MB of float64 in, as much out, against a
  // second of it (each alone in a corpus; the first run fills the kernel cache).
  fs::create_directories(dir / "short");
  fs::create_directories(dir / "long");
  fxc::e2e::write_noise(dir / "short/s.npy", 2, 48000, 6);
  fxc::e2e::write_noise(dir / "long/l.npy", 2, std::size_t{1} << 23, 7);
  auto rss = [&](const std::string& corpus) {
    CommandResult r = run_fxc({"run", "d.fx", "-i", corpus, "--fs", "48000", "--dtype", "f64", "--out-dir",
                               "rss_" + corpus, "--block", "512", "--stats"},
                              dir.path());
    INFO(show(r));
    REQUIRE(r.exit_code == 0);
    return peak_rss_kib(r.err);
  };
  rss("short");
  const long short_kib = rss("short"), long_kib = rss("long");
  INFO("peak RSS: short file " << short_kib << " KiB, long file " << long_kib << " KiB");
  CHECK(long_kib < short_kib + 48 * 1024);
  // Without --block the long file's whole run differs from the blocks in the chunked scan's
  // rounding or not at all; either way the run is the same length and both are written.
  require_success(run_fxc({"run", "d.fx", "-i", "corpus/long.wav", "-o", "whole.wav"}, dir.path()));
  CHECK(read_file_bytes(dir / "whole.wav").size() == read_file_bytes(dir / "blocks1/long.wav").size());
}

TEST_CASE("-i - and -o - carry one WAV or .npy through pipes, byte for byte as files") {
  TempDir dir;
  make_corpus(dir);
  write_noise(dir / "in.wav", 48000, 2, 0.2, 9, "float");
  require_success(run_fxc({"run", "g.fx", "-i", "in.wav", "-o", "file.wav"}, dir.path()));
  CommandResult piped = run_fxc_from({"run", "g.fx", "-i", "-", "-o", "-"}, dir.path(), dir / "in.wav");
  INFO(show(piped));
  REQUIRE(piped.exit_code == 0);
  CHECK(piped.err.empty());
  std::string file = read_file_bytes(dir / "file.wav");
  REQUIRE(piped.out.size() == file.size());
  // The same bytes: a float WAV has no PEAK chunk, whose time of writing made them differ.
  CHECK(piped.out == file);
  // .npy in, .npy out (standard output follows the input's kind).
  require_success(run_fxc({"run", "g.fx", "-i", "in.wav", "-o", "in.npy", "--dtype", "f32"}, dir.path()));
  require_success(run_fxc({"run", "g.fx", "-i", "in.npy", "--fs", "48000", "-o", "file.npy"}, dir.path()));
  piped = run_fxc_from({"run", "g.fx", "-i", "-", "--fs", "48000", "-o", "-"}, dir.path(), dir / "in.npy");
  INFO(show(piped));
  REQUIRE(piped.exit_code == 0);
  CHECK(piped.out == read_file_bytes(dir / "file.npy"));
  // A file in, .npy on the pipe when asked; an error goes to standard error only.
  piped = run_fxc_from({"run", "g.fx", "-i", "corpus/a.wav", "-o", "-", "--pipe-format", "npy"}, dir.path(), "/dev/null");
  require_success(run_fxc({"run", "g.fx", "-i", "corpus/a.wav", "-o", "a.npy"}, dir.path()));
  CHECK(piped.out == read_file_bytes(dir / "a.npy"));
  check_failure(run_fxc_from({"run", "g.fx", "-i", "-", "-o", "-"}, dir.path(), "/dev/null"), 1,
                "cannot read '<stdin>': standard input is empty");
}

TEST_CASE("a corpus run's peak memory does not grow with the number of files") {
  // 10 and 1000 mono 8 kHz pcm16 files of 10 s (160 KB each), one shape: the 1000 may use no
  // more memory than the 10, give or take 8 MiB (allocator and page-cache noise; one file's
  // signals are about 2 MB, and memory that grew with the file count would show 1000 times).
  TempDir dir;
  write_text(dir / "m.fx", "input x : 1\noutput y = x | butter(4, 1 kHz) | gain(-3 dB)\n");
  write_noise(dir / "few/f0000.wav", 8000, 1, 10, 1);
  for (int i = 1; i < 1000; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "many/f%04d.wav", i);
    if (i < 10) fs::copy_file(dir / "few/f0000.wav", dir / ("few/f000" + std::to_string(i) + ".wav"));
    fs::create_directories(dir / "many");
    fs::copy_file(dir / "few/f0000.wav", dir / name);
  }
  fs::copy_file(dir / "few/f0000.wav", dir / "many/f0000.wav");
  require_success(run_fxc({"run", "m.fx", "-i", "few/f0000.wav", "-o", "warm.wav"}, dir.path()));  // fills the cache
  auto peak_rss = [&](const std::string& corpus) {
    CommandResult r = run_fxc({"run", "m.fx", "-i", corpus, "--out-dir", "out_" + corpus, "--stats"}, dir.path());
    INFO(show(r));
    REQUIRE(r.exit_code == 0);
    long kib = stats_counter(r.err, "peak RSS");
    REQUIRE(kib > 0);
    return kib;
  };
  long few = peak_rss("few"), many = peak_rss("many");
  MESSAGE("peak RSS: 10 files " << few << " KiB, 1000 files " << many << " KiB");
  CHECK(files_under(dir / "out_many").size() == 1000);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer keeps freed memory in quarantine (up to 256 MiB), so peak RSS grows with
  // the memory a run has allocated in all: the bound is checked in the plain build only.
  MESSAGE("AddressSanitizer build: the peak RSS bound is not checked");
#else
  CHECK(many <= few + 8 * 1024);
#endif
}

TEST_CASE("files are told apart as the files they reach: links, two names of one file, FIFOs and broken links") {
  TempDir dir;
  write_text(dir / "g.fx", kStereoLowpass);
  write_noise(dir / "c/a.wav", 48000, 2, 0.1, 1);
  const std::string before = read_file_bytes(dir / "c/a.wav");
  // An --out-dir that links to the input directory, or an output name that links to an
  // input: refused, the input untouched.
  fs::create_directory_symlink("c", dir / "clink");
  check_failure(run_fxc({"run", "g.fx", "-i", "c", "--out-dir", "clink"}, dir.path()), 2,
                "the output 'clink/a.wav' of 'c/a.wav' would replace the input 'c/a.wav'");
  fs::create_directories(dir / "o");
  fs::create_symlink("../c/a.wav", dir / "o/a.wav");
  check_failure(run_fxc({"run", "g.fx", "-i", "c", "--out-dir", "o"}, dir.path()), 2, "would replace the input");
  CHECK(read_file_bytes(dir / "c/a.wav") == before);
  // One file named twice is taken once.
  CommandResult twice = run_fxc({"run", "g.fx", "-i", "c/a.wav", "./c/a.wav", "--out-dir", "o2"}, dir.path());
  INFO(show(twice));
  CHECK(twice.exit_code == 0);
  CHECK(twice.err.find("fxc run: 1 file: 1 written") != std::string::npos);
  // A broken link and a FIFO named like audio are reported, not left out (nor read: a FIFO
  // would block); the other file is written.
  fs::create_symlink("nothing.wav", dir / "c/broken.wav");
  REQUIRE(mkfifo((dir / "c/pipe.wav").c_str(), 0600) == 0);
  CommandResult listed = run_fxc({"run", "g.fx", "-i", "c", "--out-dir", "o3"}, dir.path());
  INFO(show(listed));
  CHECK(listed.exit_code == 1);
  CHECK(listed.err.find("error: cannot read 'c/broken.wav': a symbolic link to nothing") != std::string::npos);
  CHECK(listed.err.find("error: cannot read 'c/pipe.wav': not a regular file") != std::string::npos);
  CHECK(listed.err.find("fxc run: 3 files: 1 written, 0 skipped, 2 failed") != std::string::npos);
  // Named on the command line, the same: one failed file, not a refused run.
  CommandResult named = run_fxc({"run", "g.fx", "-i", "c/pipe.wav", "c/a.wav", "--out-dir", "o5"}, dir.path());
  INFO(show(named));
  CHECK(named.exit_code == 1);
  CHECK(named.err.find("fxc run: 2 files: 1 written, 0 skipped, 1 failed") != std::string::npos);
  // --skip-existing: a directory where an output goes is no output.
  fs::create_directories(dir / "o4/a.wav");
  CommandResult resumed = run_fxc({"run", "g.fx", "-i", "c/a.wav", "--out-dir", "o4", "--skip-existing"}, dir.path());
  INFO(show(resumed));
  CHECK(resumed.exit_code == 1);
  CHECK(resumed.err.find("0 skipped, 1 failed") != std::string::npos);
}
