// SPDX-License-Identifier: Apache-2.0
// fxc bench: throughput of a graph on generated noise through the public API (whole signals
// into caller memory, batches, a Processor's blocks), its compile times, its accuracy against
// the float64 reference, and the same graph with fusion disabled.
#include <CLI/CLI.hpp>
#include <fxc/fxc.h>

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

#include "ir/dtype.h"
#include "runtime/counters.h"
#include "runtime/gpu_device.h"
#include "support/float_format.h"
#include "tools/fxc/commands.h"
#include "corpus/stream_blocks.h"

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
  bool channels_given = false;  ///< --channels was on the command line
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
  int threads = 0;  // --threads: 0 for the default
  std::vector<std::string> thresholds;  // --threshold NAME=VALUE
};

// White noise in [-1, 1] (drawn as float32) for each of the program's inputs, `samples`
// long, in the program's sample type, continuing `rng`: the workloads' signal (performance.md).
std::vector<Signal> noise_inputs(const Program& program, std::size_t samples, std::mt19937& rng) {
  std::uniform_real_distribution<float> noise(-1.0f, 1.0f);
  DType dtype = program.options().dtype;
  std::vector<Signal> inputs;
  for (const PortInfo& port : program.inputs()) {
    Signal s(static_cast<std::size_t>(port.channels), samples, dtype, Signal::Uninitialized{});
    for (std::size_t c = 0; c < s.channels(); ++c) {
      if (dtype == DType::f32)
        for (float& v : s.f32(c)) v = noise(rng);
      else
        for (double& v : s.f64(c)) v = noise(rng);
    }
    inputs.push_back(std::move(s));
  }
  return inputs;
}

