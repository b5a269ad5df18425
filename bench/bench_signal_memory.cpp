// SPDX-License-Identifier: Apache-2.0
// What fresh memory costs a whole-signal run, in the same run:
//   W2 (design/performance.md: 8 ch x 60 s at 44.1 kHz, float32, one fused chain), and
//   a fan-out graph (bench_support's fan_out_chain(34): 8 blocks of a | peaking, a + 0.5 x
//   (a | butter), whose intermediates share block buffers; 8 ch x 10 s at 48 kHz),
// each through execute_cpu (new output signals per run) under every signal-memory policy
// (runtime/signal_memory.h), and through execute_cpu_into (the caller's output buffers,
// allocated once).
//
//   policy 0 "heap"       every block from malloc (glibc maps blocks above 32 MiB afresh)
//   policy 1 "map 4K"     fresh mappings, no huge pages, nothing kept
//   policy 2 "map huge"   fresh mappings with MADV_HUGEPAGE, nothing kept
//   policy 3 "keep"       huge pages, and freed blocks kept for the next run (the default)
//   page_faults           minor page faults per run (getrusage)
//   buffers               intermediate buffers of the plan (slots), against kernels
//
//   build/bench/fxc_bench_memory --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <stdexcept>

#include "bench/bench_support.h"
#include "driver/compile_cpu.h"
#include "runtime/cpu_executor.h"
#include "runtime/execution_plan.h"
#include "runtime/signal_memory.h"

namespace fxc::bench {
namespace {

constexpr int kChannels = 8;

struct Workload {
  CompiledCpuGraph compiled;
  std::vector<Signal> inputs;
  std::size_t samples;
  double buffers, kernels;
};

Workload make_workload(const ir::Graph& graph, double fs_hz, std::size_t samples) {
  DiagnosticEngine diags;
  CpuCompileRequest request;
  request.sample_rate_hz = fs_hz;
  request.dtype = DType::f32;
  request.length_samples = static_cast<std::int64_t>(samples);
  auto compiled = compile_for_cpu(graph, request, diags);
  if (!compiled) throw std::runtime_error("compile failed: " + diags.str());
  auto plan = plan_execution(compiled->scheduled, *compiled->kernels);
  if (!plan) throw std::runtime_error(plan.error());
  Workload w{std::move(*compiled), noise(kChannels, samples, DType::f32), samples,
             static_cast<double>(plan->slot_channels.size()), static_cast<double>(plan->steps.size())};
  return w;
}

const Workload& workload(int which) {
  static const Workload w2 = make_workload(chain_graph(w2_iir(), kChannels), 44100, 60 * 44100);
  static const Workload fan_out = make_workload(fan_out_chain(34, kChannels), 48000, 10 * 48000);
  return which == 0 ? w2 : fan_out;
}

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

void finish(benchmark::State& state, const Workload& w, long faults_before) {
  state.counters["page_faults"] = benchmark::Counter(static_cast<double>(minor_faults() - faults_before),
                                                     benchmark::Counter::kAvgIterations);
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(kChannels) * static_cast<double>(w.samples),
                                                   benchmark::Counter::kIsIterationInvariantRate);
  state.counters["buffers"] = w.buffers;
  state.counters["kernels"] = w.kernels;
  state.SetLabel(plan_label(w.compiled.scheduled));
}

void execute(benchmark::State& state, int which) {
  const Workload& w = workload(which);
  SignalMemoryPolicy saved = signal_memory_policy();
  SignalMemoryPolicy policy;
  switch (state.range(0)) {
    case 0: policy.map = false; break;
    case 1: policy.huge_pages = false; policy.keep_bytes = 0; break;
    case 2: policy.keep_bytes = 0; break;
    default: break;
  }
  set_signal_memory_policy(policy);
  (void)execute_cpu(w.compiled.scheduled, *w.compiled.kernels, w.inputs);  // as a previous run would
  long faults = minor_faults();
  for (auto _ : state) {
    auto out = execute_cpu(w.compiled.scheduled, *w.compiled.kernels, w.inputs);
    benchmark::DoNotOptimize(out);
  }
  finish(state, w, faults);
  set_signal_memory_policy(saved);
}

void execute_into(benchmark::State& state, int which) {
  const Workload& w = workload(which);
  Signal output(kChannels, w.samples, DType::f32);
  std::vector<const void*> in;
  std::vector<void*> out;
  for (int c = 0; c < kChannels; ++c) {
    in.push_back(w.inputs[0].f32(c).data());
    out.push_back(output.f32(c).data());
  }
  const void* const* inputs[] = {in.data()};
  void* const* outputs[] = {out.data()};
  (void)execute_cpu_into(w.compiled.scheduled, *w.compiled.kernels, inputs, outputs, w.samples);
  long faults = minor_faults();
  for (auto _ : state) {
    auto done = execute_cpu_into(w.compiled.scheduled, *w.compiled.kernels, inputs, outputs, w.samples);
    benchmark::DoNotOptimize(done);
  }
  finish(state, w, faults);
}

BENCHMARK_CAPTURE(execute, w2, 0)->ArgName("policy")->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(execute_into, w2, 0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(execute, fan_out, 1)->ArgName("policy")->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(execute_into, fan_out, 1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace fxc::bench
