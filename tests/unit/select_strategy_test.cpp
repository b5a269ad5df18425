// SPDX-License-Identifier: Apache-2.0
// select_strategy's decisions for the standard workloads (shared/design/performance.md) and
// for edge cases, on a fixed target so the table does not depend on the test machine.
#include <limits>
#include <doctest/doctest.h>

#include "frontend/dsl.h"
#include "design/filter_design.h"
#include "passes/cost_model.h"
#include "passes/pipeline.h"
#include "passes/precision_estimate.h"
#include "test_graphs.h"

namespace fxc {
namespace {

using namespace fxc::literals;

struct Case {
  const char* name;
  int channels;
  double seconds;
  double fs;
  DType dtype;
  int batch;
  passes::TargetKind target;
  ir::IirStrategy strategy;
  ir::FirMethod fir;
  const char* reason;  ///< of the last kernel
  std::size_t kernels = 1;  ///< 2 where split_precision gives float64-state sections a kernel of their own
  int wavefront_max_steps = 33;  ///< thresholds.gpu_wavefront_max_steps
};

// W4's chain: butter HP 80 Hz order 4, butter LP 12 kHz order 8: 6 sections.
ir::Graph w4_chain() {
  Flow x = input("x");
  return make_graph("w4", {output("y", x | butter(4, 80_Hz, highpass) | butter(8, 12_kHz))});
}
// W3's chain: five firwin lowpasses.
ir::Graph w3_chain() {
  Flow x = input("x");
  return make_graph("w3", {output("y", x | firwin(101, {1000}) | firwin(102, {5000}) |
                                           firwin(103, {1500}) | firwin(104, {1800}) |
                                           firwin(105, {1850}))});
}

const ir::Chain& only_chain(const ir::Graph& g) {
  const ir::Chain* found = nullptr;
  for (const ir::Node& n : g.nodes())
    if (auto* c = std::get_if<ir::Chain>(&n.op)) {
      REQUIRE_MESSAGE(found == nullptr, "more than one kernel");
      found = c;
    }
  REQUIRE(found);
  return *found;
}

void check_case(const ir::Graph& graph, const Case& c) {
  CAPTURE(c.name);
  DiagnosticEngine diags;
  passes::PassContext context{diags, {c.fs, c.channels, c.dtype}};
  context.binding.length_samples = static_cast<std::int64_t>(c.seconds * c.fs);
  context.binding.batch = c.batch;
  context.target = {c.target, 32, 2};  // AVX2-class, two cores: the CI machine's shape
  context.thresholds.gpu_wavefront_max_steps = c.wavefront_max_steps;
  auto result = passes::run_pipeline(graph, context);
  REQUIRE_MESSAGE(result, diags.str());
  std::vector<const ir::Chain*> chains;
  for (const ir::Node& n : result->nodes())
    if (auto* chain = std::get_if<ir::Chain>(&n.op)) chains.push_back(chain);
  REQUIRE(chains.size() == c.kernels);
  if (c.kernels == 2) CHECK(chains[0]->state_precision == ir::StatePrecision::f64);
  const ir::Chain& chain = *chains.back();
  CHECK(chain.strategy == c.strategy);
  CHECK(chain.fir_method == c.fir);
  CHECK(chain.reason == c.reason);
}

TEST_CASE("strategies for the standard workloads on a 2-core AVX2 CPU") {
  using S = ir::IirStrategy;
  using F = ir::FirMethod;
  auto cpu = passes::TargetKind::cpu;
  const Case w1[] = {
      // W1's 20 Hz sections lose the signal in float32 state (72 dB SNR; docs/errors.md).
      // Its six highpass sections run in a float64-state kernel of their own, the nine
      // lowpass sections at float32's full width (split_precision).
      {"W1 8 ch f32", 8, 120, 44100, DType::f32, 1, cpu, S::channel_lanes, F::none,
       "8 channels fill 8 f32 lanes", 2},
      {"W1 8 ch f64", 8, 120, 44100, DType::f64, 1, cpu, S::channel_lanes, F::none,
       "8 channels fill 4 f64 lanes"},
      // W1's 20 Hz Chebyshev forgets its state slowly (40687 samples to 1e-10, a float32
      // signal's precision): time chunks must be long, and only long signals pay for them
      // (chunk_decay_ratio 0.35 x 16 lanes^2 x 40687 = 228000 samples), in chunks aimed at
      // 4 lanes x 40687 or more.
      // In time chunks, split too: the nine lowpass sections at float32's width and without the
      // slow sections' fix-up (split_precision).
      {"W1 chain 1 ch 300 s", 1, 300, 44100, DType::f32, 1, cpu, S::chunked_scan, F::none,
       "1 channel, 300 s: time chunks as SIMD lanes, L=66150", 2},
      {"W1 chain 1 ch 5 s", 1, 5, 44100, DType::f32, 1, cpu, S::section_wavefront, F::none,
       "1 channel, 15 sections: section wavefront hides the recurrence latency" "; float64 state (pole radius 0.999434 >= 0.99)"},
      {"W1 chain 2 ch 10 s", 2, 10, 44100, DType::f32, 1, cpu, S::chunked_scan, F::none,
       "2 channels, 10 s: time chunks as SIMD lanes, L=55125", 2},
      {"1 ch 2 s", 1, 2, 44100, DType::f32, 1, cpu, S::section_wavefront, F::none,
       "1 channel, 15 sections: section wavefront hides the recurrence latency" "; float64 state (pole radius 0.999434 >= 0.99)"},
  };
  for (const Case& c : w1) check_case(test::w1_graph(), c);

  const Case w4[] = {
      {"W4 2 ch x 480000", 2, 10, 48000, DType::f32, 1, cpu, S::chunked_scan, F::none,
       "2 channels, 10 s: time chunks as SIMD lanes, L=60000", 2},
      {"W5 1 ch 600 s", 1, 600, 44100, DType::f32, 1, cpu, S::chunked_scan, F::none,
       "1 channel, 600 s: time chunks as SIMD lanes, L=65495" "; float64 state (pole radius 0.995648 >= 0.99)"},
      // 2 of 6 sections near the unit circle: splitting would not pay for its extra pass.
      {"W6 256 x stereo", 2, 1, 48000, DType::f32, 256, cpu, S::channel_lanes, F::none,
       "256 x 2 channels fill 4 f64 lanes" "; float64 state (pole radius 0.996001 >= 0.99)"},
      {"W7 stream 2 ch", 2, 64.0 / 48000, 48000, DType::f32, 1, cpu, S::channel_lanes,
       F::none, "2 channels fill 2 of 4 f64 lanes" "; float64 state (pole radius 0.996001 >= 0.99)"},
      {"4 ch f32", 4, 1, 48000, DType::f32, 1, cpu, S::channel_lanes, F::none,
       "4 channels fill 4 f64 lanes" "; float64 state (pole radius 0.996001 >= 0.99)"},
  };
  for (const Case& c : w4) check_case(w4_chain(), c);

  // A filter that forgets in a few dozen samples: time chunks fill idle lanes from
  // chunked_min_samples (4096), but lanes the channels mostly fill only from
  // chunked_busy_lanes_min_samples (131072), where threads share the work too.
  Flow x = input("x");
  const ir::Graph quick = make_graph("quick", {output("y", x | butter(4, 10_kHz))});
  const Case short_signals[] = {
      {"1 ch 2400 samples", 1, 0.05, 48000, DType::f32, 1, cpu, S::section_wavefront, F::none,
       "1 channel, 2 sections: section wavefront hides the recurrence latency"},
      {"1 ch 4800 samples", 1, 0.1, 48000, DType::f32, 1, cpu, S::chunked_scan, F::none,
       "1 channel, 0.1 s: time chunks as SIMD lanes, L=600"},
      {"4 ch 4800 samples", 4, 0.1, 48000, DType::f32, 1, cpu, S::chunked_scan, F::none,
       "4 channels, 0.1 s: time chunks as SIMD lanes, L=2400"},
      {"6 ch 1 s", 6, 1, 48000, DType::f32, 1, cpu, S::channel_lanes, F::none, "6 channels fill 6 of 8 f32 lanes"},
      {"6 ch 3 s", 6, 3, 48000, DType::f32, 1, cpu, S::chunked_scan, F::none,
       "6 channels, 3 s: time chunks as SIMD lanes, L=36000"},
      {"2 ch f64 4800 samples", 2, 0.1, 48000, DType::f64, 1, cpu, S::chunked_scan, F::none,
       "2 channels, 0.1 s: time chunks as SIMD lanes, L=2400"},
      {"3 ch f64 1 s", 3, 1, 48000, DType::f64, 1, cpu, S::channel_lanes, F::none, "3 channels fill 3 of 4 f64 lanes"},
  };
  for (const Case& c : short_signals) check_case(quick, c);

  const Case w3[] = {
      {"W3 1 ch", 1, 60, 44100, DType::f32, 1, cpu, S::none, F::fft_overlap_save,
       "no IIR stage; FIR 511 taps: FFT overlap-save, block 2048"},
      {"W3 8 ch", 8, 5, 44100, DType::f32, 1, cpu, S::none, F::fft_overlap_save,
       "no IIR stage; FIR 511 taps: FFT overlap-save, block 2048"},
  };
  for (const Case& c : w3) check_case(w3_chain(), c);

  // FIRs and memoryless stages: time lanes, but for float64 short FIRs on channels that fill
  // the lanes (channel lanes, the transposed form; passes::fir_time_lanes).
  const ir::Graph firs = make_graph("firs", {output("y", x | fir(std::vector<double>(15, 1.0 / 15)) | tanh())});
  const Case time_lanes[] = {
      {"15 taps 1 ch f32", 1, 1, 48000, DType::f32, 1, cpu, S::none, F::direct, "no IIR stage; FIR 15 taps: direct, in time lanes (a channel's consecutive samples as one vector)"},
      {"15 taps 8 ch f32", 8, 1, 48000, DType::f32, 1, cpu, S::none, F::direct, "no IIR stage; FIR 15 taps: direct, in time lanes (a channel's consecutive samples as one vector)"},
      {"15 taps 2 ch f64", 2, 1, 48000, DType::f64, 1, cpu, S::none, F::direct, "no IIR stage; FIR 15 taps: direct, in time lanes (a channel's consecutive samples as one vector)"},
      {"15 taps 8 ch f64", 8, 1, 48000, DType::f64, 1, cpu, S::none, F::direct, "no IIR stage; FIR 15 taps: direct"},
  };
  for (const Case& c : time_lanes) check_case(firs, c);

  // A chain whose state is all in registers runs a partial group of lanes as one vector: from
  // two channels (ir::partial_lanes_vectorize). One with a FIR keeps the old rule (half the lanes).
  const ir::Graph eq = make_graph("eq", {output("y", x | butter(4, 1_kHz) | peaking(2_kHz, 1.0, 6_dB) | tanh())});
  const ir::Graph with_fir = make_graph("fir", {output("y", x | butter(4, 1_kHz) | fir({0.5, 0.25, 0.125}))});
  const Case partial[] = {
      {"eq 2 ch f32", 2, 1, 48000, DType::f32, 1, cpu, S::channel_lanes, F::none,
       "2 channels fill 2 of 8 f32 lanes (one vector, the others idle)"},
      {"eq 3 ch f32", 3, 1, 48000, DType::f32, 1, cpu, S::channel_lanes, F::none,
       "3 channels fill 3 of 8 f32 lanes (one vector, the others idle)"},
      {"eq 1 ch f32", 1, 1, 48000, DType::f32, 1, cpu, S::section_wavefront, F::none,
       "1 channel, 3 sections: section wavefront hides the recurrence latency"},
  };
  for (const Case& c : partial) check_case(eq, c);
  check_case(with_fir, {"fir 2 ch f32", 2, 1, 48000, DType::f32, 1, cpu, S::section_wavefront, F::direct,
                        "2 channels, 2 sections: section wavefront hides the recurrence latency; FIR 3 taps: direct"});
}

TEST_CASE("FFT blocks: 4x the taps for long signals, just above the taps and the call for a stream's short blocks") {
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, 2, DType::f32}};
  auto block = [&](std::size_t taps, std::optional<std::int64_t> length) {
    context.binding.length_samples = length;
    return passes::fft_block_for(taps, context);
  };
  // Unknown length, or a whole file: the power of two at least 4x the taps.
  CHECK(block(24001, std::nullopt) == 131072);
  CHECK(block(24001, 2'880'000) == 131072);
  CHECK(block(511, 2'646'000) == 2048);
  CHECK(block(64, std::nullopt) == 256);
  // Calls of a few thousand samples: overlap-save with a block that holds just the taps and
  // the call, one 32768-point FFT pair per call (24001 + 8768 - 1 = 32768) instead of a
  // 131072-point one.
  CHECK(block(24001, 8768) == 32768);
  CHECK(block(24001, 8769) == 32768);  // two blocks of 32768 points still cost less than one of 65536
  CHECK(block(24001, 20000) == 65536);  // one of 65536 against three of 32768
  // Processor's short blocks: a partitioned convolution, a block (2P) not above the taps:
  // the first P taps direct, the rest by 2P-point FFTs, so that a call costs about its length.
  CHECK(block(24001, 4096) == 32768);  // overlap-save still: 4096 outputs a 32768-point pair
  CHECK(block(24001, 1024) == 512);
  CHECK(block(24001, 256) == 512);   // P = 256: 93 FFT partitions, where overlap-save took 32768 points
  CHECK(block(24001, 1) == 512);
  CHECK(block(511, 64) == 64);       // P = 32
  CHECK(block(511, 2048) == 1024);   // overlap-save again for calls of 4x the taps
  CHECK(block(64, 64) == 64);        // 64 taps: 32 direct, 32 in one FFT partition
  // The GPU's blocks are its own rule (cuda_max_fft_length, fir_partitioned).
  context.target = passes::cuda_target();
  CHECK(block(24001, 256) == 4096);
}

