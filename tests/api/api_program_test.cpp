// SPDX-License-Identifier: Apache-2.0
// fxc::Program through the public header, as an embedder calls it.
#include <fxc/fxc.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

#include "api_test_support.h"
#include "runtime/counters.h"  // to check that set() never compiles
#include "worse.h"

using fxc::test::worse;

namespace {

using fxc::test::noise;
using fxc::test::options;
using fxc::test::relative_error;

using namespace fxc::literals;


constexpr const char* kEq =
    "input x : 2\n"
    "fc = 200 Hz in [20 Hz, 2 kHz]\n"
    "level = 1\n"
    "output y = x | butter(4, fc, highpass) | peaking(1 kHz, 1.0, 3 dB) | gain(level)\n";

}  // namespace

TEST_CASE("a Program from .fx text runs like the reference interpreter") {
  fxc::Program program = fxc::Program::from_source(kEq, options());
  fxc::Program reference = fxc::Program::from_source(kEq, options(fxc::DType::f64, fxc::Target::reference));
  fxc::Signal x = noise(2, 5000, fxc::DType::f64);
  // Compiled float64 against the float64 oracle: only the order of operations differs.
  CHECK(relative_error(program.run(x), reference.run(x)) < 1e-12);
  REQUIRE(program.inputs().size() == 1);
  CHECK(program.inputs()[0].name == "x");
  CHECK(program.inputs()[0].channels == 2);
  CHECK(program.outputs()[0].name == "y");
}

TEST_CASE("a Program's name: the graph statement's, else the file name's stem") {
  fxc::Options o = options(fxc::DType::f64);
  CHECK(fxc::Program::from_source("graph tone\ninput x\noutput x\n", o, "dir/a.fx").name() == "tone");
  CHECK(fxc::Program::from_source("input x\noutput x\n", o, "dir/noname.fx").name() == "noname");
  CHECK(fxc::Program::from_source("input x\noutput x\n", o, "inline.fx").name() == "inline");
}

TEST_CASE("runs into caller memory, float32 and float64, in place too") {
  fxc::Program program = fxc::Program::from_source(kEq, options(fxc::DType::f32));
  fxc::Signal x = noise(2, 3000, fxc::DType::f32);
  fxc::Signal want = program.run(x);
  std::vector<float> left(x.f32(0).begin(), x.f32(0).end()), right(x.f32(1).begin(), x.f32(1).end());
  std::vector<float> out_l(3000), out_r(3000);
  const float* in[] = {left.data(), right.data()};
  float* out[] = {out_l.data(), out_r.data()};
  program.run(in, out, 3000);
  for (std::size_t i = 0; i < 3000; ++i) {
    REQUIRE(out_l[i] == want.f32(0)[i]);
    REQUIRE(out_r[i] == want.f32(1)[i]);
  }
  float* same[] = {left.data(), right.data()};
  program.run(in, same, 3000);  // in place
  CHECK(std::equal(left.begin(), left.end(), out_l.begin()));
  // float64 buffers into a float32 program: converted, so equal to float32 input rounded.
  std::vector<double> l64(x.f32(0).begin(), x.f32(0).end()), r64(x.f32(1).begin(), x.f32(1).end());
  std::vector<double> o64l(3000), o64r(3000);
  const double* in64[] = {l64.data(), r64.data()};
  double* out64[] = {o64l.data(), o64r.data()};
  program.run(in64, out64, 3000);
  CHECK(o64l[2999] == static_cast<double>(want.f32(0)[2999]));
  // A long signal (where whole-signal strategies such as the chunked scan apply) runs
  // straight on the caller's memory with the owning run's results, bit for bit.
  fxc::Signal long_x = noise(2, 400000, fxc::DType::f32, 3);
  fxc::Signal long_want = program.run(long_x);
  std::vector<float> ll(400000), lr(400000);
  const float* long_in[] = {long_x.f32(0).data(), long_x.f32(1).data()};
  float* long_out[] = {ll.data(), lr.data()};
  program.run(long_in, long_out, 400000);
  CHECK(std::equal(ll.begin(), ll.end(), long_want.f32(0).begin()));
  CHECK(std::equal(lr.begin(), lr.end(), long_want.f32(1).begin()));
}

TEST_CASE("errors are fxc::Error with the place, the code and the caret") {
  try {
    fxc::Program::from_source("input x : 2\noutput y = x | butterr(4, 1 kHz)\n", options(), "eq.fx");
    FAIL("no error");
  } catch (const fxc::Error& e) {
    CHECK(e.file() == "eq.fx");
    CHECK(e.line() == 2);
    CHECK(e.column() == 16);
    CHECK(e.code() == "fx-stage");
    CHECK(std::string(e.what()).find("^") != std::string::npos);
    CHECK(e.message().find("butterr") != std::string::npos);
  }
  // A cutoff above Nyquist is found at the sample rate of the Program.
  CHECK_THROWS_AS(fxc::Program::from_source("input x : 1\noutput y = x | butter(2, 30 kHz)\n", options()),
                  fxc::Error);
  // The wrong channel count at run time.
  fxc::Program program = fxc::Program::from_source(kEq, options());
  CHECK_THROWS_AS(program.run(noise(3, 10, fxc::DType::f64)), fxc::Error);
  CHECK_THROWS_WITH_AS(fxc::Program::from_file("/nonexistent/x.fx"), doctest::Contains("cannot read"), fxc::Error);
}

TEST_CASE("set() changes values without compiling, over the whole range") {
  fxc::Options o = options(fxc::DType::f32);
  fxc::Program program = fxc::Program::from_source(kEq, o);
  auto params = program.params();
  REQUIRE(params.size() == 2);
  CHECK(params[0].name == "fc");
  CHECK(params[0].unit == "Hz");
  CHECK(params[0].has_range);
  CHECK(params[0].min == 20);
  CHECK(params[0].max == 2000);
  CHECK(params[1].name == "level");
  CHECK_FALSE(params[1].has_range);
  // The chain is decided for the whole range: float64 state (20 Hz is near the unit circle).
  CHECK(program.dump("ir-opt").find("state_precision=f64") != std::string::npos);
  std::uint64_t compiles = fxc::counters().compiles;
  fxc::Signal x = noise(2, 4800, fxc::DType::f32);
  for (double fc : {20.0, 35.0, 300.0, 2000.0, 1234.5}) {
    program.set("fc", fc);
    program.set("level", fc == 20.0 ? 1.0 : 0.5);  // a unit gain stays a stage: 1 -> 0.5 is a value
    fxc::Options ref = options(fxc::DType::f64, fxc::Target::reference);
    ref.params = {{"fc", fc}, {"level", fc == 20.0 ? 1.0 : 0.5}};
    fxc::Program oracle = fxc::Program::from_source(kEq, ref);
    // float32 I/O with float64 state: the error is the signal's rounding (docs/errors.md).
    CHECK(relative_error(program.run(x), oracle.run(x)) < 1e-5);
  }
  CHECK(fxc::counters().compiles == compiles);
  CHECK(program.get("fc") == 1234.5);
  program.set("fc", "500Hz");
  CHECK(program.get("fc") == 500);
  program.set("fc", "0.5 kHz");
  CHECK(program.get("fc") == 500);
  CHECK_THROWS_WITH_AS(program.set("fc", 5000.0), doctest::Contains("'fc' = 5000 Hz is outside its range [20 Hz, 2000 Hz]"), fxc::Error);
  CHECK_THROWS_WITH_AS(program.set("fc", "3 dB"), doctest::Contains("not a level"), fxc::Error);
  CHECK_THROWS_WITH_AS(program.set("fx", 1.0), doctest::Contains("did you mean 'fc'"), fxc::Error);
  CHECK(program.get("fc") == 500);  // unchanged by the refused values
}

