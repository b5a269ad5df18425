// SPDX-License-Identifier: Apache-2.0
// Compile-time benchmarks (design/performance.md, "compile"): the pass pipeline and a cold
// compile (pipeline, LLVM code generation and loading) on graphs of 10, 100 and 1000 nodes,
// to check that compile time grows linearly with the graph; and the standard chains' cold
// compile, disk-cache hit and memory-cache hit against their targets (30 ms, 1 ms, 10 us).
//
// The growing graphs are long chains with fan-outs (bench_support.h, fan_out_chain): every
// block's first stage feeds two users, so each block is two kernels and a sum after fusion.
// BM_pass/<name> times each pass of the default pipeline alone, on the graph the passes before
// it produced, and BM_verify the IR verifier the pipeline runs after every pass: which part
// stops being linear, when the whole does.
//
//   per_node   time per graph node (seconds; constant across sizes when compile is linear)
//   nodes      nodes in the graph; kernels: chain kernels after the pipeline (not per pass)
//
//   build/bench/fxc_bench_passes --benchmark_min_time=0.1
#include <benchmark/benchmark.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <variant>

#include "bench/bench_support.h"
#include "ir/verify.h"
#include "passes/pipeline.h"
#include "driver/compile_cpu.h"
#include "driver/kernel_cache.h"

namespace fxc::bench {
namespace {

CpuCompileRequest request_for(double fs_hz, std::int64_t length) {
  CpuCompileRequest request;
  request.sample_rate_hz = fs_hz;
  request.dtype = DType::f32;
  request.length_samples = length;
  return request;
}

int chain_kernels(const ir::Graph& scheduled) {
  int n = 0;
  for (const ir::Node& node : scheduled.nodes()) n += std::holds_alternative<ir::Chain>(node.op);
  return n;
}

// LLVM's one-time set-up (targets, the JIT) is not part of any graph's compile time.
void warm_up_llvm_once() {
  static bool done = [] {
    DiagnosticEngine diags;
    auto compiled = compile_for_cpu(fan_out_chain(6), request_for(48000, 48000), diags);
    if (!compiled) throw std::runtime_error("warm-up compile failed: " + diags.str());
    clear_memory_cache();
    return true;
  }();
  (void)done;
}

void set_node_counters(benchmark::State& state, int nodes, int kernels) {
  state.counters["nodes"] = nodes;
  if (kernels >= 0) state.counters["kernels"] = kernels;
  state.counters["per_node"] = benchmark::Counter(
      nodes, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The default pass pipeline (verifying after every pass), no code generation.
void BM_pipeline(benchmark::State& state) {
  int nodes = static_cast<int>(state.range(0));
  ir::Graph graph = fan_out_chain(nodes);
  DiagnosticEngine diags;
  int kernels = 0;
  for (auto _ : state) {
    passes::PassContext context{diags, {48000.0, 2, DType::f32}};
    context.binding.length_samples = 48000;
    std::optional<ir::Graph> scheduled = passes::run_pipeline(graph, context);
    if (!scheduled) {
      state.SkipWithError(("pipeline failed: " + diags.str()).c_str());
      return;
    }
    kernels = chain_kernels(*scheduled);
    benchmark::DoNotOptimize(scheduled);
  }
  set_node_counters(state, nodes, kernels);
}

// Nothing cached: the pipeline, then LLVM compiles every kernel and loads the object.
void BM_cold_compile(benchmark::State& state) {
  int nodes = static_cast<int>(state.range(0));
  ir::Graph graph = fan_out_chain(nodes);
  warm_up_llvm_once();
  CpuCompileRequest request = request_for(48000, 48000);
  DiagnosticEngine diags;
  int kernels = 0;
  for (auto _ : state) {
    clear_memory_cache();
    std::optional<CompiledCpuGraph> compiled = compile_for_cpu(graph, request, diags);
    if (!compiled) {
      state.SkipWithError(("compile failed: " + diags.str()).c_str());
      return;
    }
    kernels = chain_kernels(compiled->scheduled);
    benchmark::DoNotOptimize(compiled);
  }
  set_node_counters(state, nodes, kernels);
}

// One pass alone, on the graph the passes before it in the default pipeline produced.
void BM_pass(benchmark::State& state, std::size_t index) {
  int nodes = static_cast<int>(state.range(0));
  auto passes = passes::all_passes();
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, 2, DType::f32}};
  context.binding.length_samples = 48000;
  passes::PipelineOptions before;
  for (std::size_t i = 0; i < index; ++i) before.passes.emplace_back(passes[i].name);
  std::optional<ir::Graph> graph = fan_out_chain(nodes);
  if (index > 0) graph = passes::run_pipeline(*graph, context, before);
  if (!graph) {
    state.SkipWithError(("pipeline failed: " + diags.str()).c_str());
    return;
  }
  for (auto _ : state) {
    ir::Graph next = passes[index].run(*graph, context);
    benchmark::DoNotOptimize(next);
  }
  set_node_counters(state, nodes, -1);
}

// The verifier the pipeline runs after every pass, on the scheduled graph.
void BM_verify(benchmark::State& state) {
  int nodes = static_cast<int>(state.range(0));
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, 2, DType::f32}};
  context.binding.length_samples = 48000;
  std::optional<ir::Graph> scheduled = passes::run_pipeline(fan_out_chain(nodes), context);
  if (!scheduled) {
    state.SkipWithError(("pipeline failed: " + diags.str()).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(ir::verify(*scheduled, diags));
  set_node_counters(state, nodes, chain_kernels(*scheduled));
}

BENCHMARK(BM_pipeline)->ArgName("nodes")->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cold_compile)->ArgName("nodes")->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_verify)->ArgName("nodes")->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The standard chains as `fxc bench` compiles them (bound to a channel count and a length).
enum class CacheLevel { cold, disk_hit, memory_hit };