TEST_CASE("strategies on a GPU") {
  using S = ir::IirStrategy;
  auto gpu = passes::TargetKind::cuda;
  check_case(test::w1_graph(), {"W1 on GPU", 8, 120, 44100, DType::f32, 1, gpu, S::gpu_chunked_wavefront,
                          ir::FirMethod::none,
                          "8 channels, 120 s: fewer than the GPU's 135168 threads, chunked scan over "
                          "time, L=256; a wavefront of 15 steps in each chunk"
                          "; float64 state for the first 6 of 15 sections (pole radius 0.999434 >= 0.99), float32 after"});
  check_case(test::w1_graph(), {"W1 on GPU, no wavefront", 8, 120, 44100, DType::f32, 1, gpu, S::gpu_chunked_scan,
                          ir::FirMethod::none,
                          "8 channels, 120 s: fewer than the GPU's 135168 threads, chunked scan over "
                          "time, L=256" "; float64 state for the first 6 of 15 sections (pole radius 0.999434 >= 0.99), float32 after",
                          1, 0});
  // 4096 x 1024-sample chunks of 60 s fill an H100 (busy_threads: 132 SMs x 1024).
  check_case(w4_chain(), {"4096 channels on GPU", 4096, 60, 48000, DType::f32, 1, gpu, S::gpu_chunked_wavefront,
                          ir::FirMethod::none,
                          "4096 channels, 60 s: fewer than the GPU's 135168 threads, chunked scan over time, L=1024"
                          "; a wavefront of 6 steps in each chunk"
                          "; float64 state for the first 2 of 6 sections (pole radius 0.996001 >= 0.99), float32 after"});
  // A wavefront holds at most 33 steps (the output pass's ring tile: 32 samples of lag): 34
  // sections run without it, 33 with it.
  auto cascade = [](int sections) {
    Flow y = input("x");
    for (int i = 0; i < sections; ++i) y = y | butter(2, Frequency{500.0 + 300.0 * i});  // a section each
    return make_graph("cascade", {output("y", y)});
  };
  check_case(cascade(34), {"34 sections on GPU", 2, 60, 48000, DType::f64, 1, gpu, S::gpu_chunked_scan,
                           ir::FirMethod::none,
                           "2 channels, 60 s: fewer than the GPU's 135168 threads, chunked scan over time, L=256"});
  check_case(cascade(33), {"33 sections on GPU", 2, 60, 48000, DType::f64, 1, gpu, S::gpu_chunked_wavefront,
                           ir::FirMethod::none,
                           "2 channels, 60 s: fewer than the GPU's 135168 threads, chunked scan over time, L=256"
                           "; a wavefront of 33 steps in each chunk"});
  check_case(w4_chain(), {"256 x 1024 channels on GPU", 1024, 1, 48000, DType::f32, 256, gpu,
                          S::gpu_thread_per_channel, ir::FirMethod::none,
                          "256 x 1024 channels fill the GPU (135168 threads at once): one GPU thread per channel"
                          "; float64 state for the first 2 of 6 sections (pole radius 0.996001 >= 0.99), float32 after"});
}

