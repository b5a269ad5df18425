// SPDX-License-Identifier: Apache-2.0
// End-to-end tests: run the fxc binary on the graphs in tests/e2e/graphs and the committed
// inputs in tests/data/e2e, and compare what it writes with the outputs SciPy computed for the
// same graphs (scripts/gen_e2e_reference.py). Also: what a failed run leaves behind, exit
// statuses and messages, freqz, --help and --version. Each test works in a fresh directory.
//
// Tolerances, as relative RMS error per channel, sqrt(sum (y - ref)^2 / sum ref^2):
//  - float64 outputs (.npy, --dtype f64): 1e-10. fxc and SciPy run the same float64
//    recurrences on the same samples (float32 inputs widen exactly); the coefficients differ
//    in the last bits (fxc's own filter design, a different summation order), which filters
//    with poles near the unit circle amplify to ~1e-13 here. 1e-10 is far above that and far
//    below any real mistake (a wrong coefficient or a sample of delay is > 1e-3).
//  - float32 outputs of float64 arithmetic (32-bit float WAV, .npy with --dtype f32 on
//    --target ref): 1e-7. Each output sample is rounded once to float32, which changes it by
//    at most 2^-24 (5.96e-8) of its magnitude, so the RMS error is at most 5.96e-8 of the RMS
//    signal; 1e-7 adds room for the float64 differences above. (Measured: 1e-8 to 3e-8.)
//  - float32 arithmetic (--dtype f32 on the compiled cpu target): 1e-5. Every operation
//    rounds to 24 bits and a section's feedback amplifies that by about 1/(1 - r) for pole
//    radius r; these graphs' filters (r <= 0.99) measure 2e-6 at worst.
#define DOCTEST_CONFIG_IMPLEMENT
#include "test_main.h"

#include <filesystem>
#include <unistd.h>

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "e2e_support.h"
#include "run_command.h"
#include "formats/signal_file.h"
#include "worse.h"

using fxc::test::worse;

namespace fs = std::filesystem;
using fxc::test::CommandResult;
using fxc::test::read_file_bytes;
using namespace fxc::e2e;

namespace {

constexpr double kFloat64Tolerance = 1e-10;
constexpr double kFloat32Tolerance = 1e-7;
constexpr double kFloat32ArithmeticTolerance = 1e-5;

fs::path graph(const std::string& name) { return fs::path(FXC_E2E_DIR) / "graphs" / name; }
fs::path data(const std::string& name) { return fs::path(FXC_TEST_DATA_DIR) / "e2e" / name; }


// Compares a file fxc wrote with a SciPy reference, channel by channel.
void check_close(const fs::path& actual_path, const std::string& reference_name, double tolerance) {
  fxc::Signal actual = load(actual_path);
  fxc::Signal expected = load(data(reference_name));
  INFO("output " << actual_path.filename().string() << " against " << reference_name);
  REQUIRE(actual.channels() == expected.channels());
  REQUIRE(actual.samples() == expected.samples());
  for (std::size_t c = 0; c < expected.channels(); ++c) {
    double error = 0, energy = 0;
    for (std::size_t n = 0; n < expected.samples(); ++n) {
      double d = actual.at(c, n) - expected.at(c, n);
      error += d * d;
      energy += expected.at(c, n) * expected.at(c, n);
    }
    REQUIRE(energy > 0);
    double relative_rms = std::sqrt(error / energy);
    INFO("channel " << c << ": relative RMS error " << relative_rms << ", tolerance " << tolerance);
    CHECK(relative_rms <= tolerance);
  }
}

// The header dictionary of an .npy file, e.g. "{'descr': '<f8', 'fortran_order': False, ...}".
std::string npy_header(const fs::path& path) {
  std::string bytes = read_file_bytes(path);
  REQUIRE(bytes.size() >= 10);
  REQUIRE(bytes.compare(0, 6, "\x93NUMPY") == 0);
  std::size_t length = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  REQUIRE(bytes.size() >= 10 + length);
  return bytes.substr(10, length);
}

void check_npy_layout(const fs::path& path, const std::string& descr, const std::string& shape) {
  std::string header = npy_header(path);
  INFO(path.filename().string() << " header: " << header);
  CHECK(header.find("'descr': '" + descr + "'") != std::string::npos);
  CHECK(header.find("'fortran_order': False") != std::string::npos);
  CHECK(header.find("'shape': " + shape) != std::string::npos);
}


}  // namespace

// ---- results against SciPy ----------------------------------------------------------------

TEST_CASE("a single chain of every biquad, a gain and a clip, from a float WAV") {
  TempDir dir;
  SUBCASE("to a float64 .npy") {
    require_success(run_fxc({"run", graph("single_chain.fx"), "-i", data("single_chain_in.wav"), "-o",
                         "y.npy"}, dir.path()));
    check_npy_layout(dir / "y.npy", "<f8", "(2, 6000)");
    check_close(dir / "y.npy", "single_chain_y.npy", kFloat64Tolerance);
  }
  SUBCASE("to a float WAV") {
    require_success(run_fxc({"run", graph("single_chain.fx"), "-i", data("single_chain_in.wav"), "-o",
                         "y.wav"}, dir.path()));
    auto file = fxc::read_signal_file((dir / "y.wav").string(), fxc::DType::f64);
    REQUIRE(file.has_value());
    CHECK(file.value().sample_rate_hz == 48000.0);  // the input file's rate
    // A 16- or 24-bit WAV would miss the float32 bound by orders of magnitude.
    check_close(dir / "y.wav", "single_chain_y.npy", kFloat32Tolerance);
  }
  CHECK(dir.entries().size() == 1);  // the output and nothing else (no temporary file)
}

TEST_CASE("two inputs and two outputs, from float32 .npy files") {
  TempDir dir;
  std::vector<std::string> args{"run", graph("multi_io.fx"), "-i", data("multi_io_a.npy"),
                                "-i", data("multi_io_b.npy"), "--fs", "48000",
                                "-o", "mix.npy", "-o", "diff.npy"};
  SUBCASE("--dtype f64 (the default)") {
    require_success(run_fxc(args, dir.path()));
    check_npy_layout(dir / "mix.npy", "<f8", "(2, 4096)");
    check_npy_layout(dir / "diff.npy", "<f8", "(2, 4096)");
    check_close(dir / "mix.npy", "multi_io_mix.npy", kFloat64Tolerance);
    check_close(dir / "diff.npy", "multi_io_diff.npy", kFloat64Tolerance);
  }
  SUBCASE("--dtype f32 on the reference target: float64 arithmetic, float32 output") {
    args.insert(args.end(), {"--dtype", "f32", "--target", "ref"});
    require_success(run_fxc(args, dir.path()));
    check_npy_layout(dir / "mix.npy", "<f4", "(2, 4096)");
    check_npy_layout(dir / "diff.npy", "<f4", "(2, 4096)");
    check_close(dir / "mix.npy", "multi_io_mix.npy", kFloat32Tolerance);
    check_close(dir / "diff.npy", "multi_io_diff.npy", kFloat32Tolerance);
  }
  SUBCASE("--dtype f32 on compiled kernels: float32 arithmetic") {
    args.insert(args.end(), {"--dtype", "f32"});
    require_success(run_fxc(args, dir.path()));
    check_npy_layout(dir / "mix.npy", "<f4", "(2, 4096)");
    check_close(dir / "mix.npy", "multi_io_mix.npy", kFloat32ArithmeticTolerance);
    check_close(dir / "diff.npy", "multi_io_diff.npy", kFloat32ArithmeticTolerance);
  }
  CHECK(dir.entries() == std::vector<std::string>{"diff.npy", "mix.npy"});
}

TEST_CASE("a chain reused twice, from a one-dimensional float64 .npy") {
  TempDir dir;
  require_success(run_fxc({"run", graph("reused_chain.fx"), "-i", data("mono_f64.npy"), "--fs",
                       "48000", "-o", "twice.npy", "-o", "delayed.npy", "--dtype", "f64"},
                      dir.path()));
  // A one-channel output is still two-dimensional.
  check_npy_layout(dir / "twice.npy", "<f8", "(1, 4096)");
  check_close(dir / "twice.npy", "reused_chain_twice.npy", kFloat64Tolerance);
  check_close(dir / "delayed.npy", "reused_chain_delayed.npy", kFloat64Tolerance);
}