TEST_CASE("a parameter without a range is decided for every value it may take") {
  // A float32 highpass at 2 kHz would keep float32 state; as a parameter it may go to 20 Hz.
  const char* src = "input x : 1\nfc = 2 kHz\noutput y = x | butter(2, fc, highpass)\n";
  fxc::Program program = fxc::Program::from_source(src, options(fxc::DType::f32));
  CHECK(program.dump("ir-opt").find("state_precision=f64") != std::string::npos);
  std::uint64_t compiles = fxc::counters().compiles;
  program.set("fc", 20.0);
  CHECK(fxc::counters().compiles == compiles);
  // A value the stage refuses is an error, and the old value stays.
  CHECK_THROWS_WITH_AS(program.set("fc", 30000.0), doctest::Contains("Nyquist"), fxc::Error);
  CHECK(program.get("fc") == 20);
  // A range that reaches beyond what the stage accepts is refused at compile time.
  CHECK_THROWS_WITH_AS(
      fxc::Program::from_source("input x : 1\nfc = 2 kHz in [1 kHz, 30 kHz]\noutput y = x | butter(2, fc)\n",
                                options()),
      doctest::Contains("the range of 'fc' reaches 30000 Hz"), fxc::Error);
  CHECK_THROWS_WITH_AS(
      fxc::Program::from_source("input x : 1\nfc = 200 Hz in [1 kHz, 3 kHz]\noutput y = x | butter(2, fc)\n",
                                options()),
      doctest::Contains("outside its range"), fxc::Error);
}

TEST_CASE("a design whose output is float64 rounding noise compiles with a warning that says so") {
  fxc::Options o = options(fxc::DType::f64);
  o.sample_rate_hz = 48000;
  fxc::Program wide =
      fxc::Program::from_source("input x : 1\noutput x | cheby1(12, 1 dB, [240 Hz, 21600 Hz], bandstop)\n", o, "w.fx");
  CHECK(wide.warnings().find("w.fx:2:12: warning: this filter amplifies float64's rounding") != std::string::npos);
  fxc::Program plain = fxc::Program::from_source("input x : 1\noutput x | butter(4, [240 Hz, 2 kHz], bandstop)\n", o);
  CHECK(plain.warnings().empty());
}

TEST_CASE("a range that reaches a value its stage refuses is one error, about that parameter") {
  fxc::Options o = options(fxc::DType::f64);
  o.sample_rate_hz = 48000;
  std::string message;
  try {
    fxc::Program::from_source("input x : 2\nfc = 200 Hz in [20 Hz, 30 kHz]\noutput x | lowpass(fc)\n", o).run(
        noise(2, 64, fxc::DType::f64));
  } catch (const fxc::Error& e) {
    message = e.what();
  }
  CHECK(message.find("the range of 'fc' reaches 30000 Hz, which its stage refuses") != std::string::npos);
  CHECK(message.find("Nyquist frequency 24000 Hz") != std::string::npos);
  // Not said again for all the ranges at their ends at once.
  CHECK(message.find("the parameters' ranges reach") == std::string::npos);
  // Nor for each refused value the range is sampled at: one error, at the first.
  std::string order;
  try {
    fxc::Program::from_source("input x : 1\nn = 4 in [1, 100]\noutput x | butter(n, 1 kHz)\n", o);
  } catch (const fxc::Error& e) {
    order = e.what();
  }
  CHECK(order.find("the range of 'n' reaches") != std::string::npos);
  CHECK(order.find("error:", order.find("error:") + 1) == std::string::npos);
  // A plain number outside its range is written without a trailing unit.
  CHECK_THROWS_WITH_AS(fxc::Program::from_source("input x : 1\nd = 5 in [0, 2]\noutput d * x\n", o),
                       doctest::Contains("'d' = 5 is outside its range [0, 2] [fx-range]"), fxc::Error);
  // A range whose upper end is refused where it was first probed (liveness tried the far end,
  // and a refused probe made the parameter look fixed, so the range was never checked).
  CHECK_THROWS_WITH_AS(
      fxc::Program::from_source("input x : 1\nrg = -40 dB in [-80 dB, 6 dB]\noutput x | gate(-20 dB, 0 ms, 0 ms, range=rg)\n", o),
      doctest::Contains("the range of 'rg' reaches 6 dB, which its stage refuses"), fxc::Error);
  CHECK_THROWS_WITH_AS(fxc::Program::from_source("input m : 1\np = 0 in [-1, 2]\noutput m | pan(p)\n", o),
                       doctest::Contains("the range of 'p' reaches 2, which its stage refuses"), fxc::Error);
  // Its lower end too, where the value sits at the upper one.
  CHECK_THROWS_WITH_AS(fxc::Program::from_source("input m : 1\np = 1 in [-2, 1]\noutput m | pan(p)\n", o),
                       doctest::Contains("the range of 'p' reaches -2, which its stage refuses"), fxc::Error);
}

TEST_CASE("a filter order with a range compiles: whole-numbered ranges are sampled at whole numbers") {
  // `n = 4 in [1, 8]` was sampled at 1.875, 2.75, ..., which butter refuses. An order shapes
  // the graph, so it cannot change once compiled; any value of its range compiles.
  fxc::Options o = options(fxc::DType::f64);
  o.sample_rate_hz = 48000;
  const std::string text = "input x : 2\nn = 4 in [1, 8]\noutput x | butter(n, 1 kHz)\n";
  fxc::Program program = fxc::Program::from_source(text, o);
  CHECK(program.run(noise(2, 256, fxc::DType::f64)).samples() == 256);
  CHECK_THROWS_AS(program.set("n", 6), fxc::Error);
  o.settings = {"n=6"};
  CHECK(fxc::Program::from_source(text, o).run(noise(2, 256, fxc::DType::f64)).samples() == 256);
}

TEST_CASE("DSL parameters") {
  fxc::Flow x = fxc::input("x", 1);
  fxc::Frequency fc = fxc::param("fc", 1_kHz, fxc::Band{100_Hz, 4_kHz});
  fxc::Level boost = fxc::param("boost", 3_dB);
  fxc::Program program({fxc::output("y", x | fxc::lowpass(fc) | fxc::peaking(2_kHz, 1.0, boost))},
                       options());
  REQUIRE(program.params().size() == 2);
  CHECK(program.params()[1].unit == "dB");
  fxc::Signal in = noise(1, 2000, fxc::DType::f64);
  program.set("fc", 300.0);
  program.set("boost", -6.0);
  fxc::Program fixed({fxc::output("y", x | fxc::lowpass(300_Hz) | fxc::peaking(2_kHz, 1.0, -6_dB))}, options());
  CHECK(relative_error(program.run(in), fixed.run(in)) < 1e-12);
}

TEST_CASE("dumps at every stage") {
  fxc::Program program = fxc::Program::from_source(kEq, options());
  CHECK(program.dump("ir").find("= sos %0") != std::string::npos);
  CHECK(program.dump("ir-opt").find("strategy=") != std::string::npos);
  CHECK(program.dump("dot").find("digraph") != std::string::npos);
  CHECK(program.dump("json").find("\"nodes\"") != std::string::npos);
  CHECK(program.dump("llvm").find("define") != std::string::npos);
  // Chain kernels realign their stack, so spilled vectors never split a cache line (a W1 run
  // was 40% slower or not depending on where the caller's stack happened to be).
  CHECK(program.dump("llvm").find("alignstack=64") != std::string::npos);
  CHECK_THROWS_AS(program.dump("asm"), fxc::Error);
}

TEST_CASE("batches and undeclared channel counts") {
  const char* src = "input x\noutput y = x | butter(2, 500 Hz)\n";
  fxc::Program program = fxc::Program::from_source(src, options());
  std::vector<std::vector<fxc::Signal>> items;
  for (unsigned i = 0; i < 5; ++i) items.push_back({noise(2, 100 + 50 * i, fxc::DType::f64, i)});
  fxc::clear_kernel_memory_cache();
  std::uint64_t compiles = fxc::counters().compiles;
  auto out = program.run_batch(items);
  // The batch's kernels only: the one-item specialisation it starts from waits for a run.
  CHECK(fxc::counters().compiles == compiles + 1);
  REQUIRE(out.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) CHECK(relative_error(out[i][0], program.run(items[i][0])) < 1e-12);
  CHECK(fxc::counters().compiles == compiles + 2);
  // Another channel count compiles another specialisation.
  CHECK(program.run(noise(3, 64, fxc::DType::f64)).channels() == 3);
}