TEST_CASE("GPU chunk length: the longest of 1024, 512, 256 that keeps the GPU busy") {
  passes::GpuProperties h100;  // 132 SMs x 2048 threads: 135168 busy
  CHECK(passes::choose_gpu_chunk(8, std::nullopt, h100) == 1024);           // a stream
  CHECK(passes::choose_gpu_chunk(8, 5'760'000, h100) == 256);               // W1: 8 x 22500 chunks
  CHECK(passes::choose_gpu_chunk(4096, 2'880'000, h100) == 1024);           // 4096 x 2813
  CHECK(passes::choose_gpu_chunk(32, 2'880'000, h100) == 512);              // 32 x 5625 = 180000
  CHECK(passes::choose_gpu_chunk(64, 1'000'000, h100) == 256);              // 64 x 3907 < 135168 at 256 too
  passes::GpuProperties small{.sms = 24, .threads_per_sm = 1536};           // a consumer part: 18432 busy
  CHECK(passes::choose_gpu_chunk(8, 5'760'000, small) == 1024);
}

TEST_CASE("a GPU with slow float64 takes float32 state wherever the measured error allows") {
  Flow x = input("x", 2);
  // Poles past radius 0.99: float64 state by the radius rule on the CPU and an H100.
  ir::Graph mild = make_graph("m", {output("y", x | butter(2, 100_Hz, highpass))});       // r = 0.9908
  ir::Graph w1 = test::w1_graph();                                                        // r = 0.9994
  auto run = [](const ir::Graph& g, double f64_rate) {
    DiagnosticEngine diags;
    passes::PassContext context{diags, {48000, 2, DType::f32}};
    passes::GpuProperties gpu;
    gpu.f64_rate = f64_rate;
    context.target = passes::cuda_target(gpu);
    auto result = passes::run_pipeline(g, context);
    REQUIRE_MESSAGE(result, diags.str());
    return only_chain(*result);
  };
  auto cascade_error = [&](const ir::Graph& g) {
    std::vector<design::Section> sections;
    for (const ir::Stage& stage : run(g, 0.5).stages)
      if (auto* sos = std::get_if<ir::SosCascade>(&stage)) sections.insert(sections.end(), sos->sections.begin(), sos->sections.end());
    return passes::float32_state_error(sections);
  };
  using P = ir::StatePrecision;
  CHECK(run(mild, 0.5).state_precision == P::f64);  // an H100 (1:2): the radius rule
  CHECK(run(w1, 0.5).state_precision == P::f64);
  for (const ir::Graph* g : {&mild, &w1}) {
    const double error = cascade_error(*g);
    CAPTURE(error);
    const ir::Chain slow = run(*g, 1.0 / 64);  // an L4 or a consumer part
    const bool fits = error <= passes::StrategyThresholds{}.f64_state_error;
    // Where float64 is needed, its arithmetic runs in float pairs there (1:64 <= 1:32).
    CHECK(slow.state_precision == (fits ? P::signal : P::pairs));
    CHECK(slow.reason.find(fits ? "float32 state on a GPU with slow float64 (1:64)" : "float32 would measure") !=
          std::string::npos);
    if (!fits) CHECK(slow.reason.find("its float64 arithmetic in float pairs (float64 at 1:64 here, pairs up to 1:32)") !=
                     std::string::npos);
  }
  CHECK(cascade_error(mild) <= passes::StrategyThresholds{}.f64_state_error);  // so one of the two takes float32
  CHECK(cascade_error(w1) > passes::StrategyThresholds{}.f64_state_error);     // and W1's 20 Hz Chebyshev cannot
}

