// SPDX-License-Identifier: Apache-2.0
// What the command line needed from the public API, checked as an embedder sees it: settings,
// the strategy's signal length, fixed and structural parameters, lazy kernels, dumps with
// options, frequency responses, runs in blocks, graphs read without compiling.
#include <fxc/fxc.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "api_test_support.h"
#include "runtime/counters.h"  // to check what compiles
#include "support/trace.h"    // to see what a run chose
#include "worse.h"

using fxc::test::worse;

namespace {

using fxc::test::noise;
using fxc::test::options;

double max_difference(const fxc::Signal& a, const fxc::Signal& b) {
  REQUIRE(a.channels() == b.channels());
  REQUIRE(a.samples() == b.samples());
  double worst = 0;
  for (std::size_t c = 0; c < a.channels(); ++c)
    for (std::size_t i = 0; i < a.samples(); ++i) worst = worse(worst, std::abs(a.at(c, i) - b.at(c, i)));
  return worst;
}

}  // namespace

TEST_CASE("settings replace constants in the source: structural ones too, errors at the constant") {
  const char* src =
      "input x : 1\n"
      "n = 2\n"
      "fc = 1 kHz in [100 Hz, 5 kHz]\n"
      "output y = x | butter(n, fc)\n";
  fxc::Options o = options();
  o.settings = {"n=4", "fc=2kHz"};
  fxc::Program set = fxc::Program::from_source(src, o);
  fxc::Program written =
      fxc::Program::from_source("input x : 1\noutput y = x | butter(4, 2 kHz)\n", options());
  fxc::Signal x = noise(1, 3000, fxc::DType::f64);
  CHECK(max_difference(set.run(x), written.run(x)) < 1e-12);
  CHECK(set.get("fc") == 2000);

  // The order shapes the compiled graph: set() refuses it and says what to do.
  CHECK_THROWS_WITH_AS(set.set("n", 6.0), doctest::Contains("shapes the compiled graph"), fxc::Error);
  CHECK(set.get("n") == 4);

  // A value outside the declared range: the error points at the constant, with its code.
  o.settings = {"fc=20kHz"};
  try {
    (void)fxc::Program::from_source(src, o, "eq.fx");
    FAIL("a setting outside the range compiled");
  } catch (const fxc::Error& e) {
    CHECK(e.code() == "fx-range");
    CHECK(e.file() == "eq.fx");
    CHECK(e.line() == 3);
  }
  o.settings = {"q=2"};
  CHECK_THROWS_WITH_AS(fxc::Program::from_source(src, o), doctest::Contains("binds no constant 'q'"), fxc::Error);
  o.settings = {"fc"};
  CHECK_THROWS_WITH_AS(fxc::Program::from_source(src, o), doctest::Contains("expected NAME=VALUE"), fxc::Error);
}

TEST_CASE("a setting without a unit is in the constant's unit: Hz for kHz and seconds for ms") {
  const char* src =
      "input x : 1\n"
      "fc = 1 kHz in [100 Hz, 5 kHz]\n"
      "d = 2 ms\n"
      "output y = x | lowpass(fc) | delay(d)\n";
  fxc::Options o = options();
  o.settings = {"fc=2000", "d=0.001"};
  fxc::Program bare = fxc::Program::from_source(src, o);
  CHECK(bare.get("fc") == 2000);
  CHECK(bare.get("d") == doctest::Approx(0.001));
  fxc::Program written =
      fxc::Program::from_source("input x : 1\noutput y = x | lowpass(2 kHz) | delay(1 ms)\n", options());
  fxc::Signal x = noise(1, 3000, fxc::DType::f64);
  CHECK(max_difference(bare.run(x), written.run(x)) == 0);
}

