// SPDX-License-Identifier: Apache-2.0
// fxc bench: throughput of a graph on generated noise, its compile times, its accuracy
// against the float64 reference, and the same graph with fusion disabled.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <unistd.h>

#include "runtime/batch.h"
#include "runtime/bind_inputs.h"
#include "runtime/compile_cpu.h"
#include "runtime/counters.h"
#include "runtime/cpu_executor.h"
#include "runtime/cuda_executor.h"
#include "runtime/kernel_cache.h"
#include "runtime/reference_interpreter.h"
#include "support/float_format.h"
#include "tools/fxc/commands.h"

namespace fxc::cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The longest signal bench generates, per channel: 2^31 samples (12 hours at 48 kHz).
constexpr std::int64_t kMaxSamples = std::int64_t{1} << 31;

struct BenchOptions {
  std::string graph;
  int channels = 2;
  double seconds = 10;
  double fs_hz = 48000;
  std::string target = "cpu";
  std::string dtype = "f32";
  int repeat = 5;
  bool json = false;
  bool check = true;
  int batch = 1;
  std::optional<int> block;
  bool time_passes = false;
  std::vector<std::string> thresholds;  // --threshold NAME=VALUE
};

// Float32 white noise in [-1, 1] for each graph input (its declared channels, else
// `channels`), `samples` long, continuing `rng`: the workloads' signal (performance.md).
std::vector<Signal> noise_inputs(const ir::Graph& graph, int channels, std::size_t samples,
                                 std::mt19937& rng) {
  std::uniform_real_distribution<float> noise(-1.0f, 1.0f);
  std::vector<Signal> inputs;
  for (ir::NodeId id : graph.inputs()) {
    int declared = graph.node(id).type.channels;
    Signal s(declared ? declared : channels, samples, DType::f32);
    for (std::size_t c = 0; c < s.channels(); ++c)
      for (float& v : s.f32(c)) v = noise(rng);
    inputs.push_back(std::move(s));
  }
  return inputs;
}

// The fields every compile request of a benchmark shares.
template <class Request>
Request request_for(const BenchOptions& o) {
  Request request;
  request.thresholds = thresholds_from(o.thresholds);
  request.sample_rate_hz = o.fs_hz;
  request.dtype = *parse_dtype(o.dtype);
  return request;
}

// The --batch items: noise, `samples` long each.
std::vector<BatchItem> noise_items(const ir::Graph& graph, const BenchOptions& o, std::size_t samples) {
  std::mt19937 rng(1234);
  std::vector<BatchItem> items(o.batch);
  for (BatchItem& item : items) item = noise_inputs(graph, o.channels, samples, rng);
  return items;
}

// W7: the cost of one block through CpuStream::process, against the same samples as one call.
int bench_stream(const BenchOptions& o, const ir::Graph& graph, DiagnosticEngine& diags) {
  std::size_t block = static_cast<std::size_t>(*o.block);
  std::size_t blocks = std::max<std::size_t>(1, static_cast<std::size_t>(o.seconds * o.fs_hz) / block);
  std::mt19937 rng(1234);
  std::vector<std::vector<Signal>> chunks(blocks);
  for (auto& chunk : chunks) chunk = noise_inputs(graph, o.channels, block, rng);
  auto bound = bind_inputs(graph, chunks[0], diags);
  if (!bound) return report(diags);
  auto request = request_for<CpuCompileRequest>(o);
  request.length_samples = static_cast<std::int64_t>(block);
  auto compiled = compile_for_cpu(*bound, request, diags);
  if (!compiled) return report(diags);
  CpuStream stream(compiled->scheduled, compiled->kernels);
  std::vector<double> per_block_us;
  for (int r = 0; r < o.repeat + 1; ++r) {  // the first pass warms up
    stream.reset();
    auto start = Clock::now();
    for (const auto& chunk : chunks) (void)stream.process(chunk);
    if (r > 0) per_block_us.push_back(ms_since(start) * 1e3 / static_cast<double>(blocks));
  }
  std::sort(per_block_us.begin(), per_block_us.end());
  double us = per_block_us[per_block_us.size() / 2];
  double audio_us = 1e6 * static_cast<double>(block) / o.fs_hz;
  std::cout << fmt::format("{}: stream of {}-sample blocks, {} ch at {:g} Hz, {}, {} blocks, median of {}\n",
                           o.graph, block, chunks[0][0].channels(), o.fs_hz, o.dtype, blocks, o.repeat)
            << fmt::format("  {:.3f} us per block ({:.1f} us of audio: {:.0f}x real time)\n", us,
                           audio_us, audio_us / us);
  return report(diags);
}