TEST_CASE("a GPU with slow float64 does a chain's float64 arithmetic in float pairs") {
  Flow x = input("x", 2);
  using P = ir::StatePrecision;
  // f64_rate: the device's; pairs_up_to: gpu_float_pairs_max_f64_rate (nullopt: the default).
  auto run = [](const ir::Graph& g, double f64_rate, std::optional<const char*> pairs_up_to = std::nullopt) {
    DiagnosticEngine diags;
    passes::PassContext context{diags, {48000, 2, DType::f32}};
    passes::GpuProperties gpu;
    gpu.f64_rate = f64_rate;
    context.target = passes::cuda_target(gpu);
    if (pairs_up_to) REQUIRE_FALSE(context.thresholds.set("gpu_float_pairs_max_f64_rate", *pairs_up_to));
    auto result = passes::run_pipeline(g, context);
    REQUIRE_MESSAGE(result, diags.str());
    return only_chain(*result);
  };
  // Sections and a gain that need float64 whatever the device (poles at radius 0.9995).
  ir::Graph close = make_graph("c", {output("y", x | butter(4, 5_Hz) | gain(2.0))});
  CHECK(run(close, 0.5).state_precision == P::f64);          // an H100: float64 at 1:2
  CHECK(run(close, 1.0 / 16).state_precision == P::f64);     // above 1:32: pairs would not pay
  CHECK(run(close, 1.0 / 32).state_precision == P::pairs);   // at the threshold
  const ir::Chain slow = run(close, 1.0 / 64);
  CHECK(slow.state_precision == P::pairs);
  CHECK(slow.reason.find("; its float64 arithmetic in float pairs (float64 at 1:64 here, pairs up to 1:32)") !=
        std::string::npos);
  CHECK(run(close, 1.0 / 64, "0").state_precision == P::f64);  // 0 turns them off
  CHECK(run(close, 0.5, "1").state_precision == P::pairs);     // 1 takes them on any device
  // Sections in float64 first, float32 after (split-precision's mixed): the first stage in pairs.
  ir::Graph mixed = make_graph("m", {output("y", x | butter(2, 8_kHz) | butter(2, 5_Hz) | gain(2.0) | tanh())});
  CHECK(run(mixed, 0.5).state_precision == P::mixed);
  CHECK(run(mixed, 1.0 / 64).state_precision == P::mixed_pairs);
  // A float64 chain with a stage pairs do not cover stays float64, and says why.
  ir::Graph shaped = make_graph("s", {output("y", x | butter(2, 5_Hz) | tanh())});
  const ir::Chain whole = run(shaped, 1.0 / 64);
  CHECK(whole.state_precision == P::f64);
  CHECK(whole.reason.find("; float64, not float pairs: pairs cover sections and gains only") != std::string::npos);
  // A float64 signal has no float64 arithmetic to replace.
  DiagnosticEngine diags;
  passes::PassContext f64{diags, {48000, 2, DType::f64}};
  passes::GpuProperties gpu;
  gpu.f64_rate = 1.0 / 64;
  f64.target = passes::cuda_target(gpu);
  auto result = passes::run_pipeline(close, f64);
  REQUIRE_MESSAGE(result, diags.str());
  CHECK(only_chain(*result).state_precision == P::signal);
}