// The options every benchmark's Program shares.
Options options_for(const BenchOptions& o, const std::vector<std::pair<std::string, double>>& thresholds) {
  Options options;
  options.sample_rate_hz = o.fs_hz;
  options.dtype = *parse_dtype(o.dtype);
  options.target = o.target == "cuda" ? Target::cuda : Target::cpu;
  options.channels = o.channels;
  options.thresholds = thresholds;
  options.live_unranged_params = false;  // as fxc run compiles a file
  options.signal_length = static_cast<std::size_t>(o.seconds * o.fs_hz);
  options.time_passes = o.time_passes;
  options.log = &std::cerr;
  return options;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Planar pointers to whole signals, for Program::run into caller memory.
template <class T>
struct Planar {
  std::vector<std::vector<T*>> channels;
  std::vector<T* const*> ports;
  explicit Planar(std::vector<Signal>& signals) {
    for (Signal& s : signals) {
      std::vector<T*> p;
      for (std::size_t c = 0; c < s.channels(); ++c) {
        if constexpr (std::is_same_v<T, float>) p.push_back(s.f32(c).data());
        else p.push_back(s.f64(c).data());
      }
      channels.push_back(std::move(p));
    }
    for (auto& p : channels) ports.push_back(p.data());
  }
};

// Program::run of `inputs` into caller memory `outputs`, as an embedder calls it.
void run_into(const Program& program, std::vector<Signal>& inputs, std::vector<Signal>& outputs) {
  std::size_t frames = inputs.empty() ? 0 : inputs[0].samples();
  auto go = [&](auto tag) {
    using T = decltype(tag);
    Planar<T> in(inputs), out(outputs);
    std::vector<const T* const*> in_ports(in.ports.begin(), in.ports.end());
    program.run(std::span<const T* const* const>(in_ports), std::span<T* const* const>(out.ports), frames);
  };
  if (program.options().dtype == DType::f32) go(float{});
  else go(double{});
}

// W7: the cost of one block through fxc::Processor::process, as a host's audio callback calls it.
int bench_stream(const BenchOptions& o, const Options& options) {
  std::size_t block = static_cast<std::size_t>(*o.block);
  std::size_t blocks = std::max<std::size_t>(1, static_cast<std::size_t>(o.seconds * o.fs_hz) / block);
  Options stream_options = options;
  stream_options.max_block = block;
  stream_options.signal_length = block;
  Program program = program_from_file(o.graph, stream_options);
  Processor processor(program);
  processor.prepare(block);
  std::mt19937 rng(1234);
  std::vector<Signal> inputs = noise_inputs(program, block * blocks, rng);
  std::vector<Signal> outputs;
  for (const PortInfo& port : program.outputs())
    outputs.emplace_back(static_cast<std::size_t>(port.channels), block * blocks, options.dtype);
  std::vector<double> per_block_us;
  for (int r = 0; r < o.repeat + 1; ++r) {  // the first pass warms up
    processor.reset();
    auto start = Clock::now();
    corpus::stream_blocks(processor, inputs, outputs, block);
    if (r > 0) per_block_us.push_back(ms_since(start) * 1e3 / static_cast<double>(blocks));
  }
  // A host's deadline is per call, and some calls do more than others (a partitioned FIR's
  // FFTs run once per P inputs): one more pass times every call, apart from the median's
  // passes so that the clock reads do not weigh on it.
  std::vector<double> call_us;
  call_us.reserve(blocks);
  processor.reset();
  auto call_start = Clock::now();
  corpus::stream_blocks(
      processor, inputs, outputs, block,
      [&](std::size_t) { call_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - call_start).count()); },
      [&] { call_start = Clock::now(); });
  std::sort(call_us.begin(), call_us.end());
  // Nearest rank: the smallest time that at least 99% of the calls do not exceed.
  const std::size_t rank = (call_us.size() * 99 + 99) / 100;
  const double p99 = call_us[std::max<std::size_t>(rank, 1) - 1];
  const double slowest = call_us.back();
  // On the GPU a failed call writes zeros and cannot throw: a time of zeros is no measurement.
  if (std::string failed = processor.device_error(); !failed.empty())
    return user_error("the GPU failed during the stream: " + failed, "fxc-cuda");
  double us = median(per_block_us);
  double audio_us = 1e6 * static_cast<double>(block) / o.fs_hz;
  if (o.json) {
    nlohmann::json j = {{"graph", o.graph},
                        {"target", o.target},
                        {"block", block},
                        {"blocks", blocks},
                        {"channels", inputs[0].channels()},
                        {"fs", o.fs_hz},
                        {"dtype", o.dtype},
                        {"repeat", o.repeat},
                        {"median_us_per_block", us},
                        {"call_us_p99", p99},
                        {"call_us_max", slowest},
                        {"audio_us_per_block", audio_us},
                        {"realtime_factor", audio_us / us},
                        {"real_time_factor", audio_us / us}};  // the first spelling: kept for scripts that read it
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    std::cout << fmt::format("{}: stream of {}-sample blocks through fxc::Processor, {} ch at {:g} Hz, {}, {} blocks, "
                             "median of {}\n",
                             o.graph, block, inputs[0].channels(), o.fs_hz, o.dtype, blocks, o.repeat)
              << fmt::format("  {:.3f} us per block ({:.1f} us of audio: {:.0f}x real time)\n", us, audio_us,
                             audio_us / us)
              << fmt::format("  slowest calls (one more pass, each call timed): 99th percentile {:.3f} us, "
                             "max {:.3f} us\n",
                             p99, slowest);
  }
  std::cerr << program.warnings();
  return kSuccess;
}