TEST_CASE("live_unranged_params false: unranged constants compiled in, ranged ones still live") {
  // At float32 a live unranged cutoff forces float64 state (any value may come); fixed at
  // 2 kHz it keeps float32 state, as a plain constant.
  const char* src = "input x : 1\nfc = 2 kHz\ng = 0.5 in [0, 1]\noutput y = x | butter(2, fc, highpass) | gain(g)\n";
  fxc::Options o = options(fxc::DType::f32);
  o.live_unranged_params = false;
  fxc::Program fixed = fxc::Program::from_source(src, o);
  CHECK(fixed.dump("ir-opt").find("state_precision=signal") != std::string::npos);
  CHECK_THROWS_WITH_AS(fixed.set("fc", 20.0), doctest::Contains("declare a range"), fxc::Error);
  std::uint64_t compiles = fxc::counters().compiles;
  fixed.set("g", 1.0);  // ranged: live, never recompiles (and the unit gain is not folded away)
  CHECK(fxc::counters().compiles == compiles);
  fxc::Program live = fxc::Program::from_source(src, options(fxc::DType::f32));
  CHECK(live.dump("ir-opt").find("state_precision=f64") != std::string::npos);
}

TEST_CASE("signal_length lets a long mono signal take the chunked scan, and runs stay correct") {
  const char* src = "input x : 1\noutput y = x | butter(2, 1 kHz)\n";
  fxc::Options o = options();
  o.signal_length = 1 << 20;
  fxc::Program chunked = fxc::Program::from_source(src, o);
  fxc::Options short_signals = options();
  short_signals.signal_length = 1000;  // without a length a run this long takes its class's schedule
  fxc::Program plain = fxc::Program::from_source(src, short_signals);
  CHECK(chunked.dump("ir-opt").find("strategy=chunked_scan") != std::string::npos);
  CHECK(plain.dump("ir-opt").find("strategy=chunked_scan") == std::string::npos);
  fxc::Signal x = noise(1, 300000, fxc::DType::f64);
  CHECK(max_difference(chunked.run(x), plain.run(x)) < 1e-12);  // float64: rounding only
  fxc::Signal short_x = noise(1, 100, fxc::DType::f64, 2);  // shorter than it was scheduled for
  CHECK(max_difference(chunked.run(short_x), plain.run(short_x)) < 1e-12);
}

// The strategies the kernels of `program.run(x)` ran with, from --trace's kernel spans.
std::string strategies_of_run(const fxc::Program& program, const fxc::Signal& x) {
  fxc::Trace& trace = fxc::Trace::global();
  const std::string before = trace.to_json();
  trace.enable();
  (void)program.run(x);
  trace.disable();
  // to_json writes one event a line, in the order recorded: this run's are past the earlier ones.
  const std::string after = trace.to_json();
  std::size_t at_run = 0;
  for (auto k = std::count(before.begin(), before.end(), '\n') - 1; k > 0; --k) at_run = after.find('\n', at_run) + 1;
  const std::string json = after.substr(at_run);
  std::string strategies;
  for (std::size_t at = json.find("\"strategy\": \""); at != std::string::npos; at = json.find("\"strategy\": \"", at + 1)) {
    const std::size_t from = at + std::string("\"strategy\": \"").size();
    strategies += json.substr(from, json.find('"', from) - from) + " ";
  }
  return strategies;
}