void standard_compile(benchmark::State& state, StandardChain (*make)(), int channels, CacheLevel level) {
  StandardChain chain = make();
  ir::Graph graph = chain_graph(chain, channels);
  warm_up_llvm_once();
  CpuCompileRequest request = request_for(chain.fs_hz, static_cast<std::int64_t>(10 * chain.fs_hz));
  std::filesystem::path dir;
  if (level == CacheLevel::disk_hit) {
    dir = std::filesystem::temp_directory_path() / ("fxc-bench-passes-" + std::to_string(getpid()));
    request.cache_directory = dir.string();
  }
  DiagnosticEngine diags;
  clear_memory_cache();
  if (!compile_for_cpu(graph, request, diags)) {  // fills the caches the hits read
    state.SkipWithError(("compile failed: " + diags.str()).c_str());
    return;
  }
  for (auto _ : state) {
    if (level != CacheLevel::memory_hit) clear_memory_cache();
    auto compiled = compile_for_cpu(graph, request, diags);
    benchmark::DoNotOptimize(compiled);
  }
  if (!dir.empty()) std::filesystem::remove_all(dir);
  state.counters["nodes"] = static_cast<double>(graph.size());
}

BENCHMARK_CAPTURE(standard_compile, w1_8ch_cold, &w1_api, 8, CacheLevel::cold)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(standard_compile, w1_8ch_disk_hit, &w1_api, 8, CacheLevel::disk_hit)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(standard_compile, w1_8ch_memory_hit, &w1_api, 8, CacheLevel::memory_hit)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(standard_compile, w4_2ch_cold, &w4_profile, 2, CacheLevel::cold)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(standard_compile, w3_1ch_cold, &w3_fir, 1, CacheLevel::cold)->Unit(benchmark::kMillisecond)->UseRealTime();

void register_pass_benchmarks() {
  auto passes = passes::all_passes();
  for (std::size_t i = 0; i < passes.size(); ++i)
    benchmark::RegisterBenchmark(("BM_pass/" + std::string(passes[i].name)).c_str(), BM_pass, i)
        ->ArgName("nodes")->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond)->UseRealTime();
}

}  // namespace
}  // namespace fxc::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  fxc::bench::register_pass_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