// W6: `items` signals through one compiled graph at once, against one run per signal.
int bench_batch(const BenchOptions& o, const ir::Graph& graph, DiagnosticEngine& diags) {
  std::size_t samples = static_cast<std::size_t>(o.seconds * o.fs_hz);
  std::vector<BatchItem> items = noise_items(graph, o, samples);
  auto request = request_for<CpuCompileRequest>(o);
  auto bound = bind_inputs(graph, items[0], diags);
  if (!bound) return report(diags);
  request.length_samples = static_cast<std::int64_t>(samples);
  auto single = compile_for_cpu(*bound, request, diags);
  if (!single || !run_batch(graph, items, request, diags)) return report(diags);  // warm up

  std::vector<double> batch_ms, separate_ms;
  std::uint64_t batch_dispatches = 0, separate_dispatches = 0;
  for (int r = 0; r < o.repeat; ++r) {
    auto before = counters().dispatches.load();
    auto start = Clock::now();
    run_batch(graph, items, request, diags);
    batch_ms.push_back(ms_since(start));
    batch_dispatches = counters().dispatches - before;
    before = counters().dispatches.load();
    start = Clock::now();
    for (const BatchItem& item : items) (void)execute_cpu(single->scheduled, *single->kernels, item);
    separate_ms.push_back(ms_since(start));
    separate_dispatches = counters().dispatches - before;
  }
  std::sort(batch_ms.begin(), batch_ms.end());
  std::sort(separate_ms.begin(), separate_ms.end());
  double b = batch_ms[batch_ms.size() / 2], sep = separate_ms[separate_ms.size() / 2];
  std::cout << fmt::format("{}: batch of {} x {} ch x {:g} s at {:g} Hz, {}, median of {}\n", o.graph,
                           o.batch, items[0][0].channels(), o.seconds, o.fs_hz, o.dtype, o.repeat)
            << fmt::format("  one batch      {:9.3f} ms  {} dispatch(es)\n", b, batch_dispatches)
            << fmt::format("  {} runs      {:9.3f} ms  {} dispatch(es)\n", o.batch, sep, separate_dispatches)
            << fmt::format("  batch speed-up {:.2f}x\n", sep / b);
  return report(diags);
}

struct Timing {
  double median_ms = 0;
  std::uint64_t dispatches = 0;  // per run
};

Timing time_runs(const CompiledCpuGraph& compiled, const std::vector<Signal>& inputs, int repeat) {
  std::vector<double> times;
  std::uint64_t dispatches = 0;
  (void)execute_cpu(compiled.scheduled, *compiled.kernels, inputs);  // warm up caches and pages
  for (int r = 0; r < repeat; ++r) {
    auto before = counters().dispatches.load();
    auto start = Clock::now();
    auto out = execute_cpu(compiled.scheduled, *compiled.kernels, inputs);
    times.push_back(ms_since(start));
    dispatches = counters().dispatches - before;
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], dispatches};
}

