// fxc run: read audio or .npy inputs, run the graph, write the outputs atomically.
#include <CLI/CLI.hpp>
#include <cmath>
#include <memory>

#include <filesystem>
#include <set>
#include <unistd.h>

#include "runtime/bind_inputs.h"
#include "runtime/compile_cpu.h"
#include "runtime/cpu_executor.h"
#include "runtime/reference_interpreter.h"
#include "runtime/signal_file.h"
#include "support/float_format.h"
#include "tools/fxc/commands.h"

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
  std::vector<std::string> sets;
  std::string trace, cache_dir;
};

// Each output is first written beside its destination under a pending name (keeping its
// extension, which picks the format), and all are renamed only once every one was written:
// a run that fails at its second output leaves the first output as it was.
class PendingOutputs {
 public:
  ~PendingOutputs() {
    for (const auto& [pending, final_path] : files_) std::filesystem::remove(pending);
  }
  Expected<std::monostate, std::string> write(const std::string& path, const Signal& signal,
                                              std::optional<double> fs, const WriteOptions& o) {
    std::filesystem::path target(path);
    std::string pending = (target.parent_path() / (".fxc-pending-" + std::to_string(getpid()) +
                                                   "-" + target.filename().string()))
                              .string();
    auto ok = write_signal_file(pending, signal, fs, o);
    if (!ok) return Unexpected{ok.error()};
    files_.emplace_back(pending, path);
    return std::monostate{};
  }
  Expected<std::monostate, std::string> commit() {
    for (const auto& [pending, final_path] : files_) {
      std::error_code error;
      std::filesystem::rename(pending, final_path, error);
      if (error) return Unexpected{"cannot write '" + final_path + "': " + error.message()};
    }
    files_.clear();
    return std::monostate{};
  }

 private:
  std::vector<std::pair<std::string, std::string>> files_;
};

int run(const RunOptions& o) {
  if (o.target == "cuda")
    return user_error("the 'cuda' target is not available in this build yet; use --target cpu");
  if (o.block) return user_error("--block (streaming) is not available in this build yet");
  if (!o.trace.empty()) return user_error("--trace is not available in this build yet");
  if (o.fs_hz && !(*o.fs_hz > 0 && std::isfinite(*o.fs_hz)))
    return user_error("--fs must be a positive number of Hz, got " + format_double(*o.fs_hz));

  WriteOptions write_options{o.subtype};
  std::set<std::string> seen;
  for (const std::string& path : o.outputs) {
    if (!seen.insert(std::filesystem::weakly_canonical(path).string()).second)
      throw UsageError{"the output '" + path + "' is given twice"};
    if (auto ok = check_output_format(path, write_options); !ok) return user_error(ok.error());
  }

  DiagnosticEngine diags;
  std::optional<ir::Graph> graph = load_graph(o.graph, diags, o.sets);
  if (!graph) return report(diags);
  std::size_t want_in = graph->inputs().size(), want_out = graph->outputs().size();
  if (o.inputs.size() != want_in)
    throw UsageError{"the graph has " + std::to_string(want_in) + " input(s) but " +
                     std::to_string(o.inputs.size()) + " -i file(s) were given"};
  if (o.outputs.size() != want_out)
    throw UsageError{"the graph has " + std::to_string(want_out) + " output(s) but " +
                     std::to_string(o.outputs.size()) + " -o file(s) were given"};

  DType dtype = *parse_dtype(o.dtype);
  std::vector<Signal> signals;
  std::optional<double> fs_hz = o.fs_hz;
  std::string fs_source;
  for (const std::string& path : o.inputs) {
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
    signals.push_back(std::move(file->signal));
  }

  std::optional<ir::Graph> bound = bind_inputs(*graph, signals, diags, o.inputs);
  if (!bound) return report(diags);

  std::vector<Signal> results;
  if (o.target == "ref") {
    auto out = run_reference(*bound, *fs_hz, signals, diags);
    if (!out) return report(diags);
    results = std::move(*out);
  } else {
    CpuCompileRequest request;
    request.sample_rate_hz = *fs_hz;
    request.dtype = dtype;
    request.length_samples = signals.empty() ? 0 : static_cast<std::int64_t>(signals[0].samples());
    request.cache_directory = cache_directory(o.cache_dir);
    std::optional<CompiledCpuGraph> compiled = compile_for_cpu(*bound, request, diags);
    if (!compiled) return report(diags);
    auto out = execute_cpu(compiled->scheduled, *compiled->kernels, signals);
    if (!out) return user_error(out.error());
    results = std::move(*out);
  }
  report(diags);  // warnings, if any

  PendingOutputs pending;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (auto ok = pending.write(o.outputs[i], results[i].converted(dtype), fs_hz, write_options); !ok)
      return user_error(ok.error());
  if (auto ok = pending.commit(); !ok) return user_error(ok.error());
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
                  "Where to run: cpu (compiled kernels) or ref (the float64 reference interpreter)")
      ->check(CLI::IsMember({"ref", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype,
                  "Sample type of the computation and of .npy outputs (ref computes in float64)")
      ->check(CLI::IsMember({"f32", "f64"}))
      ->capture_default_str();
  cmd->add_option("--subtype", o->subtype,
                  "Encoding of audio outputs: pcm16, pcm24, pcm32, float, double, ... (WAV "
                  "default: float)");
  cmd->add_option("--block", o->block, "Process in blocks of N samples through the stream path");
  cmd->add_option("--set", o->sets,
                  "Give a constant of the graph (a binding NAME = NUMBER) a new value: "
                  "NAME=VALUE, e.g. --set fc=500Hz; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--trace", o->trace, "Write a Chrome trace of compile and run phases");
  cmd->add_option("--cache-dir", o->cache_dir, "Kernel cache directory");
  cmd->footer(
      "Examples:\n"
      "  fxc run examples/vocal.fx -i voice.wav -o out.wav\n"
      "  fxc run examples/crossover.fx -i mix.wav -o low.wav -o high.wav\n"
      "  fxc run eq.fx -i x.npy --fs 48000 -o y.npy --dtype f32\n"
      "Nothing is written to an output unless the whole run succeeds.");
  cmd->callback([&action, o] { action = [o] { return run(*o); }; });
}

}  // namespace fxc::cli