TEST_CASE("the other IIR designs, firwin windows and raw coefficients") {
  TempDir dir;
  require_success(run_fxc({"run", graph("designs.fx"), "-i", data("mono_f64.npy"), "--fs", "48000",
                       "-o", "out.npy"}, dir.path()));
  check_close(dir / "out.npy", "designs_out.npy", kFloat64Tolerance);
}

TEST_CASE("a mix with tanh and a delay that rounds half up, from a 44.1 kHz WAV") {
  TempDir dir;
  require_success(run_fxc({"run", graph("vocal.fx"), "-i", data("vocal_in.wav"), "-o", "out.npy"},
                      dir.path()));
  check_close(dir / "out.npy", "vocal_out.npy", kFloat64Tolerance);
}

TEST_CASE("a crossover's lowpass and highpass outputs, from a mono WAV") {
  TempDir dir;
  SUBCASE("to float WAVs") {
    require_success(run_fxc({"run", graph("crossover.fx"), "-i", data("crossover_in.wav"), "-o",
                         "woofer.wav", "-o", "tweeter.wav"}, dir.path()));
    check_close(dir / "woofer.wav", "crossover_woofer.npy", kFloat32Tolerance);
    check_close(dir / "tweeter.wav", "crossover_tweeter.npy", kFloat32Tolerance);
  }
  SUBCASE("to float64 .npy files") {
    require_success(run_fxc({"run", graph("crossover.fx"), "-i", data("crossover_in.wav"), "-o",
                         "woofer.npy", "-o", "tweeter.npy"}, dir.path()));
    check_close(dir / "woofer.npy", "crossover_woofer.npy", kFloat64Tolerance);
    check_close(dir / "tweeter.npy", "crossover_tweeter.npy", kFloat64Tolerance);
  }
  CHECK(dir.entries().size() == 2);
}

// ---- failed runs write nothing ------------------------------------------------------------

TEST_CASE("a failed run leaves no output and no temporary file") {
  TempDir dir;
  SUBCASE("a cutoff above the Nyquist frequency of the file's rate") {
    check_failure(run_fxc({"run", graph("too_high.fx"), "-i", data("crossover_in.wav"), "-o",
                       "out.wav"}, dir.path()),
                  1, "Nyquist frequency 22050 Hz");
  }
  SUBCASE("a cutoff above the Nyquist frequency of --fs") {
    check_failure(run_fxc({"run", graph("too_high.fx"), "-i", data("mono_f64.npy"), "--fs", "48000",
                       "-o", "out.npy"}, dir.path()),
                  1, "too_high.fx:4:24: error:");
  }
  SUBCASE("an input that is not audio") {
    write_bytes(dir / "noise.wav", "this is not a WAV file\n");
    check_failure(run_fxc({"run", graph("too_high.fx"), "-i", "noise.wav", "-o", "out.wav"},
                      dir.path()),
                  1, "cannot read 'noise.wav'");
    fs::remove(dir / "noise.wav");
  }
  SUBCASE("an output extension no format has") {
    check_failure(run_fxc({"run", graph("crossover.fx"), "-i", data("crossover_in.wav"), "-o",
                       "woofer.wav", "-o", "tweeter.mp3"}, dir.path()),
                  1, "unknown output extension '.mp3'");
  }
  CHECK(dir.entries().empty());
}

TEST_CASE("a failed run leaves an existing output byte for byte as it was") {
  TempDir dir;
  const std::string before = "an earlier result\n";
  write_bytes(dir / "out.wav", before);
  SUBCASE("a design error") {
    check_failure(run_fxc({"run", graph("too_high.fx"), "-i", data("crossover_in.wav"), "-o",
                       "out.wav"}, dir.path()),
                  1, "error:");
  }
  SUBCASE("a missing input") {
    check_failure(run_fxc({"run", graph("too_high.fx"), "-i", "missing.wav", "-o", "out.wav"},
                      dir.path()),
                  1, "cannot read 'missing.wav'");
  }
  SUBCASE("a wrong number of outputs") {
    check_failure(run_fxc({"run", graph("crossover.fx"), "-i", data("crossover_in.wav"), "-o",
                       "out.wav"}, dir.path()),
                  2, "2 output(s)");
  }
  bool unchanged = read_file_bytes(dir / "out.wav") == before;
  CHECK_MESSAGE(unchanged, "out.wav was changed by a failed run");
  CHECK(dir.entries() == std::vector<std::string>{"out.wav"});
}

// "Nothing is written to -o unless the run succeeded" (docs/cli.md), also when the failure is
// at a later output: outputs are written under pending names and renamed together.
TEST_CASE("a run whose second output cannot be written leaves the first untouched") {
  TempDir dir;
  const std::string before = "an earlier result\n";
  write_bytes(dir / "woofer.wav", before);
  check_failure(run_fxc({"run", graph("crossover.fx"), "-i", data("crossover_in.wav"), "-o",
                     "woofer.wav", "-o", "no_such_dir/tweeter.wav"}, dir.path()),
                1, "no_such_dir");
  bool unchanged = read_file_bytes(dir / "woofer.wav") == before;
  CHECK_MESSAGE(unchanged, "woofer.wav was replaced although the run failed");
  CHECK(dir.entries() == std::vector<std::string>{"woofer.wav"});
}

// ---- exit statuses and messages -----------------------------------------------------------

TEST_CASE("a wrong command line exits with status 2") {
  TempDir dir;
  SUBCASE("more -i files than graph inputs: the contract's exit 2, unless --batch asks for a batch") {
    check_failure(run_fxc({"run", graph("crossover.fx"), "-i", data("crossover_in.wav"), "-i",
                       data("crossover_in.wav"), "-o", "a.wav", "-o", "b.wav"}, dir.path()),
                  2, "the graph has 1 input(s) but 2 -i file(s) were given (give --batch to run them as a batch of 2 items)");
    check_failure(run_fxc({"run", graph("crossover.fx"), "-i", data("crossover_in.wav"), "-i",
                       data("crossover_in.wav"), "-o", "a.wav", "-o", "b.wav", "--batch"}, dir.path()),
                  2, "4 -o file(s) are needed for a batch of 2 item(s) (2 -i files), but 2 were given");
  }
  SUBCASE("fewer -i files than graph inputs") {
    check_failure(run_fxc({"run", graph("multi_io.fx"), "-i", data("multi_io_a.npy"), "--fs",
                       "48000", "-o", "a.npy", "-o", "b.npy"}, dir.path()),
                  2, "the graph has 2 input(s) but 1 -i file(s) were given");
  }
  SUBCASE("fewer -o files than graph outputs") {
    check_failure(run_fxc({"run", graph("crossover.fx"), "-i", data("crossover_in.wav"), "-o",
                       "a.wav"}, dir.path()),
                  2, "the graph has 2 output(s) but 1 -o file(s) were given");
  }
  SUBCASE("an unknown option") {
    check_failure(run_fxc({"run", graph("linear.fx"), "-i", data("crossover_in.wav"), "-o", "a.wav",
                       "--bogus"}, dir.path()),
                  2, "--bogus");
  }
  SUBCASE("a missing -o") {
    check_failure(run_fxc({"run", graph("linear.fx"), "-i", data("crossover_in.wav")}, dir.path()), 2,
                  "--output");
  }
  SUBCASE("an option without its value") {
    check_failure(run_fxc({"run", graph("linear.fx"), "-i", data("crossover_in.wav"), "-o"},
                      dir.path()),
                  2, "-o");
  }
  SUBCASE("an unknown subcommand") {
    // CLI11 says "A subcommand is required" here without naming the word it did not know.
    check_failure(run_fxc({"frobnicate"}, dir.path()), 2, "subcommand");
  }
  CHECK(dir.entries().empty());
}