TEST_CASE("without signal_length, a long run takes its length's schedule: the chunked scan for a long mono signal") {
  const char* src = "input x : 1\noutput y = x | butter(2, 1 kHz)\n";
  fxc::Program program = fxc::Program::from_source(src, options());
  fxc::Program reference = fxc::Program::from_source(src, options(fxc::DType::f64, fxc::Target::reference));
  // The dump, and runs shorter than 2^16 frames, take no length: no time chunks.
  CHECK(program.dump("ir-opt").find("strategy=chunked_scan") == std::string::npos);
  const fxc::Signal short_x = noise(1, 1000, fxc::DType::f64, 2);
  CHECK(strategies_of_run(program, short_x).find("chunked_scan") == std::string::npos);
  // A run of 300000 frames is scheduled for 262144 (its class's shortest length): time chunks.
  const fxc::Signal long_x = noise(1, 300000, fxc::DType::f64);
  CHECK(strategies_of_run(program, long_x) == "chunked_scan ");
  CHECK(max_difference(program.run(long_x), reference.run(long_x)) < 1e-12);  // float64: rounding only
  CHECK(max_difference(program.run(short_x), reference.run(short_x)) < 1e-12);
  // The planar form takes the same schedule.
  fxc::Signal planar(1, long_x.samples());
  const double* in_channels[] = {long_x.f64(0).data()};
  double* out_channels[] = {planar.f64(0).data()};
  program.run(in_channels, out_channels, long_x.samples());
  CHECK(max_difference(planar, program.run(long_x)) == 0);
  // A signal_length is the caller's word, whatever a run's length: here short, so no chunks.
  fxc::Options told = options();
  told.signal_length = 1000;
  CHECK(strategies_of_run(fxc::Program::from_source(src, told), long_x).find("chunked_scan") == std::string::npos);
  // A live parameter: the class takes the no-length schedule's live analysis; a set() drops
  // the class's schedule, and the next long run makes it again at the new value.
  const char* ranged = "input x : 1\nfc = 1 kHz in [200 Hz, 5 kHz]\noutput y = x | butter(2, fc)\n";
  fxc::Program live = fxc::Program::from_source(ranged, options());
  fxc::Program live_reference = fxc::Program::from_source(ranged, options(fxc::DType::f64, fxc::Target::reference));
  CHECK(strategies_of_run(live, long_x) == "chunked_scan ");
  live.set("fc", 3000.0);
  live_reference.set("fc", 3000.0);
  CHECK(strategies_of_run(live, long_x) == "chunked_scan ");
  CHECK(max_difference(live.run(long_x), live_reference.run(long_x)) < 1e-12);
  // A copy (a Processor's is one) makes its own classes' schedules when it runs long signals.
  const fxc::Program copy = live;
  CHECK(max_difference(copy.run(long_x), live_reference.run(long_x)) < 1e-12);
  // An input without a declared count: the first run may be a long one, before any schedule
  // for no length; a second class takes the first's live analysis.
  const char* undeclared_src = "input x\nfc = 1 kHz in [200 Hz, 5 kHz]\noutput y = x | butter(2, fc)\n";
  fxc::Program undeclared = fxc::Program::from_source(undeclared_src, options());
  CHECK(strategies_of_run(undeclared, long_x) == "chunked_scan ");
  const fxc::Signal longer_x = noise(1, 700000, fxc::DType::f64, 3);  // the next class
  CHECK(strategies_of_run(undeclared, longer_x) == "chunked_scan ");
  CHECK(max_difference(undeclared.run(longer_x),
                       fxc::Program::from_source(undeclared_src, options(fxc::DType::f64, fxc::Target::reference))
                           .run(longer_x)) < 1e-12);
  // Several channels fill the lanes whatever the length: the long schedule is the same.
  fxc::Program wide = fxc::Program::from_source("input x : 8\noutput y = x | butter(2, 1 kHz)\n", options());
  CHECK(strategies_of_run(wide, noise(8, 300000, fxc::DType::f64)) == "channel_lanes ");
}

TEST_CASE("compile_kernels false: dumps without kernels or a GPU, kernels at the first run") {
  const char* src = "input x : 2\noutput y = x | butter(4, 1 kHz) | gain(0.5)\n";
  fxc::Options o = options();
  o.compile_kernels = false;
  std::uint64_t compiles = fxc::counters().compiles;
  fxc::clear_kernel_memory_cache();
  fxc::Program program = fxc::Program::from_source(src, o);
  CHECK(program.dump("ir-opt").find("chain") != std::string::npos);
  CHECK(program.dump("llvm").find("define") != std::string::npos);
  CHECK(fxc::counters().compiles == compiles);
  fxc::Signal x = noise(2, 500, fxc::DType::f64);
  fxc::Signal y = program.run(x);
  CHECK(fxc::counters().compiles == compiles + 1);
  CHECK(max_difference(y, fxc::Program::from_source(src, options()).run(x)) == 0);

  // CUDA C++ from a machine without a GPU: scheduling needs none.
  o.target = fxc::Target::cuda;
  fxc::Program cuda = fxc::Program::from_source(src, o);
  CHECK(cuda.dump("cuda").find("__global__") != std::string::npos);
}

