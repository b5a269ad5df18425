// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of the language's version 2 through `fxc run`: feedback loops (whole runs,
// streams in blocks, saved state, live delay lengths), the examples using the standard
// library, outputs with other channel counts than the input, and the errors' exit status.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "e2e_support.h"
#include "formats/signal_file.h"
#include "run_command.h"
#include "worse.h"

using fxc::test::worse;

namespace fs = std::filesystem;
using fxc::test::CommandResult;
using fxc::test::read_file_bytes;
using namespace fxc::e2e;

namespace {

fs::path example(const std::string& name) { return fs::path(FXC_SOURCE_DIR) / "examples" / name; }


double max_difference(const fxc::Signal& a, const fxc::Signal& b) {
  REQUIRE(a.channels() == b.channels());
  REQUIRE(a.samples() == b.samples());
  double worst = 0;
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t n = 0; n < a.samples(); ++n) worst = worse(worst, std::abs(a.at(c, n) - b.at(c, n)));
  return worst;
}

}  // namespace

TEST_CASE("a looped graph runs the same whole and in blocks and equals the reference interpreter") {
  TempDir dir;
  write_noise(dir / "x.npy", 2, 30000, 1);
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"run", "--fs", "48000", example("echo.fx").string(), "-i", "x.npy", "--dtype", "f64",
                                  "--set", "time=20ms"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_fxc(args, dir.path());
  };
  require_success(run({"-o", "whole.npy"}));
  require_success(run({"-o", "ref.npy", "--target", "ref"}));
  CHECK(max_difference(load(dir / "whole.npy"), load(dir / "ref.npy")) < 1e-12);
  for (std::string block : {"1", "333", "5000"}) {
    CAPTURE(block);
    require_success(run({"-o", "blocks.npy", "--block", block}));
    CHECK(read_file_bytes(dir / "blocks.npy") == read_file_bytes(dir / "whole.npy"));
  }
  // Without feedback the loop gives nothing back: the output is 0.7 x.
  require_success(run({"-o", "dry.npy", "--set", "feedback=0"}));
  fxc::Signal dry = load(dir / "dry.npy"), x = load(dir / "x.npy");
  double worst = 0;
  for (std::size_t c = 0; c < 2; ++c)
    for (std::size_t n = 0; n < x.samples(); ++n) worst = worse(worst, std::abs(dry.at(c, n) - 0.7 * x.at(c, n)));
  CHECK(worst < 1e-15);
  CHECK(max_difference(load(dir / "whole.npy"), dry) > 0.01);  // and with it, the echoes

  // A constant with a range takes values in its own unit: 0.9 dB (a gain of 1.11, an echo that
  // grows without end) is not a plain number in [0, 0.95], and -3 dB (0.71) is no number at
  // all; nor is a frequency a time. Nothing is written.
  check_failure(run({"-o", "loud.npy", "--set", "feedback=0.9dB"}), 1,
                "the setting feedback=0.9dB: 'feedback' has a declared range of plain numbers: give it a plain number, "
                "not in dB");
  check_failure(run({"-o", "loud.npy", "--set", "feedback=-3dB"}), 1, "give it a plain number, not in dB");
  check_failure(run({"-o", "loud.npy", "--set", "time=300Hz"}), 1,
                "the setting time=300Hz: 'time' has a declared range in s: give it in s or ms (a plain number is read in "
                "s), not in Hz");
  CHECK_FALSE(fs::exists(dir / "loud.npy"));
  require_success(run({"-o", "slow.npy", "--set", "time=0.3s"}));
  // Not NAME=VALUE at all is a command-line error (2), for --threshold as for --set; a bad
  // value is a bad value (1).
  check_failure(run({"-o", "loud.npy", "--threshold", "lane_fill"}), 2, "--threshold expects NAME=VALUE, got 'lane_fill'");
  check_failure(run({"-o", "loud.npy", "--set", "feedback"}), 2, "--set expects NAME=VALUE, got 'feedback'");
  check_failure(run({"-o", "loud.npy", "--threshold", "lane_fill=-1"}), 1, "needs a non-negative number");

  // A state holds each delay line at its length: another length, even in the range, is
  // refused as such (the state is not damaged).
  require_success(run({"-o", "first.npy", "--save-state", "s.state"}));
  check_failure(run({"-o", "second.npy", "--load-state", "s.state", "--set", "time=30ms"}), 1,
                "the stream state was saved with other delay lengths");
  CHECK_FALSE(fs::exists(dir / "second.npy"));
}