TEST_CASE("float32 chains keep float64 state where a pole is near the unit circle") {
  Flow x = input("x", 1);
  ir::Graph mild = make_graph("m", {output("y", x | butter(2, 300_Hz, highpass))});
  ir::Graph close = make_graph("c", {output("y", x | butter(2, 100_Hz, highpass))});
  auto precision = [](const ir::Graph& g, DType dtype, const char* threshold) {
    DiagnosticEngine diags;
    passes::PassContext context{diags, {48000, 1, dtype}};
    if (threshold) REQUIRE_FALSE(context.thresholds.set("f64_state_pole_radius", threshold));
    auto result = passes::run_pipeline(g, context);
    REQUIRE_MESSAGE(result, diags.str());
    return only_chain(*result).state_precision;
  };
  using P = ir::StatePrecision;
  CHECK(precision(mild, DType::f32, nullptr) == P::signal);  // pole radius 0.9726
  CHECK(precision(close, DType::f32, nullptr) == P::f64);    // 0.9908
  CHECK(precision(close, DType::f64, nullptr) == P::signal);
  CHECK(precision(close, DType::f32, "2") == P::signal);
  CHECK(precision(mild, DType::f32, "0") == P::f64);
  // Only sections have poles: a FIR or a gain alone never needs it.
  ir::Graph fir_only = make_graph("f", {output("y", x | fir({0.25, 0.5, 0.25}))});
  CHECK(precision(fir_only, DType::f32, "0") == P::signal);
}