TEST_CASE("a user error exits with status 1") {
  TempDir dir;
  SUBCASE("a missing input file") {
    check_failure(run_fxc({"run", graph("linear.fx"), "-i", "missing.wav", "-o", "a.wav"}, dir.path()),
                  1, "cannot read 'missing.wav'");
  }
  SUBCASE("a missing graph file") {
    check_failure(run_fxc({"run", "missing.fx", "-i", data("crossover_in.wav"), "-o", "a.wav"},
                      dir.path()),
                  1, "missing.fx");
  }
  SUBCASE("an .npy input without --fs") {
    check_failure(run_fxc({"run", graph("linear.fx"), "-i", data("mono_f64.npy"), "-o", "a.npy"},
                      dir.path()),
                  1, "--fs");
  }
  SUBCASE("--fs 0") {
    check_failure(run_fxc({"run", graph("linear.fx"), "-i", data("mono_f64.npy"), "--fs", "0", "-o",
                       "a.npy"}, dir.path()),
                  1, "--fs must be a positive number of Hz, got 0");
  }
  SUBCASE("a graph with a bad channel count for the file") {
    // linear.fx declares one channel; the file has two.
    check_failure(run_fxc({"run", graph("linear.fx"), "-i", data("single_chain_in.wav"), "-o",
                       "a.wav"}, dir.path()),
                  1, "error:");
  }
  CHECK(dir.entries().empty());
}

// ---- freqz, help, version -----------------------------------------------------------------

TEST_CASE("freqz plots a linear graph and refuses a nonlinear one") {
  TempDir dir;
  SUBCASE("linear") {
    require_success(run_fxc({"freqz", graph("linear.fx"), "--fs", "48000", "-o", "response.svg",
                         "--points", "128"}, dir.path()));
    std::string svg = read_file_bytes(dir / "response.svg");
    CHECK(svg.find("<svg") != std::string::npos);
    CHECK(svg.find("</svg>") != std::string::npos);
    CHECK(dir.entries() == std::vector<std::string>{"response.svg"});
  }
  SUBCASE("with tanh") {
    check_failure(run_fxc({"freqz", graph("nonlinear.fx"), "--fs", "48000", "-o", "response.svg"},
                      dir.path()),
                  1, "nonlinear.fx:4:35: error:");
    CHECK(dir.entries().empty());
  }
}

TEST_CASE("--help shows every subcommand's options with examples") {
  TempDir dir;
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--help"}, {"run", "--help"}, {"dump", "--help"},
        {"freqz", "--help"}, {"info", "--help"}, {"-h"}}) {
    CommandResult r = run_fxc(args, dir.path());
    INFO("fxc " << args.front() << (args.size() > 1 ? " " + args[1] : "") << "\n" << show(r));
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Usage:") != std::string::npos);
    CHECK(r.out.find("Example") != std::string::npos);
    CHECK(r.out.find("fxc ") != std::string::npos);
  }
  CommandResult top = run_fxc({"--help"}, dir.path());
  for (const char* sub : {"run", "dump", "freqz", "info"}) CHECK(top.out.find(sub) != std::string::npos);
}

TEST_CASE("--version and info print the version") {
  TempDir dir;
  CommandResult version = run_fxc({"--version"}, dir.path());
  CHECK(version.exit_code == 0);
  CHECK(version.out == std::string("fxc ") + FXC_EXPECTED_VERSION + "\n");
  CommandResult info = run_fxc({"info"}, dir.path());
  CHECK(info.exit_code == 0);
  CHECK(info.out.find(std::string("fxc ") + FXC_EXPECTED_VERSION) != std::string::npos);
  // The vector math float64 kernels call (codegen/vector_math.h).
  CHECK_MESSAGE((info.out.find("\nmath:      libmvec (float64 tanh, log10, exp a vector of channels a call: _ZGV") !=
                     std::string::npos ||
                 info.out.find("\nmath:      libm (") != std::string::npos),
                info.out);

  // The NVRTC line: its version, the file and why it was chosen (docs/cuda.md), or not found.
  auto nvrtc_line = [](const std::string& out) {
    std::size_t at = out.find("\nNVRTC:     ");
    if (at == std::string::npos) return std::string();
    return out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  };
  std::string line = nvrtc_line(info.out);
  CHECK_MESSAGE((line.rfind("NVRTC:     not found (", 0) == 0 ||
                 std::regex_match(line, std::regex(R"(NVRTC:     [0-9]+\.[0-9]+ \(/\S+; .+\))"))),
                info.out);
  // $FXC_NVRTC_LIBRARY naming a file that does not load: the search goes on, and says so.
  const char* before = std::getenv("FXC_NVRTC_LIBRARY");
  std::string saved = before ? before : "";
  setenv("FXC_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so.99", 1);
  CommandResult missing = run_fxc({"info"}, dir.path());
  if (before) setenv("FXC_NVRTC_LIBRARY", saved.c_str(), 1);
  else unsetenv("FXC_NVRTC_LIBRARY");
  CHECK(missing.exit_code == 0);
  std::string missing_line = nvrtc_line(missing.out);
  if (missing_line.rfind("NVRTC:     not found (", 0) != 0)
    CHECK_MESSAGE(missing_line.find("; $FXC_NVRTC_LIBRARY (/nonexistent/libnvrtc.so.99) did not load)") !=
                      std::string::npos,
                  missing_line);
}

TEST_CASE("--block streams through the same kernels: the output is identical") {
  TempDir dir;
  for (std::string dtype : {"f32", "f64"}) {
    CAPTURE(dtype);
    require_success(run_fxc({"run", graph("vocal.fx"), "-i", data("vocal_in.wav"), "-o",
                             "whole.npy", "--dtype", dtype},
                            dir.path()));
    for (std::string block : {"1", "64", "1000"}) {
      CAPTURE(block);
      require_success(run_fxc({"run", graph("vocal.fx"), "-i", data("vocal_in.wav"), "-o",
                               "blocks.npy", "--dtype", dtype, "--block", block},
                              dir.path()));
      CHECK(read_file_bytes(dir / "blocks.npy") == read_file_bytes(dir / "whole.npy"));
    }
  }
  check_failure(run_fxc({"run", graph("vocal.fx"), "-i", data("vocal_in.wav"), "-o", "x.npy",
                         "--block", "0"},
                        dir.path()),
                1, "--block must be at least 1");
  check_failure(run_fxc({"run", graph("vocal.fx"), "-i", data("vocal_in.wav"), "-o", "x.npy",
                         "--block", "64", "--target", "ref"},
                        dir.path()),
                1, "use it with --target cpu");
}

TEST_CASE("--save-state and --load-state continue a stream in a later run, bit for bit") {
  TempDir dir;
  fxc::Signal a = load(data("vocal_in.wav"));
  fxc::Signal twice(a.channels(), 2 * a.samples());
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t k = 0; k < 2; ++k)
      std::copy(a.f64(c).begin(), a.f64(c).end(), twice.f64(c).begin() + k * a.samples());
  REQUIRE(fxc::write_signal_file((dir / "a.npy").string(), a, 48000, {}));
  REQUIRE(fxc::write_signal_file((dir / "aa.npy").string(), twice, 48000, {}));
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"run", graph("vocal.fx"), "--fs", "48000", "--dtype", "f64"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_fxc(args, dir.path());
  };
  require_success(run({"-i", "aa.npy", "-o", "whole.npy"}));
  require_success(run({"-i", "a.npy", "-o", "first.npy", "--save-state", "s.state"}));
  // A whole-file run saved it; blocks of 64 (another strategy, perhaps) continue from it.
  require_success(run({"-i", "a.npy", "-o", "second.npy", "--load-state", "s.state", "--block", "64"}));
  fxc::Signal whole = load(dir / "whole.npy"), first = load(dir / "first.npy"),
              second = load(dir / "second.npy");
  REQUIRE(second.samples() == a.samples());
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t n = 0; n < a.samples(); ++n) {
      REQUIRE(first.at(c, n) == whole.at(c, n));
      REQUIRE(second.at(c, n) == whole.at(c, a.samples() + n));
    }

  write_bytes(dir / "bad.state", "fxc stream state 1\ngraph 00\nsha256 00\n");
  check_failure(run({"-i", "a.npy", "-o", "x.npy", "--load-state", "bad.state"}), 1,
                "error: cannot load 'bad.state': the stream state was saved from a graph of another shape");
  check_failure(run({"-i", "a.npy", "-o", "x.npy", "--load-state", "missing.state"}), 1,
                "error: cannot read 'missing.state': No such file or directory");
  // The reference interpreter keeps no stream (cpu and cuda do: docs/cli.md).
  check_failure(run({"-i", "a.npy", "-o", "x.npy", "--save-state", "r.state", "--target", "ref"}), 1,
                "use them with --target cpu or cuda");
  CHECK_FALSE(fs::exists(dir.path() / "r.state"));
  check_failure(run({"-i", "a.npy", "-o", "x.npy", "--load-state", "s.state", "--target", "ref"}), 1,
                "use them with --target cpu");
  CHECK_FALSE(fs::exists(dir / "x.npy"));
}

