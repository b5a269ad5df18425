// SPDX-License-Identifier: Apache-2.0
// The fast paths of loops: filters that split each block into time chunks
// (passes::choose_loop_chunks), when they are chosen, and fused loops whose lines are read
// and written a tile of lanes x samples at a time (codegen/cpu/emit_chain.cpp); whole runs,
// streams and live delay changes stay exact against the reference interpreter.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include <fxc/fxc.h>

#include "accuracy_support.h"
#include "block_test_support.h"
#include "frontend/fx_file.h"
#include "ir/print.h"
#include "passes/cost_model.h"
#include "passes/pipeline.h"

namespace fxc {
namespace {

Signal noise(int channels, std::size_t samples, std::uint64_t seed) {
  return test::noise_inputs(1, channels, samples, DType::f64, seed)[0];
}

double relative(const Signal& a, const Signal& b) { return test::relative_difference(a, b); }

// An echo of `channels` channels; `time` a literal (fixed) or a named constant with a range (live).
std::string echo(int channels, const std::string& time, const std::string& filters, bool live = false) {
  return "graph echo\ninput x : " + std::to_string(channels) + "\n" +
         (live ? "time = " + time + " in [1 ms, 1 s]\n" : "") + "y = x + 0.5 * (y | delay(" +
         (live ? std::string("time") : time) + ")" + filters + ")\noutput y\n";
}

Options options(DType dtype, std::size_t length) {
  Options o;
  o.sample_rate_hz = 48000;
  o.dtype = dtype;
  o.cache_directory = "none";
  o.signal_length = length;
  o.live_unranged_params = false;
  return o;
}

passes::PassContext avx2_context(DiagnosticEngine& diags, DType dtype, std::int64_t length) {
  passes::PassContext context{diags, {48000.0, 2, dtype}};
  context.binding.length_samples = length;
  context.target = {passes::TargetKind::cpu, 32, 2};  // AVX2: 8 float32 lanes, 4 float64
  return context;
}

}  // namespace

TEST_CASE("choose_loop_chunks: few channels, a long block, a long signal, a filter that forgets fast") {
  DiagnosticEngine diags;
  passes::ChainSummary lowpass;
  lowpass.sections = 1;
  lowpass.max_pole_radius = 0.758;  // a 3 kHz lowpass at 48 kHz: 84 samples to 1e-10
  auto context = avx2_context(diags, DType::f32, 48000 * 60);
  // 2 channels fill 8 lanes with 4 chunks each: 12000 / 4 = 3000 samples a chunk.
  passes::Schedule chunks = passes::choose_loop_chunks(lowpass, 2, 12000, context);
  CHECK(chunks.strategy == ir::IirStrategy::chunked_scan);
  CHECK(chunks.chunk_length == 3000);
  CHECK(chunks.reason == "2 channels in a loop's blocks of 12000 samples: each block's time chunks as SIMD lanes, L=3000");
  // Each reason to keep a block whole, and what it says.
  auto whole = [](const passes::Schedule& s) {
    CHECK(s.strategy == ir::IirStrategy::none);
    return s.reason;
  };
  CHECK(whole(passes::choose_loop_chunks(lowpass, 8, 12000, context)) == "8 channels fill the lanes");
  CHECK(whole(passes::choose_loop_chunks(lowpass, 2, 1000, context)) ==
        "blocks of 1000 samples are too short for time chunks of the filter (its decay: 84 samples)");
  passes::ChainSummary slow = lowpass;
  slow.max_pole_radius = 0.9995;  // ~46000 samples of decay: the fix-ups would outweigh the chunks
  CHECK(whole(passes::choose_loop_chunks(slow, 2, 12000, context)) ==
        "blocks of 12000 samples are too short for time chunks of the filter (its decay: 46041 samples)");
  passes::ChainSummary nonlinear = lowpass;
  nonlinear.linear = false;
  CHECK(whole(passes::choose_loop_chunks(nonlinear, 2, 12000, context)) == "not a linear filter: time cannot be split");
  auto short_signal = avx2_context(diags, DType::f32, 4000);  // under chunked_min_samples
  CHECK(whole(passes::choose_loop_chunks(lowpass, 2, 12000, short_signal)) ==
        "the signal is not known to be long (chunked_min_samples)");
  // A second is long enough where 2 channels leave 6 of 8 lanes idle, not where 6 fill 6.
  auto second = avx2_context(diags, DType::f32, 48000);
  CHECK(passes::choose_loop_chunks(lowpass, 2, 12000, second).strategy == ir::IirStrategy::chunked_scan);
  CHECK(whole(passes::choose_loop_chunks(lowpass, 6, 12000, second)) ==
        "the signal is not known to be long (chunked_busy_lanes_min_samples)");
  CHECK(passes::choose_loop_chunks(lowpass, 6, 12000, context).strategy == ir::IirStrategy::chunked_scan);
  auto stream = avx2_context(diags, DType::f32, 48000 * 60);
  stream.thresholds.chunked_min_samples = std::numeric_limits<std::int64_t>::max();  // as Processors do
  whole(passes::choose_loop_chunks(lowpass, 2, 12000, stream));
  auto gpu = avx2_context(diags, DType::f32, 48000 * 60);
  gpu.target = {passes::TargetKind::cuda, 32, 2};
  whole(passes::choose_loop_chunks(lowpass, 2, 12000, gpu));
  // float64: 4 lanes, 2 chunks per channel.
  auto f64 = avx2_context(diags, DType::f64, 48000 * 60);
  CHECK(passes::choose_loop_chunks(lowpass, 2, 12000, f64).chunk_length == 6000);
}

TEST_CASE("a graph the CPU runs in pieces schedules its chains without the signal's length, as they run") {
  // A highpass on one channel beside a loop. With a 1 ms delay the loop fuses into one
  // kernel; with the tanh after it that is 3 kernels, and the runtime runs the whole signal in
  // pieces of a few thousand frames: a chunked scan planned for 600 s would run one chunk a
  // piece there (1 ch x 120 s, one thread: 99.9 ms, against 57.9 ms with time chunks off in
  // the same run, which is the wavefront it now takes).
  auto graph = [](const std::string& delay, const std::string& after) {
    return "graph g\ninput x : 1\nh = x | butter(6, 80 Hz, highpass) | peaking(1 kHz, 1, 3 dB)\n"
           "y = h + 0.5 * (y | delay(" + delay + ") | lowpass(3 kHz))\noutput 0.7 * (y" + after + ")\noutput h\n";
  };
  struct Case {
    std::string text;
    bool pieces;
  };
  const Case cases[] = {
      {"graph g\ninput x : 1\noutput x | butter(6, 80 Hz, highpass) | peaking(1 kHz, 1, 3 dB)\n", false},
      {graph("1 ms", " | tanh()"), true},  // fused, among 3 kernels
      {"graph g\ninput x : 1\nh = x | butter(6, 80 Hz, highpass) | peaking(1 kHz, 1, 3 dB)\n"
       "y = h + 0.5 * (y | delay(1 ms) | lowpass(3 kHz))\noutput y\n",
       false},  // fused, among 2 kernels: whole
      {graph("250 ms", ""), true},  // a feedback loop (unfused: its lowpass in time chunks)
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    DiagnosticEngine diags;
    auto parsed = frontend::compile_fx_source(c.text, "g.fx", diags);
    REQUIRE_MESSAGE(parsed, diags.str());
    // float64: the highpass stays one chain (no split-precision).
    passes::PassContext context = avx2_context(diags, DType::f64, 48000 * 600);
    context.binding.channels = 1;
    auto scheduled = passes::run_pipeline(*parsed, context);
    REQUIRE(scheduled);
    CHECK(passes::cpu_runs_in_pieces(*scheduled) == c.pieces);
    // The highpass's chain (its 4 sections): in time chunks where it sees the whole signal, a
    // wavefront where it runs in pieces.
    CAPTURE(ir::to_text(*scheduled));
    int highpasses = 0;
    for (const ir::Chain* chain : test::chains_of(*scheduled)) {
      const auto* sos = chain->stages.empty() ? nullptr : std::get_if<ir::SosCascade>(&chain->stages[0]);
      if (!sos || sos->sections.size() != 4) continue;
      ++highpasses;
      CHECK(chain->strategy == (c.pieces ? ir::IirStrategy::section_wavefront : ir::IirStrategy::chunked_scan));
      CHECK((chain->reason.find("the graph's loop makes the CPU run it in pieces") != std::string::npos) == c.pieces);
    }
    CHECK(highpasses == 1);
  }
  // And it runs as the reference does.
  Options o = options(DType::f32, 48000 * 20);
  Program program = Program::from_source(graph("1 ms", " | tanh()"), o);
  Options reference = o;
  reference.target = Target::reference;
  std::vector<Signal> x{noise(1, 48000 * 20, 3)};
  std::vector<Signal> want = Program::from_source(graph("1 ms", " | tanh()"), reference).run(x);
  x[0] = x[0].converted(DType::f32);
  std::vector<Signal> got = program.run(x);
  for (std::size_t k = 0; k < got.size(); ++k) CHECK(relative(got[k], want[k]) < 1e-5);
}

TEST_CASE("an echo with a long delay runs unfused, its filter in time chunks, and equals the reference") {
  const std::size_t length = 200000;
  for (DType dtype : {DType::f32, DType::f64}) {
    for (int channels : {1, 2, 3}) {
      for (std::string filters : {" | lowpass(3 kHz)", " | lowpass(3 kHz) | highpass(3 kHz)"}) {
        std::string text = echo(channels, "200 ms", filters);
        CAPTURE(text);
        CAPTURE(dtype == DType::f32);
        Options o = options(dtype, length);
        o.thresholds = {{"chunked_min_samples", 100000}};
        Program program = Program::from_source(text, o);
        std::string dump = program.dump("ir-opt");
        CAPTURE(dump);
        REQUIRE(dump.find("strategy=chunked_scan") != std::string::npos);
        CHECK(dump.find("loop_read") == std::string::npos);  // not fused
        Options reference = o;
        reference.target = Target::reference;
        std::vector<Signal> x{noise(channels, length, 7)};
        if (dtype == DType::f32) x[0] = x[0].converted(DType::f32);
        std::vector<Signal> want = Program::from_source(text, reference).run(std::vector<Signal>{noise(channels, length, 7)});
        std::vector<Signal> got = program.run(x);
        CHECK(relative(got[0], want[0]) < (dtype == DType::f64 ? 1e-12 : 1e-5));
        // Streams run the loop without chunks: the same values to rounding.
        std::vector<Signal> blocks = program.run_in_blocks(x, 4097);
        CHECK(relative(blocks[0], want[0]) < (dtype == DType::f64 ? 1e-12 : 1e-5));
      }
    }
  }
}

TEST_CASE("a loop whose delay is live stays fused whatever its value, and exact") {
  // Its blocks would move with a value set() may change, and the kernels' shape must not.
  const std::size_t length = 150000;
  std::string text = echo(2, "200 ms", " | lowpass(3 kHz)", true);
  Options o = options(DType::f64, length);
  o.thresholds = {{"chunked_min_samples", 100000}};
  Program program = Program::from_source(text, o);
  CHECK(program.dump("ir-opt").find("loop_read") != std::string::npos);
  Options reference = o;
  reference.target = Target::reference;
  Program want_program = Program::from_source(text, reference);
  for (const char* time : {"2 ms", "31.3 ms", "250 ms"}) {
    CAPTURE(time);
    program.set("time", std::string_view(time));
    want_program.set("time", std::string_view(time));
    std::vector<Signal> x{noise(2, length, 11)};
    CHECK(relative(program.run(x)[0], want_program.run(x)[0]) < 1e-12);
  }
}

TEST_CASE("fused loops on full lanes (tiles) equal the reference, whole and in blocks of any length") {
  // 8 and 13 channels (float32: one or two groups of 8 lanes and 5 single channels; float64:
  // groups of 4); lines shorter than a tile (3 samples), a tile long, odd and long, a
  // Freeverb comb and allpass (its output mix in its kernel); signals not a whole number of
  // tiles.
  for (DType dtype : {DType::f32, DType::f64}) {
    for (int channels : {8, 13}) {
      for (const char* delay : {"3", "8", "37", "1116"}) {
        std::string d = delay;
        std::string text = "graph tiles\ninput x : " + std::to_string(channels) + "\n" +
                           "comb = x + 0.84 * (comb | delay(" + d + ") | tf([0.8], [1, -0.2]))\n" +
                           "past = line | delay(" + d + ")\nline = comb + 0.5 * past\n" +
                           "output past - comb\noutput 0.5 * (comb | delay(" + d + ") | tanh())\n";
        CAPTURE(text);
        CAPTURE(dtype == DType::f32);
        Options o = options(dtype, 0);
        Program program = Program::from_source(text, o);
        REQUIRE(program.dump("ir-opt").find("loop_read") != std::string::npos);
        // The allpass's `past - comb` runs in its loop's kernel (fuse-loops' dry mix).
        REQUIRE(program.dump("ir-opt").find("dry_mix=true, wet_weight=1, dry_weight=-1}") != std::string::npos);
        Options reference = o;
        reference.target = Target::reference;
        Signal x = noise(channels, 3001, 5);
        std::vector<Signal> want = Program::from_source(text, reference).run(std::vector<Signal>{x});
        if (dtype == DType::f32) x = x.converted(DType::f32);
        std::vector<Signal> got = program.run(std::vector<Signal>{x});
        for (std::size_t k = 0; k < 2; ++k) CHECK(relative(got[k], want[k]) < (dtype == DType::f64 ? 1e-12 : 2e-6));
        for (std::size_t block : {1, 7, 8, 100, 1117}) {
          CAPTURE(block);
          std::vector<Signal> blocks = program.run_in_blocks(std::vector<Signal>{x}, block);
          for (std::size_t k = 0; k < 2; ++k) CHECK(relative(blocks[k], got[k]) == 0);  // the same arithmetic
        }
      }
    }
  }
}

}  // namespace fxc
