// SPDX-License-Identifier: Apache-2.0
// `fxc run --block` on files: inputs read and outputs written a chunk at a time. The bytes of
// the whole-signal stream (which standard input still takes), memory that does not grow with
// the file, and nothing written when a file fails half-way.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "e2e_support.h"
#include "test_skip.h"

using namespace fxc::e2e;

namespace {

constexpr const char* kEightChannels =
    "graph eq\ninput x : 8\noutput y = x | butter(4, 1 kHz) | peaking(2 kHz, 1, 3 dB) | gain(-3 dB)\n";

}  // namespace

TEST_CASE("--block on files writes the whole-signal stream's bytes, in every format, over several chunks") {
  TempDir dir;
  write_bytes(dir / "g.fx", kEightChannels);
  // Eight channels are read and written 2^17 frames at a time: this is two chunks and a bit.
  const std::size_t frames = (std::size_t{1} << 18) + 4321;
  write_noise(dir / "in.npy", 8, frames, 11);  // float64, converted to the run's float32
  REQUIRE(fxc::write_signal_file((dir / "in.wav").string(), load(dir / "in.npy"), 48000,
                                 fxc::WriteOptions{std::string("pcm24")}));
  struct Case {
    std::string input, output;
    std::vector<std::string> options;
  };
  const std::vector<Case> cases = {
      {"in.npy", "out.npy", {"--fs", "48000"}},
      {"in.npy", "out.wav", {"--fs", "48000"}},
      {"in.wav", "out16.wav", {"--subtype", "pcm16"}},
      {"in.wav", "out.flac", {}},
      {"in.wav", "out.aiff", {"--subtype", "pcm24"}},
      {"in.wav", "out64.npy", {"--dtype", "f64"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.input);
    CAPTURE(c.output);
    std::vector<std::string> streamed{"run", "g.fx", "-i", c.input, "-o", "streamed_" + c.output, "--block", "1000"};
    std::vector<std::string> whole{"run", "g.fx", "-i", "-", "-o", "whole_" + c.output, "--block", "1000"};
    streamed.insert(streamed.end(), c.options.begin(), c.options.end());
    whole.insert(whole.end(), c.options.begin(), c.options.end());
    require_success(run_fxc(streamed, dir.path()));
    require_success(run_fxc_from(whole, dir.path(), dir / c.input));
    const std::string bytes = fxc::test::read_file_bytes(dir / ("streamed_" + c.output));
    CHECK(bytes.size() > frames * 8);
    CHECK(bytes == fxc::test::read_file_bytes(dir / ("whole_" + c.output)));
  }
  // Nothing else is left beside the outputs (no pending or temporary file).
  CHECK(dir.entries().size() == 2 + 1 + 2 * cases.size());
}

TEST_CASE("--block on files keeps memory to its chunks, whatever the file's length") {
  TempDir dir;
  write_bytes(dir / "g.fx", "graph eq\ninput x : 2\noutput y = x | butter(2, 100 Hz, highpass) | gain(-1 dB)\n");
  write_noise(dir / "short.npy", 2, 48000, 1);
  // 128 MB of float64 in, as much out: a whole read alone would add 128 MB of samples.
  const std::size_t frames = std::size_t{1} << 23;
  write_noise(dir / "long.npy", 2, frames, 2);
  auto run = [&](const std::string& input) {
    CommandResult r = run_fxc({"run", "g.fx", "-i", input, "--fs", "48000", "--dtype", "f64", "-o", "out_" + input,
                               "--block", "512", "--stats"},
                              dir.path());
    INFO(show(r));
    REQUIRE(r.exit_code == 0);
    return peak_rss_kib(r.err);
  };
  run("short.npy");  // compiles (and fills the kernel cache) once, so that the two below do not
  const long short_kib = run("short.npy"), long_kib = run("long.npy");
  INFO("peak RSS: short file " << short_kib << " KiB, long file " << long_kib << " KiB");
  CHECK(long_kib < short_kib + 48 * 1024);
  // And the output is the stream's: the last sample as a whole-signal stream computes it.
  require_success(run_fxc_from({"run", "g.fx", "-i", "-", "--fs", "48000", "--dtype", "f64", "-o", "whole.npy",
                                "--block", "512"},
                               dir.path(), dir / "long.npy"));
  CHECK(fxc::test::read_file_bytes(dir / "out_long.npy") == fxc::test::read_file_bytes(dir / "whole.npy"));
}

TEST_CASE("--block on files that fail half-way leaves every output as it was") {
  TempDir dir;
  write_bytes(dir / "g.fx", kEightChannels);
  const std::size_t frames = 600000;  // four chunks of eight channels and a part
  write_noise(dir / "in.npy", 8, frames, 3);
  REQUIRE(fxc::write_signal_file((dir / "in.flac").string(), load(dir / "in.npy"), 48000, {}));
  const std::string flac = fxc::test::read_file_bytes(dir / "in.flac");
  write_bytes(dir / "cut.flac", flac.substr(0, flac.size() * 6 / 10));  // ends in the second chunk
  write_bytes(dir / "out.wav", "earlier bytes");
  const std::vector<std::string> before = dir.entries();
  CommandResult r = run_fxc({"run", "g.fx", "-i", "cut.flac", "-o", "out.wav", "--block", "64"}, dir.path());
  check_failure(r, 1, "error: cannot read 'cut.flac': ");
  CHECK(fxc::test::read_file_bytes(dir / "out.wav") == "earlier bytes");
  CHECK(dir.entries() == before);

  // Inputs of different lengths are refused before anything is written.
  write_bytes(dir / "two.fx", "graph two\ninput a : 1\ninput b : 1\noutput y = a + b\n");
  write_noise(dir / "a.npy", 1, 1000, 4);
  write_noise(dir / "b.npy", 1, 999, 5);
  check_failure(run_fxc({"run", "two.fx", "-i", "a.npy", "-i", "b.npy", "--fs", "48000", "-o", "out.wav", "--block",
                         "64"},
                        dir.path()),
                1, "inputs have different lengths: 'a.npy' has 1000 samples, 'b.npy' has 999");
  CHECK(fxc::test::read_file_bytes(dir / "out.wav") == "earlier bytes");
}

TEST_CASE("--block on files with several inputs and outputs: the whole stream's bytes, and each output's own error") {
  TempDir dir;
  // Two stereo inputs, two outputs (tests/e2e/graphs/multi_io.fx).
  const std::string graph = std::string(FXC_E2E_DIR) + "/graphs/multi_io.fx";
  write_noise(dir / "a.npy", 2, 300000, 8);
  write_noise(dir / "b.npy", 2, 300000, 9);
  require_success(run_fxc({"run", graph, "-i", "a.npy", "-i", "b.npy", "--fs", "48000", "-o", "mix.flac", "-o",
                           "diff.npy", "--block", "100"},
                          dir.path()));
  require_success(run_fxc_from({"run", graph, "-i", "-", "-i", "b.npy", "--fs", "48000", "-o", "whole_mix.flac", "-o",
                                "whole_diff.npy", "--block", "100"},
                               dir.path(), dir / "a.npy"));
  CHECK(fxc::test::read_file_bytes(dir / "mix.flac") == fxc::test::read_file_bytes(dir / "whole_mix.flac"));
  CHECK(fxc::test::read_file_bytes(dir / "diff.npy") == fxc::test::read_file_bytes(dir / "whole_diff.npy"));

  // The second output cannot be opened (an audio file's rate is a whole number of Hz): its
  // message names it alone, and the first output stays as it was.
  const std::string mix_before = fxc::test::read_file_bytes(dir / "diff.npy");
  check_failure(run_fxc({"run", graph, "-i", "a.npy", "-i", "b.npy", "--fs", "48000.5", "-o", "diff.npy", "-o",
                         "mix.wav", "--block", "100"},
                        dir.path()),
                1, "error: cannot write 'mix.wav': audio files store the sample rate as a whole number of Hz");
  CHECK(fxc::test::read_file_bytes(dir / "diff.npy") == mix_before);
  CHECK_FALSE(fs::exists(dir / "mix.wav"));
}

TEST_CASE("--block on files warns of NaN and infinite samples as a whole run does, counted over every chunk") {
  TempDir dir;
  write_bytes(dir / "g.fx", "graph g\ninput x : 8\noutput y = x | gain(-1 dB)\n");
  fxc::Signal x(8, 300000, fxc::DType::f32);
  x.f32(2)[250000] = std::numeric_limits<float>::infinity();  // the third chunk
  x.f32(5)[200001] = std::numeric_limits<float>::quiet_NaN();  // the second: the first found
  x.f32(7)[299999] = std::numeric_limits<float>::quiet_NaN();
  REQUIRE(fxc::write_signal_file((dir / "x.npy").string(), x, std::nullopt, {}));
  CommandResult whole = run_fxc({"run", "g.fx", "-i", "x.npy", "--fs", "48000", "-o", "whole.npy"}, dir.path());
  CommandResult streamed =
      run_fxc({"run", "g.fx", "-i", "x.npy", "--fs", "48000", "-o", "streamed.npy", "--block", "64"}, dir.path());
  INFO(show(streamed));
  REQUIRE(whole.exit_code == 0);
  REQUIRE(streamed.exit_code == 0);
  CHECK(whole.err.find("'x.npy' holds 2 NaN and 1 infinite sample(s), the first at sample 200001 of channel 5") !=
        std::string::npos);
  CHECK(streamed.err == whole.err);
}

TEST_CASE("CUDA device: --target cuda on files streams them in a whole run's pieces, to the whole run's bytes") {
  TempDir dir;
  write_bytes(dir / "g.fx", kEightChannels);
  const std::size_t frames = (std::size_t{1} << 18) + 4321;
  write_noise(dir / "in.npy", 8, frames, 5);
  // A file streams through a Processor on the GPU; standard input is read whole and, without
  // --block, run by Program::run: the same pieces, so the same bytes (with --block both are a
  // Processor's blocks: the bytes show that reading the file in chunks changes nothing). This
  // file is one piece (2 Mi frames at 8 + 8 channels); the pieces test in
  // tests/unit/cuda_emulation_test.cpp checks a stream of several against the whole run.
  for (const std::vector<std::string>& extra : {std::vector<std::string>{}, std::vector<std::string>{"--block", "1000"}}) {
    CAPTURE(extra.size());
    std::vector<std::string> streamed{"run", "g.fx", "-i", "in.npy", "--fs", "48000", "-o", "streamed.npy",
                                      "--target", "cuda", "--stats"};
    std::vector<std::string> whole{"run", "g.fx", "-i", "-", "--fs", "48000", "-o", "whole.npy", "--target", "cuda"};
    streamed.insert(streamed.end(), extra.begin(), extra.end());
    whole.insert(whole.end(), extra.begin(), extra.end());
    CommandResult r = run_fxc(streamed, dir.path());
    const char* require = std::getenv("FXC_REQUIRE_CUDA_DEVICE");
    if (r.exit_code != 0 && r.err.rfind("error: no CUDA driver (libcuda.so.1 not found)", 0) == 0 &&
        !(require && std::string(require) == "1")) {
      CHECK(r.exit_code == 1);
      CHECK_FALSE(fs::exists(dir / "streamed.npy"));
      fxc::test::skip("no CUDA driver (libcuda.so.1 not found)");
      return;
    }
    require_success(r);
    CHECK(r.err.find("run (stream)") != std::string::npos);
    require_success(run_fxc_from(whole, dir.path(), dir / "in.npy"));
    CHECK(fxc::test::read_file_bytes(dir / "streamed.npy") == fxc::test::read_file_bytes(dir / "whole.npy"));
    // And the CPU's samples, within float32 rounding.
    require_success(run_fxc({"run", "g.fx", "-i", "in.npy", "--fs", "48000", "-o", "cpu.npy"}, dir.path()));
    const fxc::Signal gpu = load(dir / "streamed.npy"), cpu = load(dir / "cpu.npy");
    REQUIRE(gpu.samples() == frames);
    double worst = 0, scale = 0;
    for (std::size_t c = 0; c < 8; ++c)
      for (std::size_t i = 0; i < frames; ++i) {
        worst = std::max(worst, std::abs(gpu.at(c, i) - cpu.at(c, i)));
        scale = std::max(scale, std::abs(cpu.at(c, i)));
      }
    CHECK(worst <= 2e-6 * scale);
  }
}

TEST_CASE("CUDA device: --save-state and --load-state on --target cuda continue a stream, on either target") {
  TempDir dir;
  write_bytes(dir / "g.fx", kEightChannels);
  const std::size_t first = 70001, frames = first + 50000;
  write_noise(dir / "ab.npy", 8, frames, 9);
  const fxc::Signal ab = load(dir / "ab.npy");
  fxc::Signal a(8, first), b(8, frames - first);
  for (std::size_t c = 0; c < 8; ++c)
    for (std::size_t n = 0; n < frames; ++n) (n < first ? a.f64(c)[n] : b.f64(c)[n - first]) = ab.at(c, n);
  REQUIRE(fxc::write_signal_file((dir / "a.npy").string(), a, 48000, {}));
  REQUIRE(fxc::write_signal_file((dir / "b.npy").string(), b, 48000, {}));
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"run", "g.fx", "--fs", "48000", "--dtype", "f64"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_fxc(args, dir.path());
  };
  CommandResult r = run({"-i", "a.npy", "-o", "a_gpu.npy", "--target", "cuda", "--save-state", "gpu.state"});
  const char* require = std::getenv("FXC_REQUIRE_CUDA_DEVICE");
  if (r.exit_code != 0 && r.err.rfind("error: no CUDA driver (libcuda.so.1 not found)", 0) == 0 &&
      !(require && std::string(require) == "1")) {
    CHECK_FALSE(fs::exists(dir / "gpu.state"));
    fxc::test::skip("no CUDA driver (libcuda.so.1 not found)");
    return;
  }
  require_success(r);
  require_success(run({"-i", "ab.npy", "-o", "whole.npy"}));
  require_success(run({"-i", "a.npy", "-o", "a_cpu.npy", "--save-state", "cpu.state"}));
  // The GPU's state goes on on the GPU (in blocks of 1000 too) and on the CPU; the CPU's on the GPU.
  require_success(run({"-i", "b.npy", "-o", "b_gpu.npy", "--target", "cuda", "--load-state", "gpu.state"}));
  require_success(run({"-i", "b.npy", "-o", "b_blocks.npy", "--target", "cuda", "--load-state", "gpu.state",
                       "--block", "1000"}));
  require_success(run({"-i", "b.npy", "-o", "b_cpu.npy", "--load-state", "gpu.state"}));
  require_success(run({"-i", "b.npy", "-o", "b_cross.npy", "--target", "cuda", "--load-state", "cpu.state"}));
  require_success(run({"-i", "b.npy", "-o", "b_cold.npy", "--target", "cuda"}));
  const fxc::Signal whole = load(dir / "whole.npy");
  // Within float64 rounding of the whole run on the CPU; NaN fails.
  auto off = [&](const fxc::Signal& part, std::size_t start) {
    REQUIRE(part.samples() + start <= frames);
    double scale = 0;
    std::size_t far = 0;
    for (std::size_t c = 0; c < 8; ++c)
      for (std::size_t n = 0; n < part.samples(); ++n) scale = std::max(scale, std::abs(whole.at(c, start + n)));
    for (std::size_t c = 0; c < 8; ++c)
      for (std::size_t n = 0; n < part.samples(); ++n)
        if (!(std::abs(part.at(c, n) - whole.at(c, start + n)) <= 1e-9 * scale)) ++far;
    return far;
  };
  CHECK(off(load(dir / "a_gpu.npy"), 0) == 0);
  for (const char* name : {"b_gpu.npy", "b_blocks.npy", "b_cpu.npy", "b_cross.npy"}) {
    CAPTURE(name);
    CHECK(off(load(dir / name), first) == 0);
  }
  CHECK(off(load(dir / "b_cold.npy"), first) > 0);  // without the state: the check can fail
}