TEST_CASE("--progress always on a stream writes a log line a second and the last, not one per block") {
  TempDir dir;
  const auto start = std::chrono::steady_clock::now();
  CommandResult r = run_fxc({"run", graph("vocal.fx"), "-i", data("vocal_in.wav"), "-o", "y.wav", "--block", "1",
                             "--progress", "always"},
                            dir.path());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  std::size_t lines = 0;
  for (std::size_t at = r.err.find("% ["); at != std::string::npos; at = r.err.find("% [", at + 1)) ++lines;
  CHECK(lines >= 2);  // the first and the last
  // One a second, however slow the build (a sanitizer's), not one for each of the samples.
  CHECK(static_cast<double>(lines) <= seconds + 3);
  CHECK(r.err.find("100% [##############################]") != std::string::npos);
  CHECK(r.err.find("\r") == std::string::npos);
}

TEST_CASE("--stats reports counters and phases on standard error") {
  TempDir dir;
  CommandResult r = run_fxc({"run", graph("vocal.fx"), "-i", data("vocal_in.wav"), "-o",
                             "y.wav", "--stats", "--block", "256"},
                            dir.path());
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  for (const char* line : {"kernel dispatches", "cache hits", "compiles", "run (stream)", "parse"})
    CHECK(r.err.find(line) != std::string::npos);
}

TEST_CASE("--trace writes a Chrome trace with the compile and run phases") {
  TempDir dir;
  require_success(run_fxc({"run", graph("vocal.fx"), "-i", data("vocal_in.wav"), "-o", "y.wav",
                           "--trace", "trace.json", "--block", "4096"},
                          dir.path()));
  std::ifstream in(dir / "trace.json");
  REQUIRE(in);
  nlohmann::json trace = nlohmann::json::parse(in);  // throws (fails the test) if invalid
  REQUIRE(trace["traceEvents"].is_array());
  std::set<std::string> names, categories;
  bool kernel_has_sizes = false;
  for (const auto& e : trace["traceEvents"]) {
    CHECK(e["ph"] == "X");
    CHECK(e["dur"].get<double>() >= 0);
    names.insert(e["name"].get<std::string>());
    categories.insert(e["cat"].get<std::string>());
    if (e["cat"] == "kernels")
      kernel_has_sizes = e["args"].contains("samples") && e["args"].contains("channels") &&
                         e["args"]["graph"] == "vocal";
  }
  for (const char* n : {"parse and lower", "design-filters", "fuse-chains", "select-strategy", "kernel cache", "write outputs"})
    CHECK_MESSAGE(names.count(n), n);
  for (const char* c : {"frontend", "passes", "compile", "kernels", "io"}) CHECK_MESSAGE(categories.count(c), c);
  CHECK(kernel_has_sizes);
  // A corpus run: each file's reading and writing too (they were missing).
  fs::create_directories(dir / "corpus");
  fs::copy_file(data("vocal_in.wav"), dir / "corpus" / "a.wav");
  CommandResult corpus = run_fxc({"run", graph("vocal.fx"), "-i", "corpus", "--out-dir", "out", "--trace", "corpus.json"},
                                 dir.path());
  INFO(show(corpus));
  REQUIRE(corpus.exit_code == 0);  // its summary goes to standard error
  std::ifstream corpus_in(dir / "corpus.json");
  std::set<std::string> corpus_names;
  const nlohmann::json corpus_trace = nlohmann::json::parse(corpus_in);
  for (const auto& e : corpus_trace["traceEvents"]) corpus_names.insert(e["name"].get<std::string>());
  CHECK(corpus_names.count("read corpus/a.wav"));
  CHECK(corpus_names.count("write outputs"));
}

TEST_CASE("several -i/-o groups run as one batch, each output as if run alone") {
  TempDir dir;
  // Two mono items of different lengths, one forced to the other's rate.
  require_success(run_fxc({"run", graph("crossover.fx"), "-i", data("crossover_in.wav"), "-i",
                           data("mono_f64.npy"), "--fs", "44100", "-o", "w1.npy", "-o", "t1.npy",
                           "-o", "w2.npy", "-o", "t2.npy", "--trace", "batch_trace.json", "--batch"},
                          dir.path()));
  CHECK(read_file_bytes(dir / "batch_trace.json").find("\"traceEvents\"") != std::string::npos);
  require_success(run_fxc({"run", graph("crossover.fx"), "-i", data("mono_f64.npy"), "--fs",
                           "44100", "-o", "w2_alone.npy", "-o", "t2_alone.npy"},
                          dir.path()));
  check_close(dir / "w1.npy", "crossover_woofer.npy", kFloat64Tolerance);
  check_close(dir / "t1.npy", "crossover_tweeter.npy", kFloat64Tolerance);
  for (const char* name : {"w2", "t2"}) {
    auto batch = fxc::read_signal_file((dir / (std::string(name) + ".npy")).string(), fxc::DType::f64);
    auto alone = fxc::read_signal_file((dir / (std::string(name) + "_alone.npy")).string(), fxc::DType::f64);
    REQUIRE(batch);
    REQUIRE(alone);
    REQUIRE(batch->signal.samples() == alone->signal.samples());
    double worst = 0;
    for (std::size_t n = 0; n < batch->signal.samples(); ++n)
      worst = worse(worst, std::abs(batch->signal.at(0, n) - alone->signal.at(0, n)));
    CHECK(worst <= 1e-12);  // float64; another strategy may run the batch (see docs/streaming.md)
  }
  check_failure(run_fxc({"run", graph("crossover.fx"), "-i", data("crossover_in.wav"), "-i",
                         data("mono_f64.npy"), "--fs", "44100", "-o", "w1.npy", "-o", "t1.npy", "--batch"},
                        dir.path()),
                2, "4 -o file(s) are needed for a batch of 2 item(s)");
}

// On a machine without a CUDA driver the only acceptable failure is the no-driver message,
// exactly, with nothing written; the case then skips (CTest e2e_cuda_device shows "Skipped").
// Any other failure (a driver without a device, a broken driver, a compile error) fails, and
// FXC_REQUIRE_CUDA_DEVICE=1 (a machine with a GPU) makes even the no-driver message a failure.
TEST_CASE("CUDA device: a batch on --target cuda, each output as SciPy's") {
  TempDir dir;
  CommandResult r = run_fxc({"run", graph("crossover.fx"), "-i", data("crossover_in.wav"), "-i",
                             data("crossover_in.wav"), "--target", "cuda", "--dtype", "f64", "-o", "w1.npy",
                             "-o", "t1.npy", "-o", "w2.npy", "-o", "t2.npy", "--batch"},
                            dir.path());
  const char* kNoDriver =
      "error: no CUDA driver (libcuda.so.1 not found): --target cuda needs an NVIDIA GPU and its "
      "driver; use --target cpu [fxc-cuda]\n";
  const char* require = std::getenv("FXC_REQUIRE_CUDA_DEVICE");
  if (r.exit_code != 0 && r.err == kNoDriver && !(require && std::string(require) == "1")) {
    CHECK(r.exit_code == 1);
    CHECK(r.out.empty());
    CHECK(dir.entries().empty());
    fxc::test::skip("no CUDA driver (libcuda.so.1 not found)");
    return;
  }
  require_success(r);
  for (const char* item : {"1", "2"}) {
    check_close(dir / (std::string("w") + item + ".npy"), "crossover_woofer.npy", kFloat64Tolerance);
    check_close(dir / (std::string("t") + item + ".npy"), "crossover_tweeter.npy", kFloat64Tolerance);
  }
}

