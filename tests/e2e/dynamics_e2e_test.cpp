// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of the dynamics stages through `fxc run`: every case of
// tests/data/dynamics/cases.txt (graphs in tests/e2e/dynamics/, inputs and reference outputs
// from scripts/gen_dynamics_reference.py, an independent NumPy loop written from the contract's
// equations) on the reference interpreter and the compiled CPU kernels in float64 and float32,
// streams in blocks, and saved state continued in a second run. The side-chain and link cases
// (sidechain_cases.txt) run with two inputs, the signal and the key.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "e2e_support.h"
#include "formats/signal_file.h"
#include "worse.h"

using fxc::test::worse;

namespace fs = std::filesystem;
using namespace fxc::e2e;

namespace {

struct Case {
  std::string graph, input, reference;
  std::string key;  // a side-chain's key input, or empty
};

// cases.txt: `graph input reference`; sidechain_cases.txt: `graph input key reference`, key `-`
// for none.
std::vector<Case> cases() {
  std::vector<Case> out;
  std::ifstream plain(fs::path(FXC_TEST_DATA_DIR) / "dynamics" / "cases.txt");
  Case c;
  while (plain >> c.graph >> c.input >> c.reference) out.push_back(c);
  std::ifstream keyed(fs::path(FXC_TEST_DATA_DIR) / "dynamics" / "sidechain_cases.txt");
  while (keyed >> c.graph >> c.input >> c.key >> c.reference) {
    if (c.key == "-") c.key.clear();
    out.push_back(c);
  }
  REQUIRE(out.size() >= 35);
  return out;
}

fs::path data(const std::string& name) { return fs::path(FXC_TEST_DATA_DIR) / "dynamics" / name; }
fs::path graph(const std::string& name) { return fs::path(FXC_E2E_DIR) / "dynamics" / name; }

// max |a - b| / max |b|: one bound for loud and quiet cases.
double relative_error(const fxc::Signal& a, const fxc::Signal& b) {
  REQUIRE(a.channels() == b.channels());
  REQUIRE(a.samples() == b.samples());
  double worst = 0, peak = 0;
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t n = 0; n < a.samples(); ++n) {
      worst = worse(worst, std::abs(a.at(c, n) - b.at(c, n)));
      peak = std::max(peak, std::abs(b.at(c, n)));
    }
  return worst / peak;
}

fxc::Signal run(const TempDir& dir, const Case& c, std::vector<std::string> extra) {
  std::vector<std::string> args{"run", graph(c.graph).string(), "-i", data(c.input).string()};
  if (!c.key.empty()) args.push_back(data(c.key).string());
  args.insert(args.end(), {"-o", "out.npy", "--fs", "48000"});
  args.insert(args.end(), extra.begin(), extra.end());
  require_success(run_fxc(args, dir.path()));
  return load(dir / "out.npy");
}

}  // namespace

// float64: the same equations on both sides, apart from the last bits of log10, exp and pow.
// float32: coefficients and state rounded to float32 move a time constant by about 2^-25 / (1 -
// alpha) of itself, up to 3e-5 of the peak on these signals (scripts/gen_dynamics_reference.py).
TEST_CASE("every dynamics case equals the NumPy reference: interpreter and kernels, float64 and float32, side-chains and links") {
  TempDir dir;
  for (const Case& c : cases()) {
    INFO(c.graph << " on " << c.input);
    fxc::Signal reference = load(data(c.reference));
    CHECK(relative_error(run(dir, c, {"--target", "ref"}), reference) < 1e-9);
    CHECK(relative_error(run(dir, c, {"--dtype", "f64"}), reference) < 1e-9);
    CHECK(relative_error(run(dir, c, {"--dtype", "f32"}), reference) < 1e-4);
  }
}

TEST_CASE("dynamics in streams of blocks equal whole runs, bit for bit") {
  TempDir dir;
  for (const Case& c : cases()) {
    INFO(c.graph << " on " << c.input);
    fxc::Signal whole = run(dir, c, {"--dtype", "f64"});
    for (std::string block : {"1", "37", "1000"}) {
      INFO("block " << block);
      CHECK(relative_error(run(dir, c, {"--dtype", "f64", "--block", block}), whole) == 0);
    }
  }
}

TEST_CASE("a dynamics stage's state, saved and loaded, continues a run exactly (lookahead rings included)") {
  TempDir dir;
  for (std::string name : {"limiter_lookahead.fx", "gate_hold.fx", "compressor_knee.fx", "envelope_rms.fx"}) {
    INFO(name);
    fxc::Signal x = load(data("noise.npy"));
    std::size_t half = x.samples() / 2;
    fxc::Signal first(x.channels(), half), second(x.channels(), x.samples() - half);
    for (std::size_t ch = 0; ch < x.channels(); ++ch)
      for (std::size_t n = 0; n < x.samples(); ++n)
        (n < half ? first.f64(ch)[n] : second.f64(ch)[n - half]) = x.at(ch, n);
    REQUIRE(fxc::write_signal_file((dir / "first.npy").string(), first, 48000, {}));
    REQUIRE(fxc::write_signal_file((dir / "second.npy").string(), second, 48000, {}));
    auto fxc_run = [&](const std::string& in, const std::string& out, std::vector<std::string> extra) {
      std::vector<std::string> args{"run", graph(name).string(), "-i", in, "-o", out, "--fs", "48000", "--dtype", "f64"};
      args.insert(args.end(), extra.begin(), extra.end());
      require_success(run_fxc(args, dir.path()));
    };
    fxc_run(data("noise.npy").string(), "whole.npy", {});
    fxc_run("first.npy", "a.npy", {"--save-state", "state.bin"});
    fxc_run("second.npy", "b.npy", {"--load-state", "state.bin"});
    fxc::Signal whole = load(dir / "whole.npy"), a = load(dir / "a.npy"), b = load(dir / "b.npy");
    double worst = 0;
    for (std::size_t ch = 0; ch < whole.channels(); ++ch)
      for (std::size_t n = 0; n < whole.samples(); ++n)
        worst = worse(worst, std::abs(whole.at(ch, n) - (n < half ? a.at(ch, n) : b.at(ch, n - half))));
    CHECK(worst == 0);
  }
}

TEST_CASE("a limiter never lets a sample past its ceiling, and its lookahead is its latency") {
  TempDir dir;
  Case c{"limiter_lookahead.fx", "noise.npy", ""};
  fxc::Signal y = run(dir, c, {"--dtype", "f64"});
  double ceiling = std::pow(10.0, -9.0 / 20);  // limiter_lookahead.fx: limiter(-9 dB, 20 ms, lookahead=1 ms)
  for (std::size_t ch = 0; ch < y.channels(); ++ch)
    for (std::size_t n = 0; n < y.samples(); ++n) CHECK(std::abs(y.at(ch, n)) <= ceiling * (1 + 1e-12));
  for (std::size_t ch = 0; ch < y.channels(); ++ch)
    for (std::size_t n = 0; n < 48; ++n) CHECK(y.at(ch, n) == 0);  // 1 ms at 48 kHz: the input not out yet
}

TEST_CASE("fxc freqz refuses a graph with dynamics, naming the stage as written") {
  TempDir dir;
  check_failure(run_fxc({"freqz", graph("compressor_knee.fx").string(), "--fs", "48000", "-o", "r.svg"}, dir.path()), 1,
                "a 'compressor' stage is not linear, so the graph has no frequency response");
  CHECK(!fs::exists(dir / "r.svg"));
}
