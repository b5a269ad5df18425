// SPDX-License-Identifier: Apache-2.0
// W7 (design/performance.md): W4's chain, 2 channels, float32, in 64-sample blocks at 48 kHz,
// through the public fxc::Processor (what an embedder calls), the BlockExecutor under it and
// CpuStream in the same run, beside the floor:
// the chain's kernel called alone on the same blocks. One iteration is one block; the inputs
// walk through one second of noise so that blocks differ as in a stream.
//
//   Time        per block (the target for the BlockExecutor: under 0.7 us)
//   x_realtime  the block's audio duration (1333 us) over the time it took
//
//   build/bench/fxc_bench_stream --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>
#include <fxc/fxc.h>

#include <stdexcept>

#include "bench/bench_support.h"
#include "runtime/block_executor.h"
#include "driver/compile_cpu.h"
#include "runtime/cpu_executor.h"
#include "codegen/chain_layout.h"

namespace fxc::bench {
namespace {

constexpr int kChannels = 2;
constexpr std::size_t kSeconds = 48000;

// W7's graph scheduled for `block`-sample calls, as a stream is compiled.
CompiledCpuGraph compile_w7(std::size_t block) {
  StandardChain chain = w4_profile();  // W7 is W4's chain, streamed
  DiagnosticEngine diags;
  CpuCompileRequest request;
  request.sample_rate_hz = chain.fs_hz;
  request.dtype = DType::f32;
  request.length_samples = static_cast<std::int64_t>(block);
  std::optional<CompiledCpuGraph> compiled = compile_for_cpu(chain_graph(chain, kChannels), request, diags);
  if (!compiled) throw std::runtime_error("compile failed: " + diags.str());
  return std::move(*compiled);
}

void report(benchmark::State& state, std::size_t block, const ir::Graph& scheduled) {
  double audio_seconds = static_cast<double>(block) / 48000.0;
  state.counters["x_realtime"] =
      benchmark::Counter(audio_seconds, benchmark::Counter::kIsIterationInvariantRate);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * block * kChannels));
  state.SetLabel(plan_label(scheduled));
}

void w7_block_executor(benchmark::State& state) {
  const auto block = static_cast<std::size_t>(state.range(0));
  CompiledCpuGraph compiled = compile_w7(block);
  auto made = BlockExecutor::create(compiled.scheduled, compiled.kernels, block);
  if (!made) {
    state.SkipWithError(made.error().c_str());
    return;
  }
  BlockExecutor& executor = *made;
  std::vector<Signal> input = noise(kChannels, kSeconds + block, DType::f32);
  Signal output(kChannels, block, DType::f32);
  const void* in[kChannels];
  void* out[kChannels] = {output.f32(0).data(), output.f32(1).data()};
  const void* const* inputs[] = {in};
  void* const* outputs[] = {out};
  std::size_t at = 0;
  for (auto _ : state) {
    for (int c = 0; c < kChannels; ++c) in[c] = input[0].f32(c).data() + at;
    executor.process(inputs, outputs, block);
    benchmark::ClobberMemory();
    at = at + block >= kSeconds ? 0 : at + block;
  }
  report(state, block, compiled.scheduled);
}

// The same chain through the public API, as a plugin calls it: planar float pointers, one
// Processor prepared for the block length. A parameter is live (the low cut), so the chain
// is compiled to take new values without recompiling, as a user's would be.
void w7_processor(benchmark::State& state) {
  const auto block = static_cast<std::size_t>(state.range(0));
  fxc::Options o;
  o.sample_rate_hz = 48000;
  o.dtype = fxc::DType::f32;
  o.max_block = block;
  o.cache_directory = "none";
  fxc::Program program = fxc::Program::from_source(
      "input x : 2\n"
      "fc = 80 Hz in [20 Hz, 200 Hz]\n"
      "output y = x | butter(4, fc, highpass) | butter(8, 12 kHz)\n",
      o);
  fxc::Processor live = program.processor();
  std::vector<Signal> input = noise(kChannels, kSeconds + block, DType::f32);
  std::vector<float> left(block), right(block);
  const float* in[kChannels];
  float* out[kChannels] = {left.data(), right.data()};
  std::size_t at = 0;
  for (auto _ : state) {
    for (int c = 0; c < kChannels; ++c) in[c] = input[0].f32(c).data() + at;
    live.process(in, out, block);
    benchmark::ClobberMemory();
    at = at + block >= kSeconds ? 0 : at + block;
  }
  double audio_seconds = static_cast<double>(block) / 48000.0;
  state.counters["x_realtime"] = benchmark::Counter(audio_seconds, benchmark::Counter::kIsIterationInvariantRate);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * block * kChannels));
}

