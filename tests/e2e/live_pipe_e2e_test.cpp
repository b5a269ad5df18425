// SPDX-License-Identifier: Apache-2.0
// `fxc run --live-pipe --block N -i - -o -`: a WAV on standard input run and written a block
// at a time as it comes. The samples of `--block N` on files, output that leaves before the
// input has ended, the placeholder lengths of streaming writers, and the errors.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "e2e_support.h"
#include "test_skip.h"

using namespace fxc::e2e;

namespace {

constexpr const char* kGraph =
    "input x : 2\noutput x | butter(4, 200 Hz, highpass) | peaking(1 kHz, 1, 3 dB) | delay(3 ms) | tanh()\n";

CommandResult run_shell(const std::string& script, const fs::path& cwd) {
  return fxc::test::run_command({"/bin/sh", "-c", script}, cwd, {});
}

// `--live-pipe` from `input` on standard input, its standard output saved as `output`.
CommandResult live(const fs::path& dir, const std::string& input, const std::string& output,
                   const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"run", "g.fx", "--live-pipe", "-i", "-", "-o", "-"};
  args.insert(args.end(), extra.begin(), extra.end());
  CommandResult r = run_fxc_from(args, dir, dir / input);
  write_bytes(dir / output, r.out);
  return r;
}

bool same_samples(const fxc::Signal& a, const fxc::Signal& b) {
  if (a.channels() != b.channels() || a.samples() != b.samples()) return false;
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t i = 0; i < a.samples(); ++i)
      if (a.at(c, i) != b.at(c, i)) return false;
  return true;
}

void put_le32(std::string& bytes, std::size_t at, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) bytes[at + static_cast<std::size_t>(k)] = static_cast<char>(v >> (8 * k));
}

}  // namespace

