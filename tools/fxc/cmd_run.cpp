// SPDX-License-Identifier: Apache-2.0
// fxc run: read audio or .npy inputs, run the graph through the public API (fxc::Program, and
// an fxc::Processor for --block and state files), write the outputs atomically.
#include <CLI/CLI.hpp>
#include <fxc/fxc.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <sys/resource.h>
#include <unistd.h>

#include "corpus/corpus_runner.h"
#include "corpus/file_list.h"
#include "corpus/output_names.h"
#include "corpus/pending_outputs.h"
#include "formats/signal_file.h"
#include "runtime/counters.h"
#include "runtime/gpu_device.h"
#include "support/file_io.h"
#include "support/float_format.h"
#include "support/trace.h"
#include "tools/fxc/commands.h"
#include "tools/fxc/progress_bar.h"
#include "tools/fxc/run_options.h"
#include "corpus/stream_blocks.h"
#include "corpus/stream_files.h"

namespace fxc::cli {
Expected<std::monostate, std::string> write_trace(const std::string& path) {
  if (path.empty()) return std::monostate{};
  std::string json = Trace::global().to_json();
  return write_file_atomically(path, [&](int fd, const std::string&) {
    return write_all(fd, json.data(), json.size());
  });
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // KiB on Linux
}

ProgressMode progress_mode(const RunOptions& o) {
  return o.progress == "always" ? ProgressMode::always : o.progress == "never" ? ProgressMode::never : ProgressMode::automatic;
}

bool is_corpus_run(const RunOptions& o) {
  return !o.out_dir.empty() || std::any_of(o.outputs.begin(), o.outputs.end(), corpus::has_pattern_field);
}

std::optional<int> check_run_values(const RunOptions& o) {
  for (const std::string& set : o.sets)
    if (auto eq = set.find('='); eq == std::string::npos || eq == 0)
      throw UsageError{"--set expects NAME=VALUE, got '" + set + "'"};
  if (o.threads < 0) return user_error("--threads must be at least 1 (or 0 for the default), got " + std::to_string(o.threads));
  if (o.fs_hz && !(*o.fs_hz > 0 && std::isfinite(*o.fs_hz)))
    return user_error("--fs must be a positive number of Hz, got " + format_double(*o.fs_hz));
  return std::nullopt;
}

Options run_options(const RunOptions& o, const std::vector<std::pair<std::string, double>>& thresholds) {
  Options options;
  options.sample_rate_hz = o.fs_hz.value_or(0);
  options.dtype = *parse_dtype(o.dtype);
  options.target = o.target == "ref" ? Target::reference : o.target == "cuda" ? Target::cuda : Target::cpu;
  options.cache_directory = o.cache_dir;
  options.thresholds = thresholds;
  options.settings = o.sets;
  // The command line runs each graph once with the values it was given: constants without a
  // declared range are compiled in (the fastest kernels for them); ranged ones stay live, so
  // that every value of their ranges hits the kernel cache (docs/cli.md, --set).
  options.live_unranged_params = false;
  options.time_passes = o.time_passes;
  options.log = &std::cerr;
  return options;
}

namespace {

// The signal read from standard input (`-i -`): the whole of it, .npy or audio by its first bytes.
Expected<SignalFile, std::string> read_stdin(DType dtype, bool& npy) {
  std::string bytes;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unexpected{"cannot read '<stdin>': " + std::string(std::strerror(errno))};
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  if (bytes.empty()) return Unexpected{std::string("cannot read '<stdin>': standard input is empty")};
  npy = is_npy_bytes(bytes);
  return read_signal_bytes(bytes, "<stdin>", dtype);
}

// What only a corpus run takes, or only a one-item run, is a usage error in the other mode.
void check_single_mode(const RunOptions& o) {
  for (const std::string& input : o.inputs) {
    std::error_code error;
    bool directory = std::filesystem::is_directory(input, error);
    bool glob = corpus::is_glob(input) && !std::filesystem::exists(input, error);
    if (directory || glob)
      throw UsageError{"-i '" + input + "' is " + (directory ? "a directory" : "a glob pattern") +
                       ": a corpus run needs --out-dir DIR (outputs mirror the inputs' directories) or an -o "
                       "pattern such as -o 'out/{dir}/{stem}_eq.{ext}' (see docs/corpora.md)"};
  }
  for (const std::string& input : o.inputs)
    if (input.size() > 1 && input[0] == '-')  // `-i -o out.wav`: -i took the next option as its value
      throw UsageError{"-i '" + input + "' is an option, not a file: give each -i a file name (or '-' for "
                       "standard input)"};
  if (o.outputs.empty())
    throw UsageError{"no output: give --output (-o) once per graph output, or --out-dir DIR or an -o pattern "
                     "for a corpus"};
  if (o.jobs != 1) throw UsageError{"--jobs runs the files of a corpus in parallel: use it with --out-dir or an -o pattern"};
  if (o.skip_existing) throw UsageError{"--skip-existing applies to a corpus run: use it with --out-dir or an -o pattern"};
  if (!o.shard.empty()) throw UsageError{"--shard splits a corpus: use it with --out-dir or an -o pattern"};
  // '-' is standard input or output for -i and -o only; elsewhere it made a file named '-'.
  for (const auto& [option, path] : {std::pair{"--save-state", &o.save_state}, std::pair{"--load-state", &o.load_state},
                                     std::pair{"--trace", &o.trace}})
    if (*path == "-")
      throw UsageError{std::string(option) + " takes a file name; '-' (standard input or output) is for -i and -o"};
  if (std::count(o.inputs.begin(), o.inputs.end(), "-") > 1)
    throw UsageError{"standard input ('-i -') can be read only once"};
  if (std::count(o.outputs.begin(), o.outputs.end(), "-") > 1)
    throw UsageError{"standard output ('-o -') can take only one output"};
  if (!o.pipe_format.empty() && std::find(o.outputs.begin(), o.outputs.end(), "-") == o.outputs.end())
    throw UsageError{"--pipe-format is the format of standard output: use it with '-o -'"};
}

// NaN and infinite input samples are not errors (every stage computes with them as IEEE
// arithmetic does, see docs/errors.md) but are seldom meant: one warning per file.
void warn_non_finite(const Signal& s, const std::string& path, DiagnosticEngine& diags) {
  if (std::string warning = corpus::non_finite_warning(s, path); !warning.empty())
    diags.warning({}, warning, "fxc-input");
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

int run(const RunOptions& o) {
  if (is_corpus_run(o)) {
    if (o.live_pipe) throw UsageError{"--live-pipe runs standard input to standard output: a corpus run writes files"};
    return run_corpus(o);
  }
  check_single_mode(o);
  if (o.live_pipe) return run_live_pipe(o);
  if (o.block && *o.block < 1) return user_error("--block must be at least 1, got " + std::to_string(*o.block));
  if (o.block && o.target == "ref") return user_error("--block runs compiled kernels: use it with --target cpu or cuda");
  auto thresholds = parse_thresholds(o.thresholds);
  if (!thresholds) return user_error(thresholds.error(), "fxc-threshold");
  if ((!o.load_state.empty() || !o.save_state.empty()) && o.target == "ref")
    return user_error("--load-state and --save-state keep a compiled stream's state: use them with --target cpu or cuda");
  if (std::optional<int> wrong = check_run_values(o)) return *wrong;
  set_threads(o.threads);
  if (!o.trace.empty()) Trace::global().enable();

  // Nothing the run writes may be the graph, the state it loads, or another thing it writes;
  // only an output may replace an input (the inputs are read whole first: processing in
  // place), not the state or the trace.
  std::vector<NamedPath> writes, inputs;
  for (const std::string& path : o.outputs) writes.push_back({"the output", path});
  writes.push_back({"--save-state", o.save_state});
  writes.push_back({"--trace", o.trace});
  for (const std::string& path : o.inputs) inputs.push_back({"the input", path});
  check_paths_apart(writes, {{"the graph", o.graph}, {"--load-state", o.load_state}});
  check_paths_apart({{"--save-state", o.save_state}, {"--trace", o.trace}}, inputs);
  WriteOptions write_options{o.subtype};

  auto started = Clock::now();
  std::vector<std::pair<const char*, double>> phases;
  // The graph's ports first (parsed, not compiled: the sample rate may come from the inputs),
  // so that a wrong command line is reported before any input is read.
  GraphInfo info;
  {
    TraceSpan span("parse and lower", "frontend", {{"file", o.graph}});
    try {
      info = inspect_graph_file(o.graph, o.sets);
    } catch (const Error& e) {
      return report(e);
    }
  }
  phases.emplace_back("parse", ms_since(started));
  // With --batch, -i and -o given k times the graph's inputs and outputs: a batch of k items,
  // in order. Without it, any other count than the graph's is a command-line error, as the
  // contract (design/cli.md) says: a batch is asked for, not guessed from a count.
  std::size_t want_in = info.inputs.size(), want_out = info.outputs.size();
  std::size_t items = want_in ? o.inputs.size() / want_in : 0;
  if (!o.batch && o.inputs.size() != want_in)
    throw UsageError{"the graph has " + std::to_string(want_in) + " input(s) but " + std::to_string(o.inputs.size()) +
                     " -i file(s) were given" +
                     (items > 1 && o.inputs.size() == items * want_in
                          ? " (give --batch to run them as a batch of " + std::to_string(items) + " items)"
                          : std::string())};
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
  // After the counts: an -o in a missing directory with one -i too many is a command line to
  // fix first, whichever the user would have found next.
  for (const std::string& path : o.outputs) {
    if (path == "-") continue;  // standard output: its format is known once the inputs are read
    if (auto ok = check_output_format(path, write_options); !ok) return user_error(ok.error());
  }
  if (items > 1 && o.block) throw UsageError{"--block streams one item; it cannot be used with a batch"};
  bool state_files = !o.load_state.empty() || !o.save_state.empty();
  if (items > 1 && state_files)
    throw UsageError{"--load-state and --save-state keep one stream's state; they cannot be used with a batch"};

  // The CUDA driver's initialization and context (hundreds of milliseconds in a fresh process)
  // overlap reading the inputs and the passes; the compile takes the device.
  if (o.target == "cuda") open_cuda_device_early();

  DType dtype = *parse_dtype(o.dtype);
  bool stream = o.block || state_files;
  const bool cuda = o.target == "cuda";
  // A stream on files reads its inputs and writes its outputs a chunk at a time, so that memory
  // does not grow with the file (docs/cli.md, --block); so does every CUDA run on files, in the
  // pieces a whole run takes. Standard input and output, pipes and devices, a length only the
  // whole file tells, and batches are run whole.
  std::vector<std::unique_ptr<SignalReader>> readers;
  if ((stream || cuda) && items == 1 && corpus::outputs_streamable(o.outputs)) {
    auto opened = corpus::open_streamed_inputs(o.inputs);
    if (!opened) return user_error(opened.error());
    readers = std::move(opened).value();
    // A whole run compiles for each undeclared input's own channel count; a stream binds one.
    int undeclared = 0;
    for (std::size_t i = 0; !stream && i < readers.size(); ++i)
      if (info.inputs[i].channels == 0) {
        const int channels = static_cast<int>(readers[i]->channels());
        if (undeclared != 0 && channels != undeclared) readers.clear();
        else undeclared = channels;
      }
  }
  // Through a Processor: --block, the state files, or a CUDA run on files.
  const bool use_processor = stream || (cuda && !readers.empty());
  DiagnosticEngine diags;  // warnings about the inputs
  std::vector<Signal> signals;
  std::optional<double> fs_hz = o.fs_hz;
  std::string fs_source;
  // Standard output takes .npy or WAV: --pipe-format, else the kind of standard input, else
  // of the first input file.
  std::string pipe_extension = o.pipe_format.empty() ? "" : "." + o.pipe_format;
  if (pipe_extension.empty() && !o.inputs.empty() && o.inputs[0] != "-")
    pipe_extension = lower_extension(o.inputs[0]) == ".npy" ? ".npy" : ".wav";
  for (std::string path : o.inputs) {
    TraceSpan span("read " + path, "io");
    bool npy = false;
    // A streamed input stands here as its channels without samples; its frames come later.
    const std::size_t i = signals.size();
    auto file = !readers.empty() ? Expected<SignalFile, std::string>(corpus::without_samples(*readers[i], dtype))
                : path == "-"       ? read_stdin(dtype, npy)
                              : read_signal_file(path, dtype);
    if (path == "-") {
      path = "<stdin>";
      if (o.pipe_format.empty()) pipe_extension = npy ? ".npy" : ".wav";
    }
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
    file->signal.set_source(path);  // messages about it name the file
    signals.push_back(std::move(file->signal));
  }
  phases.emplace_back("read inputs", ms_since(started) - phases.back().second);
  std::size_t total = !readers.empty() ? readers[0]->frames() : signals.empty() ? 0 : signals[0].samples();
  std::uint64_t input_bytes = 0;  // for --stats (the run may take the inputs' memory)
  for (const Signal& s : signals) input_bytes += s.channels() * (readers.empty() ? s.samples() : total) * size_of(dtype);

  // Blocks: --block's, or for state files alone the whole signal in 64 Ki-frame calls (the
  // state carries across them exactly). A Processor is prepared for at most 2^20 frames a call
  // (2^24 on the GPU) and splits longer ones.
  std::size_t block = o.block ? static_cast<std::size_t>(*o.block) : std::size_t{1} << 16;
  std::size_t prepared = corpus::prepared_frames(block, total, cuda);

  Options options = run_options(o, *thresholds);
  options.sample_rate_hz = *fs_hz;
  // The strategy follows what one call sees: the whole signal, one block, or the batch's
  // longest item (which the batch finds itself).
  options.signal_length = items > 1 ? 0 : stream ? prepared : total;
  // A CUDA run on files without --block streams in a whole run's pieces (the Processor's
  // default on the GPU), not in --block's.
  options.max_block = cuda && !stream ? 0 : prepared;
  // A Processor compiles the kernels for its blocks itself, and a batch for its wide graph.
  options.compile_kernels = !stream && items == 1;
  // Inputs declared without a channel count take their signal's (the first such).
  for (std::size_t i = 0; i < want_in && options.channels == 0; ++i)
    if (info.inputs[i].channels == 0) options.channels = static_cast<int>(signals[i].channels());

  // A stream binds one count to every input declared without one (a whole run compiles for
  // each input's own, and reports a graph that mixes them).
  if (stream)
    for (std::size_t i = 0; i < want_in; ++i)
      if (info.inputs[i].channels == 0 && static_cast<int>(signals[i].channels()) != options.channels)
        return user_error("--block and the state files run one channel count for every input declared without "
                          "one, but '" + o.inputs[i] + "' has " + std::to_string(signals[i].channels()) +
                          " and the first such input " + std::to_string(options.channels) +
                          " (declare the counts: input x : 2)");

  auto before_stats = std::make_tuple(counters().compiles.load(), counters().memory_hits.load(),
                                      counters().disk_hits.load(), counters().dispatches.load());
  auto phase_start = Clock::now();
  std::vector<Signal> results;
  std::vector<std::vector<Signal>> batch_results;
  std::optional<std::string> saved_state;  // --save-state: written with the outputs
  std::uint64_t streamed_bytes = 0;        // outputs written during a streamed run
  corpus::PendingOutputs pending;
  try {
    Program program = program_from_file(o.graph, options);
    // An output its format cannot hold (9 channels to FLAC) is found before the run, not after.
    const std::vector<PortInfo> ports = program.outputs();
    for (std::size_t i = 0; i < o.outputs.size(); ++i) {
      const int channels = ports[i % want_out].channels;
      const bool piped = o.outputs[i] == "-";
      if (channels > 0)
        if (auto ok = check_output_channels(piped ? "<stdout>" + pipe_extension : o.outputs[i],
                                            static_cast<std::size_t>(channels), write_options,
                                            piped ? "<stdout>" : "");
            !ok)
          return user_error(ok.error());
    }
    std::optional<Processor> processor;
    if (use_processor) {
      processor.emplace(program);
      // A CUDA run on files without --block: the pieces Program::run takes (as long as the
      // file, at most as many frames as 128 MiB holds), so the output is its, bit for bit.
      processor->prepare(stream ? prepared : 0, std::max<std::size_t>(total, 1));
      block = processor->max_block();
      // As a whole run checks them: the blocks are read through pointers nothing else checks
      // (a file of too few channels crashed the run, one of too many lost them).
      processor->check_inputs(signals);
      // Streamed inputs stand there without their samples: their lengths are checked here,
      // after their channels, as a whole run checks them.
      for (std::size_t i = 1; i < readers.size(); ++i)
        if (readers[i]->frames() != total)
          return user_error("inputs have different lengths: '" + o.inputs[0] + "' has " + std::to_string(total) +
                                " samples, '" + o.inputs[i] + "' has " + std::to_string(readers[i]->frames()) +
                                " (every input of a graph must have the same length)",
                            "fxc-length");
    }
    if (options.target != Target::reference) phases.emplace_back("compile", ms_since(phase_start));
    phase_start = Clock::now();
    if (items > 1) {
      // A batch: every item through one compiled graph, one dispatch per kernel for all of them.
      std::vector<std::vector<Signal>> batch(items);
      for (std::size_t i = 0; i < signals.size(); ++i) batch[i / want_in].push_back(std::move(signals[i]));
      batch_results = program.run_batch(batch);
    } else if (processor) {
      if (!o.load_state.empty()) {
        auto bytes = read_whole_file(o.load_state);
        if (!bytes) return user_error(bytes.error());
        try {
          processor->load_state(*bytes);
        } catch (const Error& e) {
          return user_error("cannot load '" + o.load_state + "': " + e.message());
        }
      }
      ProgressBar progress(total, "samples", progress_mode(o));
      if (!readers.empty()) {
        corpus::StreamedFiles files{&readers, &o.inputs, &o.outputs, {}, total, block, dtype, fs_hz,
                                    std::vector<WriteOptions>(o.outputs.size(), write_options)};
        for (const PortInfo& port : program.outputs()) {
          files.output_channels.push_back(static_cast<std::size_t>(port.channels));
          streamed_bytes += static_cast<std::uint64_t>(port.channels) * total * size_of(dtype);
        }
        auto streamed =
            corpus::stream_files(*processor, files, pending, [&](std::size_t done) { progress.update(done); });
        if (!streamed) return user_error(streamed.error());
        for (const std::string& warning : streamed->warnings) diags.warning({}, warning, "fxc-input");
      } else {
        for (const PortInfo& port : program.outputs())
          results.emplace_back(static_cast<std::size_t>(port.channels), total, dtype, Signal::Uninitialized{});
        corpus::stream_blocks(*processor, signals, results, block, [&](std::size_t done) { progress.update(done); });
      }
      // A GPU that failed during the stream left zeros: the run fails, and no output is written.
      if (std::string failed = processor->device_error(); !failed.empty())
        return user_error("the GPU failed during the run: " + failed, "fxc-cuda");
      if (!o.save_state.empty()) saved_state = processor->save_state();
    } else {
      // The inputs are given up: an output computes over an input's memory (in place)
      // rather than into fresh pages, which the system zeroes first (docs/performance.md).
      results = program.run(std::move(signals));
    }
    if (std::string warnings = program.warnings(); !warnings.empty()) std::cerr << warnings;
  } catch (const Error& e) {
    return report(e);
  }
  phases.emplace_back(o.target == "ref" ? "run (reference)" : use_processor ? "run (stream)" : "run",
                      ms_since(phase_start));
  report(diags);  // warnings about the inputs, if any

  phase_start = Clock::now();
  std::optional<std::string> piped;  // the bytes for standard output, written before the state and the files
  {
    TraceSpan span("write outputs", "io");
    auto write = [&](const std::string& path, const Signal& s) -> Expected<std::monostate, std::string> {
      // Converted only where the run's type is not the file's: a copy of a long signal costs
      // about what reading it does.
      const Signal converted = s.dtype() == dtype ? Signal() : s.converted(dtype);
      const Signal& out = s.dtype() == dtype ? s : converted;
      if (path != "-") return pending.write(path, out, fs_hz, write_options);
      auto bytes = encode_signal(out, pipe_extension, fs_hz, write_options);
      if (!bytes) return Unexpected{bytes.error()};
      piped = std::move(bytes).value();
      return std::monostate{};
    };
    std::size_t k = 0;
    for (const auto& item : items > 1 ? batch_results : std::vector<std::vector<Signal>>{})
      for (const Signal& s : item)
        if (auto ok = write(o.outputs[k++], s); !ok) return user_error(ok.error());
    for (std::size_t i = 0; i < results.size(); ++i)
      if (auto ok = write(o.outputs[i], results[i]); !ok) return user_error(ok.error());
  }
  phases.emplace_back("write outputs", ms_since(phase_start));
  // The trace before the outputs' renames: a trace that cannot be written fails the run, and
  // a failed run leaves the outputs as they were.
  if (auto ok = write_trace(o.trace); !ok) return user_error(ok.error());
  // The state is written under a pending name with the files, then standard output, then all
  // are renamed into place: a state that cannot be written fails the run before anything
  // reaches standard output, and a reader that closed the pipe (or a full disk behind it)
  // fails it before a state is saved that a next run would continue from audio nobody got.
  if (saved_state)
    if (auto ok = pending.write_bytes(o.save_state, *saved_state); !ok) return user_error(ok.error());
  if (piped)
    if (auto ok = write_all(STDOUT_FILENO, piped->data(), piped->size()); !ok)
      return user_error("cannot write '<stdout>': " + ok.error());
  if (auto ok = pending.commit(); !ok) return user_error(ok.error());

  if (o.stats) {
    auto [compiles, memory_hits, disk_hits, dispatches] = before_stats;
    std::uint64_t bytes = input_bytes + streamed_bytes;
    for (const Signal& s : results) bytes += s.channels() * s.samples() * size_of(dtype);
    for (const auto& item : batch_results)
      for (const Signal& s : item) bytes += s.channels() * s.samples() * size_of(dtype);
    std::cerr << (items > 1 ? "fxc run statistics (batch of " + std::to_string(items) + ")\n"
                            : std::string("fxc run statistics\n"))
              << "  compiles          " << counters().compiles - compiles << "\n"
              << "  cache hits        " << counters().memory_hits - memory_hits << " memory, "
              << counters().disk_hits - disk_hits << " disk\n"
              << "  kernel dispatches " << counters().dispatches - dispatches << "\n"
              << "  GPU launches      " << counters().gpu_launches << " (" << counters().gpu_graph_launches
              << " CUDA graph replays), " << counters().gpu_bytes_copied << " bytes copied\n"
              << "  signal bytes      " << bytes << " (inputs read and outputs written)\n"
              << "  peak RSS          " << peak_rss_kib() << " KiB\n";
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
                  "Input files (WAV, FLAC, OGG, AIFF, ... or .npy; '-' for standard input), one per graph input "
                  "in declaration order; with --out-dir or an -o pattern, any number of files, directories "
                  "(searched recursively) and glob patterns (*, ?, [...], **)")
      ->required()
      ->allow_extra_args(true);
  cmd->add_option("-o,--output", o->outputs,
                  "An output file ('-' for standard output); its extension picks the format; repeat once per "
                  "graph output. With {stem} {name} {ext} {dir} {output} fields, a pattern naming each "
                  "file of a corpus: -o 'out/{dir}/{stem}_eq.{ext}'")
      ->allow_extra_args(false);
  cmd->add_option("--out-dir", o->out_dir,
                  "Run a corpus: each input's outputs go to DIR, mirroring its directory under its root, "
                  "named {stem}.{ext} ({stem}_{output}.{ext} for a graph with several outputs)");
  cmd->add_option("--jobs", o->jobs,
                  "Corpus: files processed at once (each run on 1 thread unless --threads says otherwise)")
      ->capture_default_str();
  cmd->add_flag("--skip-existing", o->skip_existing, "Corpus: leave out files whose outputs all exist (resumes a run)");
  cmd->add_option("--shard", o->shard,
                  "Corpus: run only shard I of N (1-based) of the sorted file list: file k (from 0) is in "
                  "shard k mod N + 1; e.g. --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT");
  cmd->add_option("--pipe-format", o->pipe_format,
                  "Format of '-o -' (standard output): wav or npy (default: the kind of the input)")
      ->check(CLI::IsMember({"wav", "npy"}));
  cmd->add_flag("--live-pipe", o->live_pipe,
                "With --block N, -i - and -o -: read a WAV on standard input as it comes and write each block's "
                "WAV output as soon as it is computed (live audio in a pipe; a run that fails part-way leaves "
                "what it wrote)");
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
                  "Process in blocks of N samples through the stream path (state carried exactly); on the CPU, "
                  "files are read and written a chunk at a time, so memory does not grow with the file");
  cmd->add_option("--threshold", o->thresholds,
                  "Override a cost-model threshold: NAME=VALUE (see docs/passes.md), e.g. "
                  "f64_state_pole_radius=2 to keep float32 state everywhere");
  cmd->add_option("--load-state", o->load_state,
                  "Start from the stream state in FILE (saved by --save-state from a graph of the same shape)");
  cmd->add_option("--save-state", o->save_state,
                  "Write the stream state at the end to FILE, to continue in a later run with --load-state");
  cmd->add_flag("--batch", o->batch,
                "Run -i and -o given k times the graph's inputs and outputs as one batch of k items (one "
                "dispatch per kernel for all of them)");
  cmd->add_flag("--stats", o->stats,
                "Print counters (compiles, cache hits, dispatches, bytes) and phase times to stderr");
  cmd->add_option("--set", o->sets,
                  "Give a constant of the graph (a binding NAME = NUMBER) a new value: "
                  "NAME=VALUE, e.g. --set fc=500Hz; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--trace", o->trace, "Write a Chrome trace of compile and run phases");
  cmd->add_flag("--time-passes", o->time_passes, "Print a table of the time each pass took (stderr)");
  cmd->add_option("--threads", o->threads,
                  "Threads a whole-file run may use (default: FXC_THREADS, else the cores this process may use)");
  cmd->add_option("--cache-dir", o->cache_dir, "Kernel cache directory");
  cmd->add_option("--progress", o->progress,
                  "The progress line on standard error: auto (on a terminal, once a run has taken a second), "
                  "always (from the start, a line per update where standard error is not a terminal), never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->footer(
      "Examples:\n"
      "  fxc run examples/vocal.fx -i voice.wav -o out.wav\n"
      "  fxc run examples/crossover.fx -i mix.wav -o low.wav -o high.wav\n"
      "  fxc run eq.fx -i x.npy --fs 48000 -o y.npy --dtype f32\n"
      "  fxc run eq.fx --batch -i a.wav -i b.wav -i c.wav -o a_eq.wav -o b_eq.wav -o c_eq.wav   # a batch\n"
      "  fxc run eq.fx -i - -o - < in.wav > out.wav                            # a pipe (WAV or .npy)\n"
      "  arecord -f S16_LE -r 48000 -c 2 | fxc run eq.fx --live-pipe --block 256 -i - -o - | aplay   # live\n"
      "Corpora (docs/corpora.md): --out-dir or an -o pattern runs every file on its own:\n"
      "  fxc run eq.fx -i corpus/ --out-dir out/ --jobs 4                      # out/ mirrors corpus/\n"
      "  fxc run eq.fx -i 'corpus/**/*.wav' -o 'out/{dir}/{stem}_eq.{ext}'     # globs expanded by fxc\n"
      "  fxc run eq.fx -i corpus/ --out-dir out/ --skip-existing --shard 2/8   # resume; one node of 8\n"
      "A failed file is reported with its path and the others go on; exit status 1 if any failed.\n"
      "Nothing is written to an output unless the whole run (in a corpus, the file's) succeeds.");
  cmd->callback([&action, o] { action = [o] { return run(*o); }; });
}

}  // namespace fxc::cli