TEST_CASE("outputs() knows the channels of an undeclared input's outputs on every target") {
  // The reference target ran the lowered graph and reported 0 channels: the Python package
  // sized its output arrays by that, and the run wrote through no memory.
  const char* src = "input x\noutput y = 0.5 * x\n";
  for (fxc::Target target : {fxc::Target::cpu, fxc::Target::reference}) {
    fxc::Options o = options(fxc::DType::f64, target);
    o.channels = 2;
    fxc::Program program = fxc::Program::from_source(src, o);
    REQUIRE(program.outputs().size() == 1);
    CHECK(program.outputs()[0].channels == 2);
  }
}

TEST_CASE("a batch in caller memory runs on it and gives run_batch's samples") {
  // One (items, channels, frames) block per input and output, as NumPy's (B, C, T) arrays.
  const char* src = "input x : 2\ninput k : 1\noutput y = x | butter(2, 500 Hz) | tanh()\noutput z = k | highpass(80 Hz)\n";
  constexpr std::size_t kItems = 4, kFrames = 300;
  for (fxc::DType dtype : {fxc::DType::f32, fxc::DType::f64}) {
    fxc::Program program = fxc::Program::from_source(src, options(dtype));
    std::vector<std::vector<fxc::Signal>> items;
    for (unsigned b = 0; b < kItems; ++b) items.push_back({noise(2, kFrames, dtype, b), noise(1, kFrames, dtype, 10 + b)});
    auto want = program.run_batch(items);
    // float memory: the program's own type (straight on it) and the other (converted).
    std::vector<float> x(kItems * 2 * kFrames), k(kItems * kFrames), y(x.size()), z(k.size());
    for (std::size_t b = 0; b < kItems; ++b)
      for (std::size_t i = 0; i < kFrames; ++i) {
        for (std::size_t c = 0; c < 2; ++c) x[(b * 2 + c) * kFrames + i] = static_cast<float>(items[b][0].at(c, i));
        k[b * kFrames + i] = static_cast<float>(items[b][1].at(0, i));
      }
    auto rows = [](auto& v, std::size_t count) {
      std::vector<decltype(v.data())> r;
      for (std::size_t c = 0; c < count; ++c) r.push_back(v.data() + c * kFrames);
      return r;
    };
    auto xr = rows(x, kItems * 2), kr = rows(k, kItems), yr = rows(y, kItems * 2), zr = rows(z, kItems);
    std::vector<const float*> xc(xr.begin(), xr.end()), kc(kr.begin(), kr.end());
    std::vector<const float* const*> ins{xc.data(), kc.data()};
    std::vector<float* const*> outs{yr.data(), zr.data()};
    program.run_batch(std::span<const float* const* const>(ins), std::span<float* const* const>(outs), kItems, kFrames);
    double tolerance = dtype == fxc::DType::f32 ? 0 : 1e-6;  // f64 programs see float-rounded input here
    for (std::size_t b = 0; b < kItems; ++b)
      for (std::size_t i = 0; i < kFrames; ++i) {
        for (std::size_t c = 0; c < 2; ++c)
          REQUIRE(std::abs(y[(b * 2 + c) * kFrames + i] - want[b][0].at(c, i)) <= tolerance);
        REQUIRE(std::abs(z[b * kFrames + i] - want[b][1].at(0, i)) <= tolerance);
      }
    CHECK_THROWS_WITH_AS(program.run_batch(std::span<const float* const* const>(ins.data(), 1),
                                           std::span<float* const* const>(outs), kItems, kFrames),
                         doctest::Contains("2 input(s)"), fxc::Error);
    CHECK_THROWS_WITH_AS(program.run_batch(std::span<const float* const* const>(ins), std::span<float* const* const>(outs),
                                           0, kFrames),
                         doctest::Contains("at least one item"), fxc::Error);
  }
}

TEST_CASE("set() from one thread while others run") {
  fxc::Program program = fxc::Program::from_source(kEq, options(fxc::DType::f32));
  fxc::Signal x = noise(2, 2000, fxc::DType::f32);
  std::atomic<bool> done{false};
  std::thread setter([&] {
    for (int i = 0; i < 50; ++i) program.set("fc", 50.0 + 30 * i);
    done = true;
  });
  int runs = 0;
  while (!done || runs < 3) {
    CHECK(program.run(x).samples() == 2000);
    ++runs;
  }
  setter.join();
}

TEST_CASE("a Processor's blocks give the whole signal's output, bit for bit") {
  fxc::Options o = options(fxc::DType::f32);
  o.max_block = 256;
  fxc::Program program = fxc::Program::from_source(kEq, o);
  fxc::Processor live = program.processor();
  CHECK(live.max_block() == 256);
  fxc::Signal x = noise(2, 5000, fxc::DType::f32);
  // The whole signal through a Program scheduled for the same block length.
  std::vector<float> l(5000), r(5000);
  std::mt19937 rng(7);
  for (std::size_t start = 0; start < 5000;) {
    std::size_t n = std::min<std::size_t>(5000 - start, 1 + rng() % 300);  // over max_block too
    const float* in[] = {x.f32(0).data() + start, x.f32(1).data() + start};
    float* out[] = {l.data() + start, r.data() + start};
    live.process(in, out, n);
    start += n;
  }
  fxc::Processor whole = program.processor();
  std::vector<float> wl(5000), wr(5000);
  const float* in[] = {x.f32(0).data(), x.f32(1).data()};
  float* out[] = {wl.data(), wr.data()};
  whole.process(in, out, 5000);
  CHECK(l == wl);
  CHECK(r == wr);
  // And within float32 rounding of the Program's whole-signal run.
  fxc::Signal y = program.run(x);
  for (std::size_t i = 0; i < 5000; i += 97) CHECK(l[i] == doctest::Approx(y.f32(0)[i]).epsilon(1e-4));
}

// A corpus with --block makes a Program per file from the same text (the Program cache's
// copy, whose kernels Options::compile_kernels left out) and a Processor of it: the first
// Processor compiles the kernels, the later copies take them (on the GPU a module load per file
// until 2026-12-02). A copy given other values before its first run compiles its own.
TEST_CASE("copies of a Program made without kernels compile them once, at the first run of any") {
  fxc::Options o = options(fxc::DType::f32);
  o.compile_kernels = false;
  o.signal_length = 512;
  o.max_block = 512;
  const fxc::Signal x = noise(2, 2000, fxc::DType::f32);
  auto stream = [&](fxc::Processor& p) {
    fxc::Signal y(2, 2000, fxc::DType::f32);
    for (std::size_t start = 0; start < 2000; start += 512) {
      const std::size_t n = std::min<std::size_t>(512, 2000 - start);
      const float* in[] = {x.f32(0).data() + start, x.f32(1).data() + start};
      float* out[] = {y.f32(0).data() + start, y.f32(1).data() + start};
      p.process(in, out, n);
    }
    return y;
  };
  const std::string text = std::string(kEq) + "# copies share their first kernels\n";  // a cache entry of its own
  fxc::Program first = fxc::Program::from_source(text, o);
  fxc::Processor on_first(first);
  on_first.prepare(512);
  const fxc::Signal want = stream(on_first);
  const std::uint64_t hits = fxc::counters().memory_hits, compiles = fxc::counters().compiles;
  fxc::Program copy = fxc::Program::from_source(text, o);
  fxc::Processor on_copy(copy);
  on_copy.prepare(512);
  CHECK(fxc::counters().memory_hits == hits);  // not even a kernel-cache lookup
  CHECK(fxc::counters().compiles == compiles);
  CHECK(relative_error(stream(on_copy), want) == 0);
  // Other values before the first run: kernels of their own, which run those values.
  fxc::Program moved = fxc::Program::from_source(text, o);
  moved.set("fc", 1500.0);
  fxc::Processor on_moved(moved);
  on_moved.prepare(512);
  CHECK(fxc::counters().memory_hits == hits + 1);
  fxc::Options at = o;
  at.params = {{"fc", 1500.0}};
  at.compile_kernels = true;
  fxc::Processor fresh(fxc::Program::from_source(text, at));
  fresh.prepare(512);
  const fxc::Signal moved_out = stream(on_moved);
  CHECK(relative_error(moved_out, stream(fresh)) == 0);
  CHECK(relative_error(moved_out, want) > 1e-3);
  // A copy given other values that runs first leaves the shared kernels to the first copy at
  // the starting values: the copies after that take them.
  const std::string other = std::string(kEq) + "# the set() copy runs first\n";
  fxc::Program moved_first = fxc::Program::from_source(other, o);
  moved_first.set("fc", 1500.0);
  fxc::Processor(moved_first).prepare(512);
  const std::uint64_t after_moved = fxc::counters().memory_hits;
  fxc::Processor(fxc::Program::from_source(other, o)).prepare(512);
  CHECK(fxc::counters().memory_hits == after_moved + 1);
  fxc::Processor(fxc::Program::from_source(other, o)).prepare(512);
  CHECK(fxc::counters().memory_hits == after_moved + 1);
}