TEST_CASE("short FIRs run directly, and thresholds can be overridden") {
  Flow x = input("x", 1);
  ir::Graph g = make_graph("f", {output("y", x | fir({0.25, 0.5, 0.25}) | lowpass(1_kHz))});
  check_case(g, {"short fir", 1, 1, 48000, DType::f32, 1, passes::TargetKind::cpu,
                 ir::IirStrategy::sequential, ir::FirMethod::direct,
                 "1 channel, 1 section: sequential; FIR 3 taps: direct"});

  passes::StrategyThresholds t;
  CHECK_FALSE(t.set("fir_fft_min_taps", "2"));
  CHECK(t.fir_fft_min_taps == 2);
  CHECK_FALSE(t.set("fir_alone_min_taps", "5"));
  CHECK(t.fir_alone_min_taps == 5);
  CHECK(t.set("fir_alone_min_taps", "2.5") ==
        "threshold 'fir_alone_min_taps' needs a whole number from 0 to 2147483647, got '2.5'");
  CHECK(t.set("chunk_length", "0") == "threshold 'chunk_length' needs a whole number from 1 to 2147483647, got '0'");
  CHECK(t.set("chunk_length", "1.5") == "threshold 'chunk_length' needs a whole number from 1 to 2147483647, got '1.5'");
  CHECK(t.set("lane_fil", "1") == "unknown threshold 'lane_fil' (did you mean 'lane_fill'?)");
  // Past what the field holds: a message, not an overflowing conversion.
  CHECK(t.set("gpu_fir_fft_min_taps", "3e9") ==
        "threshold 'gpu_fir_fft_min_taps' needs a whole number from 0 to 2147483647, got '3e9'");
  CHECK_FALSE(t.set("gpu_fir_fft_min_taps", "2147483647"));
  CHECK(t.set("chunked_min_samples", "9.3e18") ==
        "threshold 'chunked_min_samples' needs a whole number from 0 to 9223372036854775807, got '9.3e18'");
  CHECK_FALSE(t.set("chunked_min_samples", "1e18"));
  // The largest the message names is taken (as a double it rounds to 2^63, one past it).
  CHECK_FALSE(t.set("chunked_busy_lanes_min_samples", "9223372036854775807"));
  CHECK(t.chunked_busy_lanes_min_samples == std::numeric_limits<std::int64_t>::max());
  CHECK(t.set("chunked_min_samples", "9223372036854777856").has_value());  // the next double
}

TEST_CASE("float64_state_error: rounding noise where a design's poles crowd together, none elsewhere") {
  auto error_of = [](design::IirSpec spec, double fs) {
    auto sos = design::design_iir(spec, fs);
    REQUIRE(sos.has_value());
    return passes::float64_state_error(*sos);
  };
  using design::IirFamily;
  // A wide 12th-order Chebyshev band-stop: fxc and SciPy both output about 100x the signal's
  // level in rounding noise (checked against 40-digit arithmetic by an outside hunt).
  const double wide = error_of({IirFamily::cheby1, 12, BandType::bandstop, {240, 21600}, 1, 0}, 48000);
  CHECK(wide > 1);
  // An ordinary design keeps float64's digits.
  const double plain = error_of({IirFamily::butter, 4, BandType::highpass, {80}, 0, 0}, 48000);
  CHECK(plain < 1e-11);  // measured 1.0e-13
  CHECK(plain == passes::float64_state_error(*design::design_iir({IirFamily::butter, 4, BandType::highpass, {80}, 0, 0}, 48000)));
}

}  // namespace
}  // namespace fxc