TEST_CASE("a loop's state saved at the end of one run continues in the next") {
  TempDir dir;
  write_noise(dir / "a.npy", 2, 7000, 2);
  write_noise(dir / "b.npy", 2, 9000, 3);
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"run", "--fs", "48000", example("reverb.fx").string(), "--dtype", "f64"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_fxc(args, dir.path());
  };
  require_success(run({"-i", "a.npy", "-o", "first.npy", "--save-state", "s.state"}));
  require_success(run({"-i", "b.npy", "-o", "second.npy", "--load-state", "s.state", "--block", "100"}));
  // The same 16000 samples in one run.
  fxc::Signal a = load(dir / "a.npy"), b = load(dir / "b.npy");
  fxc::Signal ab(2, a.samples() + b.samples());
  for (std::size_t c = 0; c < 2; ++c) {
    std::copy(a.f64(c).begin(), a.f64(c).end(), ab.f64(c).begin());
    std::copy(b.f64(c).begin(), b.f64(c).end(), ab.f64(c).begin() + a.samples());
  }
  REQUIRE(fxc::write_signal_file((dir / "ab.npy").string(), ab, 48000, {}));
  require_success(run({"-i", "ab.npy", "-o", "whole.npy"}));
  fxc::Signal whole = load(dir / "whole.npy"), second = load(dir / "second.npy");
  double worst = 0;
  for (std::size_t c = 0; c < 2; ++c)
    for (std::size_t n = 0; n < b.samples(); ++n)
      worst = worse(worst, std::abs(second.at(c, n) - whole.at(c, a.samples() + n)));
  CHECK(worst < 1e-13);
}

TEST_CASE("outputs keep their own channel counts and the crossover's bands sum to an allpass") {
  TempDir dir;
  write_noise(dir / "x.npy", 2, 48000, 4);
  require_success(run_fxc({"run", "--fs", "48000", example("crossover3.fx").string(), "-i", "x.npy", "-o", "bands.npy", "-o",
                           "y.wav", "--dtype", "f64"},
                          dir.path()));
  fxc::Signal bands = load(dir / "bands.npy");
  CHECK(bands.channels() == 6);
  CHECK(load(dir / "y.wav").channels() == 2);
  // Low, mid and high of each channel sum to an allpass of it: the same energy, to 1e-6.
  fxc::Signal x = load(dir / "x.npy");
  for (std::size_t c = 0; c < 2; ++c) {
    double in = 0, out = 0;
    for (std::size_t n = 0; n < x.samples(); ++n) {
      double sum = bands.at(c, n) + bands.at(2 + c, n) + bands.at(4 + c, n);
      in += x.at(c, n) * x.at(c, n);
      out += sum * sum;
    }
    CHECK(std::abs(out / in - 1) < 1e-3);  // a finite noise segment: the allpass smears its ends
  }
  // Mono to stereo, and the mid/side round trip without EQ is exact.
  write_bytes(dir / "pan.fx", "input x : 1\noutput x | pan(-1)\noutput [x, x] | ms_encode() | ms_decode()\n");
  write_noise(dir / "m.npy", 1, 1000, 5);
  require_success(run_fxc({"run", "--fs", "48000", "pan.fx", "-i", "m.npy", "-o", "p.npy", "-o", "ms.npy", "--dtype", "f64"}, dir.path()));
  fxc::Signal m = load(dir / "m.npy"), p = load(dir / "p.npy"), ms = load(dir / "ms.npy");
  REQUIRE(p.channels() == 2);
  for (std::size_t n = 0; n < m.samples(); ++n) {
    CHECK(p.at(0, n) == doctest::Approx(m.at(0, n)).epsilon(1e-12));
    CHECK(std::abs(p.at(1, n)) < 1e-15);
    CHECK(ms.at(0, n) == doctest::Approx(m.at(0, n)).epsilon(1e-12));
  }
}