// A graph that moves samples between channels, processed in place (outputs in the inputs'
// memory, as the headers allow): a route wrote output channel 0 over input channel 0 before it
// read that for output channel 1 (an in-place swap() gave both channels the right one).
TEST_CASE("in place, graphs that route between channels give what they give out of place") {
  for (const char* graph : {"input x : 2\noutput y = x | swap()\n", "input x : 2\noutput y = x | ms_encode()\n",
                            "input x : 3\noutput y = x[2, 0, 1]\n",
                            "input x : 2\noutput y = x | mix([[0.5, 1], [1, -0.25]])\n"}) {
    CAPTURE(graph);
    fxc::Program program = fxc::Program::from_source(graph, options(fxc::DType::f64));
    const std::size_t channels = static_cast<std::size_t>(program.inputs()[0].channels);
    fxc::Signal x = noise(channels, 300, fxc::DType::f64);
    const fxc::Signal want = program.run(x);
    auto pointers = [](fxc::Signal& s) {
      std::vector<double*> p;
      for (std::size_t c = 0; c < s.channels(); ++c) p.push_back(s.f64(c).data());
      return p;
    };
    fxc::Signal whole = x;
    std::vector<double*> w = pointers(whole);
    program.run(std::span<const double* const* const>(std::vector<const double* const*>{w.data()}),
                std::span<double* const* const>(std::vector<double* const*>{w.data()}), 300);
    fxc::Signal streamed = x;
    std::vector<double*> s = pointers(streamed);
    fxc::Processor live = program.processor();
    live.process(s.data(), s.data(), 300);
    for (std::size_t c = 0; c < channels; ++c) {
      CAPTURE(c);
      CHECK(std::equal(whole.f64(c).begin(), whole.f64(c).end(), want.f64(c).begin()));
      CHECK(std::equal(streamed.f64(c).begin(), streamed.f64(c).end(), want.f64(c).begin()));
    }
  }
}

TEST_CASE("Processor::check_inputs refuses what Program::run refuses, and what the prepared ports cannot take") {
  fxc::Program stereo = fxc::Program::from_source("input x : 2\noutput x | lowpass(1 kHz)\n", options(fxc::DType::f32));
  fxc::Processor live = stereo.processor();
  live.check_inputs({noise(2, 100, fxc::DType::f32)});
  CHECK_THROWS_WITH_AS(live.check_inputs({noise(1, 100, fxc::DType::f32)}),
                       doctest::Contains("input 'x' is declared with 2 channel(s), but its signal has 1"), fxc::Error);
  CHECK_THROWS_WITH_AS(live.check_inputs({}), doctest::Contains("the graph has 1 input(s), got 0 signal(s)"), fxc::Error);
  // Two inputs of different lengths: a key shorter than the signal was read past its end.
  fxc::Program keyed = fxc::Program::from_source(
      "input x : 2\ninput k : 1\noutput x | compressor(-20 dB, 4, 1 ms, 50 ms, key=k)\n", options(fxc::DType::f32));
  fxc::Processor keyed_live = keyed.processor();
  CHECK_THROWS_WITH_AS(keyed_live.check_inputs({noise(2, 100, fxc::DType::f32), noise(1, 4, fxc::DType::f32)}),
                       doctest::Contains("inputs have different lengths"), fxc::Error);
  // An input declared without a count takes the one the Processor was prepared for.
  fxc::Options three = options(fxc::DType::f32);
  three.channels = 3;
  fxc::Processor open = fxc::Program::from_source("input x\noutput x | gain(2)\n", three).processor();
  open.check_inputs({noise(3, 10, fxc::DType::f32)});
  CHECK_THROWS_WITH_AS(open.check_inputs({noise(8, 10, fxc::DType::f32)}),
                       doctest::Contains("input 'x' takes 3 channel(s) in this Processor, but its signal has 8"),
                       fxc::Error);
}

TEST_CASE("a prepare() that throws leaves the Processor as it was") {
  fxc::Options o = options(fxc::DType::f32);
  o.max_block = 256;
  fxc::Program program = fxc::Program::from_source(kEq, o);
  fxc::Processor live = program.processor();
  fxc::Processor twin = program.processor();
  CHECK_THROWS_WITH_AS(live.prepare((std::size_t{1} << 24) + 1), doctest::Contains("at most 16777216 frames"),
                       fxc::Error);
  CHECK(live.max_block() == 256);  // it said 16777217, for buffers it never had
  fxc::Signal x = noise(2, 256, fxc::DType::f32);
  std::vector<float> a(256), b(256), c(256), d(256);
  const float* in[] = {x.f32(0).data(), x.f32(1).data()};
  float* out_live[] = {a.data(), b.data()};
  float* out_twin[] = {c.data(), d.data()};
  live.process(in, out_live, 256);
  twin.process(in, out_twin, 256);
  CHECK(a == c);
  CHECK(b == d);
}

TEST_CASE("Processor: set from another thread, reset, state bytes") {
  fxc::Options o = options(fxc::DType::f32);
  o.max_block = 64;
  fxc::Program program = fxc::Program::from_source(kEq, o);
  fxc::Processor live = program.processor();
  std::atomic<bool> done{false};
  std::thread control([&] {
    for (int i = 0; i < 40; ++i) live.set("fc", 20.0 + 40 * i);
    done = true;
  });
  std::vector<float> a(64, 0.5f), b(64, 0.25f), oa(64), ob(64);
  const float* in[] = {a.data(), b.data()};
  float* out[] = {oa.data(), ob.data()};
  int blocks = 0;
  while (!done || blocks < 10) {
    live.process(in, out, 64);
    ++blocks;
  }
  control.join();
  live.process(in, out, 64);  // takes the last value
  CHECK(std::isfinite(oa[63]));
  std::string state = live.save_state();
  live.process(in, out, 64);
  std::vector<float> after(oa);
  live.load_state(state);
  live.process(in, out, 64);
  CHECK(oa == after);
  CHECK_THROWS_AS(live.load_state("garbage"), fxc::Error);
  CHECK_THROWS_AS(live.set("fc", 1e6), fxc::Error);
  // After reset, the processor starts again from zero state: as a new one with the same value.
  live.reset();
  live.process(in, out, 64);
  std::vector<float> reset_out(oa);
  fxc::Program same = fxc::Program::from_source(kEq, o);
  same.set("fc", 20.0 + 40 * 39);
  fxc::Processor fresh = same.processor();
  fresh.process(in, out, 64);
  CHECK(oa == reset_out);
}

TEST_CASE("Processor: a long FIR is scheduled for the Processor's blocks, not the Program's signal length") {
  // A FIR run by FFT takes its FFT block from the length of one call: a Program for whole
  // signals convolves 4001 taps by overlap-save in 16384 points, which a Processor's 64-frame
  // block would pay in full every call. The Processor schedules it for its own blocks (a
  // partitioned convolution), whatever Options::signal_length says; its state's header names
  // the block.
  for (std::size_t signal_length : {std::size_t{0}, std::size_t{48000 * 60}}) {
    CAPTURE(signal_length);
    fxc::Options o = options(fxc::DType::f32);
    o.signal_length = signal_length;
    fxc::Program program = fxc::Program::from_source("input x : 2\noutput y = x | firwin(4001, 1 kHz)\n", o);
    fxc::Processor live = program.processor();
    live.prepare(64);
    const std::string state = live.save_state();
    const std::size_t at = state.find("fft_blocks ");
    REQUIRE(at != std::string::npos);
    const std::string line = state.substr(at, state.find('\n', at) - at);
    CHECK(line.substr(line.find(':') + 1) == "256");
    // The Processor's output is the whole signal's within float32 FFT rounding.
    fxc::Signal x = noise(2, 6000, fxc::DType::f32);
    std::vector<float> l(6000), r(6000);
    for (std::size_t start = 0; start < 6000; start += 64) {
      const std::size_t n = std::min<std::size_t>(64, 6000 - start);
      const float* in[] = {x.f32(0).data() + start, x.f32(1).data() + start};
      float* out[] = {l.data() + start, r.data() + start};
      live.process(in, out, n);
    }
    fxc::Signal y = program.run(x);
    double error = 0, power = 0;
    for (std::size_t i = 0; i < 6000; ++i) {
      error += std::pow(static_cast<double>(l[i]) - y.f32(0)[i], 2) + std::pow(static_cast<double>(r[i]) - y.f32(1)[i], 2);
      power += std::pow(static_cast<double>(y.f32(0)[i]), 2) + std::pow(static_cast<double>(y.f32(1)[i]), 2);
    }
    CHECK(std::sqrt(error / power) < 1e-5);
  }
}

