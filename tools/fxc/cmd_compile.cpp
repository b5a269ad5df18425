// SPDX-License-Identifier: Apache-2.0
// fxc compile: fill the kernel cache without running anything.
#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>
#include <memory>

#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/emit_cuda.h"
#include "codegen/cuda/nvrtc.h"
#include "runtime/compile_cpu.h"
#include "runtime/counters.h"
#include "runtime/kernel_cache.h"
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
  std::optional<double> seconds;
};

// CUDA: the kernels' CUDA C++ through NVRTC for an architecture (a device is not needed),
// stored in the kernel cache as a cubin (key: architecture, NVRTC version, graph shape).
int compile_cuda(const CompileOptions& o, const ir::Graph& graph, const std::vector<DType>& dtypes,
                 DiagnosticEngine& diags) {
  std::string arch = o.arch;
  if (arch.empty()) {
    arch = codegen::cuda_device_arch(0).value_or("");
    if (arch.empty())
      return user_error("no CUDA device to compile for (" + codegen::cuda_status() +
                        "): give the architecture, e.g. --arch sm_90");
  }
  std::string directory = cache_directory(o.cache_dir);
  KernelCache cache(directory);
  for (DType dtype : dtypes) {
    passes::PassContext context{diags, {o.fs_hz, o.channels, dtype}};
    context.target = passes::cuda_target();
    if (o.seconds) context.binding.length_samples = *samples_for_seconds(*o.seconds, o.fs_hz);  // checked
    auto scheduled = passes::run_pipeline(graph, context, {.time_passes = o.time_passes, .log = &std::cerr});
    if (!scheduled) return report(diags);
    auto compiles_before = counters().compiles.load();
    auto cubin = cache.cuda_cubin(*scheduled, arch, diags);
    if (!cubin) return user_error(cubin.error());
    report(diags);
    std::cout << "compiled the CUDA kernels of " << o.graph << " (" << name(dtype) << ") for " << arch << ": "
              << (*cubin)->size() << " bytes of cubin in " << directory
              << (counters().compiles > compiles_before ? " (new)" : " (already cached)") << "\n";
  }
  return kSuccess;
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
  DiagnosticEngine diags;
  std::optional<ir::Graph> graph = load_graph(o.graph, diags);
  if (!graph) return report(diags);
  std::vector<DType> dtypes;
  if (o.dtype == "all") dtypes = {DType::f32, DType::f64};
  else dtypes = {*parse_dtype(o.dtype)};
  if (o.target == "cuda") return compile_cuda(o, *graph, dtypes, diags);
  if (o.target == "all")
    if (int status = compile_cuda(o, *graph, dtypes, diags); status != kSuccess) return status;
  // The strategy, and so the kernel, can depend on the signal's length: without --seconds,
  // compile for short signals and for signals long enough for the chunked strategies.
  passes::StrategyThresholds thresholds;
  std::vector<std::int64_t> lengths;
  if (length) lengths = {*length};
  else lengths = {static_cast<std::int64_t>(o.fs_hz), thresholds.chunked_min_samples};

  std::string directory = cache_directory(o.cache_dir);
  auto compiles_before = counters().compiles.load();
  auto write_failures_before = counters().cache_write_failures.load();
  int sets = 0;
  for (DType dtype : dtypes)
    for (std::int64_t length : lengths) {
      CpuCompileRequest request;
      request.sample_rate_hz = o.fs_hz;
      request.dtype = dtype;
      request.channels = o.channels;
      request.length_samples = length;
      request.cache_directory = directory;
      request.pipeline.time_passes = o.time_passes;
      request.pipeline.log = &std::cerr;
      if (!compile_for_cpu(*graph, request, diags)) return report(diags);
      ++sets;
    }
  report(diags);
  // Filling the cache is the whole point of compile: kernels that could not be stored are a
  // failure here, where a run only warns and goes on.
  if (counters().cache_write_failures > write_failures_before)
    return user_error("the kernels of " + o.graph + " could not be stored in the kernel cache " + directory +
                      " (the warnings above say why)");
  std::cout << "compiled " << sets << " kernel set(s) for " << o.graph << " into " << directory
            << " (" << counters().compiles - compiles_before << " new, "
            << sets - static_cast<int>(counters().compiles - compiles_before) << " already cached)\n";
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
  cmd->add_option("--channels", o->channels, "Channel count for inputs declared without one")
      ->capture_default_str();
  cmd->add_option("--seconds", o->seconds,
                  "Signal length the kernels are for (default: both short and long signals)");
  cmd->footer(
      "Kernels depend on the graph's shape, the channel count, the dtype and the strategy, not\n"
      "on coefficient values or the sample rate: compile once, then run with any cutoffs.\n"
      "Examples:\n"
      "  fxc compile examples/vocal.fx\n"
      "  fxc compile examples/eq.fx --channels 2 --dtype all --cache-dir /tmp/fxc-cache");
  cmd->callback([&action, o] { action = [o] { return compile(*o); }; });
}

}  // namespace fxc::cli
