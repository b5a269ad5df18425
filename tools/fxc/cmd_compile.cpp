// SPDX-License-Identifier: Apache-2.0
// fxc compile: fill the kernel cache without running anything.
#include <algorithm>
#include <CLI/CLI.hpp>
#include <fxc/fxc.h>

#include <optional>
#include <set>
#include <utility>
#include <cmath>
#include <iostream>
#include <memory>

#include "passes/strategy_thresholds.h"
#include "runtime/counters.h"
#include "support/float_format.h"
#include "tools/fxc/commands.h"

namespace fxc::cli {
namespace {

struct CompileOptions {
  std::string graph;
  std::string target = "cpu";
  std::string dtype = "f64";  // as `fxc run`: a compile then a run hits the cache
  std::string arch;
  std::string cache_dir;
  bool time_passes = false;
  double fs_hz = 48000;
  int channels = 1;
  bool channels_given = false;  ///< --channels was on the command line
  std::optional<double> seconds;
};

// One kernel set compiled into the cache: a Program made with the command's options (which
// compiles at construction). Returns whether it was new; warnings go to `warnings` once each.
bool compile_one(const CompileOptions& o, Options options, std::string& directory, std::set<std::string>& warnings) {
  auto compiles_before = counters().compiles.load();
  Program program = program_from_file(o.graph, options);
  directory = program.options().cache_directory;
  if (std::string w = program.warnings(); !w.empty() && warnings.insert(w).second) std::cerr << w;
  return counters().compiles > compiles_before;
}

int compile(const CompileOptions& o) {
  if (!o.arch.empty() && o.target == "cpu") throw UsageError{"--arch applies to --target cuda"};
  if (o.channels < 1) return user_error("--channels must be at least 1, got " + std::to_string(o.channels));
  if (!(o.fs_hz > 0 && std::isfinite(o.fs_hz)))
    return user_error("--fs must be a positive number of Hz, got " + format_double(o.fs_hz));
  std::optional<std::int64_t> length;
  if (o.seconds) {
    auto samples = samples_for_seconds(*o.seconds, o.fs_hz);
    if (!samples) return user_error(samples.error());
    length = *samples;
  }
  std::vector<DType> dtypes;
  if (o.dtype == "all") dtypes = {DType::f32, DType::f64};
  else dtypes = {*parse_dtype(o.dtype)};
  // As fxc run compiles a file: the same options give the same kernels, so a run after this
  // one hits the cache.
  Options options;
  options.sample_rate_hz = o.fs_hz;
  options.channels = o.channels;
  options.cache_directory = o.cache_dir;
  options.live_unranged_params = false;
  options.time_passes = o.time_passes;
  options.log = &std::cerr;
  std::set<std::string> warnings;
  std::string directory;
  try {
    // The graph's own errors before any compile.
    const GraphInfo info = inspect_graph_file(o.graph);
    warn_unused_channels(info, o.channels, o.channels_given);
    // Kernels depend on the channel count: without --channels, an input declared without one
    // is compiled for mono and stereo files, the usual ones, so that `run` on either hits.
    const bool undeclared = std::any_of(info.inputs.begin(), info.inputs.end(),
                                        [](const PortInfo& p) { return p.channels == 0; });
    std::vector<int> channel_counts =
        !o.channels_given && undeclared ? std::vector<int>{1, 2} : std::vector<int>{o.channels};
    if (channel_counts.size() > 1) {
      // A graph that takes only one of them (`l, r = x` is stereo; `x + y` with `y : 1`, mono)
      // is compiled for that one; one that takes neither reports mono's error, as before.
      std::vector<int> usable;
      std::optional<Error> first;
      for (int channels : channel_counts) {
        Options probe = options;
        probe.channels = channels;
        probe.compile_kernels = false;
        try {
          (void)program_from_file(o.graph, probe);
          usable.push_back(channels);
        } catch (const Error& e) {
          if (!first) first = e;
        }
      }
      if (usable.empty()) throw *first;
      channel_counts = std::move(usable);
    }
    if (o.target == "cuda" || o.target == "all")
      for (DType dtype : dtypes)
        for (int channels : channel_counts) {
          Options cuda = options;
          cuda.channels = channels;
          cuda.dtype = dtype;
          cuda.target = Target::cuda;
          cuda.cuda_architecture = o.arch;
          if (length) cuda.signal_length = static_cast<std::size_t>(*length);
          bool fresh = compile_one(o, cuda, directory, warnings);
          std::cout << "compiled the CUDA kernels of " << o.graph << " (" << name(dtype)
                    << (channel_counts.size() > 1 ? ", " + std::to_string(channels) + " ch" : std::string())
                    << ") for " << (o.arch.empty() ? std::string("this machine's GPU") : o.arch) << " into "
                    << directory << (fresh ? " (new)" : " (already cached)") << "\n";
        }
    if (o.target == "cuda") return kSuccess;
    // The strategy, and so the kernel, can depend on the signal's length: without --seconds,
    // compile for signals too short for time chunks, for a second, for those just long enough
    // for time chunks on channels that fill the lanes, and for an hour, long enough for the
    // chunked scan of every filter whose decay needs more than the minimum (a 30 Hz highpass
    // in float64 takes it from about 4 s at 48 kHz). Sets that come out alike are one set in
    // the cache.
    const passes::StrategyThresholds defaults;
    std::vector<std::int64_t> lengths;
    if (length) lengths = {*length};
    else
      lengths = {std::max<std::int64_t>(1, defaults.chunked_min_samples - 1),
                 static_cast<std::int64_t>(std::min(o.fs_hz, 1e15)), defaults.chunked_busy_lanes_min_samples,
                 std::max(defaults.chunked_busy_lanes_min_samples,
                          static_cast<std::int64_t>(std::min(3600.0 * o.fs_hz, 1e15)))};
    auto write_failures_before = counters().cache_write_failures.load();
    int sets = 0, fresh = 0;
    for (DType dtype : dtypes)
      for (int channels : channel_counts)
        for (std::int64_t n : lengths) {
          Options cpu = options;
          cpu.channels = channels;
          cpu.dtype = dtype;
          cpu.signal_length = static_cast<std::size_t>(n);
          fresh += compile_one(o, cpu, directory, warnings) ? 1 : 0;
          ++sets;
        }
    // Filling the cache is the whole point of compile: kernels that could not be stored are a
    // failure here, where a run only warns and goes on.
    if (counters().cache_write_failures > write_failures_before)
      return user_error("the kernels of " + o.graph + " could not be stored in the kernel cache " + directory +
                        " (the warnings above say why)");
    std::cout << "compiled " << sets << " kernel set(s) for " << o.graph << " into " << directory << " ("
              << fresh << " new, " << sets - fresh << " already cached)\n";
  } catch (const Error& e) {
    if (o.target != "cpu" && o.arch.empty() && e.code() == "fxc-cuda") {
      report(e);
      return user_error("no CUDA device to compile for: give the architecture, e.g. --arch sm_90");
    }
    return report(e);
  }
  return kSuccess;
}

}  // namespace

void add_compile_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compile", "Compile a graph's kernels into the kernel cache without running anything.");
  cmd->add_option("graph", o->graph, "The .fx graph file")->required();
  cmd->add_option("--target", o->target, "cpu, cuda or all")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}))
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "f32, f64 or all")
      ->check(CLI::IsMember({"f32", "f64", "all"}))
      ->capture_default_str();
  cmd->add_option("--arch", o->arch, "CUDA architecture (sm_XX), for --target cuda");
  cmd->add_flag("--time-passes", o->time_passes, "Print a table of the time each pass took (stderr)");
  cmd->add_option("--cache-dir", o->cache_dir, "Kernel cache directory (default $FXC_CACHE_DIR, "
                                               "else $XDG_CACHE_HOME/fxc)");
  cmd->add_option("--fs", o->fs_hz, "Sample rate (only the strategy choice depends on it)")
      ->capture_default_str();
  CLI::Option* channels =
      cmd->add_option("--channels", o->channels, "Channel count for inputs declared without one")
          ->capture_default_str();
  cmd->add_option("--seconds", o->seconds,
                  "Signal length the kernels are for (default: three, 1 s, 131072 samples and an hour)");
  cmd->footer(
      "Kernels depend on the graph's shape, the channel count, the dtype and the strategy, not\n"
      "on coefficient values or the sample rate: compile once, then run with any cutoffs.\n"
      "Examples:\n"
      "  fxc compile examples/vocal.fx\n"
      "  fxc compile examples/eq.fx --channels 2 --dtype all --cache-dir /tmp/fxc-cache");
  cmd->callback([&action, o, channels] {
    o->channels_given = channels->count() > 0;
    action = [o] { return compile(*o); };
  });
}

}  // namespace fxc::cli