TEST_CASE("Processor: samples of the other type run through the Program's type") {
  fxc::Options o = options(fxc::DType::f32);
  o.max_block = 100;
  fxc::Program program = fxc::Program::from_source(kEq, o);
  fxc::Signal x = noise(2, 1000, fxc::DType::f32);
  fxc::Processor narrow = program.processor(), wide = program.processor();
  std::vector<float> l(1000), r(1000);
  const float* in[] = {x.f32(0).data(), x.f32(1).data()};
  float* out[] = {l.data(), r.data()};
  narrow.process(in, out, 1000);
  // The same samples as doubles: converted to float32 on the way in (exactly), back on the
  // way out, so the outputs are the float32 outputs exactly, across block boundaries.
  std::vector<double> dl(x.f32(0).begin(), x.f32(0).end()), dr(x.f32(1).begin(), x.f32(1).end());
  const double* din[] = {dl.data(), dr.data()};
  double* dout[] = {dl.data(), dr.data()};  // in place
  wide.process(din, dout, 550);
  wide.process(std::span<const double* const* const>(), std::span<double* const* const>(), 0);  // wrong counts: nothing
  const double* din2[] = {dl.data() + 550, dr.data() + 550};
  double* dout2[] = {dl.data() + 550, dr.data() + 550};
  wide.process(din2, dout2, 450);
  for (std::size_t i = 0; i < 1000; ++i) {
    REQUIRE(static_cast<float>(dl[i]) == l[i]);
    REQUIRE(static_cast<float>(dr[i]) == r[i]);
  }
}

TEST_CASE("Processor: a delay past what prepare() reserved is an error, and the old value stays") {
  // 'd' has no declared range: prepare() reserves its current length only.
  constexpr const char* kDelay = "input x : 1\nd = 10 ms\noutput y = x | delay(d)\n";
  fxc::Options o = options(fxc::DType::f64);
  o.max_block = 64;
  fxc::Program program = fxc::Program::from_source(kDelay, o);
  CHECK(program.warnings().find("'d' sets a delay's length but has no declared range") != std::string::npos);
  fxc::Processor live = program.processor();
  live.set("d", 0.005);  // shorter: fits
  try {
    live.set("d", 0.5);
    FAIL("a delay longer than reserved was accepted");
  } catch (const fxc::Error& e) {
    CHECK(std::string(e.what()).find("declare the parameter's range (`d = ... in [low, high]`") != std::string::npos);
    CHECK_MESSAGE(std::string(e.what()).find("cannot set 'd' to 0.5 s in this Processor") != std::string::npos, e.what());
  }
  // Still 5 ms (240 samples): an impulse comes out 240 samples later.
  std::vector<double> x(512, 0.0), y(512, 1.0);
  x[0] = 1;
  const double* in[] = {x.data()};
  double* out[] = {y.data()};
  live.process(in, out, 512);
  CHECK(y[240] == 1.0);
  CHECK(std::count(y.begin(), y.end(), 0.0) == 511);
  // With a range the longest delay is reserved.
  fxc::Program ranged = fxc::Program::from_source("input x : 1\nd = 10 ms in [1 ms, 1 s]\noutput y = x | delay(d)\n", o);
  CHECK(ranged.warnings().empty());
  fxc::Processor ok = ranged.processor();
  CHECK_NOTHROW(ok.set("d", 0.9));
}

// A state saved after set() changed a delay's length: saved at the lengths the last block ran
// with, it was refused by its own Processor (load_state compares with the newest values) and
// by one made at the new value, and loaded only where the old value still held. Since
// 2026-11-29 the state is the next block's, which starts the changed line again.
TEST_CASE("Processor: a state saved after a delay's set() loads where that value is set") {
  constexpr const char* kDelay = "input x : 1\nd = 5 samples in [1 samples, 40 samples]\noutput x | delay(d)\n";
  fxc::Options o = options(fxc::DType::f64);
  o.max_block = 16;
  std::vector<double> x(16), y(16);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i + 1);
  const double* in[] = {x.data()};
  double* out[] = {y.data()};
  fxc::Processor live = fxc::Program::from_source(kDelay, o).processor();
  live.process(in, out, 16);
  live.set("d", 9);
  const std::string state = live.save_state();
  CHECK_NOTHROW(live.load_state(state));
  auto at_nine = fxc::Program::from_source(kDelay, o);
  at_nine.set("d", 9);
  fxc::Processor restored = at_nine.processor();
  CHECK_NOTHROW(restored.load_state(state));
  // Both go on alike: the line restarted, so the first 9 outputs are zeros, then the input.
  std::vector<double> a(16), b(16);
  double* out_a[] = {a.data()};
  double* out_b[] = {b.data()};
  live.process(in, out_a, 16);
  restored.process(in, out_b, 16);
  CHECK(a == b);
  CHECK(a[8] == 0.0);
  CHECK(a[9] == 1.0);
  // Where the old value still holds, the lengths differ: refused, naming the delay's place.
  fxc::Processor old = fxc::Program::from_source(kDelay, o).processor();
  CHECK_THROWS_WITH_AS(old.load_state(state), doctest::Contains("other delay lengths (the delay at <source>:3:"),
                       fxc::Error);
}

// set() from another thread while prepare() rebuilt the executor: they raced on the executor
// (a crash in stage_values on freed memory, or "call prepare() before set()" from a prepared
// Processor). Since 2026-11-29 the control calls take turns, and the last value holds.
TEST_CASE("Processor: set() from another thread during prepare() waits for it") {
  constexpr const char* kLowpass = "input x : 1\nfc = 1 kHz in [100 Hz, 5 kHz]\noutput x | lowpass(fc)\n";
  fxc::Options o = options(fxc::DType::f64);
  fxc::Program program = fxc::Program::from_source(kLowpass, o);
  fxc::Processor live = program.processor();
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::thread setter([&] {
    for (int k = 0; !done.load(); ++k) {
      try {
        live.set("fc", k % 2 ? 300.0 : 3000.0);
      } catch (const fxc::Error&) {
        ++failures;
      }
    }
  });
  for (int k = 0; k < 200; ++k) live.prepare(k % 2 ? 32 : 64);
  done = true;
  setter.join();
  CHECK(failures.load() == 0);
  live.set("fc", 300.0);
  live.prepare(64);  // the value holds through a prepare
  fxc::Program at_300 = fxc::Program::from_source(kLowpass, o);
  at_300.set("fc", 300.0);
  fxc::Processor fresh = at_300.processor();
  fresh.prepare(64);
  const fxc::Signal signal = noise(1, 64, fxc::DType::f64, 5);
  std::vector<double> x(signal.f64(0).begin(), signal.f64(0).end()), a(64), b(64);
  const double* in[] = {x.data()};
  double* out_a[] = {a.data()};
  double* out_b[] = {b.data()};
  live.process(in, out_a, 64);
  fresh.process(in, out_b, 64);
  CHECK(a == b);
}