// Every fxc this suite starts uses a kernel cache of its own, so runs of other builds (or of
// other suites at the same time) never meet its entries.
int main(int argc, char** argv) {
  std::string cache = (std::filesystem::temp_directory_path() /
                       ("fxc-test-cache-" + std::to_string(getpid()))).string();
  setenv("FXC_CACHE_DIR", cache.c_str(), 1);
  int status = fxc::test::run_tests(argc, argv);
  std::error_code ignored;
  std::filesystem::remove_all(cache, ignored);
  return status;
}

// ---- the README's commands ----------------------------------------------------------------

namespace {

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  for (char c : line) {
    if (c == ' ') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

}  // namespace

TEST_CASE("every fxc command the README shows runs, on fixture files") {
  // The README's block of `$fxc ...` lines, run in a directory with the example graphs and a
  // stereo WAV under each input name the commands use, with a cache of its own.
  std::ifstream readme(fs::path(FXC_SOURCE_DIR) / "README.md");
  REQUIRE(readme);
  std::vector<std::vector<std::string>> commands;
  for (std::string line; std::getline(readme, line);) {
    if (line.rfind("$fxc ", 0) != 0) continue;
    std::size_t comment = line.find(" #");
    commands.push_back(split_words(line.substr(5, comment == std::string::npos ? std::string::npos : comment - 5)));
  }
  REQUIRE(commands.size() >= 10);
  TempDir dir;
  fs::create_directory_symlink(fs::path(FXC_SOURCE_DIR) / "examples", dir / "examples");
  for (const char* name : {"voice.wav", "in.wav", "a.wav", "b.wav"}) fs::copy_file(data("vocal_in.wav"), dir / name);
  std::vector<std::string> env{"FXC_CACHE_DIR=" + (dir / "cache").string()};
  std::set<std::string> compiled;  // graphs `fxc compile` has filled the cache for
  for (const auto& args : commands) {
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    CAPTURE(shown);
    std::vector<std::string> argv{FXC_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = fxc::test::run_command(argv, dir.path(), env);
    INFO(show(r));
    REQUIRE(r.exit_code == 0);
    for (std::size_t k = 0; k + 1 < args.size(); ++k)
      if (args[k] == "-o") CHECK(fs::file_size(dir / args[k + 1]) > 0);
    if (args[0] == "compile") compiled.insert(args[1]);
    // After `fxc compile`, a run of the same graph (defaults, --block, --set) compiles nothing.
    if (args[0] == "run" && compiled.count(args[1]) &&
        std::find(args.begin(), args.end(), "--stats") != args.end())
      CHECK(stats_counter(r.err, "compiles") == 0);
  }
}

TEST_CASE("fxc compile then fxc run at any value of a live parameter compiles nothing more") {
  TempDir dir;
  std::vector<std::string> env{"FXC_CACHE_DIR=" + (dir / "cache").string()};
  auto fxc_in_dir = [&](const std::vector<std::string>& args) { return run_fxc(args, dir.path(), env); };
  fs::path eq = fs::path(FXC_SOURCE_DIR) / "examples" / "eq.fx";
  require_success(fxc_in_dir({"compile", eq.string()}));
  // eq.fx declares fc in [20 Hz, 120 Hz]: its ends, values between, whole files and blocks.
  for (std::string value : {"20Hz", "33Hz", "120Hz"})
    for (std::string block : {"", "64"}) {
      CAPTURE(value);
      CAPTURE(block);
      std::vector<std::string> args{"run", eq.string(), "-i", data("vocal_in.wav"), "-o", "y.wav", "--set",
                                    "fc=" + value, "--stats"};
      if (!block.empty()) args.insert(args.end(), {"--block", block});
      CommandResult r = fxc_in_dir(args);
      INFO(show(r));
      REQUIRE(r.exit_code == 0);
      CHECK(stats_counter(r.err, "compiles") == 0);
    }
}

TEST_CASE("fxc compile of a graph without channel counts prepares mono and stereo runs, short and long") {
  TempDir dir;
  std::vector<std::string> env{"FXC_CACHE_DIR=" + (dir / "cache").string()};
  auto fxc_in_dir = [&](const std::vector<std::string>& args) { return run_fxc(args, dir.path(), env); };
  {
    std::ofstream fx(dir / "any.fx");
    fx << "input x\noutput x | butter(4, 30 Hz, highpass) | peaking(2 kHz, 1, 3 dB)\n";
  }
  require_success(fxc_in_dir({"compile", "any.fx"}));
  // A mono file of 20 s takes the chunked scan (the highpass's decay asks for more than the
  // shortest chunked length); a stereo file of 0.5 s, channel lanes.
  write_noise(dir / "mono.npy", 1, 20 * 48000, 3);
  write_noise(dir / "stereo.npy", 2, 24000, 4);
  for (const char* input : {"mono.npy", "stereo.npy"}) {
    CAPTURE(input);
    CommandResult r = fxc_in_dir({"run", "any.fx", "-i", input, "-o", "y.npy", "--fs", "48000", "--stats"});
    INFO(show(r));
    REQUIRE(r.exit_code == 0);
    CHECK(stats_counter(r.err, "compiles") == 0);
  }
  // A graph that takes only one of the two counts compiles for that one (it failed for both).
  {
    std::ofstream fx(dir / "mono_only.fx");
    fx << "input x\ninput y : 1\noutput x + y\n";
  }
  require_success(fxc_in_dir({"compile", "mono_only.fx"}));
  {
    std::ofstream fx(dir / "stereo_only.fx");
    fx << "input x\nl, r = x\noutput l + r\n";
  }
  require_success(fxc_in_dir({"compile", "stereo_only.fx"}));
}

TEST_CASE("at float32, a declared range whose ends need different state precisions still compiles once") {
  // A highpass at 2 kHz keeps float32 state; at 20 Hz its poles need float64 state. Declared
  // over [20 Hz, 2 kHz], the range decides: compile, then any value, compiles nothing more.
  TempDir dir;
  std::vector<std::string> env{"FXC_CACHE_DIR=" + (dir / "cache").string()};
  {
    std::ofstream fx(dir / "hp.fx");
    fx << "input x\nfc = 1 kHz in [20 Hz, 2 kHz]\noutput x | butter(4, fc, highpass)\n";
  }
  auto fxc_in_dir = [&](const std::vector<std::string>& args) { return run_fxc(args, dir.path(), env); };
  require_success(fxc_in_dir({"compile", "hp.fx", "--dtype", "f32", "--channels", "2"}));
  for (std::string value : {"2kHz", "20Hz"}) {
    CAPTURE(value);
    CommandResult r = fxc_in_dir({"run", "hp.fx", "-i", data("vocal_in.wav"), "-o", "y.npy", "--dtype", "f32",
                                  "--set", "fc=" + value, "--stats"});
    INFO(show(r));
    REQUIRE(r.exit_code == 0);
    CHECK(stats_counter(r.err, "compiles") == 0);
  }
}

TEST_CASE("fxc bench --block --json prints the median per block and the slowest calls") {
  TempDir dir;
  {
    std::ofstream fx(dir / "b.fx");
    fx << "input x\noutput x | butter(4, 1 kHz) | gain(-3 dB)\n";
  }
  CommandResult r = run_fxc({"bench", "b.fx", "--seconds", "0.5", "--block", "64", "--repeat", "3", "--json"}, dir.path());
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["block"] == 64);
  CHECK(j["blocks"] == 375);  // 0.5 s at 48 kHz
  const double median = j["median_us_per_block"], p99 = j["call_us_p99"], slowest = j["call_us_max"];
  CHECK(median > 0);
  CHECK(p99 > 0);
  CHECK(p99 <= slowest);
  CHECK(j["real_time_factor"].get<double>() == doctest::Approx(j["audio_us_per_block"].get<double>() / median));
  CHECK(j["realtime_factor"] == j["real_time_factor"]);  // the whole-signal JSON's spelling too
  // --block with --batch measured the batch alone; a length under one sample measured nothing.
  CommandResult both = run_fxc({"bench", "b.fx", "--seconds", "0.1", "--block", "64", "--batch", "2"}, dir.path());
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("--block and --batch are separate measurements") != std::string::npos);
  CommandResult tiny = run_fxc({"bench", "b.fx", "--seconds", "1e-9"}, dir.path());
  CHECK(tiny.exit_code == 1);  // as for the other bad --seconds
  CHECK(tiny.err.find("is less than one sample") != std::string::npos);
  CommandResult whole = run_fxc({"bench", "b.fx", "--seconds", "0.1", "--repeat", "1", "--json"}, dir.path());
  REQUIRE(whole.exit_code == 0);
  CHECK(nlohmann::json::parse(whole.out)["unfused"]["realtime_factor"].get<double>() > 0);
}