// W6 (--batch N): N signals through Program::run_batch, against N Program::run calls.
int bench_batch(const BenchOptions& o, const Options& options) {
  std::size_t samples = static_cast<std::size_t>(o.seconds * o.fs_hz);
  Program program = program_from_file(o.graph, options);
  std::mt19937 rng(1234);
  std::vector<std::vector<Signal>> items(static_cast<std::size_t>(o.batch));
  for (auto& item : items) item = noise_inputs(program, samples, rng);
  (void)program.run_batch(items);  // warm up
  (void)program.run(items[0]);
  std::vector<double> batch_ms, separate_ms;
  std::uint64_t batch_dispatches = 0, separate_dispatches = 0, batch_launches = 0, separate_launches = 0;
  for (int r = 0; r < o.repeat; ++r) {
    auto before = counters().dispatches.load();
    auto launches = counters().gpu_launches.load();
    auto start = Clock::now();
    (void)program.run_batch(items);
    batch_ms.push_back(ms_since(start));
    batch_dispatches = counters().dispatches - before;
    batch_launches = counters().gpu_launches - launches;
    before = counters().dispatches.load();
    launches = counters().gpu_launches.load();
    start = Clock::now();
    for (const auto& item : items) (void)program.run(item);
    separate_ms.push_back(ms_since(start));
    separate_dispatches = counters().dispatches - before;
    separate_launches = counters().gpu_launches - launches;
  }
  double b = median(batch_ms), sep = median(separate_ms);
  bool gpu = options.target == Target::cuda;
  const char* unit = gpu ? "launch(es)" : "dispatch(es)";
  std::uint64_t batch_count = gpu ? batch_launches : batch_dispatches;
  std::uint64_t separate_count = gpu ? separate_launches : separate_dispatches;
  if (o.json) {
    nlohmann::json j = {{"graph", o.graph}, {"target", o.target}, {"batch", o.batch},
                        {"channels", items[0][0].channels()}, {"samples", samples}, {"fs", o.fs_hz},
                        {"dtype", o.dtype}, {"repeat", o.repeat},
                        {"one_batch", {{"median_ms", b}, {gpu ? "launches" : "dispatches", batch_count}}},
                        {"separate_runs", {{"median_ms", sep}, {gpu ? "launches" : "dispatches", separate_count}}},
                        {"includes_host_copies", gpu}};
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    std::cout << fmt::format("{}: batch of {} x {} ch x {:g} s at {:g} Hz, {}, median of {}\n", o.graph, o.batch,
                             items[0][0].channels(), o.seconds, o.fs_hz, o.dtype, o.repeat)
              << fmt::format("  one batch      {:9.3f} ms  {} {}\n", b, batch_count, unit)
              << fmt::format("  {} runs      {:9.3f} ms  {} {}\n", o.batch, sep, separate_count, unit)
              << fmt::format("  batch speed-up {:.2f}x{}\n", sep / b, gpu ? " (host copies included)" : "");
  }
  std::cerr << program.warnings();
  return kSuccess;
}

struct Timing {
  double median_ms = 0;
  std::uint64_t dispatches = 0;  // per run (GPU launches on cuda)
};

// Whole-signal runs into caller memory (the outputs allocated and touched once, before).
Timing time_runs(const Program& program, std::vector<Signal>& inputs, int repeat) {
  std::vector<Signal> outputs = program.run(inputs);  // warms up caches and pages
  std::vector<double> times;
  std::uint64_t dispatches = 0;
  bool gpu = program.options().target == Target::cuda;
  for (int r = 0; r < repeat; ++r) {
    auto before = gpu ? counters().gpu_launches.load() : counters().dispatches.load();
    auto start = Clock::now();
    run_into(program, inputs, outputs);
    times.push_back(ms_since(start));
    dispatches = (gpu ? counters().gpu_launches.load() : counters().dispatches.load()) - before;
  }
  return {median(times), dispatches};
}

// Target cuda: the same signals already in GPU memory, run through Program::run_device as a
// framework that keeps its audio on the GPU runs them: no host copies, the launches and the
// final synchronize included. The outputs come back once and are compared with the host
// path's (`expected`): the same kernels, but the host path runs in pieces, so the two agree
// within rounding, not bit for bit.
struct DeviceTiming {
  Timing timing;
  double max_difference_from_host_run = 0;
};

