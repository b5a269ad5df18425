// SPDX-License-Identifier: Apache-2.0
// The public API timed as an embedder calls it (design/performance.md's "measure what users
// get"): a Program compiled once from the workload's .fx file, then timed over whole signals,
// page faults, allocation and copies included.
//
//   w2_owning     W2 (8 ch x 60 s at 44.1 kHz, float32): Program::run(Signal), a new output
//                 signal per call
//   w2_planar     the same into the caller's buffers (Program::run on planar pointers)
//   w1_owning     W1 (8 ch x 120 s at 44.1 kHz, 15 sections), owning
//   w1_planar     W1 into the caller's buffers
//   w6_batch      W6 (256 x 1 s stereo at 48 kHz): one Program::run_batch
//   w6_separate   the same 256 signals as 256 Program::run calls
//   w5_run_length W5 (1 ch x 60 s at 44.1 kHz): a Program without Options::signal_length,
//                 which schedules each run for its length (since 2026-12-02: the chunked scan)
//   w5_no_length  the same scheduled for no long signal (signal_length 1), as every Program
//                 without a signal_length was before (the same as no length for a graph
//                 without FIRs, whose FFT block a length would choose)
//   program_memory_hit  W1's Program made again from the same text and options
//   page_faults   minor page faults per call (getrusage)
//
//   build/bench/fxc_bench_api --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>
#include <fxc/fxc.h>

#include <sys/resource.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>

namespace {

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

fxc::Program compile(const char* workload, double rate, int channels, std::size_t signal_length = 0) {
  fxc::Options o;
  o.sample_rate_hz = rate;
  o.dtype = fxc::DType::f32;
  o.channels = channels;
  o.signal_length = signal_length;
  o.cache_directory = "none";
  return fxc::Program::from_file(std::string(FXC_WORKLOAD_DIR) + "/" + workload, o);
}

fxc::Signal noise(std::size_t channels, std::size_t samples, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  fxc::Signal s(channels, samples, fxc::DType::f32, fxc::Signal::Uninitialized{});
  for (std::size_t c = 0; c < channels; ++c)
    for (float& v : s.f32(c)) v = u(rng);
  return s;
}

void finish(benchmark::State& state, long faults, std::size_t samples_per_call) {
  state.counters["page_faults"] =
      benchmark::Counter(static_cast<double>(faults), benchmark::Counter::kAvgIterations);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * samples_per_call));
}

void whole_owning(benchmark::State& state, const char* workload, double seconds, int channels = 8,
                  std::size_t signal_length = 0) {
  fxc::Program program = compile(workload, 44100, channels, signal_length);
  fxc::Signal x = noise(static_cast<std::size_t>(channels), static_cast<std::size_t>(seconds * 44100), 1);
  benchmark::DoNotOptimize(program.run(x));  // compiles for this length, faults memory in
  long faults = 0;
  for (auto _ : state) {
    long before = minor_faults();
    fxc::Signal y = program.run(x);
    benchmark::DoNotOptimize(y.f32(0).data());
    faults += minor_faults() - before;
  }
  finish(state, faults, x.channels() * x.samples());
}

void whole_planar(benchmark::State& state, const char* workload, double seconds) {
  fxc::Program program = compile(workload, 44100, 8);
  fxc::Signal x = noise(8, static_cast<std::size_t>(seconds * 44100), 1);
  fxc::Signal y(8, x.samples(), fxc::DType::f32);
  const float* in[8];
  float* out[8];
  for (int c = 0; c < 8; ++c) {
    in[c] = x.f32(c).data();
    out[c] = y.f32(c).data();
  }
  program.run(in, out, x.samples());
  long faults = 0;
  for (auto _ : state) {
    long before = minor_faults();
    program.run(in, out, x.samples());
    benchmark::ClobberMemory();
    faults += minor_faults() - before;
  }
  finish(state, faults, x.channels() * x.samples());
}

void w2_owning(benchmark::State& state) { whole_owning(state, "w2_iir.fx", 60); }
void w2_planar(benchmark::State& state) { whole_planar(state, "w2_iir.fx", 60); }
void w1_owning(benchmark::State& state) { whole_owning(state, "w1_api.fx", 120); }
void w1_planar(benchmark::State& state) { whole_planar(state, "w1_api.fx", 120); }
void w5_run_length(benchmark::State& state) { whole_owning(state, "w5_long_mono.fx", 60, 1, 0); }
void w5_no_length(benchmark::State& state) { whole_owning(state, "w5_long_mono.fx", 60, 1, 1); }

std::vector<std::vector<fxc::Signal>> w6_items() {
  std::vector<std::vector<fxc::Signal>> items;
  for (unsigned k = 0; k < 256; ++k) items.push_back({noise(2, 48000, k)});
  return items;
}

void w6_batch(benchmark::State& state) {
  fxc::Program program = compile("w6_many_files.fx", 48000, 2);
  auto items = w6_items();
  benchmark::DoNotOptimize(program.run_batch(items));
  long faults = 0;
  for (auto _ : state) {
    long before = minor_faults();
    auto out = program.run_batch(items);
    benchmark::DoNotOptimize(out.data());
    faults += minor_faults() - before;
  }
  finish(state, faults, 256 * 2 * 48000);
}

void w6_separate(benchmark::State& state) {
  fxc::Program program = compile("w6_many_files.fx", 48000, 2);
  auto items = w6_items();
  benchmark::DoNotOptimize(program.run(items[0]));
  long faults = 0;
  for (auto _ : state) {
    long before = minor_faults();
    for (const auto& item : items) {
      auto out = program.run(item);
      benchmark::DoNotOptimize(out.data());
    }
    faults += minor_faults() - before;
  }
  finish(state, faults, 256 * 2 * 48000);
}

// Making W1's Program again from the same text and options: a copy of the first (the
// process's Program cache), the compile-time target's "memory hit".
void program_memory_hit(benchmark::State& state) {
  std::ifstream in(std::string(FXC_WORKLOAD_DIR) + "/w1_api.fx");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fxc::Options o;
  o.sample_rate_hz = 44100;
  o.dtype = fxc::DType::f32;
  o.channels = 8;
  o.cache_directory = "none";
  (void)fxc::Program::from_source(text, o, "w1_api.fx");
  for (auto _ : state) benchmark::DoNotOptimize(fxc::Program::from_source(text, o, "w1_api.fx"));
}

BENCHMARK(program_memory_hit)->Unit(benchmark::kMicrosecond);
BENCHMARK(w2_owning)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(w2_planar)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(w1_owning)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(w1_planar)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(w5_run_length)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(w5_no_length)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(w6_batch)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(w6_separate)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