TEST_CASE("-o - with a state: standard output is written before the state, and is never the state's file") {
  TempDir dir;
  {
    std::ofstream fx(dir / "d.fx");
    fx << "input x : 1\noutput x | delay(10 samples)\n";
  }
  fs::copy_file(data("mono_f64.npy"), dir / "x.npy");
  const std::string fxc = std::string(FXC_BINARY) + " run d.fx -i x.npy -o - --fs 48000 --save-state st.bin";
  // A full disk (or a closed pipe) behind standard output fails the run before a state is
  // saved that the next run would continue from audio nobody received.
  CommandResult full = fxc::test::run_command({"/bin/sh", "-c", fxc + " > /dev/full"}, dir.path());
  CHECK(full.exit_code == 1);
  CHECK(full.err.find("cannot write '<stdout>'") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "st.bin"));
  // The state (or the trace) in the file standard output goes to would mix with the output.
  CommandResult same = fxc::test::run_command({"/bin/sh", "-c", fxc + " > st.bin"}, dir.path());
  CHECK(same.exit_code == 2);
  CHECK(same.err.find("--save-state 'st.bin' is where standard output goes") != std::string::npos);
  CommandResult trace = run_fxc({"run", "d.fx", "-i", "x.npy", "-o", "-", "--fs", "48000", "--trace", "/dev/stdout"},
                                dir.path());
  CHECK(trace.exit_code == 2);
  CHECK(trace.err.find("--trace '/dev/stdout' is where standard output goes") != std::string::npos);
  // A state that cannot be written fails the run before anything reaches standard output
  // (the contract: nothing is written to -o unless the run succeeded).
  CommandResult nodir = run_fxc({"run", "d.fx", "-i", "x.npy", "-o", "-", "--fs", "48000", "--save-state",
                                 "missing/st.bin"},
                                dir.path());
  CHECK(nodir.exit_code == 1);
  CHECK(nodir.out.empty());
  // Written normally, both are there.
  CommandResult ok = fxc::test::run_command({"/bin/sh", "-c", fxc + " > out.npy"}, dir.path());
  CHECK(ok.exit_code == 0);
  CHECK(fs::exists(dir / "st.bin"));
  CHECK(fs::file_size(dir / "out.npy") > 128);
}

TEST_CASE("--save-state then --load-state continues a delay longer than the second file") {
  // The second run's stream is 300 frames; the 1000-sample delay line it loads holds 1000.
  TempDir dir;
  {
    std::ofstream fx(dir / "d.fx");
    fx << "input x : 1\noutput x | delay(1000 samples) | lowpass(2 kHz)\n";
  }
  std::vector<double> x(1800);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& v : x) v = u(rng);
  auto write = [&](const char* name, std::size_t from, std::size_t to) {
    fxc::Signal s(1, to - from, fxc::DType::f64);
    std::copy(x.begin() + static_cast<std::ptrdiff_t>(from), x.begin() + static_cast<std::ptrdiff_t>(to),
              s.f64(0).begin());
    REQUIRE(fxc::write_signal_file((dir / name).string(), s, std::nullopt, {}));
  };
  write("all.npy", 0, 1800);
  write("a.npy", 0, 1500);
  write("b.npy", 1500, 1800);
  require_success(run_fxc({"run", "d.fx", "-i", "all.npy", "--fs", "48000", "-o", "all_out.npy"}, dir.path()));
  require_success(run_fxc({"run", "d.fx", "-i", "a.npy", "--fs", "48000", "-o", "a_out.npy", "--block", "64",
                           "--save-state", "s.state"},
                          dir.path()));
  require_success(run_fxc({"run", "d.fx", "-i", "b.npy", "--fs", "48000", "-o", "b_out.npy", "--block", "64",
                           "--load-state", "s.state"},
                          dir.path()));
  auto whole = fxc::read_signal_file((dir / "all_out.npy").string(), fxc::DType::f64);
  auto tail = fxc::read_signal_file((dir / "b_out.npy").string(), fxc::DType::f64);
  REQUIRE(whole);
  REQUIRE(tail);
  double worst = 0;
  for (std::size_t i = 0; i < 300; ++i)
    worst = worse(worst, std::abs(tail->signal.at(0, i) - whole->signal.at(0, 1500 + i)));
  CHECK(worst < 1e-12);
}

TEST_CASE("--save-state then --load-state continue an FFT FIR across files of any length and --block") {
  // A 1501-tap FIR runs by FFT. Its FFT block follows the run: overlap-save in 8192 points
  // for a long file, 2048 for a short one, a partitioned convolution for --block 64. A state
  // saved by any goes on in any other, within the FFTs' rounding of one run over the whole.
  TempDir dir;
  {
    std::ofstream fx(dir / "f.fx");
    fx << "input x : 2\noutput x | firwin(1501, 1 kHz)\n";
  }
  const std::size_t total = 30000, cut = 29000;
  fxc::Signal x(2, total, fxc::DType::f64);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t c = 0; c < 2; ++c)
    for (double& v : x.f64(c)) v = u(rng);
  auto write = [&](const char* name, std::size_t from, std::size_t to) {
    fxc::Signal s(2, to - from, fxc::DType::f64);
    for (std::size_t c = 0; c < 2; ++c)
      std::copy(x.f64(c).begin() + static_cast<std::ptrdiff_t>(from), x.f64(c).begin() + static_cast<std::ptrdiff_t>(to),
                s.f64(c).begin());
    REQUIRE(fxc::write_signal_file((dir / name).string(), s, std::nullopt, {}));
  };
  write("all.npy", 0, total);
  write("a.npy", 0, cut);
  write("b.npy", cut, total);
  auto run = [&](std::vector<std::string> args) {
    std::vector<std::string> all{"run", "f.fx", "--fs", "48000"};
    all.insert(all.end(), args.begin(), args.end());
    require_success(run_fxc(all, dir.path()));
  };
  run({"-i", "all.npy", "-o", "all_out.npy"});
  auto whole = fxc::read_signal_file((dir / "all_out.npy").string(), fxc::DType::f64);
  REQUIRE(whole);
  const std::vector<std::vector<std::string>> modes = {{}, {"--block", "64"}};
  for (const auto& save : modes)
    for (const auto& load : modes) {
      CAPTURE(save.size());
      CAPTURE(load.size());
      std::vector<std::string> first{"-i", "a.npy", "-o", "a_out.npy", "--save-state", "s.state"};
      first.insert(first.end(), save.begin(), save.end());
      run(first);
      std::vector<std::string> second{"-i", "b.npy", "-o", "b_out.npy", "--load-state", "s.state"};
      second.insert(second.end(), load.begin(), load.end());
      run(second);
      auto tail = fxc::read_signal_file((dir / "b_out.npy").string(), fxc::DType::f64);
      REQUIRE(tail);
      REQUIRE(tail->signal.samples() == total - cut);
      double worst = 0, peak = 0;
      for (std::size_t c = 0; c < 2; ++c)
        for (std::size_t i = 0; i < total - cut; ++i) {
          worst = worse(worst, std::abs(tail->signal.at(c, i) - whole->signal.at(c, cut + i)));
          peak = std::max(peak, std::abs(whole->signal.at(c, cut + i)));
        }
      CHECK(worst < 1e-12 * peak);
    }
}

// ---- the commands in docs/ ----------------------------------------------------------------