Expected<DeviceTiming, std::string> time_device_runs(const Program& program, const std::vector<Signal>& inputs,
                                                     const std::vector<Signal>& expected, int repeat) {
  auto opened = open_cuda_device();
  if (!opened) return Unexpected{opened.error()};
  GpuDevice& device = **opened;
  const DType dtype = program.options().dtype;
  const std::size_t bytes = size_of(dtype);
  struct Buffers {  // released however this returns
    GpuDevice& device;
    std::vector<DevicePtr> all;
    ~Buffers() {
      for (DevicePtr p : all) device.release(p);
    }
  } buffers{device, {}};
  auto to_device = [&](const Signal& s, std::vector<DeviceArray>& arrays, bool copy) -> GpuStatus {
    std::size_t row = s.samples() * bytes;
    auto p = device.allocate(std::max<std::size_t>(1, s.channels() * row));
    if (!p) return Unexpected{p.error()};
    buffers.all.push_back(*p);
    arrays.push_back({static_cast<std::uintptr_t>(*p), s.channels(), s.samples()});
    for (std::size_t c = 0; copy && c < s.channels(); ++c) {
      const void* from = dtype == DType::f32 ? static_cast<const void*>(s.f32(c).data()) : s.f64(c).data();
      if (auto st = device.copy_to_device(*p + c * row, from, row); !st) return st;
    }
    return std::monostate{};
  };
  std::vector<DeviceArray> in, out;
  for (const Signal& s : inputs)
    if (auto st = to_device(s.converted(dtype), in, true); !st) return Unexpected{st.error()};
  for (const Signal& s : expected)
    if (auto st = to_device(s, out, false); !st) return Unexpected{st.error()};
  if (auto st = device.synchronize(); !st) return Unexpected{st.error()};
  DeviceTiming result;
  try {
    program.run_device(in, out);  // warm-up: module load, graphs, parameter buffers
    std::vector<double> times;
    for (int r = 0; r < repeat; ++r) {
      auto before = counters().gpu_launches.load();
      auto start = Clock::now();
      program.run_device(in, out);
      times.push_back(ms_since(start));
      result.timing.dispatches = counters().gpu_launches.load() - before;
    }
    result.timing.median_ms = median(times);
  } catch (const Error& e) {
    return Unexpected{std::string(e.what())};
  }
  for (std::size_t k = 0; k < expected.size(); ++k) {
    Signal got(expected[k].channels(), expected[k].samples(), dtype, Signal::Uninitialized{});
    for (std::size_t c = 0; c < got.channels(); ++c) {
      void* to = dtype == DType::f32 ? static_cast<void*>(got.f32(c).data()) : got.f64(c).data();
      if (auto st = device.copy_to_host(to, static_cast<DevicePtr>(out[k].data) + c * got.samples() * bytes,
                                        got.samples() * bytes);
          !st)
        return Unexpected{st.error()};
    }
    if (auto st = device.synchronize(); !st) return Unexpected{st.error()};
    for (std::size_t c = 0; c < got.channels(); ++c)
      for (std::size_t n = 0; n < got.samples(); ++n) {
        double diff = std::abs(got.at(c, n) - expected[k].at(c, n));
        if (!(diff <= result.max_difference_from_host_run)) result.max_difference_from_host_run = diff;  // NaN sticks
      }
  }
  return result;
}

// The largest difference from the float64 reference interpreter, on the same inputs.
double max_error_against_reference(const BenchOptions& o, const Options& options, const std::vector<Signal>& inputs,
                                   const std::vector<Signal>& got) {
  Options reference = options;
  reference.target = Target::reference;
  reference.dtype = DType::f64;
  reference.time_passes = false;
  std::vector<Signal> wide;
  for (const Signal& s : inputs) wide.push_back(s.converted(DType::f64));
  std::vector<Signal> want = program_from_file(o.graph, reference).run(wide);
  double worst = 0;
  for (std::size_t k = 0; k < want.size(); ++k)
    for (std::size_t c = 0; c < want[k].channels(); ++c)
      for (std::size_t n = 0; n < want[k].samples(); ++n)
        worst = std::max(worst, std::abs(got[k].at(c, n) - want[k].at(c, n)));
  return worst;
}