// --target cuda --batch N: N signals side by side in one run (one launch per kernel entry),
// against one run per signal on the graph compiled for one; host copies included in both.
int bench_cuda_batch(const BenchOptions& o, const ir::Graph& graph, std::shared_ptr<GpuDevice> device,
                     DiagnosticEngine& diags) {
  std::size_t samples = static_cast<std::size_t>(o.seconds * o.fs_hz);
  std::vector<BatchItem> items = noise_items(graph, o, samples);
  auto request = request_for<CudaCompileRequest>(o);
  request.length_samples = static_cast<std::int64_t>(samples);
  request.pipeline.time_passes = o.time_passes;
  request.pipeline.log = &std::cerr;
  auto bound = bind_inputs(graph, items[0], diags);
  if (!bound) return report(diags);
  auto single = compile_for_cuda(*bound, request, device, diags);
  if (!single) return report(diags);
  auto batched = compile_batch_for_cuda(graph, items, request, device, diags);
  if (!batched) return report(diags);
  if (auto warm = execute_cuda_batch(*batched, items); !warm) return user_error(warm.error());
  std::vector<double> batch_ms, separate_ms;
  std::uint64_t batch_launches = 0, separate_launches = 0;
  for (int r = 0; r < o.repeat; ++r) {
    auto before = counters().gpu_launches.load();
    auto start = Clock::now();
    auto out = execute_cuda_batch(*batched, items);
    batch_ms.push_back(ms_since(start));
    if (!out) return user_error(out.error());
    batch_launches = counters().gpu_launches - before;
    before = counters().gpu_launches.load();
    start = Clock::now();
    for (const BatchItem& item : items)
      if (auto one = execute_cuda(*single, item); !one) return user_error(one.error());
    separate_ms.push_back(ms_since(start));
    separate_launches = counters().gpu_launches - before;
  }
  std::sort(batch_ms.begin(), batch_ms.end());
  std::sort(separate_ms.begin(), separate_ms.end());
  double b = batch_ms[batch_ms.size() / 2], sep = separate_ms[separate_ms.size() / 2];
  if (o.json) {
    nlohmann::json j = {{"graph", o.graph}, {"target", "cuda"}, {"device", device->description()},
                        {"batch", o.batch}, {"channels", items[0][0].channels()}, {"samples", samples},
                        {"fs", o.fs_hz}, {"dtype", o.dtype}, {"repeat", o.repeat},
                        {"one_batch", {{"median_ms", b}, {"launches", batch_launches}}},
                        {"separate_runs", {{"median_ms", sep}, {"launches", separate_launches}}},
                        {"includes_host_copies", true}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return report(diags);
  }
  std::cout << fmt::format("{}: batch of {} x {} ch x {:g} s at {:g} Hz, {}, on {}, median of {}\n", o.graph,
                           o.batch, items[0][0].channels(), o.seconds, o.fs_hz, o.dtype, device->description(),
                           o.repeat)
            << fmt::format("  one batch      {:9.3f} ms  {} launch(es)\n", b, batch_launches)
            << fmt::format("  {} runs      {:9.3f} ms  {} launch(es)\n", o.batch, sep, separate_launches)
            << fmt::format("  batch speed-up {:.2f}x (host copies included)\n", sep / b);
  return report(diags);
}

// --target cuda: the graph on the GPU, each run a whole signal through a CudaStream (one
// recorded CUDA graph: copies in, every launch, copies out, replayed), so the time includes
// the host-device copies and the host's staging copies; bytes_moved counts the signal bytes
// the kernels must read and write at least once (inputs and outputs).
int bench_cuda(const BenchOptions& o, const ir::Graph& graph, DiagnosticEngine& diags) {
  if (o.block) return user_error("--block is not benchmarked on --target cuda yet; use --target cpu");
  auto device = open_cuda_device();
  if (!device) return user_error(device.error());
  if (o.batch > 1) return bench_cuda_batch(o, graph, *device, diags);
  std::size_t samples = static_cast<std::size_t>(o.seconds * o.fs_hz);
  std::mt19937 rng(1234);
  std::vector<Signal> inputs = noise_inputs(graph, o.channels, samples, rng);
  std::optional<ir::Graph> bound = bind_inputs(graph, inputs, diags);
  if (!bound) return report(diags);
  auto request = request_for<CudaCompileRequest>(o);
  request.length_samples = static_cast<std::int64_t>(samples);
  request.pipeline.time_passes = o.time_passes;
  request.pipeline.log = &std::cerr;
  clear_memory_cache();
  auto start = Clock::now();
  auto program = compile_for_cuda(*bound, request, *device, diags);
  double cold_ms = ms_since(start);
  if (!program) return report(diags);
  CudaStream stream(*program);
  auto first = stream.process(inputs);  // records the CUDA graph
  if (!first) return user_error(first.error());
  std::vector<double> times;
  std::uint64_t launches = 0;
  for (int r = 0; r < o.repeat; ++r) {
    if (auto ok = stream.reset(); !ok) return user_error(ok.error());
    auto before = counters().gpu_launches.load();
    start = Clock::now();
    auto out = stream.process(inputs);
    times.push_back(ms_since(start));
    if (!out) return user_error(out.error());
    launches = counters().gpu_launches - before;
  }
  std::sort(times.begin(), times.end());
  double ms = times[times.size() / 2];
  double bytes = 0;
  for (const Signal& s : inputs) bytes += static_cast<double>(s.channels() * s.samples() * size_of(request.dtype));
  for (const Signal& s : *first) bytes += static_cast<double>(s.channels() * s.samples() * size_of(request.dtype));
  double max_error = 0;
  if (o.check)
    if (auto want = run_reference(*bound, o.fs_hz, inputs, diags))
      for (std::size_t k = 0; k < want->size(); ++k)
        for (std::size_t c = 0; c < (*want)[k].channels(); ++c)
          for (std::size_t n = 0; n < (*want)[k].samples(); ++n)
            max_error = std::max(max_error, std::abs((*first)[k].at(c, n) - (*want)[k].at(c, n)));
  double channel_samples = static_cast<double>(samples) * inputs[0].channels();
  if (o.json) {
    nlohmann::json j = {{"graph", o.graph}, {"target", "cuda"}, {"device", (*device)->description()},
                        {"channels", inputs[0].channels()}, {"samples", samples}, {"fs", o.fs_hz},
                        {"dtype", o.dtype}, {"repeat", o.repeat},
                        {"fused", {{"median_ms", ms}, {"samples_per_s", channel_samples / (ms / 1e3)},
                                   {"realtime_factor", o.seconds / (ms / 1e3)}, {"dispatches", launches}}},
                        {"bytes_moved", bytes}, {"includes_host_copies", true},
                        {"compile_ms", {{"cold", cold_ms}}},
                        {"max_abs_error_vs_f64_reference", o.check ? nlohmann::json(max_error) : nlohmann::json()}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return report(diags);
  }
  std::cout << fmt::format("{}: {} ch x {:g} s at {:g} Hz, {}, on {}, median of {}\n", o.graph,
                           inputs[0].channels(), o.seconds, o.fs_hz, o.dtype, (*device)->description(), o.repeat)
            << fmt::format("  {:9.3f} ms  {:8.1f} M samples/s  {} launch(es), host copies included ({:.2f} GB/s of signal)\n",
                           ms, channel_samples / (ms / 1e3) / 1e6, launches, bytes / (ms / 1e3) / 1e9)
            << fmt::format("  compile (NVRTC, cold): {:.1f} ms\n", cold_ms);
  if (o.check) std::cout << fmt::format("  max |error| vs float64 reference: {:.3g}\n", max_error);
  return report(diags);
}

int bench(const BenchOptions& o) {
  if (passes::StrategyThresholds t; auto error = apply_thresholds(o.thresholds, t)) return user_error(*error);
  if (o.channels < 1 || !(o.seconds > 0) || !(o.fs_hz > 0) || o.repeat < 1)
    return user_error("--channels, --seconds, --fs and --repeat must be positive");
  // The noise is generated in memory: a length beyond this is a typo, and past 2^64 it would
  // not even convert to a size.
  if (!(o.seconds * o.fs_hz <= kMaxSamples))
    return user_error("--seconds " + format_double(o.seconds) + " at --fs " + format_double(o.fs_hz) +
                      " is more than the " + std::to_string(kMaxSamples) + " samples per channel bench generates");
  if (o.batch < 1) return user_error("--batch must be at least 1, got " + std::to_string(o.batch));
  if (o.block && *o.block < 1) return user_error("--block must be at least 1, got " + std::to_string(*o.block));
  DiagnosticEngine diags;
  std::optional<ir::Graph> graph = load_graph(o.graph, diags);
  if (!graph) return report(diags);
  if (o.target == "cuda") return bench_cuda(o, *graph, diags);
  if (o.batch > 1) return bench_batch(o, *graph, diags);
  if (o.block) return bench_stream(o, *graph, diags);

  std::size_t samples = static_cast<std::size_t>(o.seconds * o.fs_hz);
  std::mt19937 rng(1234);
  std::vector<Signal> inputs = noise_inputs(*graph, o.channels, samples, rng);
  std::optional<ir::Graph> bound = bind_inputs(*graph, inputs, diags);
  if (!bound) return report(diags);

  auto request = request_for<CpuCompileRequest>(o);
  request.length_samples = static_cast<std::int64_t>(samples);
  request.pipeline.time_passes = o.time_passes;
  request.pipeline.log = &std::cerr;

  // Compile: cold (nothing cached), from disk (a fresh process's view), from memory.
  std::string dir = (std::filesystem::temp_directory_path() / ("fxc-bench-" + std::to_string(getpid()))).string();
  request.cache_directory = dir;
  clear_memory_cache();
  auto start = Clock::now();
  std::optional<CompiledCpuGraph> fused = compile_for_cpu(*bound, request, diags);
  double cold_ms = ms_since(start);
  if (!fused) return report(diags);
  clear_memory_cache();
  start = Clock::now();
  compile_for_cpu(*bound, request, diags);
  double disk_ms = ms_since(start);
  start = Clock::now();
  compile_for_cpu(*bound, request, diags);
  double memory_ms = ms_since(start);
  std::filesystem::remove_all(dir);

  // Unfused: every stage is its own kernel, so no pass may merge stages.
  request.cache_directory.clear();
  request.fusion = false;
  request.pipeline.passes = {"infer-types", "design-filters", "eliminate-dead-nodes", "fuse-chains",
                             "select-strategy"};
  std::optional<CompiledCpuGraph> unfused = compile_for_cpu(*bound, request, diags);
  if (!unfused) return report(diags);

  Timing f = time_runs(*fused, inputs, o.repeat);
  Timing u = time_runs(*unfused, inputs, o.repeat);
  double channel_samples = static_cast<double>(samples) * inputs[0].channels();
  auto rate = [&](const Timing& t) { return channel_samples / (t.median_ms / 1e3); };
  auto realtime = [&](const Timing& t) { return o.seconds / (t.median_ms / 1e3); };

  // Accuracy next to speed: the largest error against the float64 reference.
  double max_error = 0;
  if (o.check) {
    auto got = execute_cpu(fused->scheduled, *fused->kernels, inputs);
    auto want = run_reference(*bound, o.fs_hz, inputs, diags);
    if (got && want)
      for (std::size_t k = 0; k < want->size(); ++k)
        for (std::size_t c = 0; c < (*want)[k].channels(); ++c)
          for (std::size_t n = 0; n < (*want)[k].samples(); ++n)
            max_error = std::max(max_error, std::abs((*got)[k].at(c, n) - (*want)[k].at(c, n)));
  }

  if (o.json) {
    nlohmann::json j = {{"graph", o.graph},         {"channels", inputs[0].channels()},
                        {"samples", samples},       {"fs", o.fs_hz},
                        {"dtype", o.dtype},         {"repeat", o.repeat},
                        {"fused", {{"median_ms", f.median_ms}, {"samples_per_s", rate(f)},
                                   {"realtime_factor", realtime(f)}, {"dispatches", f.dispatches}}},
                        {"unfused", {{"median_ms", u.median_ms}, {"samples_per_s", rate(u)},
                                     {"dispatches", u.dispatches}}},
                        {"fusion_speedup", u.median_ms / f.median_ms},
                        {"compile_ms", {{"cold", cold_ms}, {"disk_hit", disk_ms}, {"memory_hit", memory_ms}}},
                        {"max_abs_error_vs_f64_reference", o.check ? nlohmann::json(max_error) : nlohmann::json()}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return report(diags);
  }
  std::cout << fmt::format("{}: {} ch x {:g} s at {:g} Hz, {}, median of {}\n", o.graph,
                           inputs[0].channels(), o.seconds, o.fs_hz, o.dtype, o.repeat)
            << fmt::format("  fused    {:9.3f} ms  {:8.1f} M samples/s  {:8.1f}x real time  {} dispatch(es)\n",
                           f.median_ms, rate(f) / 1e6, realtime(f), f.dispatches)
            << fmt::format("  unfused  {:9.3f} ms  {:8.1f} M samples/s  {:8.1f}x real time  {} dispatch(es)\n",
                           u.median_ms, rate(u) / 1e6, realtime(u), u.dispatches)
            << fmt::format("  fusion speed-up {:.2f}x\n", u.median_ms / f.median_ms)
            << fmt::format("  compile: cold {:.1f} ms, disk hit {:.2f} ms, memory hit {:.3f} ms\n",
                           cold_ms, disk_ms, memory_ms);
  if (o.check) std::cout << fmt::format("  max |error| vs float64 reference: {:.3g}\n", max_error);
  return report(diags);
}

}  // namespace

void add_bench_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Measure a graph's throughput on generated noise, fused and unfused.");
  cmd->add_option("graph", o->graph, "The .fx graph file")->required();
  cmd->add_option("--channels", o->channels, "Channels for inputs declared without a count")
      ->capture_default_str();
  cmd->add_option("--seconds", o->seconds, "Signal length")->capture_default_str();
  cmd->add_option("--fs", o->fs_hz, "Sample rate in Hz")->capture_default_str();
  cmd->add_option("--target", o->target, "cpu or cuda (an NVIDIA GPU)")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "f32 or f64")->check(CLI::IsMember({"f32", "f64"}))->capture_default_str();
  cmd->add_option("--repeat", o->repeat, "Timed runs; the median is reported")->capture_default_str();
  cmd->add_option("--threshold", o->thresholds,
                  "Override a cost-model threshold: NAME=VALUE (see docs/passes.md)");
  cmd->add_flag("--json", o->json, "Print the results as JSON");
  cmd->add_option("--batch", o->batch, "Run N signals as one batch, against N separate runs");
  cmd->add_option("--block", o->block, "Time a stream of N-sample blocks (per-block cost)");
  cmd->add_flag("--time-passes", o->time_passes, "Print a table of the time each pass took (stderr)");
  cmd->add_flag("!--no-check", o->check, "Skip the accuracy check against the float64 reference");
  cmd->footer(
      "Examples:\n"
      "  fxc bench bench/workloads/w4_profile.fx --channels 2 --seconds 10\n"
      "  fxc bench bench/workloads/w1_api.fx --channels 8 --seconds 120 --fs 44100 --json\n"
      "  fxc bench bench/workloads/w6_many_files.fx --channels 2 --seconds 1 --batch 256\n"
      "  fxc bench bench/workloads/w7_stream.fx --channels 2 --seconds 10 --block 64");
  cmd->callback([&action, o] { action = [o] { return bench(*o); }; });
}

}  // namespace fxc::cli
