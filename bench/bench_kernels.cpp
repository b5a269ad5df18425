// SPDX-License-Identifier: Apache-2.0
// Compiled CPU kernels on the standard chains (design/performance.md), through the real
// pipeline: compile_for_cpu (passes, then the kernel cache) outside the timed loop, then
// execute_cpu in it, exactly as `fxc bench` and `fxc run` do.
//
//   items_per_second  section-samples/s (IIR chains: channels x samples x biquad sections of the
//                     designs) or tap-samples/s (W3: channels x samples x the 515 taps of the
//                     five FIRs as written, the work of running them directly, one by one)
//   samples/s         channel-samples/s, comparable with `fxc bench`
//   max_err           largest |error| against the float64 reference interpreter on the same
//                     inputs (computed once per configuration, outside the timed loop)
//   dispatches        kernel calls per run (1: the whole chain is one fused kernel)
// The label is the plan select_strategy chose for the length and channel count. Times are
// wall-clock (chunked_scan runs its chunks on up to one thread per core); the CPU column is
// the whole process's, so CPU > Time means more than one core was busy.
//
// real_fft_f32 and real_fft_f64 time fxc's FFT alone (runtime/real_fft.h), a forward and an
// inverse transform of n real points per iteration: the FFT FIRs' (W3's) inner work.
//
//   build/bench/fxc_bench_kernels --benchmark_min_time=0.1
//   build/bench/fxc_bench_kernels --benchmark_filter='w1_f32' --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <complex>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include "bench/bench_support.h"
#include "driver/compile_cpu.h"
#include "runtime/counters.h"
#include "runtime/cpu_executor.h"
#include "runtime/real_fft.h"
#include "runtime/reference_interpreter.h"

namespace fxc::bench {
namespace {

struct Prepared {
  std::tuple<std::string, int, std::size_t, DType> key;
  CompiledCpuGraph compiled;
  std::vector<Signal> inputs;
  double max_error = 0;
  std::uint64_t dispatches = 0;
  std::string label;
};

// Google Benchmark calls a benchmark function several times (growing the iteration count);
// the configuration of the last call is kept so that compiling and the reference run happen
// once per configuration. One at a time: the W1 16-channel inputs alone are 28 MB.
const Prepared& prepare(const StandardChain& chain, int channels, std::size_t samples, DType dtype) {
  static std::unique_ptr<Prepared> last;
  auto key = std::make_tuple(chain.name, channels, samples, dtype);
  if (last && last->key == key) return *last;
  last.reset();
  auto p = std::make_unique<Prepared>();
  p->key = key;
  ir::Graph graph = chain_graph(chain, channels);
  DiagnosticEngine diags;
  CpuCompileRequest request;
  request.sample_rate_hz = chain.fs_hz;
  request.dtype = dtype;
  request.length_samples = static_cast<std::int64_t>(samples);
  std::optional<CompiledCpuGraph> compiled = compile_for_cpu(graph, request, diags);
  if (!compiled) throw std::runtime_error("compile failed: " + diags.str());
  p->compiled = std::move(*compiled);
  p->inputs = noise(channels, samples, dtype);
  p->label = plan_label(p->compiled.scheduled);

  auto before = counters().dispatches.load();
  auto got = execute_cpu(p->compiled.scheduled, *p->compiled.kernels, p->inputs);
  if (!got) throw std::runtime_error("execute failed: " + got.error());
  p->dispatches = counters().dispatches.load() - before;
  auto want = run_reference(graph, chain.fs_hz, p->inputs, diags);
  if (!want) throw std::runtime_error("reference failed: " + diags.str());
  p->max_error = max_abs_error(*got, *want);
  last = std::move(p);
  return *last;
}

void run_chain(benchmark::State& state, StandardChain (*make)(), DType dtype) {
  StandardChain chain = make();
  int channels = static_cast<int>(state.range(0));
  auto samples = static_cast<std::size_t>(state.range(1));
  const Prepared* p = nullptr;
  try {
    p = &prepare(chain, channels, samples, dtype);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) {
    auto out = execute_cpu(p->compiled.scheduled, *p->compiled.kernels, p->inputs);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  double channel_samples = static_cast<double>(channels) * static_cast<double>(samples);
  double work = chain.sections ? chain.sections : chain.taps;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * channel_samples * work));
  state.counters["samples/s"] = benchmark::Counter(channel_samples, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["max_err"] = p->max_error;
  state.counters["dispatches"] = static_cast<double>(p->dispatches);
  state.SetLabel(p->label);
}

constexpr std::int64_t kW1Samples = 441000;   // 10 s at 44.1 kHz
constexpr std::int64_t kW3Samples = 220500;   // 5 s at 44.1 kHz, W3's shortest signal

void w1_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"ch", "n"})->ArgsProduct({{1, 2, 8, 16}, {kW1Samples}});
}
void w4_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"ch", "n"})->ArgsProduct({{1, 2}, {4096, 48000, 480000}});
}
void w3_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"ch", "n"})->ArgsProduct({{1, 8}, {kW3Samples}});
}

template <class T>
void real_fft(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  RealFft<T> fft(n);
  std::vector<T> x(n);
  for (std::size_t j = 0; j < n; ++j) x[j] = static_cast<T>((j * 7919 % 1000) / 500.0 - 1.0);
  std::vector<std::complex<T>> spectrum(fft.bins());
  for (auto _ : state) {
    fft.forward(x, spectrum);
    fft.inverse(spectrum, x);
    benchmark::DoNotOptimize(x.data());
    for (T& v : x) v /= static_cast<T>(n);  // unnormalized: keep the signal's scale
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

BENCHMARK_TEMPLATE(real_fft, float)->Name("real_fft_f32")->RangeMultiplier(2)->Range(256, 8192);
BENCHMARK_TEMPLATE(real_fft, double)->Name("real_fft_f64")->RangeMultiplier(2)->Range(256, 8192);

BENCHMARK_CAPTURE(run_chain, w1_f32, &w1_api, DType::f32)->Apply(w1_args)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(run_chain, w1_f64, &w1_api, DType::f64)->Apply(w1_args)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(run_chain, w4_f32, &w4_profile, DType::f32)->Apply(w4_args)->Unit(benchmark::kMicrosecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(run_chain, w4_f64, &w4_profile, DType::f64)->Apply(w4_args)->Unit(benchmark::kMicrosecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(run_chain, w3_f32, &w3_fir, DType::f32)->Apply(w3_args)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(run_chain, w3_f64, &w3_fir, DType::f64)->Apply(w3_args)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

}  // namespace
}  // namespace fxc::bench