// Several values at once: a run on another thread sees both new values or neither. Set one
// after another (Python's set(fc=..., g=...) did), runs used pairs that were never set.
TEST_CASE("Program::set of several values: runs see all of them or none") {
  constexpr const char* kTwo =
      "input x : 1\nfc = 1 kHz in [100 Hz, 5 kHz]\ng = 0 dB in [-12 dB, 12 dB]\noutput x | lowpass(fc) | gain(g)\n";
  fxc::Program program = fxc::Program::from_source(kTwo, options(fxc::DType::f64));
  const fxc::Signal x = noise(1, 256, fxc::DType::f64, 3);
  const std::vector<fxc::ParamValue> a{{"fc", 1000.0}, {"g", 0.0}}, b{{"fc", "3 kHz"}, {"g", 6.0}};
  program.set(a);
  const fxc::Signal ya = program.run(x);
  program.set(b);
  const fxc::Signal yb = program.run(x);
  CHECK(program.get("fc") == 3000.0);
  CHECK(relative_error(ya, yb) > 0.1);
  std::atomic<bool> done{false};
  std::thread setter([&] {
    for (int k = 0; !done.load(); ++k) program.set(k % 2 ? a : b);
  });
  int mixed = 0;
  for (int k = 0; k < 300; ++k) {
    const fxc::Signal y = program.run(x);
    if (relative_error(y, ya) != 0 && relative_error(y, yb) != 0) ++mixed;
  }
  done = true;
  setter.join();
  CHECK(mixed == 0);
  // A value refused keeps every value: 'fc' stays where it was although it came first.
  program.set(a);
  CHECK_THROWS_AS(program.set({{"fc", 2000.0}, {"g", 40.0}}), fxc::Error);
  CHECK(program.get("fc") == 1000.0);
  CHECK(relative_error(program.run(x), ya) == 0);
  // A Processor stages them together.
  fxc::Processor live = program.processor();
  live.set({{"fc", 3000.0}, {"g", 6.0}});
  std::vector<double> in(x.f64(0).begin(), x.f64(0).end()), out(256);
  const double* ins[] = {in.data()};
  double* outs[] = {out.data()};
  live.process(ins, outs, 256);
  for (std::size_t n = 0; n < out.size(); ++n) REQUIRE(out[n] == yb.at(0, n));
  CHECK_THROWS_AS(live.set({{"fc", 2000.0}, {"nope", 1.0}}), fxc::Error);
  CHECK(live.get("fc") == 3000.0);
}

// A live chain's float32 precision: the pole radius over the range decided alone, and a ranged
// band-stop (every pole inside r = 0.99) ran with float32 state at 0.27 relative RMS error,
// where the same filter with its edge fixed measured its float32 error and took float64.
// Since 2026-11-29 the error is measured at the range's sampled values too.
TEST_CASE("a live chain takes float64 state where float32 would measure too much error at a value of its range") {
  constexpr const char* kRanged = "input x : 1\nlo = 500 Hz in [400 Hz, 600 Hz]\noutput x | butter(8, [lo, 23 kHz], bandstop)\n";
  const fxc::Signal x = noise(1, 48000, fxc::DType::f64, 26);
  fxc::Program f32 = fxc::Program::from_source(kRanged, options(fxc::DType::f32));
  fxc::Program ref = fxc::Program::from_source(kRanged, options(fxc::DType::f64, fxc::Target::reference));
  CHECK(f32.dump("ir-opt").find("float64 state (float32 would measure") != std::string::npos);
  CHECK(relative_error(f32.run(x), ref.run(x)) < 1e-4);
  f32.set("lo", 400.0);  // the same kernels at another value of the range
  ref.set("lo", 400.0);
  CHECK(relative_error(f32.run(x), ref.run(x)) < 1e-4);
  // The live analysis's facts are by node id of the graph it designed. A batch's wider graph,
  // where split-precision splits an earlier fixed chain (it pays at 8 channels), had other
  // ids: the facts fell on the wrong chain and the band-stop ran in float32 (0.25 error). So
  // did every graph of Options::fuse = false (another pipeline), where a set() could also throw
  // an internal error. Facts now hold only where the graph and the chain's shape match; a live
  // chain without them takes float64 state.
  constexpr const char* kSplit =
      "input x : 1\nlo = 500 Hz in [400 Hz, 600 Hz]\ny = x | butter(2, 30 Hz, highpass) | peaking(5 kHz, 0.7, 1 dB) | "
      "peaking(6 kHz, 0.7, 1 dB) | peaking(7 kHz, 0.7, 1 dB) | peaking(8 kHz, 0.7, 1 dB) | peaking(9 kHz, 0.7, 1 dB) | "
      "peaking(10 kHz, 0.7, 1 dB) | peaking(11 kHz, 0.7, 1 dB) | peaking(12 kHz, 0.7, 1 dB)\n"
      "output y | butter(8, [lo, 23 kHz], bandstop)\noutput y\n";
  fxc::Program split = fxc::Program::from_source(kSplit, options(fxc::DType::f32));
  fxc::Program split_ref = fxc::Program::from_source(kSplit, options(fxc::DType::f64, fxc::Target::reference));
  std::vector<std::vector<fxc::Signal>> items;
  for (unsigned k = 0; k < 8; ++k) items.push_back({noise(1, 4800, fxc::DType::f32, 40 + k)});
  const auto batched = split.run_batch(items);
  for (std::size_t k = 0; k < items.size(); ++k)
    CHECK(relative_error(batched[k][0], split_ref.run(items[k])[0]) < 1e-4);
  fxc::Options unfused = options(fxc::DType::f32);
  unfused.fuse = false;
  fxc::Program apart = fxc::Program::from_source(kRanged, unfused);
  apart.set("lo", 400.0);  // as ref now
  CHECK(relative_error(apart.run(x), ref.run(x)) < 1e-4);
  fxc::Program apart_lp = fxc::Program::from_source(
      "input x : 1\nfc = 1 kHz in [50 Hz, 2 kHz]\noutput x | gain(-3 dB) | butter(2, 100 Hz, highpass) | butter(2, fc)\n",
      unfused);
  CHECK_NOTHROW(apart_lp.set("fc", 50.0));
}

TEST_CASE("planar runs of a graph whose input declares no channel count take Options::channels") {
  constexpr const char* kUndeclared = "input x\noutput x | butter(2, 1 kHz)\n";
  fxc::Options o = options(fxc::DType::f32);
  std::vector<float> a(500, 1.0f), b(500, -1.0f), ya(500), yb(500);
  const float* in[] = {a.data(), b.data()};
  float* out[] = {ya.data(), yb.data()};
  // Without a count from anywhere, a clear error.
  CHECK_THROWS_WITH_AS(fxc::Program::from_source(kUndeclared, o).run(in, out, 500),
                       doctest::Contains("has no declared channel count"), fxc::Error);
  o.channels = 2;
  fxc::Program program = fxc::Program::from_source(kUndeclared, o);
  program.run(in, out, 500);
  fxc::Signal x(2, 500, fxc::DType::f32);
  std::copy(a.begin(), a.end(), x.f32(0).begin());
  std::copy(b.begin(), b.end(), x.f32(1).begin());
  fxc::Signal want = program.run(x);
  CHECK(std::equal(ya.begin(), ya.end(), want.f32(0).begin()));
  CHECK(std::equal(yb.begin(), yb.end(), want.f32(1).begin()));
  CHECK(ya[499] == doctest::Approx(1.0).epsilon(1e-3));  // a lowpass passes DC
}