TEST_CASE("--live-pipe gives --block's samples, written as the blocks are done, in WAV's encodings") {
  TempDir dir;
  write_bytes(dir / "g.fx", kGraph);
  const std::size_t frames = 48000 + 77;  // a last block shorter than the others
  write_noise(dir / "in.npy", 2, frames, 3);
  for (const char* subtype : {"pcm16", "pcm24", "float"})
    REQUIRE(fxc::write_signal_file((dir / (std::string("in_") + subtype + ".wav")).string(), load(dir / "in.npy"), 48000,
                                   fxc::WriteOptions{std::string(subtype)}));
  struct Case {
    std::string input;
    std::vector<std::string> options;
  };
  const std::vector<Case> cases = {
      {"in_float.wav", {"--block", "256"}},
      {"in_pcm16.wav", {"--block", "1000", "--subtype", "pcm16"}},
      {"in_pcm24.wav", {"--block", "64", "--subtype", "pcm24", "--dtype", "f32"}},
      {"in_float.wav", {"--block", "4096", "--subtype", "double", "--dtype", "f64"}},
      {"in_pcm16.wav", {"--block", "100", "--subtype", "pcm8"}},
      // One block, longer than the stream: prepared for the stream's length, as on a file.
      {"in_float.wav", {"--block", "100000", "--subtype", "double", "--dtype", "f64"}},
      {"in_pcm24.wav", {"--block", "70000", "--subtype", "float"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.input);
    CAPTURE(c.options[1]);
    CommandResult r = live(dir.path(), c.input, "live.wav", c.options);
    INFO(show(r));
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    std::vector<std::string> file{"run", "g.fx", "-i", c.input, "-o", "file.wav"};
    file.insert(file.end(), c.options.begin(), c.options.end());
    require_success(run_fxc(file, dir.path()));
    // The header says "to the end" (0xFFFFFFFF, as ffmpeg's): fxc and libsndfile read it so.
    const std::string bytes = fxc::test::read_file_bytes(dir / "live.wav");
    REQUIRE(bytes.size() >= 44);
    CHECK(bytes.substr(4, 4) == std::string(4, '\xff'));
    CHECK(bytes.substr(36, 8) == std::string("data") + std::string(4, '\xff'));
    const fxc::Signal got = load(dir / "live.wav"), want = load(dir / "file.wav");
    CHECK(got.samples() == frames);
    CHECK(same_samples(got, want));
    // The samples are the file's to the byte: its data chunk is the file's last bytes.
    const std::string file_bytes = fxc::test::read_file_bytes(dir / "file.wav");
    CHECK(file_bytes.substr(file_bytes.size() - (bytes.size() - 44)) == bytes.substr(44));
  }

  // A live output is a live input (its placeholder sizes read to the end), and so is a WAV
  // whose data size a streaming writer left at 0 (with no RIFF size either): both were the
  // stream's whole samples, not an empty signal.
  REQUIRE(live(dir.path(), "in_float.wav", "once.wav", {"--block", "512"}).exit_code == 0);
  REQUIRE(live(dir.path(), "once.wav", "twice.wav", {"--block", "512"}).exit_code == 0);
  require_success(run_fxc({"run", "g.fx", "-i", "once.wav", "-o", "twice_file.wav", "--block", "512"}, dir.path()));
  CHECK(same_samples(load(dir / "twice.wav"), load(dir / "twice_file.wav")));
  std::string zero = fxc::test::read_file_bytes(dir / "in_float.wav");
  const std::size_t data = zero.find("data");
  REQUIRE(data != std::string::npos);
  put_le32(zero, 4, 0);
  put_le32(zero, data + 4, 0);
  write_bytes(dir / "zero.wav", zero);
  REQUIRE(live(dir.path(), "zero.wav", "from_zero.wav", {"--block", "512"}).exit_code == 0);
  CHECK(same_samples(load(dir / "from_zero.wav"), load(dir / "once.wav")));
  // With the RIFF size of the stream, a data size of 0 is an empty WAV: no samples.
  std::string empty = zero.substr(0, data + 8);
  put_le32(empty, 4, static_cast<std::uint32_t>(empty.size() - 8));
  write_bytes(dir / "empty.wav", empty);
  CommandResult r = live(dir.path(), "empty.wav", "from_empty.wav", {"--block", "512"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.size() == 44);
}

TEST_CASE("--live-pipe sends a block's output before the input has ended") {
  // The writer sends the header and 0.5 s, then waits until fxc's output holds 0.25 s before
  // it sends the rest; a run that read its input whole first would wait for the end, and the
  // writer would give up after 20 s and say so.
  TempDir dir;
  write_bytes(dir / "g.fx", kGraph);
  write_noise(dir / "in.npy", 2, 48000, 9);
  REQUIRE(fxc::write_signal_file((dir / "in.wav").string(), load(dir / "in.npy"), 48000, fxc::WriteOptions{}));
  const std::string fxc = FXC_BINARY;
  const std::string script =
      "set -e; : > live.wav; head=$((44 + 24000 * 8)); want=$((44 + 12000 * 8)); "
      "{ head -c $head in.wav; n=0; "
      "  while [ \"$(wc -c < live.wav)\" -lt $want ]; do "
      "    n=$((n + 1)); if [ $n -gt 400 ]; then echo stalled > stalled; break; fi; sleep 0.05; done; "
      "  tail -c +$((head + 1)) in.wav; } | '" + fxc + "' run g.fx --live-pipe --block 256 -i - -o - > live.wav";
  CommandResult r = run_shell(script, dir.path());
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_FALSE(fs::exists(dir / "stalled"));
  require_success(run_fxc({"run", "g.fx", "-i", "in.wav", "-o", "file.wav", "--block", "256"}, dir.path()));
  CHECK(same_samples(load(dir / "live.wav"), load(dir / "file.wav")));
  // A reader that leaves (`| head -c 100`) fails the run as a closed pipe fails every write:
  // status 1, "Broken pipe", not a signal.
  r = fxc::test::run_command(
      {"/bin/bash", "-c",
       "'" + fxc + "' run g.fx --live-pipe --block 256 -i - -o - < in.wav | head -c 100 > /dev/null; "
       "echo ${PIPESTATUS[0]}"},
      dir.path(), {});
  CHECK(r.out == "1\n");
  CHECK(r.err.find("error: cannot write '<stdout>': Broken pipe") != std::string::npos);
}

TEST_CASE("--live-pipe: what it refuses, a stream that ends early, and the state at the stream's end") {
  TempDir dir;
  write_bytes(dir / "g.fx", kGraph);
  write_bytes(dir / "two.fx", "input x : 2\noutput a = x | gain(0.5)\noutput b = x | gain(2)\n");
  write_noise(dir / "in.npy", 2, 20000, 4);
  REQUIRE(fxc::write_signal_file((dir / "in.wav").string(), load(dir / "in.npy"), 48000, fxc::WriteOptions{}));
  const fs::path d = dir.path();
  check_failure(run_fxc_from({"run", "g.fx", "--live-pipe", "-i", "-", "-o", "-"}, d, dir / "in.wav"), 2,
                "--live-pipe needs --block N");
  check_failure(run_fxc({"run", "g.fx", "--live-pipe", "--block", "64", "-i", "in.wav", "-o", "out.wav"}, d), 2,
                "give '-i - -o -'");
  check_failure(run_fxc_from({"run", "g.fx", "--live-pipe", "--block", "64", "-i", "-", "-o", "-", "--pipe-format", "npy"},
                             d, dir / "in.wav"),
                2, "--live-pipe writes WAV");
  check_failure(run_fxc_from({"run", "two.fx", "--live-pipe", "--block", "64", "-i", "-", "-o", "-"}, d, dir / "in.wav"),
                2, "one input and one output");
  check_failure(run_fxc_from({"run", "g.fx", "--live-pipe", "--block", "64", "-i", "-", "-o", "-", "--target", "ref"},
                             d, dir / "in.wav"),
                1, "--live-pipe runs compiled kernels");
  check_failure(run_fxc({"run", "g.fx", "--live-pipe", "--block", "64", "-i", "in", "--out-dir", "out"}, d), 2,
                "a corpus run writes files");
  check_failure(run_fxc_from({"run", "g.fx", "--live-pipe", "--block", "64", "-i", "-", "-o", "-", "--fs", "48000"}, d,
                             dir / "in.npy"),
                1, "cannot read '<stdin>': it is a .npy array");
  check_failure(run_fxc_from({"run", "g.fx", "--live-pipe", "--block", "64", "-i", "-", "-o", "-"}, d, "/dev/null"), 1,
                "cannot read '<stdin>': the stream ended before a WAV header");
  write_bytes(dir / "text.txt", std::string(100, 'x'));
  check_failure(run_fxc_from({"run", "g.fx", "--live-pipe", "--block", "64", "-i", "-", "-o", "-"}, d, dir / "text.txt"),
                1, "not a WAV stream");
  check_failure(run_fxc_from({"run", "g.fx", "--live-pipe", "--block", "64", "-i", "-", "-o", "-", "--subtype", "vorbis"},
                             d, dir / "in.wav"),
                1, "subtype 'vorbis' is not available for .wav");

  // A stream shorter than its header's length: the blocks before its end were sent (a live
  // pipe cannot take them back), the run fails (status 1), and no state is saved.
  const std::string whole = fxc::test::read_file_bytes(dir / "in.wav");
  write_bytes(dir / "short.wav", whole.substr(0, whole.size() / 2));
  CommandResult r = run_fxc_from(
      {"run", "g.fx", "--live-pipe", "--block", "64", "-i", "-", "-o", "-", "--save-state", "s.state"}, d,
      dir / "short.wav");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot read '<stdin>': truncated: the header promises 20000 frames") != std::string::npos);
  CHECK(r.out.size() > 44);
  CHECK_FALSE(fs::exists(dir / "s.state"));

  // NaN and infinite input samples are counted over the blocks, as a file's are (a warning,
  // the first by its place in the whole stream, not in its block).
  fxc::Signal odd = load(dir / "in.npy");
  odd.f64(1)[3000] = std::nan("");
  odd.f64(0)[4000] = std::numeric_limits<double>::infinity();
  REQUIRE(fxc::write_signal_file((dir / "odd.wav").string(), odd, 48000, fxc::WriteOptions{}));
  CommandResult warned = live(d, "odd.wav", "odd_out.wav", {"--block", "64"});
  CHECK(warned.exit_code == 0);
  CHECK(warned.err.find("warning: '<stdin>' holds 1 NaN and 1 infinite sample(s), the first at sample 3000 of "
                        "channel 1") != std::string::npos);

  // --save-state: the state at the end of the stream, the bytes --block on the file saves;
  // --load-state continues from it.
  CommandResult saved = run_fxc_from(
      {"run", "g.fx", "--live-pipe", "--block", "64", "-i", "-", "-o", "-", "--save-state", "live.state"}, d,
      dir / "in.wav");
  CHECK(saved.exit_code == 0);
  CHECK(saved.err.empty());
  require_success(run_fxc({"run", "g.fx", "-i", "in.wav", "-o", "file.wav", "--block", "64", "--save-state", "file.state"}, d));
  CHECK(fxc::test::read_file_bytes(dir / "live.state") == fxc::test::read_file_bytes(dir / "file.state"));
  CommandResult next = live(d, "in.wav", "next.wav", {"--block", "64", "--load-state", "live.state"});
  CHECK(next.exit_code == 0);
  require_success(run_fxc({"run", "g.fx", "-i", "in.wav", "-o", "next_file.wav", "--block", "64", "--load-state", "file.state"}, d));
  CHECK(same_samples(load(dir / "next.wav"), load(dir / "next_file.wav")));
}

TEST_CASE("CUDA device: --live-pipe on --target cuda gives --block's samples on the GPU") {
  TempDir dir;
  write_bytes(dir / "g.fx", kGraph);
  write_noise(dir / "in.npy", 2, 30000, 6);
  REQUIRE(fxc::write_signal_file((dir / "in.wav").string(), load(dir / "in.npy"), 48000, fxc::WriteOptions{}));
  CommandResult r = live(dir.path(), "in.wav", "live.wav", {"--block", "512", "--target", "cuda"});
  const char* require = std::getenv("FXC_REQUIRE_CUDA_DEVICE");
  if (r.exit_code != 0 && r.err.rfind("error: no CUDA driver (libcuda.so.1 not found)", 0) == 0 &&
      !(require && std::string(require) == "1")) {
    CHECK(r.exit_code == 1);
    CHECK(r.out.empty());  // nothing was sent: the device is needed before the header
    fxc::test::skip("no CUDA driver (libcuda.so.1 not found)");
    return;
  }
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  require_success(
      run_fxc({"run", "g.fx", "-i", "in.wav", "-o", "file.wav", "--block", "512", "--target", "cuda"}, dir.path()));
  CHECK(same_samples(load(dir / "live.wav"), load(dir / "file.wav")));
}