namespace {

struct DocCommand {
  std::string where;                  // "docs/cli.md:103"
  std::vector<std::string> args;      // after "fxc"
  std::vector<std::string> expected;  // the lines shown after it in the same fence
};

// Lines of output compared with what a doc shows: numbers (timings, sizes, counts) become '#'
// and absolute paths '<path>', runs of spaces one space. A doc line "..." stands for any lines.
std::string normalise(const std::string& line) {
  std::string out;
  for (std::size_t i = 0; i < line.size();) {
    char c = line[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < line.size() && (std::isdigit(static_cast<unsigned char>(line[i])) || line[i] == '.' ||
                                 line[i] == 'e' || line[i] == '-' || line[i] == '+'))
        ++i;
      out += '#';
    } else if (c == '/' && (out.empty() || out.back() == ' ')) {
      while (i < line.size() && line[i] != ' ' && line[i] != ')') ++i;
      out += "<path>";
    } else if (c == ' ') {
      while (i < line.size() && line[i] == ' ') ++i;
      if (!out.empty()) out += ' ';
    } else {
      out += c;
      ++i;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool is_synopsis(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a.find('[') != std::string::npos || a.find('|') != std::string::npos) return true;
    if (a.size() > 1 && std::all_of(a.begin(), a.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)) || c == '.' || c == '_'; }))
      return true;
    if (a.rfind("GRAPH", 0) == 0) return true;
  }
  return false;
}

std::vector<DocCommand> doc_commands(const fs::path& file) {
  static const std::set<std::string> kCommands{"run", "compile", "dump", "bench", "freqz", "cache", "info", "--version"};
  std::vector<DocCommand> commands;
  std::ifstream in(file);
  bool fence = false, after_command = false;  // output lines follow a command in its fence
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.rfind("```", 0) == 0) {
      fence = !fence;
      after_command = false;
      continue;
    }
    if (!fence) continue;
    std::string text = line.rfind("$ ", 0) == 0 ? line.substr(2) : line;
    std::size_t comment = text.find("  #");
    std::vector<std::string> words = split_words(text.substr(0, comment));
    // "fxc run statistics" after a command is that command's output, not a command.
    bool command = words.size() >= 2 && words[0] == "fxc" && kCommands.count(words[1]) &&
                   !(after_command && words.size() > 2 && words[2] == "statistics");
    if (command) {
      commands.push_back({file.filename().string() + ":" + std::to_string(line_number),
                          std::vector<std::string>(words.begin() + 1, words.end()), {}});
      after_command = true;
    } else if (after_command) {
      commands.back().expected.push_back(line);
    }
  }
  return commands;
}

}  // namespace

TEST_CASE("every fxc command in docs/ runs on fixture files and prints what the doc shows") {
  // Each doc's commands in order, in one directory per doc: examples/ and bench/, graph.fx and
  // eq.fx (examples/eq.fx), and a stereo WAV under every input name the docs use. Synopsis
  // lines (placeholders, [options]) are not commands. Output lines shown in the same fence
  // after a command must appear in its output, in order (see normalise()).
  int ran = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(fs::path(FXC_SOURCE_DIR) / "docs")) {
    if (entry.path().extension() != ".md") continue;
    std::vector<DocCommand> commands = doc_commands(entry.path());
    if (commands.empty()) continue;
    TempDir dir;
    fs::create_directory_symlink(fs::path(FXC_SOURCE_DIR) / "examples", dir / "examples");
    fs::create_directory_symlink(fs::path(FXC_SOURCE_DIR) / "bench", dir / "bench");
    for (const char* name : {"graph.fx", "eq.fx"}) fs::copy_file(fs::path(FXC_SOURCE_DIR) / "examples" / "eq.fx", dir / name);
    for (const char* name : {"voice.wav", "in.wav", "a.wav", "b.wav", "c.wav"}) fs::copy_file(data("vocal_in.wav"), dir / name);
    // A small corpus in nested directories (docs/corpora.md).
    fs::create_directories(dir / "corpus/live");
    for (const char* name : {"corpus/a.wav", "corpus/b.wav", "corpus/live/c.wav"}) fs::copy_file(data("vocal_in.wav"), dir / name);
    fs::create_directories(dir / "mono");
    fs::copy_file(data("crossover_in.wav"), dir / "mono/m.wav");
    std::vector<std::string> env{"FXC_CACHE_DIR=" + (dir / "cache").string()};
    // What a shell would do to the words: quotes removed, $NAME and ${NAME} replaced (a Slurm
    // job array's variables as task 1 of 2), `< FILE` and `> FILE` redirected.
    const std::map<std::string, std::string> variables{{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "2"}};
    auto shell_word = [&](std::string word) {
      std::string out;
      for (std::size_t i = 0; i < word.size(); ++i) {
        if (word[i] == '\'' || word[i] == '"') continue;
        if (word[i] == '$') {
          bool braced = i + 1 < word.size() && word[i + 1] == '{';
          std::size_t start = i + (braced ? 2 : 1), end = start;
          while (end < word.size() && (std::isalnum(static_cast<unsigned char>(word[end])) || word[end] == '_')) ++end;
          auto it = variables.find(word.substr(start, end - start));
          REQUIRE_MESSAGE(it != variables.end(), "unknown variable in " << word);
          out += it->second;
          i = end - (braced ? 0 : 1);
          continue;
        }
        out += word[i];
      }
      return out;
    };
    for (const DocCommand& c : commands) {
      if (is_synopsis(c.args)) continue;
      std::string shown = c.where + ": fxc";
      for (const auto& a : c.args) shown += " " + a;
      CAPTURE(shown);
      std::vector<std::string> argv{FXC_BINARY};
      std::string stdin_path = "/dev/null", stdout_path;
      for (std::size_t k = 0; k < c.args.size(); ++k) {
        if ((c.args[k] == "<" || c.args[k] == ">") && k + 1 < c.args.size()) {
          (c.args[k] == "<" ? stdin_path : stdout_path) = shell_word(c.args[k + 1]);
          ++k;
          continue;
        }
        argv.push_back(shell_word(c.args[k]));
      }
      CommandResult r = fxc::test::run_command(argv, dir.path(), env, stdin_path);
      INFO(show(r));
      CHECK(r.exit_code == 0);
      if (!stdout_path.empty()) {
        write_bytes(dir / stdout_path, r.out);
        r.out.clear();
      }
      ++ran;
      std::vector<std::string> actual;
      std::istringstream lines(r.out + r.err);
      for (std::string l; std::getline(lines, l);) actual.push_back(normalise(l));
      std::size_t at = 0;
      for (const std::string& want_line : c.expected) {
        std::string want = normalise(want_line);
        if (want.empty() || want == "...") continue;
        while (at < actual.size() && actual[at] != want) ++at;
        CHECK_MESSAGE(at < actual.size(), "the doc shows \"" << want_line << "\", which the output lacks (in order)");
        if (at < actual.size()) ++at;
      }
    }
  }
  CHECK(ran >= 10);
}