namespace {

// Float32 kernels compute tanh on whole vectors (emit_chain.cpp's fast_tanh), not with the C
// library's tanhf: within 2e-7 relative of float64 tanh for every normal input, the C library's
// answers for NaN, infinities and signed zeros, and the same bits on every channel, whichever
// thread and code path runs it (17 channels: groups of 8 lanes on two threads, then one).
TEST_CASE("float32 tanh: within 2e-7 of float64 tanh, special values as the C library's") {
  std::vector<float> values;
  for (int i = -120000; i <= 120000; ++i) values.push_back(static_cast<float>(i * 1e-4));  // -12 .. 12
  for (int e = -300; e <= 38; ++e) {  // tiny to huge, both signs
    values.push_back(std::pow(10.0f, static_cast<float>(e) / 8));
    values.push_back(-values.back());
  }
  values.push_back(std::nextafter(0.625f, 0.0f));  // both sides of the polynomial's edge
  values.push_back(0.625f);
  const std::vector<float> special = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                      -std::numeric_limits<float>::infinity(), 0.0f, -0.0f,
                                      std::numeric_limits<float>::denorm_min()};
  values.insert(values.end(), special.begin(), special.end());
  fxc::Signal x(17, values.size(), fxc::DType::f32);
  for (std::size_t c = 0; c < 17; ++c)
    for (std::size_t n = 0; n < values.size(); ++n) x.f32(c)[n] = values[(n + 7919 * (c % 8)) % values.size()];
  // Three threads, whatever the machine: the pool runs some of the channels, and its threads
  // must flush subnormals as the caller's does. Its threads start with the mode of the thread
  // that first needs them; a compile of several kernels (side by side) starts them here,
  // outside any run, where they did not flush before.
  const int threads_before = fxc::threads();
  fxc::set_threads(3);
  (void)fxc::Program::from_source("input x : 2\noutput (x | lowpass(1187 Hz)) + 0.5 * (x | tanh() | delay(3))\n",
                                  options(fxc::DType::f32));
  fxc::Signal y = fxc::Program::from_source("input x : 17\noutput x | tanh()\n", options(fxc::DType::f32)).run(x);
  fxc::set_threads(threads_before);
  double worst = 0;
  for (std::size_t c = 0; c < 17; ++c)
    for (std::size_t n = 0; n < values.size(); ++n) {
      const double in = x.f32(c)[n], got = y.f32(c)[n], want = std::tanh(in);
      if (std::isnan(in)) {
        CHECK(std::isnan(got));
      } else if (in == 0) {
        CHECK(got == 0);
        CHECK(std::signbit(got) == std::signbit(in));  // tanh(-0) is -0
      } else if (std::abs(in) < std::numeric_limits<float>::min()) {
        CHECK(got == 0);  // kernels run with denormals off: a subnormal input reads as zero
      } else {
        worst = worse(worst, std::abs(got - want) / std::abs(want));
      }
    }
  MESSAGE("float32 tanh: largest relative error " << worst);
  CHECK(worst <= 2e-7);
  CHECK(y.f32(0)[values.size() - 5] == 1.0f);   // tanh(+inf)
  for (std::size_t c : {8, 16})  // channel 0's input: on the other thread, in lanes and alone
    for (std::size_t n = 0; n < values.size(); ++n) {
      const float a = y.f32(0)[n], b = y.f32(c)[n];
      CHECK((a == b || (std::isnan(a) && std::isnan(b))));
    }
}

}  // namespace

namespace {

// A float32 chain whose filter keeps float64 state runs its tanh in float32 too (the signal is
// float32 on both sides): the output stays within float64 quality, 1e-6 of the reference.
TEST_CASE("float32 tanh after a float64-state filter stays within 1e-6 of the float64 reference") {
  const char* source = "input x : 9\noutput x | butter(2, 25 Hz, highpass) | gain(4) | tanh()\n";
  fxc::Program program = fxc::Program::from_source(source, options(fxc::DType::f32));
  const std::string dump = program.dump("ir-opt");
  REQUIRE(dump.find("tanh{}") != std::string::npos);
  REQUIRE(dump.find("state_precision=f64") != std::string::npos);
  fxc::Signal x = noise(9, 20000, fxc::DType::f64, 17);
  fxc::Signal want = fxc::Program::from_source(source, options(fxc::DType::f64, fxc::Target::reference)).run(x);
  fxc::Signal got = program.run(x.converted(fxc::DType::f32));
  double worst = 0;
  for (std::size_t c = 0; c < 9; ++c)
    for (std::size_t n = 0; n < x.samples(); ++n) worst = worse(worst, std::abs(got.at(c, n) - want.at(c, n)));
  MESSAGE("largest error " << worst);
  CHECK(worst <= 1e-6);
}

}  // namespace

TEST_CASE("Processor: unprepared, a null pointer or the wrong ports give zeros; 0 frames read no pointer") {
  fxc::Options o = options(fxc::DType::f32);
  fxc::Program program = fxc::Program::from_source(kEq, o);
  std::vector<float> in_l(64, 0.5f), in_r(64, 0.5f), out_l(64, 7.0f), out_r(64, 7.0f);
  const float* in[] = {in_l.data(), in_r.data()};
  float* out[] = {out_l.data(), out_r.data()};
  auto zeros = [&] {
    return std::all_of(out_l.begin(), out_l.end(), [](float v) { return v == 0; }) &&
           std::all_of(out_r.begin(), out_r.end(), [](float v) { return v == 0; });
  };
  // Before prepare(): the host's stale buffer must not reach the speakers.
  fxc::Processor unprepared(program);
  unprepared.process(in, out, 64);
  CHECK(zeros());
  fxc::Processor live = program.processor();
  // A null channel pointer: zeros where the outputs are, no crash.
  std::fill(out_l.begin(), out_l.end(), 7.0f);
  std::fill(out_r.begin(), out_r.end(), 7.0f);
  const float* half_in[] = {in_l.data(), nullptr};
  live.process(half_in, out, 64);
  CHECK(zeros());
  float* half_out[] = {out_l.data(), nullptr};
  std::fill(out_l.begin(), out_l.end(), 7.0f);
  live.process(in, half_out, 64);
  CHECK(std::all_of(out_l.begin(), out_l.end(), [](float v) { return v == 0; }));
  // Null pointer arrays with 0 frames (a host flushing parameters) read nothing; with frames
  // they write nothing. Neither call moves the stream: a Processor that never saw them gives
  // the same next block, bit for bit (the filter's state is not zero after the block above).
  live.process(in, out, 64);  // a real block, so that there is state to keep
  fxc::Processor twin = program.processor();
  std::vector<float> twin_l(64), twin_r(64);
  float* twin_out[] = {twin_l.data(), twin_r.data()};
  twin.process(in, twin_out, 64);
  live.process(static_cast<const float* const*>(nullptr), static_cast<float* const*>(nullptr), 0);
  live.process(static_cast<const float* const*>(nullptr), static_cast<float* const*>(nullptr), 64);
  live.process(half_in, out, 64);
  live.process(in, out, 64);
  twin.process(in, twin_out, 64);
  CHECK(out_l == twin_l);
  CHECK(out_r == twin_r);
  CHECK(std::any_of(out_l.begin(), out_l.end(), [](float v) { return v != 0; }));
}

TEST_CASE("Program::run and run_batch on planar memory refuse null pointers with an fxc::Error") {
  fxc::Program program = fxc::Program::from_source(kEq, options(fxc::DType::f32));
  std::vector<float> a(16, 0.25f), b(16), c(16);
  const float* in[] = {a.data(), nullptr};
  float* out[] = {b.data(), c.data()};
  CHECK_THROWS_WITH_AS(program.run(std::span<const float* const* const>(std::array<const float* const*, 1>{in}),
                                   std::span<float* const* const>(std::array<float* const*, 1>{out}), 16),
                       doctest::Contains("input 0's channel 1 is a null pointer"), fxc::Error);
  const float* both[] = {a.data(), a.data()};
  float* half_out[] = {b.data(), nullptr};
  CHECK_THROWS_WITH_AS(program.run(both, half_out, 16), doctest::Contains("output 0's channel 1 is a null pointer"), fxc::Error);
  CHECK_THROWS_WITH_AS(program.run(static_cast<const float* const*>(nullptr), out, 16),
                       doctest::Contains("input 0 is a null pointer array"), fxc::Error);
  // The other sample type goes through owning signals: the same checks.
  std::vector<double> da(16, 0.25), db(16), dc(16);
  const double* din[] = {da.data(), nullptr};
  double* dout[] = {db.data(), dc.data()};
  CHECK_THROWS_WITH_AS(program.run(din, dout, 16), doctest::Contains("input 0's channel 1 is a null pointer"), fxc::Error);
  const double* dboth[] = {da.data(), da.data()};
  double* dhalf[] = {db.data(), nullptr};
  CHECK_THROWS_WITH_AS(program.run(dboth, dhalf, 16), doctest::Contains("output 0's channel 1 is a null pointer"), fxc::Error);
  // No frames: channel pointers are not read, pointer arrays still are.
  program.run(in, out, 0);
  CHECK_THROWS_WITH_AS(program.run(static_cast<const float* const*>(nullptr), out, 0),
                       doctest::Contains("input 0 is a null pointer array"), fxc::Error);
  // A batch of two items: rows item x channel.
  const float* rows_in[] = {a.data(), a.data(), a.data(), nullptr};
  float* rows_out[] = {b.data(), c.data(), b.data(), c.data()};
  CHECK_THROWS_WITH_AS(program.run_batch(std::span<const float* const* const>(std::array<const float* const*, 1>{rows_in}),
                                         std::span<float* const* const>(std::array<float* const*, 1>{rows_out}), 2, 16),
                       doctest::Contains("input 0's channel 3 is a null pointer"), fxc::Error);
}

