// SPDX-License-Identifier: Apache-2.0
// fxc run: read audio or .npy inputs, run the graph, write the outputs atomically.
#include <CLI/CLI.hpp>
#include <cmath>
#include <memory>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>
#include <unistd.h>

#include "runtime/batch.h"
#include "runtime/bind_inputs.h"
#include "runtime/block_executor.h"
#include "runtime/compile_cpu.h"
#include "runtime/counters.h"
#include "support/trace.h"
#include "runtime/cpu_executor.h"
#include "runtime/cuda_executor.h"
#include "runtime/reference_interpreter.h"
#include "formats/signal_file.h"
#include "support/float_format.h"
#include "tools/fxc/commands.h"
#include "tools/fxc/pending_outputs.h"
#include "tools/fxc/progress_bar.h"

namespace fxc::cli {
namespace {

struct RunOptions {
  std::string graph;
  std::vector<std::string> inputs, outputs;
  std::optional<double> fs_hz;
  std::string target = "cpu";
  std::string dtype = "f64";
  std::optional<std::string> subtype;
  std::optional<long long> block;
  std::string load_state, save_state;  // stream state files (cpu)
  std::vector<std::string> thresholds;  // --threshold NAME=VALUE
  std::vector<std::string> sets;
  std::string trace, cache_dir;
  bool stats = false;
  bool time_passes = false;
};

// One block of each signal: samples [start, start + count).
std::vector<Signal> slice(const std::vector<Signal>& signals, std::size_t start, std::size_t count) {
  std::vector<Signal> out;
  for (const Signal& s : signals) {
    Signal b(s.channels(), count, s.dtype(), Signal::Uninitialized{});
    for (std::size_t c = 0; c < s.channels(); ++c) {
      if (s.dtype() == DType::f32) std::copy_n(s.f32(c).begin() + start, count, b.f32(c).begin());
      else std::copy_n(s.f64(c).begin() + start, count, b.f64(c).begin());
    }
    out.push_back(std::move(b));
  }
  return out;
}

// --trace: the Chrome trace so far, written whole or not at all; nothing without a path.
Expected<std::monostate, std::string> write_trace(const std::string& path) {
  if (path.empty()) return std::monostate{};
  std::string json = Trace::global().to_json();
  return write_file_atomically(path, [&](int fd, const std::string&) {
    return write_all(fd, json.data(), json.size());
  });
}

// Writes `block` into `whole` at `start`.
void place(Signal& whole, const Signal& block, std::size_t start) {
  for (std::size_t c = 0; c < block.channels(); ++c) {
    if (block.dtype() == DType::f32) std::copy(block.f32(c).begin(), block.f32(c).end(), whole.f32(c).begin() + start);
    else std::copy(block.f64(c).begin(), block.f64(c).end(), whole.f64(c).begin() + start);
  }
}

// NaN and infinite input samples are not errors (every stage computes with them as IEEE
// arithmetic does, see docs/errors.md) but are seldom meant: one warning per file.
void warn_non_finite(const Signal& s, const std::string& path, DiagnosticEngine& diags) {
  std::uint64_t nans = 0, infinities = 0;
  std::size_t first = s.samples(), first_channel = 0;
  auto scan = [&](auto samples, std::size_t c) {
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (std::isfinite(samples[i])) continue;
      ++(std::isnan(samples[i]) ? nans : infinities);
      if (i < first) first = i, first_channel = c;
    }
  };
  for (std::size_t c = 0; c < s.channels(); ++c) {
    if (s.dtype() == DType::f32) scan(s.f32(c), c);
    else scan(s.f64(c), c);
  }
  if (nans + infinities == 0) return;
  diags.warning({}, "'" + path + "' holds " + std::to_string(nans) + " NaN and " + std::to_string(infinities) +
                        " infinite sample(s), the first at sample " + std::to_string(first) + " of channel " +
                        std::to_string(first_channel) + " (counting from 0); they propagate through the "
                        "graph, and a recursive filter that meets one outputs NaN from there on",
                "fxc-input");
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// A batch: every item through one compiled graph, one dispatch per kernel for all of them
// (the reference target runs them one by one).
int run_batch_files(const RunOptions& o, const ir::Graph& graph, std::vector<Signal>& signals,
                    std::size_t items, double fs_hz, DType dtype, const WriteOptions& write_options,
                    DiagnosticEngine& diags) {
  std::size_t per_item = graph.inputs().size();
  std::vector<BatchItem> batch(items);
  for (std::size_t i = 0; i < signals.size(); ++i) batch[i / per_item].push_back(std::move(signals[i]));
  std::vector<std::vector<Signal>> results;
  if (o.target == "ref") {
    for (const BatchItem& item : batch) {
      auto out = run_reference(graph, fs_hz, item, diags);
      if (!out) return report(diags);
      results.push_back(std::move(*out));
    }
  } else if (o.target == "cuda") {
    // The items side by side as channels of one device signal: one launch per kernel entry.
    auto device = open_cuda_device();
    if (!device) return user_error(device.error());
    CudaCompileRequest request;
    request.thresholds = thresholds_from(o.thresholds);
    request.sample_rate_hz = fs_hz;
    request.dtype = dtype;
    request.cache_directory = cache_directory(o.cache_dir);
    request.pipeline.time_passes = o.time_passes;
    request.pipeline.log = &std::cerr;
    auto out = run_batch_cuda(graph, batch, request, *device, diags);
    if (!out) return report(diags);
    results = std::move(*out);
  } else {
    CpuCompileRequest request;
    request.thresholds = thresholds_from(o.thresholds);
    request.sample_rate_hz = fs_hz;
    request.dtype = dtype;
    request.cache_directory = cache_directory(o.cache_dir);
    auto out = run_batch(graph, batch, request, diags);
    if (!out) return report(diags);
    results = std::move(*out);
  }
  report(diags);
  PendingOutputs pending;
  std::size_t k = 0;
  for (const auto& item : results)
    for (const Signal& s : item)
      if (auto ok = pending.write(o.outputs[k++], s.converted(dtype), fs_hz, write_options); !ok)
        return user_error(ok.error());
  // The trace before the outputs' renames, as for one item.
  if (auto ok = write_trace(o.trace); !ok) return user_error(ok.error());
  if (auto ok = pending.commit(); !ok) return user_error(ok.error());
  if (o.stats)
    std::cerr << "fxc run statistics (batch of " << items << ")\n"
              << "  kernel dispatches " << counters().dispatches << "\n"
              << "  GPU launches      " << counters().gpu_launches << " (" << counters().gpu_graph_launches
              << " CUDA graph replays), " << counters().gpu_bytes_copied << " bytes copied\n";
  return kSuccess;
}

// --target cuda: the graph compiled for the GPU and run there, whole or in blocks (a CUDA
// graph recorded per block length and replayed).
std::optional<std::vector<Signal>> run_on_cuda(const RunOptions& o, const ir::Graph& bound,
                                               const std::vector<Signal>& signals, double fs_hz, DType dtype,
                                               DiagnosticEngine& diags, int& status) {
  status = kSuccess;
  auto device = open_cuda_device();
  if (!device) {
    status = user_error(device.error());
    return std::nullopt;
  }
  std::size_t total = signals.empty() ? 0 : signals[0].samples();
  CudaCompileRequest request;
  request.thresholds = thresholds_from(o.thresholds);
  request.sample_rate_hz = fs_hz;
  request.dtype = dtype;
  request.length_samples = static_cast<std::int64_t>(o.block ? std::min<std::size_t>(*o.block, total) : total);
  request.cache_directory = cache_directory(o.cache_dir);
  request.pipeline.time_passes = o.time_passes;
  request.pipeline.log = &std::cerr;
  auto program = compile_for_cuda(bound, request, *device, diags);
  if (!program) {
    status = report(diags);
    return std::nullopt;
  }
  std::vector<Signal> results;
  if (!o.block) {
    auto out = execute_cuda(*program, signals);
    if (!out) {
      status = user_error(out.error());
      return std::nullopt;
    }
    return std::move(*out);
  }
  CudaStream stream(*program);
  std::size_t block = static_cast<std::size_t>(*o.block);
  ProgressBar progress(total, "samples");
  for (std::size_t start = 0; start < total || (start == 0 && total == 0); start += block) {
    std::size_t count = std::min(block, total - start);
    auto out = stream.process(slice(signals, start, count));
    if (!out) {
      status = user_error(out.error());
      return std::nullopt;
    }
    if (results.empty())
      for (const Signal& s : *out) results.emplace_back(s.channels(), total, s.dtype());
    for (std::size_t k = 0; k < out->size(); ++k) place(results[k], (*out)[k], start);
    progress.update(start + count);
    if (total == 0) break;
  }
  return results;
}

int run(const RunOptions& o) {
  if (o.block && *o.block < 1) return user_error("--block must be at least 1, got " + std::to_string(*o.block));
  if (o.block && o.target == "ref") return user_error("--block runs compiled kernels: use it with --target cpu or cuda");
  if (passes::StrategyThresholds t; auto error = apply_thresholds(o.thresholds, t)) return user_error(*error);
  if ((!o.load_state.empty() || !o.save_state.empty()) && o.target != "cpu")
    return user_error("--load-state and --save-state keep a CPU stream's state: use them with --target cpu");
  if (!o.trace.empty()) Trace::global().enable();
  if (o.fs_hz && !(*o.fs_hz > 0 && std::isfinite(*o.fs_hz)))
    return user_error("--fs must be a positive number of Hz, got " + format_double(*o.fs_hz));

  WriteOptions write_options{o.subtype};
  std::set<std::string> seen;
  for (const std::string& path : o.outputs) {
    // Absolute first: weakly_canonical leaves a relative name that does not exist yet as it
    // is, so 'out.npy' and './out.npy' differed.
    if (!seen.insert(std::filesystem::weakly_canonical(std::filesystem::absolute(path)).string()).second)
      throw UsageError{"the output '" + path + "' is given twice"};
    if (auto ok = check_output_format(path, write_options); !ok) return user_error(ok.error());
  }

  auto started = Clock::now();
  std::vector<std::pair<const char*, double>> phases;
  DiagnosticEngine diags;
  std::optional<ir::Graph> graph = load_graph(o.graph, diags, o.sets);
  phases.emplace_back("parse", ms_since(started));
  if (!graph) return report(diags);
  // -i and -o given k times the graph's inputs and outputs: a batch of k items, in order.
  std::size_t want_in = graph->inputs().size(), want_out = graph->outputs().size();
  std::size_t items = want_in ? o.inputs.size() / want_in : 0;
  if (items == 0 || o.inputs.size() != items * want_in)
    throw UsageError{"the graph has " + std::to_string(want_in) + " input(s) but " +
                     std::to_string(o.inputs.size()) + " -i file(s) were given (a batch gives " +
                     "a multiple: one group per item)"};
  if (o.outputs.size() != items * want_out)
    throw UsageError{
        items == 1 ? "the graph has " + std::to_string(want_out) + " output(s) but " +
                         std::to_string(o.outputs.size()) + " -o file(s) were given"
                   : "the graph has " + std::to_string(want_out) + " output(s), so " +
                         std::to_string(items * want_out) + " -o file(s) are needed for a batch of " +
                         std::to_string(items) + " item(s) (" + std::to_string(o.inputs.size()) +
                         " -i files), but " + std::to_string(o.outputs.size()) + " were given"};
  if (items > 1 && o.block) throw UsageError{"--block streams one item; it cannot be used with a batch"};
  if (items > 1 && (!o.load_state.empty() || !o.save_state.empty()))
    throw UsageError{"--load-state and --save-state keep one stream's state; they cannot be used with a batch"};

  DType dtype = *parse_dtype(o.dtype);
  std::vector<Signal> signals;
  std::optional<double> fs_hz = o.fs_hz;
  std::string fs_source;
  for (const std::string& path : o.inputs) {
    TraceSpan span("read " + path, "io");
    auto file = read_signal_file(path, dtype);
    if (!file) return user_error(file.error());
    if (!o.fs_hz) {
      if (!file->sample_rate_hz)
        return user_error("'" + path + "' carries no sample rate (a .npy file): give it with --fs");
      if (fs_hz && *fs_hz != *file->sample_rate_hz)
        return user_error("inputs have different sample rates: '" + fs_source + "' is " +
                          format_double(*fs_hz) + " Hz, '" + path + "' is " +
                          format_double(*file->sample_rate_hz) + " Hz (resample, or force one with --fs)");
      fs_hz = file->sample_rate_hz;
      fs_source = path;
    }
    warn_non_finite(file->signal, path, diags);
    signals.push_back(std::move(file->signal));
  }

  phases.emplace_back("read inputs", ms_since(started) - phases.back().second);
  if (items > 1) return run_batch_files(o, *graph, signals, items, *fs_hz, dtype, write_options, diags);
  std::optional<ir::Graph> bound = bind_inputs(*graph, signals, diags, o.inputs);
  if (!bound) return report(diags);
  auto before_stats = std::make_tuple(counters().compiles.load(), counters().memory_hits.load(),
                                      counters().disk_hits.load(), counters().dispatches.load());
  auto phase_start = Clock::now();

  std::vector<Signal> results;
  std::optional<std::string> saved_state;  // --save-state: written with the outputs
  if (o.target == "ref") {
    auto out = run_reference(*bound, *fs_hz, signals, diags);
    if (!out) return report(diags);
    results = std::move(*out);
  } else if (o.target == "cuda") {
    int status = kSuccess;
    auto out = run_on_cuda(o, *bound, signals, *fs_hz, dtype, diags, status);
    if (!out) return status;
    results = std::move(*out);
    phases.emplace_back(o.block ? "compile and run (cuda, stream)" : "compile and run (cuda)", ms_since(phase_start));
  } else {
    std::size_t total = signals.empty() ? 0 : signals[0].samples();
    CpuCompileRequest request;
    request.thresholds = thresholds_from(o.thresholds);
    request.sample_rate_hz = *fs_hz;
    request.dtype = dtype;
    // The strategy follows what one call sees: the whole signal, or one block.
    request.length_samples = static_cast<std::int64_t>(o.block ? std::min<std::size_t>(*o.block, total) : total);
    request.cache_directory = cache_directory(o.cache_dir);
    request.pipeline.time_passes = o.time_passes;
    request.pipeline.log = &std::cerr;
    std::optional<CompiledCpuGraph> compiled = compile_for_cpu(*bound, request, diags);
    if (!compiled) return report(diags);
    phases.emplace_back("compile", ms_since(phase_start));
    phase_start = Clock::now();
    if (!o.block && o.load_state.empty() && o.save_state.empty()) {
      auto out = execute_cpu(compiled->scheduled, *compiled->kernels, signals);
      if (!out) return user_error(out.error());
      results = std::move(*out);
    } else if (auto blocks = o.block && o.trace.empty() ? BlockExecutor::create(compiled->scheduled, compiled->kernels,
                                                             static_cast<std::size_t>(*o.block))
                                     : Expected<BlockExecutor, std::string>(Unexpected{std::string()})) {
      // --block: the real-time engine (runtime/block_executor.h) straight on the whole
      // signals' memory, a block at a time: no per-block copies or allocation. (With --trace
      // the stream runner below, which records a span per kernel call; the engine records
      // nothing, since recording allocates.)
      if (!o.load_state.empty()) {
        auto bytes = read_whole_file(o.load_state);
        if (!bytes) return user_error(bytes.error());
        if (auto loaded = blocks->load_state(*bytes); !loaded)
          return user_error("cannot load '" + o.load_state + "': " + loaded.error());
      }
      for (ir::NodeId id : compiled->scheduled.outputs())
        results.emplace_back(static_cast<std::size_t>(compiled->scheduled.node(id).type.channels), total, dtype,
                             Signal::Uninitialized{});
      auto channel_data = [&](const Signal& s, std::size_t c, std::size_t at) {
        return dtype == DType::f32 ? static_cast<const void*>(s.f32(c).data() + at)
                                   : static_cast<const void*>(s.f64(c).data() + at);
      };
      std::vector<std::vector<const void*>> in(signals.size());
      std::vector<std::vector<void*>> out(results.size());
      std::vector<const void* const*> in_arrays;
      std::vector<void* const*> out_arrays;
      for (std::size_t i = 0; i < signals.size(); ++i) {
        in[i].resize(signals[i].channels());
        in_arrays.push_back(in[i].data());
      }
      for (std::size_t k = 0; k < results.size(); ++k) {
        out[k].resize(results[k].channels());
        out_arrays.push_back(out[k].data());
      }
      std::size_t block = static_cast<std::size_t>(*o.block);
      ProgressBar progress(total, "samples");
      for (std::size_t start = 0; start < total; start += block) {
        std::size_t count = std::min(block, total - start);
        for (std::size_t i = 0; i < signals.size(); ++i)
          for (std::size_t c = 0; c < in[i].size(); ++c) in[i][c] = channel_data(signals[i], c, start);
        for (std::size_t k = 0; k < results.size(); ++k)
          for (std::size_t c = 0; c < out[k].size(); ++c)
            out[k][c] = const_cast<void*>(channel_data(results[k], c, start));
        blocks->process(in_arrays, out_arrays, count);
        progress.update(start + count);
      }
      if (!o.save_state.empty()) saved_state = blocks->save_state();
    } else {
      // A whole signal with state files, --trace, or blocks the real-time engine does not take
      // (too long for its memory bound): the stream runner, which allocates per call.
      CpuStream stream(compiled->scheduled, compiled->kernels);
      if (!o.load_state.empty()) {
        auto bytes = read_whole_file(o.load_state);
        if (!bytes) return user_error(bytes.error());
        if (auto loaded = stream.load_state(*bytes); !loaded)
          return user_error("cannot load '" + o.load_state + "': " + loaded.error());
      }
      // Without --block, the whole signal is one block.
      std::size_t block = o.block ? static_cast<std::size_t>(*o.block) : std::max<std::size_t>(total, 1);
      ProgressBar progress(total, "samples");
      for (std::size_t start = 0; start < total || (start == 0 && total == 0); start += block) {
        std::size_t count = std::min(block, total - start);
        auto out = stream.process(slice(signals, start, count));
        if (!out) return user_error(out.error());
        if (results.empty())
          for (const Signal& s : *out) results.emplace_back(s.channels(), total, s.dtype());
        for (std::size_t k = 0; k < out->size(); ++k) place(results[k], (*out)[k], start);
        progress.update(start + count);
        if (total == 0) break;
      }
      if (!o.save_state.empty()) saved_state = stream.save_state();
    }
    phases.emplace_back(o.block ? "run (stream)" : "run", ms_since(phase_start));
  }
  report(diags);  // warnings, if any

  if (o.target == "ref") phases.emplace_back("run (reference)", ms_since(phase_start));
  phase_start = Clock::now();
  PendingOutputs pending;
  std::optional<TraceSpan> write_span;
  if (Trace::global().enabled()) write_span.emplace("write outputs", "io");
  for (std::size_t i = 0; i < results.size(); ++i)
    if (auto ok = pending.write(o.outputs[i], results[i].converted(dtype), fs_hz, write_options); !ok)
      return user_error(ok.error());
  write_span.reset();
  phases.emplace_back("write outputs", ms_since(phase_start));
  // The trace before the outputs' renames: a trace that cannot be written fails the run, and
  // a failed run leaves the outputs as they were.
  if (auto ok = write_trace(o.trace); !ok) return user_error(ok.error());
  if (saved_state) {
    auto ok = write_file_atomically(o.save_state, [&](int fd, const std::string&) {
      return write_all(fd, saved_state->data(), saved_state->size());
    });
    if (!ok) return user_error(ok.error());
  }
  if (auto ok = pending.commit(); !ok) return user_error(ok.error());

  if (o.stats) {
    auto [compiles, memory_hits, disk_hits, dispatches] = before_stats;
    std::uint64_t bytes = 0;
    for (const Signal& s : signals) bytes += s.channels() * s.samples() * size_of(dtype);
    for (const Signal& s : results) bytes += s.channels() * s.samples() * size_of(dtype);
    std::cerr << "fxc run statistics\n"
              << "  compiles          " << counters().compiles - compiles << "\n"
              << "  cache hits        " << counters().memory_hits - memory_hits << " memory, "
              << counters().disk_hits - disk_hits << " disk\n"
              << "  kernel dispatches " << counters().dispatches - dispatches << "\n"
              << "  GPU launches      " << counters().gpu_launches << " (" << counters().gpu_graph_launches
              << " CUDA graph replays), " << counters().gpu_bytes_copied << " bytes copied\n"
              << "  signal bytes      " << bytes << " (inputs read and outputs written)\n";
    for (const auto& [phase, ms] : phases)
      std::cerr << "  " << phase << std::string(18 - std::min<std::size_t>(17, std::string(phase).size()), ' ')
                << ms << " ms\n";
  }
  return kSuccess;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run a graph on audio or .npy files.");
  cmd->add_option("graph", o->graph, "The .fx graph file")->required();
  cmd->add_option("-i,--input", o->inputs,
                  "An input file (WAV, FLAC, OGG, AIFF, ... or .npy); repeat once per graph input, "
                  "in declaration order")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option("-o,--output", o->outputs,
                  "An output file; its extension picks the format; repeat once per graph output")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option("--fs", o->fs_hz, "Sample rate in Hz (needed for .npy inputs; overrides the files')");
  cmd->add_option("--target", o->target,
                  "Where to run: cpu (compiled kernels), cuda (an NVIDIA GPU) or ref (the float64 reference interpreter)")
      ->check(CLI::IsMember({"ref", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype,
                  "Sample type of the computation and of .npy outputs (ref computes in float64)")
      ->check(CLI::IsMember({"f32", "f64"}))
      ->capture_default_str();
  cmd->add_option("--subtype", o->subtype,
                  "Encoding of audio outputs: pcm16, pcm24, pcm32, float, double, ... (WAV "
                  "default: float)");
  cmd->add_option("--block", o->block,
                  "Process in blocks of N samples through the stream path (state carried exactly)");
  cmd->add_option("--threshold", o->thresholds,
                  "Override a cost-model threshold: NAME=VALUE (see docs/passes.md), e.g. "
                  "f64_state_pole_radius=2 to keep float32 state everywhere");
  cmd->add_option("--load-state", o->load_state,
                  "Start from the stream state in FILE (saved by --save-state from a graph of the same shape)");
  cmd->add_option("--save-state", o->save_state,
                  "Write the stream state at the end to FILE, to continue in a later run with --load-state");
  cmd->add_flag("--stats", o->stats,
                "Print counters (compiles, cache hits, dispatches, bytes) and phase times to stderr");
  cmd->add_option("--set", o->sets,
                  "Give a constant of the graph (a binding NAME = NUMBER) a new value: "
                  "NAME=VALUE, e.g. --set fc=500Hz; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--trace", o->trace, "Write a Chrome trace of compile and run phases");
  cmd->add_flag("--time-passes", o->time_passes, "Print a table of the time each pass took (stderr)");
  cmd->add_option("--cache-dir", o->cache_dir, "Kernel cache directory");
  cmd->footer(
      "Examples:\n"
      "  fxc run examples/vocal.fx -i voice.wav -o out.wav\n"
      "  fxc run examples/crossover.fx -i mix.wav -o low.wav -o high.wav\n"
      "  fxc run eq.fx -i x.npy --fs 48000 -o y.npy --dtype f32\n"
      "  fxc run eq.fx -i a.wav -i b.wav -i c.wav -o a_eq.wav -o b_eq.wav -o c_eq.wav   # a batch\n"
      "Nothing is written to an output unless the whole run succeeds.");
  cmd->callback([&action, o] { action = [o] { return run(*o); }; });
}

}  // namespace fxc::cli