TEST_CASE("every complete .fx program in the README and docs/ compiles, or fails as the doc shows") {
  // A fence with an `input` line and an `output` line (and no fxc command) is a program. It is
  // written under the name the prose before it gives (`mix.fx`), else prog.fx, and dumped. A
  // fence right after it that starts with "NAME:" is the error report the doc promises: exit
  // status 1 and those lines (numbers aside) on standard error; otherwise it must compile.
  struct Fence {
    int line;
    std::string before;
    std::vector<std::string> body;
    std::string language;  // the fence's info string: a ```python block is not .fx
  };
  int checked = 0;
  std::vector<fs::path> files{fs::path(FXC_SOURCE_DIR) / "README.md"};
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(FXC_SOURCE_DIR) / "docs"))
    if (e.path().extension() == ".md") files.push_back(e.path());
  for (const fs::path& file : files) {
    std::vector<Fence> fences;
    std::ifstream in(file);
    std::string prose;
    bool fence = false;
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (line.rfind("```", 0) == 0) {
        fence = !fence;
        if (fence) fences.push_back({number, prose, {}, line.substr(3)});
        else prose.clear();
        continue;
      }
      if (fence) fences.back().body.push_back(line);
      else prose += line + "\n";
    }
    auto starts = [](const std::string& s, const char* word) {
      return s.rfind(word, 0) == 0 && (s.size() == std::strlen(word) || s[std::strlen(word)] == ' ');
    };
    for (std::size_t f = 0; f < fences.size(); ++f) {
      const Fence& program = fences[f];
      if (!program.language.empty() && program.language != "fx") continue;  // C++, Python, shell
      bool has_input = false, has_output = false, has_command = false;
      for (const std::string& l : program.body) {
        has_input = has_input || starts(l, "input");
        has_output = has_output || starts(l, "output");
        has_command = has_command || l.rfind("fxc ", 0) == 0 || l.rfind("$fxc", 0) == 0;
      }
      if (!has_input || !has_output || has_command) continue;
      std::string name = "prog.fx";
      for (std::size_t at = program.before.find(".fx`"); at != std::string::npos;
           at = program.before.find(".fx`", at + 1)) {
        std::size_t tick = program.before.rfind('`', at);
        if (tick != std::string::npos) name = program.before.substr(tick + 1, at + 3 - tick - 1);
      }
      CAPTURE(file.filename().string() + ":" + std::to_string(program.line) + " as " + name);
      TempDir dir;
      {
        fs::create_directories((dir / name).parent_path());  // examples/echo.fx
        std::ofstream out(dir / name);
        for (const std::string& l : program.body) out << l << "\n";
      }
      CommandResult r = fxc::test::run_command({FXC_BINARY, "dump", name, "--emit", "ir", "--channels", "2"},
                                               dir.path(), {"FXC_CACHE_DIR=" + (dir / "cache").string()});
      INFO(show(r));
      ++checked;
      bool report = f + 1 < fences.size() && !fences[f + 1].body.empty() &&
                    fences[f + 1].body[0].rfind(name + ":", 0) == 0;
      if (!report) {
        CHECK(r.exit_code == 0);
        continue;
      }
      CHECK(r.exit_code == 1);
      std::vector<std::string> actual;
      std::istringstream lines(r.err);
      for (std::string l; std::getline(lines, l);) actual.push_back(normalise(l));
      std::size_t at = 0;
      for (const std::string& want_line : fences[f + 1].body) {
        std::string want = normalise(want_line);
        if (want.empty()) continue;
        while (at < actual.size() && actual[at] != want) ++at;
        CHECK_MESSAGE(at < actual.size(), "the doc shows \"" << want_line << "\", which fxc does not print (in order)");
        if (at < actual.size()) ++at;
      }
    }
  }
  CHECK(checked >= 3);
}

TEST_CASE("--channels on a graph whose inputs all declare another count warns that it is not used") {
  TempDir dir;
  write_bytes(dir / "stereo.fx", "input x : 2\noutput x | gain(-3 dB)\n");
  write_bytes(dir / "open.fx", "input x\ninput y : 2\noutput x | gain(-3 dB)\noutput y\n");
  const std::string warning = "warning: --channels 3 is not used: it binds inputs declared without a count, and "
                              "every input of this graph declares one ('x' has 2)";
  // The contract lets a script pass --channels to every file: a warning, the exit status 0.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"compile", "stereo.fx", "--channels", "3", "--cache-dir", "cache"},
        std::vector<std::string>{"dump", "stereo.fx", "--channels", "3"},
        std::vector<std::string>{"bench", "stereo.fx", "--channels", "3", "--seconds", "0.01", "--repeat", "1"}}) {
    CAPTURE(args[0]);
    CommandResult r = run_fxc(args, dir.path());
    INFO(show(r));
    CHECK(r.exit_code == 0);
    CHECK(r.err.find(warning) != std::string::npos);
  }
  // The declared count itself, or no --channels at all: no warning.
  CommandResult same = run_fxc({"dump", "stereo.fx", "--channels", "2"}, dir.path());
  require_success(same);
  CHECK(same.err.find("warning") == std::string::npos);
  CommandResult none = run_fxc({"bench", "stereo.fx", "--seconds", "0.01", "--repeat", "1"}, dir.path());
  require_success(none);
  CHECK(none.err.find("warning") == std::string::npos);
  // An input declared without a count takes it, silently; the declared one keeps its own.
  CommandResult open = run_fxc({"dump", "open.fx", "--channels", "3"}, dir.path());
  require_success(open);
  CHECK(open.err.find("warning") == std::string::npos);
  CHECK(open.out.find("input {name=\"x\"} : 3ch") != std::string::npos);
  CHECK(open.out.find("input {name=\"y\"} : 2ch") != std::string::npos);
}

// A graph on a pipe (process substitution, /dev/stdin) can be read once; every command read
// its graph two or more times, and found it empty the second time ("the graph has no input").
TEST_CASE("a graph read from a pipe runs, dumps, compiles and benches") {
  TempDir dir;
  write_noise(dir / "in.npy", 2, 4800, 7);
  const std::string fxc = FXC_BINARY;
  const std::string graph = "<(printf 'input x : 2\\noutput x | lowpass(1 kHz)\\n')";
  for (const std::string& command :
       {"run " + graph + " -i in.npy --fs 48000 -o out.npy", "dump " + graph + " --emit ir-opt",
        "compile " + graph + " --cache-dir cache", "bench " + graph + " --seconds 0.01 --repeat 1",
        "freqz " + graph + " --fs 48000 -o plot.svg"}) {
    CAPTURE(command);
    CommandResult r = fxc::test::run_command({"/bin/bash", "-c", "'" + fxc + "' " + command}, dir.path(), {});
    INFO(show(r));
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("error") == std::string::npos);
  }
  CHECK(load(dir / "out.npy").samples() == 4800);
}

// A reader that closes the pipe early: the write fails (EPIPE) and is reported, exit status 1,
// and the state is not saved (nothing pending is left), where SIGPIPE ended fxc without a word
// (exit status 141) and left the pending state file behind.
TEST_CASE("-o - into a pipe closed early is a reported write error, with nothing left behind") {
  TempDir dir;
  write_noise(dir / "in.npy", 2, 48000, 3);  // 768 KB of output: more than a pipe holds
  write_bytes(dir / "g.fx", "input x : 2\noutput x | lowpass(1 kHz)\n");
  const std::string command = "'" + std::string(FXC_BINARY) +
                              "' run g.fx -i in.npy --fs 48000 -o - --pipe-format npy --save-state st.bin "
                              "| head -c 10 > /dev/null; exit ${PIPESTATUS[0]}";
  CommandResult r = fxc::test::run_command({"/bin/bash", "-c", command}, dir.path(), {});
  INFO(show(r));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot write '<stdout>': Broken pipe") != std::string::npos);
  CHECK(dir.entries() == std::vector<std::string>{"g.fx", "in.npy"});
}

// A graph on a named FIFO: read through the one open that its writer meets (opened a second
// time, the graph was lost and fxc waited forever), also as /dev/stdin after the writer has
// finished (reopening waited for another writer).
TEST_CASE("a graph on a FIFO is read once, whoever comes first") {
  TempDir dir;
  const std::string fxc = "timeout 20 '" + std::string(FXC_BINARY) + "'";
  const std::string text = "printf 'input x : 1\\noutput x | gain(2)\\n'";
  for (const std::string& command :
       {"mkfifo g.fx; (" + text + " > g.fx &); sleep 0.1; " + fxc + " dump g.fx --emit ir",
        "mkfifo h.fx; (" + text + " > h.fx &); " + fxc + " dump /dev/stdin --emit ir < h.fx"}) {
    CAPTURE(command);
    CommandResult r = fxc::test::run_command({"/bin/bash", "-c", command}, dir.path(), {});
    INFO(show(r));
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("gain") != std::string::npos);
  }
}

// dump, freqz and cache list write through std::cout: a reader gone is a failed write too.
TEST_CASE("fxc dump into a pipe closed early fails with status 1") {
  TempDir dir;
  // 400 filters summed: a dump of about 80 KB, more than a pipe holds, so that fxc is still
  // writing when head has gone.
  std::string sum;
  for (int i = 0; i < 400; ++i) sum += (i ? " + " : "") + std::string("(x | lowpass(") + std::to_string(100 + 10 * i) + " Hz))";
  write_bytes(dir / "big.fx", "input x : 2\noutput " + sum + "\n");
  const std::string command = "'" + std::string(FXC_BINARY) +
                              "' dump big.fx --emit ir | head -c 10 > /dev/null; exit ${PIPESTATUS[0]}";
  CommandResult r = fxc::test::run_command({"/bin/bash", "-c", command}, dir.path(), {});
  INFO(show(r));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot write '<stdout>'") != std::string::npos);
}