TEST_CASE("version 2 errors: exit status 1, the message, and nothing written") {
  TempDir dir;
  write_noise(dir / "x.npy", 2, 1000, 6);
  write_bytes(dir / "noloop.fx", "input x\ny = x + 0.5 * (y | tanh())\noutput y\n");
  check_failure(run_fxc({"run", "--fs", "48000", "noloop.fx", "-i", "x.npy", "-o", "y.npy"}, dir.path()), 1,
                "this feedback loop has no delay");
  write_bytes(dir / "import.fx", "import \"std/nothing.fx\"\ninput x\noutput x\n");
  check_failure(run_fxc({"run", "--fs", "48000", "import.fx", "-i", "x.npy", "-o", "y.npy"}, dir.path()), 1,
                "the standard library has no file 'std/nothing.fx'");
  write_bytes(dir / "route.fx", "input x\noutput x[3]\n");
  check_failure(run_fxc({"run", "--fs", "48000", "route.fx", "-i", "x.npy", "-o", "y.npy"}, dir.path()), 1,
                "channel 3 does not exist: the signal has 2 channels");
  write_bytes(dir / "time.fx", "input x\nt = 10 ms\ny = x + 0.5 * (y | delay(t))\noutput y\n");
  check_failure(run_fxc({"run", "--fs", "48000", "time.fx", "-i", "x.npy", "-o", "y.npy", "--set", "t=0"}, dir.path()), 1,
                "a delay inside a feedback loop must be at least one sample");
  CHECK_FALSE(fs::exists(dir / "y.npy"));
  // A local import, relative to the importing file.
  fs::create_directories(dir / "lib");
  write_bytes(dir / "import_dir.fx", "import \"lib\"\ninput x\noutput x\n");
  check_failure(run_fxc({"run", "--fs", "48000", "import_dir.fx", "-i", "x.npy", "-o", "y.npy"}, dir.path()), 1,
                "cannot import 'lib': it is a directory");
  // A binary file (an array given in a library's place) is one error, not one per byte.
  write_bytes(dir / "import_npy.fx", "import \"x.npy\"\ninput x\noutput x\n");
  CommandResult binary = run_fxc({"run", "--fs", "48000", "import_npy.fx", "-i", "x.npy", "-o", "y.npy"}, dir.path());
  check_failure(binary, 1, "cannot import 'x.npy': it is a .npy array, not a .fx program");
  CHECK(binary.err.find("error:", binary.err.find("error:") + 1) == std::string::npos);
  write_bytes(dir / "lib" / "mine.fx", "fn twice(g) {\n  return g * in\n}\n");
  write_bytes(dir / "uses.fx", "import \"lib/mine.fx\"\ninput x\noutput x | twice(2)\n");
  require_success(run_fxc({"run", "--fs", "48000", "uses.fx", "-i", "x.npy", "-o", "y.npy", "--dtype", "f64"}, dir.path()));
  CHECK(load(dir / "y.npy").at(1, 7) == doctest::Approx(2 * load(dir / "x.npy").at(1, 7)));
  // A syntax error in an imported function's 'return' is one error, shown in the imported
  // file: neither "has no 'return'" nor anything at the call follows.
  write_bytes(dir / "lib" / "broken.fx", "fn twice(g) {\n  return g * \n}\n");
  write_bytes(dir / "uses_broken.fx", "import \"lib/broken.fx\"\ninput x\noutput x | twice(2)\n");
  fs::remove(dir / "y.npy");
  CommandResult broken = run_fxc({"run", "--fs", "48000", "uses_broken.fx", "-i", "x.npy", "-o", "y.npy"}, dir.path());
  check_failure(broken, 1, "broken.fx:3:1: error: expected a signal or a number after '*'");
  CHECK(broken.err.find("error:", broken.err.find("error:") + 1) == std::string::npos);
  CHECK_FALSE(fs::exists(dir / "y.npy"));
}