void w7_cpu_stream(benchmark::State& state) {
  const auto block = static_cast<std::size_t>(state.range(0));
  CompiledCpuGraph compiled = compile_w7(block);
  CpuStream stream(compiled.scheduled, compiled.kernels);
  std::vector<Signal> input = noise(kChannels, kSeconds, DType::f32);
  std::vector<std::vector<Signal>> blocks;
  for (std::size_t start = 0; start + block <= kSeconds; start += block) {
    Signal b(kChannels, block, DType::f32);
    for (int c = 0; c < kChannels; ++c)
      std::copy_n(input[0].f32(c).begin() + static_cast<std::ptrdiff_t>(start), block, b.f32(c).begin());
    blocks.push_back({std::move(b)});
  }
  std::size_t at = 0;
  for (auto _ : state) {
    auto out = stream.process(blocks[at]);
    benchmark::DoNotOptimize(out);
    at = at + 1 == blocks.size() ? 0 : at + 1;
  }
  report(state, block, compiled.scheduled);
}

// The floor: the fused chain's kernel alone, with its arguments made once.
template <class C>
void run_kernel_alone(benchmark::State& state, const CompiledCpuGraph& compiled, ir::NodeId id, std::size_t block) {
  const auto& chain = std::get<ir::Chain>(compiled.scheduled.node(id).op);
  FxcChainKernel kernel = compiled.kernels->kernel(id);
  codegen::ChainValues values = codegen::values_of(chain);
  std::vector<C> params(values.params.begin(), values.params.end());
  std::vector<C> memory(kChannels * static_cast<std::size_t>(codegen::layout_of(chain).state_per_channel), C(0));
  std::vector<Signal> input = noise(kChannels, kSeconds + block, DType::f32);
  Signal output(kChannels, block, DType::f32);
  const void* in[kChannels];
  void* out[kChannels] = {output.f32(0).data(), output.f32(1).data()};
  FxcChainArgs args{in, out, kChannels, static_cast<std::int64_t>(block), params.data(), nullptr, memory.data(),
                    nullptr, nullptr};
  std::size_t at = 0;
  for (auto _ : state) {
    for (int c = 0; c < kChannels; ++c) in[c] = input[0].f32(c).data() + at;
    kernel(&args);
    benchmark::ClobberMemory();
    at = at + block >= kSeconds ? 0 : at + block;
  }
}

void w7_kernel_alone(benchmark::State& state) {
  const auto block = static_cast<std::size_t>(state.range(0));
  CompiledCpuGraph compiled = compile_w7(block);
  for (ir::NodeId id = 0; id < compiled.scheduled.size(); ++id)
    if (const auto* chain = std::get_if<ir::Chain>(&compiled.scheduled.node(id).op)) {
      if (codegen::compute_dtype(*chain, DType::f32) == DType::f64) run_kernel_alone<double>(state, compiled, id, block);
      else run_kernel_alone<float>(state, compiled, id, block);
    }
  report(state, block, compiled.scheduled);
}

BENCHMARK(w7_kernel_alone)->ArgName("block")->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(w7_processor)->ArgName("block")->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(w7_block_executor)->ArgName("block")->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(w7_cpu_stream)->ArgName("block")->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace fxc::bench