int bench(const BenchOptions& o) {
  auto thresholds = parse_thresholds(o.thresholds);
  if (!thresholds) return user_error(thresholds.error(), "fxc-threshold");
  if (o.channels < 1 || !(o.seconds > 0) || !(o.fs_hz > 0) || o.repeat < 1)
    return user_error("--channels, --seconds, --fs and --repeat must be positive");
  // The noise is generated in memory: a length beyond this is a typo, and past 2^64 it would
  // not even convert to a size.
  if (!(o.seconds * o.fs_hz <= kMaxSamples))
    return user_error("--seconds " + format_double(o.seconds) + " at --fs " + format_double(o.fs_hz) +
                      " is more than the " + std::to_string(kMaxSamples) + " samples per channel bench generates");
  if (o.seconds * o.fs_hz < 1)
    return user_error("--seconds " + format_double(o.seconds) + " at --fs " + format_double(o.fs_hz) +
                      " is less than one sample");
  if (o.batch < 1) return user_error("--batch must be at least 1, got " + std::to_string(o.batch));
  if (o.threads < 0) return user_error("--threads must be at least 1 (or 0 for the default), got " + std::to_string(o.threads));
  set_threads(o.threads);
  if (o.block && *o.block < 1) return user_error("--block must be at least 1, got " + std::to_string(*o.block));
  if (o.block && o.batch > 1)
    throw UsageError{"--block and --batch are separate measurements (a stream of blocks, a batch of whole signals): "
                     "give one"};
  Options options = options_for(o, *thresholds);
  try {
    // The graph's own errors first, before any timing.
    warn_unused_channels(inspect_graph_file(o.graph), o.channels, o.channels_given);
    if (o.batch > 1) return bench_batch(o, options);
    if (o.block) return bench_stream(o, options);

    std::size_t samples = static_cast<std::size_t>(o.seconds * o.fs_hz);
    // Compile: cold (nothing cached), from disk (a fresh process's view), from memory.
    std::string dir = (std::filesystem::temp_directory_path() / ("fxc-bench-" + std::to_string(getpid()))).string();
    Options fused_options = options;
    fused_options.cache_directory = dir;
    clear_kernel_memory_cache();
    auto start = Clock::now();
    Program fused = program_from_file(o.graph, fused_options);
    double cold_ms = ms_since(start);
    clear_kernel_memory_cache();
    fused_options.time_passes = false;
    start = Clock::now();
    (void)program_from_file(o.graph, fused_options);
    double disk_ms = ms_since(start);
    start = Clock::now();
    (void)program_from_file(o.graph, fused_options);
    double memory_ms = ms_since(start);
    std::filesystem::remove_all(dir);

    // Unfused: every stage is its own kernel, so no pass may merge stages.
    Options unfused_options = fused_options;
    unfused_options.cache_directory = "none";
    unfused_options.fuse = false;
    Program unfused = program_from_file(o.graph, unfused_options);

    std::mt19937 rng(1234);
    std::vector<Signal> inputs = noise_inputs(fused, samples, rng);
    Timing f = time_runs(fused, inputs, o.repeat);
    Timing u = time_runs(unfused, inputs, o.repeat);
    double channel_samples = static_cast<double>(samples) * static_cast<double>(inputs[0].channels());
    auto rate = [&](const Timing& t) { return channel_samples / (t.median_ms / 1e3); };
    auto realtime = [&](const Timing& t) { return o.seconds / (t.median_ms / 1e3); };

    // Accuracy next to speed: the largest error against the float64 reference.
    bool gpu = options.target == Target::cuda;
    // The fused outputs, for the reference check and as the GPU-memory run's comparison.
    std::vector<Signal> fused_outputs = o.check || gpu ? fused.run(inputs) : std::vector<Signal>{};
    double max_error = o.check ? max_error_against_reference(o, options, inputs, fused_outputs) : 0;
    std::optional<Expected<DeviceTiming, std::string>> device;
    if (gpu) device = time_device_runs(fused, inputs, fused_outputs, o.repeat);
    const char* unit = gpu ? "launch(es)" : "dispatch(es)";

    if (o.json) {
      nlohmann::json j = {{"graph", o.graph},         {"target", o.target},
                          {"channels", inputs[0].channels()},
                          {"samples", samples},       {"fs", o.fs_hz},
                          {"dtype", o.dtype},         {"repeat", o.repeat},
                          {"fused", {{"median_ms", f.median_ms}, {"samples_per_s", rate(f)},
                                     {"realtime_factor", realtime(f)}, {"dispatches", f.dispatches}}},
                          {"unfused", {{"median_ms", u.median_ms}, {"samples_per_s", rate(u)},
                                       {"realtime_factor", realtime(u)}, {"dispatches", u.dispatches}}},
                          {"fusion_speedup", u.median_ms / f.median_ms},
                          {"includes_host_copies", gpu},
                          {"compile_ms", {{"cold", cold_ms}, {"disk_hit", disk_ms}, {"memory_hit", memory_ms}}},
                          {"max_abs_error_vs_f64_reference", o.check ? nlohmann::json(max_error) : nlohmann::json()}};
      if (device && *device)
        j["device_resident"] = {{"median_ms", (*device)->timing.median_ms},
                                {"samples_per_s", rate((*device)->timing)},
                                {"launches", (*device)->timing.dispatches},
                                {"max_abs_difference_from_host_run", (*device)->max_difference_from_host_run}};
      else if (device)
        j["device_resident"] = {{"error", device->error()}};
      std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    } else {
      std::cout << fmt::format("{}: {} ch x {:g} s at {:g} Hz, {}{}, median of {}\n", o.graph,
                               inputs[0].channels(), o.seconds, o.fs_hz, o.dtype, gpu ? ", on the GPU" : "",
                               o.repeat)
                << fmt::format("  fused    {:9.3f} ms  {:8.1f} M samples/s  {:8.1f}x real time  {} {}\n",
                               f.median_ms, rate(f) / 1e6, realtime(f), f.dispatches, unit)
                << fmt::format("  unfused  {:9.3f} ms  {:8.1f} M samples/s  {:8.1f}x real time  {} {}\n",
                               u.median_ms, rate(u) / 1e6, realtime(u), u.dispatches, unit)
                << fmt::format("  fusion speed-up {:.2f}x\n", u.median_ms / f.median_ms)
                << fmt::format("  compile: cold {:.1f} ms, disk hit {:.2f} ms, memory hit {:.3f} ms\n",
                               cold_ms, disk_ms, memory_ms);
      if (device && *device)
        std::cout << fmt::format("  on GPU memory (run_device) {:9.3f} ms  {:8.1f} M samples/s  {} {}; "
                                 "max |difference| from the host run {:.3g}\n",
                                 (*device)->timing.median_ms, rate((*device)->timing) / 1e6,
                                 (*device)->timing.dispatches, unit, (*device)->max_difference_from_host_run);
      else if (device)
        std::cout << "  on GPU memory (run_device): " << device->error() << '\n';
      if (o.check) std::cout << fmt::format("  max |error| vs float64 reference: {:.3g}\n", max_error);
    }
    std::cerr << fused.warnings();
  } catch (const Error& e) {
    return report(e);
  }
  return kSuccess;
}

}  // namespace

void add_bench_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Measure a graph's throughput on generated noise, fused and unfused.");
  cmd->add_option("graph", o->graph, "The .fx graph file")->required();
  CLI::Option* channels =
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
  cmd->add_option("--threads", o->threads,
                  "Threads a whole-signal run may use (default: FXC_THREADS, else the cores this process may use)");
  cmd->add_flag("!--no-check", o->check, "Skip the accuracy check against the float64 reference");
  cmd->footer(
      "Examples:\n"
      "  fxc bench bench/workloads/w4_profile.fx --channels 2 --seconds 10\n"
      "  fxc bench bench/workloads/w1_api.fx --channels 8 --seconds 120 --fs 44100 --json\n"
      "  fxc bench bench/workloads/w6_many_files.fx --channels 2 --seconds 1 --batch 256\n"
      "  fxc bench bench/workloads/w7_stream.fx --channels 2 --seconds 10 --block 64");
  cmd->callback([&action, o, channels] {
    o->channels_given = channels->count() > 0;
    action = [o] { return bench(*o); };
  });
}

}  // namespace fxc::cli