TEST_CASE("dump options: formats, a subset of passes, the IR after every pass, pass times") {
  const char* src = "input x : 1\noutput y = x | gain(2) | gain(0.5) | butter(2, 1 kHz)\n";
  fxc::Program program = fxc::Program::from_source(src, options());
  fxc::DumpOptions d;
  d.emit = "ir";
  d.format = "json";
  CHECK(program.dump(d).find("\"nodes\"") != std::string::npos);
  d.format = "dot";
  CHECK(program.dump(d).find("digraph") != std::string::npos);
  d = {};
  d.passes = {"infer-types", "design-filters"};
  std::string designed = program.dump(d);
  CHECK(designed.find("gain") != std::string::npos);        // fold-gains did not run
  CHECK(designed.find("strategy=") == std::string::npos);   // nor select-strategy
  d = {};
  d.print_after_all = true;
  d.time_passes = true;
  d.locations = false;
  std::string all = program.dump(d);
  CHECK(all.find("fold-gains") != std::string::npos);
  CHECK(all.find("loc(") == std::string::npos);
  d = {};
  d.emit = "asm";
  CHECK_THROWS_WITH_AS(program.dump(d), doctest::Contains("unknown dump 'asm'"), fxc::Error);
}

TEST_CASE("frequency_response is the design's, at the current values") {
  const char* src = "input x : 1\nfc = 1 kHz in [100 Hz, 10 kHz]\noutput y = x | butter(2, fc) | gain(0.5)\n";
  fxc::Program program = fxc::Program::from_source(src, options());
  std::vector<double> f = {0, 1000, 23999};
  auto r = program.frequency_response(f);
  REQUIRE(r.size() == 1);
  CHECK(r[0].output == "y");
  CHECK(r[0].input == "x");
  // Butterworth: unity at DC, -3.01 dB at the cutoff, a zero at Nyquist; times the gain.
  CHECK(std::abs(r[0].response[0]) == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(std::abs(r[0].response[1]) == doctest::Approx(0.5 / std::sqrt(2.0)).epsilon(1e-9));
  CHECK(std::abs(r[0].response[2]) < 1e-6);
  program.set("fc", 2000.0);
  auto moved = program.frequency_response({2000.0});
  CHECK(std::abs(moved[0].response[0]) == doctest::Approx(0.5 / std::sqrt(2.0)).epsilon(1e-9));
  CHECK_THROWS_WITH_AS(
      fxc::Program::from_source("input x : 1\noutput y = x | tanh()\n", options()).frequency_response({1.0}),
      doctest::Contains("tanh"), fxc::Error);
  CHECK_THROWS_AS(program.frequency_response({-1.0}), fxc::Error);
}

TEST_CASE("run_in_blocks carries state across blocks as a whole run does") {
  const char* src = "input x : 2\noutput y = x | butter(4, 700 Hz) | delay(100 samples) | gain(0.5)\n";
  fxc::Program program = fxc::Program::from_source(src, options());
  fxc::Signal x = noise(2, 5000, fxc::DType::f64);
  fxc::Signal whole = program.run(x);
  for (std::size_t block : {1u, 7u, 64u, 4096u, 10000u})
    CHECK(max_difference(program.run_in_blocks({x}, block)[0], whole) < 1e-12);
  // A delay far longer than the signal: its line holds only what it can have seen.
  fxc::Program far = fxc::Program::from_source("input x : 1\noutput y = x | delay(1e12 samples)\n", options());
  fxc::Signal silent = far.run_in_blocks({noise(1, 300, fxc::DType::f64)}, 7)[0];
  CHECK(max_difference(silent, fxc::Signal(1, 300, fxc::DType::f64)) == 0);
  CHECK_THROWS_AS(program.run_in_blocks({x}, 0), fxc::Error);
}

TEST_CASE("Processor::prepare with max_frames: a loaded state longer than the stream is kept") {
  // A 1000-sample delay: the first stream's line holds 1000 samples; the second stream,
  // prepared for 300 frames, must keep all of them when it loads that state.
  const char* src = "input x : 1\noutput y = x | delay(1000 samples) | butter(2, 2 kHz)\n";
  fxc::Program program = fxc::Program::from_source(src, options());
  fxc::Signal x = noise(1, 1800, fxc::DType::f64);
  fxc::Signal whole = program.run(x);
  fxc::Processor first(program);
  first.prepare(64, 1500);
  std::vector<double> out(1800);
  const double* in_ptr = x.f64(0).data();
  double* out_ptr = out.data();
  for (std::size_t at = 0; at < 1500; at += 64) {
    const double* in_at = in_ptr + at;
    double* out_at = out_ptr + at;
    first.process(&in_at, &out_at, std::min<std::size_t>(64, 1500 - at));
  }
  fxc::Processor second(program);
  second.prepare(64, 300);
  second.load_state(first.save_state());
  for (std::size_t at = 1500; at < 1800; at += 64) {
    const double* in_at = in_ptr + at;
    double* out_at = out_ptr + at;
    second.process(&in_at, &out_at, std::min<std::size_t>(64, 1800 - at));
  }
  double worst = 0;
  for (std::size_t i = 0; i < 1800; ++i) worst = worse(worst, std::abs(out[i] - whole.f64(0)[i]));
  CHECK(worst < 1e-12);
}

TEST_CASE("inspect: ports and parameters without compiling") {
  std::uint64_t compiles = fxc::counters().compiles;
  fxc::GraphInfo info = fxc::inspect_source(
      "input a : 2\ninput b\nfc = 1 kHz in [20 Hz, 20 kHz]\noutput lo = a | lowpass(fc)\noutput hi = b | highpass(fc)\n");
  CHECK(fxc::counters().compiles == compiles);
  REQUIRE(info.inputs.size() == 2);
  CHECK(info.inputs[0].channels == 2);
  CHECK(info.inputs[1].channels == 0);
  REQUIRE(info.outputs.size() == 2);
  CHECK(info.outputs[1].name == "hi");
  REQUIRE(info.params.size() == 1);
  CHECK(info.params[0].has_range);
  CHECK(fxc::inspect_source("input x\nn = 2\noutput x\n", "g.fx", {"n=3"}).params[0].value == 3);
  CHECK_THROWS_AS(fxc::inspect_source("input x\noutput x |\n"), fxc::Error);
  CHECK_THROWS_WITH_AS(fxc::inspect_file("/nonexistent/g.fx"), doctest::Contains("cannot read"), fxc::Error);
}

TEST_CASE("undeclared inputs of different channel counts: compiled for them, or the mixing error") {
  // Two unrelated paths: each input runs at its own count.
  fxc::Program two = fxc::Program::from_source("input a\ninput b\noutput p = a | gain(2)\noutput q = b | gain(3)\n",
                                               options());
  fxc::Signal a = noise(1, 100, fxc::DType::f64), b = noise(2, 100, fxc::DType::f64, 2);
  auto out = two.run(std::vector<fxc::Signal>{a, b});
  REQUIRE(out.size() == 2);
  CHECK(out[0].channels() == 1);
  CHECK(out[1].channels() == 2);
  CHECK(out[1].at(1, 5) == doctest::Approx(3 * b.at(1, 5)));
  // A graph that mixes them: the error at the mix, named by the signals' sources.
  fxc::Program mix = fxc::Program::from_source("input a\ninput b\noutput a + b\n", options(), "mix.fx");
  a.set_source("mono.wav");
  b.set_source("stereo.wav");
  CHECK_THROWS_WITH_AS(mix.run(std::vector<fxc::Signal>{a, b}), doctest::Contains("cannot mix signals with 1 and 2"),
                       fxc::Error);
  fxc::Program declared = fxc::Program::from_source("input x : 2\noutput x\n", options());
  CHECK_THROWS_WITH_AS(declared.run(a), doctest::Contains("'mono.wav' has 1"), fxc::Error);
}

TEST_CASE("fuse false: a kernel per stage, the same output") {
  const char* src = "input x : 2\noutput y = x | butter(2, 500 Hz) | peaking(2 kHz, 1, 3 dB) | gain(0.5)\n";
  fxc::Options o = options();
  o.fuse = false;
  fxc::Program unfused = fxc::Program::from_source(src, o);
  fxc::Program fused = fxc::Program::from_source(src, options());
  fxc::Signal x = noise(2, 2000, fxc::DType::f64);
  auto dispatches = [&](const fxc::Program& p) {
    std::uint64_t before = fxc::counters().dispatches;
    (void)p.run(x);
    return fxc::counters().dispatches - before;
  };
  CHECK(dispatches(unfused) > dispatches(fused));
  CHECK(max_difference(unfused.run(x), fused.run(x)) < 1e-12);
}

TEST_CASE("errors render in colour on request, plain in what()") {
  try {
    (void)fxc::Program::from_source("input x\noutput x | lowpas(1 kHz)\n", options(), "bad.fx");
    FAIL("a bad graph compiled");
  } catch (const fxc::Error& e) {
    std::string plain = e.what(), coloured = e.report(true);
    CHECK(plain == e.report(false));
    CHECK(plain.find('\x1b') == std::string::npos);
    CHECK(coloured.find('\x1b') != std::string::npos);
    CHECK(plain.find("bad.fx:2:") != std::string::npos);
  }
}

TEST_CASE("a CUDA Program for a named architecture compiles ahead of time and refuses to run") {
  fxc::Options o = options();
  o.target = fxc::Target::cuda;
  o.cuda_architecture = "sm_90";
  o.compile_kernels = false;  // NVRTC may be missing here: the refusal is what is checked
  fxc::Program program = fxc::Program::from_source("input x : 1\noutput x | gain(2)\n", o);
  CHECK_THROWS_WITH_AS(program.run(noise(1, 10, fxc::DType::f64)), doctest::Contains("ahead of time"), fxc::Error);
}

TEST_CASE("run_device is for CUDA Programs and says why it cannot run") {
  fxc::Program cpu = fxc::Program::from_source("input x : 1\noutput x | gain(2)\n", options());
  fxc::DeviceArray a{0x1000, 1, 64};
  CHECK_THROWS_WITH_AS(cpu.run_device({&a, 1}, {&a, 1}), doctest::Contains("needs a Program compiled with Target::cuda"),
                       fxc::Error);
  fxc::Options o = options();
  o.target = fxc::Target::cuda;
  o.cuda_architecture = "sm_90";
  o.compile_kernels = false;
  fxc::Program ahead = fxc::Program::from_source("input x : 1\noutput x | gain(2)\n", o);
  CHECK_THROWS_WITH_AS(ahead.run_device({&a, 1}, {&a, 1}), doctest::Contains("ahead of time"), fxc::Error);
}

TEST_CASE("run_batch_device is for CUDA Programs, needs items and rows that are items x channels") {
  fxc::Program cpu = fxc::Program::from_source("input x : 1\noutput x | gain(2)\n", options());
  fxc::DeviceArray a{0x1000, 4, 64};
  CHECK_THROWS_WITH_AS(cpu.run_batch_device({&a, 1}, {&a, 1}, 4),
                       doctest::Contains("needs a Program compiled with Target::cuda"), fxc::Error);
  fxc::Options o = options();
  o.target = fxc::Target::cuda;
  o.compile_kernels = false;  // no GPU is needed for the refusals
  fxc::Program cuda = fxc::Program::from_source("input x : 2\noutput x | gain(2)\n", o);
  CHECK_THROWS_WITH_AS(cuda.run_batch_device({&a, 1}, {&a, 1}, 0), doctest::Contains("at least one item"), fxc::Error);
  fxc::DeviceArray odd{0x1000, 5, 64};
  CHECK_THROWS_WITH_AS(cuda.run_batch_device({&odd, 1}, {&odd, 1}, 2),
                       doctest::Contains("input 0 has 5 rows, not a multiple of 2 items"), fxc::Error);
  // Lengths and pointers are checked before a batch program is compiled, each array named.
  fxc::DeviceArray shorter{0x1000, 4, 32}, null_out{0, 4, 64};
  CHECK_THROWS_WITH_AS(cuda.run_batch_device({&a, 1}, {&shorter, 1}, 2),
                       doctest::Contains("output 0 has 32 frames, input 0 64"), fxc::Error);
  CHECK_THROWS_WITH_AS(cuda.run_batch_device({&a, 1}, {&null_out, 1}, 2),
                       doctest::Contains("output 0 is a null device pointer"), fxc::Error);
  // A misaligned pointer (a tensor viewed from an odd byte offset) would fault on the GPU.
  fxc::DeviceArray misaligned{0x1004, 4, 64};
  CHECK_THROWS_WITH_AS(cuda.run_batch_device({&misaligned, 1}, {&a, 1}, 2),
                       doctest::Contains("input 0 at 0x1004 is not aligned to its 8-byte samples"), fxc::Error);
  o.cuda_architecture = "sm_90";
  fxc::Program ahead = fxc::Program::from_source("input x : 2\noutput x | gain(2)\n", o);
  CHECK_THROWS_WITH_AS(ahead.run_batch_device({&a, 1}, {&a, 1}, 2), doctest::Contains("ahead of time"), fxc::Error);
}

TEST_CASE("the same text and options make a copy of the first Program, with its starting values") {
  const char* src = "input x : 1\nfc = 1 kHz in [100 Hz, 5 kHz]\noutput y = x | butter(2, fc)\n";
  fxc::clear_kernel_memory_cache();
  std::uint64_t compiles = fxc::counters().compiles;
  fxc::Program first = fxc::Program::from_source(src, options(), "p.fx");
  CHECK(fxc::counters().compiles == compiles + 1);
  first.set("fc", 3000.0);
  fxc::Program second = fxc::Program::from_source(src, options(), "p.fx");
  CHECK(fxc::counters().compiles == compiles + 1);  // no compile, no pass pipeline
  CHECK(second.get("fc") == 1000);                  // the starting value, not first's
  fxc::Signal x = noise(1, 1000, fxc::DType::f64);
  fxc::Options other = options();
  other.params = {{"fc", 1000}};  // another key, the same graph: equal output
  CHECK(max_difference(second.run(x), fxc::Program::from_source(src, other, "p.fx").run(x)) == 0);
  CHECK(max_difference(first.run(x), second.run(x)) > 0);  // each keeps its own values
  // Another sample type is another Program; forgetting the kernels forgets the Programs too.
  (void)fxc::Program::from_source(src, options(fxc::DType::f32), "p.fx");
  CHECK(fxc::counters().compiles == compiles + 2);
  fxc::clear_kernel_memory_cache();
  (void)fxc::Program::from_source(src, options(), "p.fx");
  CHECK(fxc::counters().compiles == compiles + 3);
}

TEST_CASE("a Program remade from the same text reads its imported files again") {
  // The text is the same; the library it imports is edited, or another directory's: the
  // remembered Program must not stand in for the new one.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("fxc-api-import-" + std::to_string(::getpid()));
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  auto write = [](const fs::path& path, const std::string& text) { std::ofstream(path) << text; };
  const std::string main_text = "import \"lib.fx\"\ninput x : 1\noutput x | f()\n";
  write(dir / "main.fx", main_text);
  write(dir / "lib.fx", "fn f() { return gain(2) }\n");
  fxc::clear_kernel_memory_cache();
  fxc::Signal x(1, 4);
  x.f64(0)[0] = 1;
  auto gain_of = [&](const fxc::Program& p) { return p.run(x).at(0, 0); };
  CHECK(gain_of(fxc::Program::from_file((dir / "main.fx").string(), options())) == 2);
  write(dir / "lib.fx", "fn f() { return gain(5) }\n");
  CHECK(gain_of(fxc::Program::from_file((dir / "main.fx").string(), options())) == 5);
  // Text without a file imports from the working directory.
  write(dir / "a" / "lib.fx", "fn f() { return gain(3) }\n");
  write(dir / "b" / "lib.fx", "fn f() { return gain(4) }\n");
  struct RestoreDirectory {
    fs::path before = fs::current_path();
    ~RestoreDirectory() { fs::current_path(before); }
  };
  double in_a = 0, in_b = 0, in_b_again = 0;
  {
    RestoreDirectory restore;  // also when a run throws
    fs::current_path(dir / "a");
    in_a = gain_of(fxc::Program::from_source(main_text, options()));
    fs::current_path(dir / "b");
    in_b = gain_of(fxc::Program::from_source(main_text, options()));
    in_b_again = gain_of(fxc::Program::from_source(main_text, options()));
  }
  CHECK(in_a == 3);
  CHECK(in_b == 4);
  CHECK(in_b_again == 4);
  // An import that is gone is the error it is, not the remembered Program.
  fs::remove(dir / "lib.fx");
  CHECK_THROWS_WITH_AS(fxc::Program::from_file((dir / "main.fx").string(), options()),
                       doctest::Contains("cannot import 'lib.fx'"), fxc::Error);
  fs::remove_all(dir);
}

TEST_CASE("small API mistakes are clear errors: units, threads, dump formats, parameter names") {
  fxc::Program p = fxc::Program::from_source(
      "input x : 1\nd = 10 ms in [0 ms, 20 ms]\noutput x | delay(d)\n", options());
  CHECK_THROWS_WITH_AS(p.set("d", "480 samples"),
                       doctest::Contains("'d' takes a time in s or ms, not a number of samples (which needs the "
                                         "sample rate)"),
                       fxc::Error);
  CHECK(p.get("d") == doctest::Approx(0.01));
  CHECK_THROWS_WITH_AS(fxc::set_threads(-1), doctest::Contains("set_threads takes 1 or more threads"), fxc::Error);
  fxc::DumpOptions dot;
  dot.emit = "llvm";
  dot.format = "dot";
  CHECK_THROWS_WITH_AS(p.dump(dot), doctest::Contains("format 'dot' applies to the dumps ir and ir-opt"), fxc::Error);
  CHECK(p.dump("dot").find("digraph") != std::string::npos);
  // Options that change nothing in the dump asked for are refused, not ignored.
  fxc::DumpOptions llvm;
  llvm.emit = "llvm";
  llvm.passes = {"infer-types"};
  CHECK_THROWS_WITH_AS(p.dump(llvm), doctest::Contains("passes, print_after_all and time_passes apply to the dumps ir"),
                       fxc::Error);
  fxc::DumpOptions optimized;
  optimized.llvm_optimized = true;
  CHECK_THROWS_WITH_AS(p.dump(optimized), doctest::Contains("llvm_optimized applies to the dump llvm"), fxc::Error);
  CHECK_THROWS_WITH_AS(p.dump("cuda"), doctest::Contains("compile the Program for the cuda target"), fxc::Error);
  CHECK_THROWS_WITH_AS((void)fxc::param("", 1.0), doctest::Contains("a parameter name must be an identifier"),
                       fxc::Error);
  CHECK_THROWS_WITH_AS((void)fxc::input("1x", 1), doctest::Contains("an input name must be an identifier"), fxc::Error);
  try {
    (void)fxc::param("2fc", 1.0);
    FAIL("no error");
  } catch (const fxc::Error& e) {
    CHECK(e.file().ends_with("api_options_test.cpp"));  // at the caller's line
  }
}