TEST_CASE("moved-from Programs, Processors and Flows are errors (or do nothing on the audio thread), not crashes") {
  fxc::Program a = fxc::Program::from_source(kEq, options(fxc::DType::f32));
  fxc::Program b = std::move(a);
  CHECK_THROWS_WITH_AS(a.params(), doctest::Contains("this fxc::Program was moved from"), fxc::Error);  // NOLINT
  CHECK_THROWS_AS(a.set("fc", 300.0), fxc::Error);                                                     // NOLINT
  CHECK_THROWS_AS(a.run(noise(2, 16, fxc::DType::f32)), fxc::Error);                                    // NOLINT
  CHECK_THROWS_AS(a.processor(), fxc::Error);                                                           // NOLINT
  fxc::Program copy = a;  // NOLINT: a copy of a moved-from Program is one too
  CHECK_THROWS_AS(copy.inputs(), fxc::Error);
  a = b;  // assigning makes it usable again
  CHECK(a.params().size() == b.params().size());

  fxc::Processor p = b.processor();
  fxc::Processor q = std::move(p);
  std::vector<float> in_l(16, 0.5f), out_l(16, 7.0f);
  const float* in[] = {in_l.data(), in_l.data()};
  float* out[] = {out_l.data(), out_l.data()};
  p.process(in, out, 16);  // NOLINT: nothing to run, and no crash
  p.reset();               // NOLINT
  CHECK_THROWS_WITH_AS(p.max_block(), doctest::Contains("this fxc::Processor was moved from"), fxc::Error);  // NOLINT
  CHECK_THROWS_AS(p.set("fc", 300.0), fxc::Error);   // NOLINT
  CHECK_THROWS_AS(p.save_state(), fxc::Error);       // NOLINT
  CHECK_THROWS_AS(p.prepare(), fxc::Error);          // NOLINT
  q.process(in, out, 16);
  CHECK(q.max_block() > 0);

  fxc::Flow x = fxc::input("x", 1);
  fxc::Flow y = std::move(x);
  CHECK_THROWS_WITH_AS((void)(x | fxc::gain(2)), doctest::Contains("an empty fxc::Flow"), fxc::Error);  // NOLINT
  CHECK_THROWS_AS((void)(x + y), fxc::Error);                                                           // NOLINT
  CHECK_THROWS_AS((void)(0.5 * x), fxc::Error);                                                         // NOLINT
  CHECK_THROWS_AS(fxc::Program(std::vector<fxc::Output>{fxc::output("y", fxc::Flow(nullptr))}, options()), fxc::Error);
  CHECK_THROWS_WITH_AS((void)(y | fxc::Chain({nullptr})), doctest::Contains("null stage"), fxc::Error);
}

TEST_CASE("mistakes in DSL code are fxc-dsl errors at the C++ call, not the IR verifier's") {
  auto error_of = [](auto make) -> fxc::Error {
    try {
      make();
    } catch (const fxc::Error& e) {
      return e;
    }
    FAIL("no error");
    return fxc::Error("", "");
  };
  fxc::Error order = error_of([] { fxc::Program p({fxc::output("y", fxc::input("x", 1) | fxc::butter(0, 1_kHz))}); });
  CHECK(order.code() == "fxc-dsl");
  CHECK(order.message() == "order must be at least 1");
  CHECK(order.file().ends_with("api_program_test.cpp"));
  CHECK(order.line() > 0);
  fxc::Error row = error_of([] { (void)fxc::sos({{1, 2}}); });  // refused at the call itself
  CHECK(row.code() == "fxc-dsl");
  CHECK(row.message() == "sos: section 1 has 2 coefficients; each section is [b0, b1, b2, a0, a1, a2]");
  fxc::Error twice = error_of([] {
    fxc::Flow a = fxc::input("x", 1), b = fxc::input("x", 1);
    fxc::Program p({fxc::output("y", a + b)});
  });
  CHECK(twice.message() == "the name 'x' is used twice");
  CHECK(twice.code() == "fxc-dsl");
  CHECK(error_of([] { fxc::Program p(std::vector<fxc::Output>{}); }).message() == "the graph has no input");
}

TEST_CASE("a Signal read with the wrong accessor or past its end is an fxc::Error") {
  fxc::Signal s(1, 10, fxc::DType::f64);
  CHECK_THROWS_WITH_AS(s.f32(0), doctest::Contains("Signal::f32 on a float64 signal: use f64()"), fxc::Error);
  CHECK_THROWS_WITH_AS(s.f64(5), doctest::Contains("Signal::f64(5) on a signal of 1 channel(s)"), fxc::Error);
  CHECK_THROWS_WITH_AS(s.at(0, 100), doctest::Contains("Signal::at(0, 100) on a signal of 1 channel(s) of 10"),
                       fxc::Error);
  s.f64(0)[9] = 0.5;
  CHECK(s.at(0, 9) == 0.5);
  CHECK(s.converted(fxc::DType::f32).at(0, 9) == 0.5);
}

// Channels past the last whole group of lanes run as one vector, its spare lanes idle, in
// chains whose state is in registers (since 2026-11-29; one channel at a time before: 7
// channels of a float32 compressor took 6x the time of 8). Every channel count, whole, split
// between threads (the remainder stays whole in the last part) and streamed in blocks: the
// same bytes as each channel run alone, and within the float64 interpreter's bound.
TEST_CASE("partial groups of lanes: every channel count equals its channels run one by one") {
  const char* chains[] = {"output x | butter(4, 1 kHz) | peaking(2 kHz, 1, 6 dB) | clip(-0.4, 0.4) | tanh()\n",
                          // No gate: where float32 rounding moves a level across its threshold it opens a
                          // sample apart from the interpreter's (the same in lanes or alone).
                          "output x | compressor(-20 dB, 4, 1 ms, 30 ms, knee=6 dB) | "
                          "expander(-40 dB, 2, 1 ms, 50 ms, knee=6 dB) | envelope(1 ms, 20 ms)\n"};
  const int threads_before = fxc::threads();
  for (const char* chain : chains)
    for (fxc::DType dtype : {fxc::DType::f32, fxc::DType::f64})
      for (int channels : {2, 3, 5, 7, 9, 10, 15, 18}) {
        CAPTURE(chain);
        CAPTURE(channels);
        CAPTURE(static_cast<int>(dtype));
        const std::string source = "input x : " + std::to_string(channels) + "\n" + chain;
        fxc::Signal x = noise(channels, 70000, dtype, 40 + channels);
        fxc::Program program = fxc::Program::from_source(source, options(dtype));
        fxc::set_threads(1);
        fxc::Signal whole = program.run(x);
        fxc::set_threads(3);
        fxc::Signal threaded = program.run(x);
        fxc::set_threads(threads_before);
        CHECK(relative_error(threaded, whole) == 0);
        fxc::Program mono = fxc::Program::from_source(std::string("input x : 1\n") + chain, options(dtype));
        for (int c = 0; c < channels; ++c) {
          fxc::Signal one(1, x.samples(), dtype);
          for (std::size_t n = 0; n < x.samples(); ++n)
            dtype == fxc::DType::f64 ? void(one.f64(0)[n] = x.f64(c)[n]) : void(one.f32(0)[n] = x.f32(c)[n]);
          fxc::Signal alone = mono.run(one);
          double worst = 0;
          for (std::size_t n = 0; n < x.samples(); ++n) worst = worse(worst, std::abs(alone.at(0, n) - whole.at(c, n)));
          CHECK(worst == 0);
        }
        fxc::Signal want =
            fxc::Program::from_source(source, options(fxc::DType::f64, fxc::Target::reference)).run(x.converted(fxc::DType::f64));
        CHECK(relative_error(whole, want) < (dtype == fxc::DType::f64 ? 1e-12 : 1e-4));
      }
}
