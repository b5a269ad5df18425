// SPDX-License-Identifier: Apache-2.0
// fxc run over a corpus: the inputs listed (globs, directories), each file's outputs named
// (--out-dir or an -o pattern) and checked before anything runs, then --jobs files at a time
// through corpus::CorpusRunner. A file's failure is reported with its path and the others go
// on; a summary line ends the run. Memory holds the file list and --jobs files at a time.
#include <fxc/fxc.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "corpus/abandoned_pending.h"
#include "corpus/corpus_runner.h"
#include "corpus/file_list.h"
#include "corpus/output_names.h"
#include "formats/signal_file.h"
#include "runtime/counters.h"
#include "runtime/gpu_device.h"
#include "support/float_format.h"
#include "support/trace.h"
#include "tools/fxc/cli_support.h"
#include "tools/fxc/progress_bar.h"
#include "tools/fxc/run_options.h"

namespace fxc::cli {

namespace {

// "--shard I/N" as (I, N), or a usage error.
std::pair<int, int> parse_shard(const std::string& text) {
  auto bad = [&] {
    return UsageError{"--shard expects I/N with 1 <= I <= N (shard I of N, counting from 1), got '" + text + "'"};
  };
  std::size_t slash = text.find('/');
  if (slash == std::string::npos) throw bad();
  int index = 0, count = 0;
  const char* end = text.data() + text.size();
  auto [p1, e1] = std::from_chars(text.data(), text.data() + slash, index);
  auto [p2, e2] = std::from_chars(text.data() + slash + 1, end, count);
  if (e1 != std::errc{} || e2 != std::errc{} || p1 != text.data() + slash || p2 != end || count < 1 || index < 1 ||
      index > count)
    throw bad();
  return {index, count};
}

std::string duration_text(double seconds) {
  if (seconds < 10) return fmt::format("{:.2f} s", seconds);
  if (seconds < 120) return fmt::format("{:.1f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.2f} h", seconds / 3600);
}

}  // namespace

int run_corpus(const RunOptions& o) {
  // What a corpus run cannot take: usage errors before anything is read.
  if (!o.out_dir.empty() && !o.outputs.empty())
    throw UsageError{"give either --out-dir or an -o pattern, not both"};
  if (o.outputs.size() > 1)
    throw UsageError{"a corpus run takes one -o pattern (with {output} for a graph with several outputs), got " +
                     std::to_string(o.outputs.size())};
  if (std::find(o.inputs.begin(), o.inputs.end(), "-") != o.inputs.end())
    throw UsageError{"standard input ('-i -') is one signal: it cannot be part of a corpus run"};
  if (o.block && *o.block < 1) return user_error("--block must be at least 1, got " + std::to_string(*o.block));
  if (o.block && o.target == "ref") return user_error("--block runs compiled kernels: use it with --target cpu or cuda");
  if (o.batch) throw UsageError{"--batch runs -i/-o groups as one batch: a corpus run takes its files one by one"};
  if (o.trace == "-") throw UsageError{"--trace takes a file name; '-' (standard input or output) is for -i and -o"};
  if (!o.load_state.empty() || !o.save_state.empty())
    throw UsageError{"--load-state and --save-state keep one stream's state: they cannot be used with a corpus run"};
  if (!o.pipe_format.empty()) throw UsageError{"--pipe-format applies to '-o -': a corpus run writes files"};
  if (o.jobs < 1) throw UsageError{"--jobs must be at least 1, got " + std::to_string(o.jobs)};
  std::pair<int, int> shard{1, 1};
  if (!o.shard.empty()) shard = parse_shard(o.shard);
  if (std::optional<int> wrong = check_run_values(o)) return *wrong;
  auto thresholds = parse_thresholds(o.thresholds);
  if (!thresholds) return user_error(thresholds.error(), "fxc-threshold");
  // The files are the parallelism: each job's run takes one thread unless --threads gives
  // the pool's size (then shared by all jobs).
  set_threads(o.threads > 0 ? o.threads : o.jobs > 1 ? 1 : 0);
  if (!o.trace.empty()) Trace::global().enable();
  auto started = std::chrono::steady_clock::now();

  corpus::RunnerOptions runner_options;
  runner_options.options = run_options(o, *thresholds);  // as a one-file fxc run compiles
  Options& options = runner_options.options;
  runner_options.subtype = o.subtype;
  runner_options.skip_existing = o.skip_existing;
  // Each file streamed in blocks, as `fxc run -i FILE --block N` streams one.
  runner_options.block = o.block ? static_cast<std::size_t>(*o.block) : 0;

  // Said once, not as every file's failure to make its directory.
  if (std::error_code error; !o.out_dir.empty() && std::filesystem::exists(o.out_dir, error) &&
                             !std::filesystem::is_directory(o.out_dir, error))
    return user_error("--out-dir '" + o.out_dir + "' is not a directory");

  std::optional<corpus::CorpusRunner> runner;
  try {
    runner.emplace(o.graph, false, runner_options);
  } catch (const Error& e) {
    return report(e);
  }

  // As a one-file run does: the device opens while the corpus is listed and its first file read.
  if (options.target == Target::cuda) open_cuda_device_early();

  auto files = corpus::list_inputs(o.inputs, o.out_dir.empty() ? std::vector<std::string>{} : std::vector{o.out_dir});
  if (!files) return user_error(files.error());
  corpus::OutputNaming naming{o.out_dir, o.outputs.empty() ? std::string() : o.outputs[0]};
  // Every name of the whole corpus, before sharding: a clash is found whichever shard holds it.
  auto outputs = corpus::all_output_paths(naming, *files, runner->output_names());
  if (!outputs) throw UsageError{outputs.error(), false};
  if (!o.trace.empty()) {  // the outputs are apart from the inputs and each other already
    std::vector<NamedPath> reads{{"the graph", o.graph}};
    for (const auto& file : *files) reads.push_back({"the input", file.path});
    for (const auto& paths : *outputs)
      for (const std::string& path : paths) reads.push_back({"the output", path});
    check_paths_apart({{"--trace", o.trace}}, reads);
  }
  {
    // Formats and subtypes, once per extension, before anything runs.
    std::set<std::string> extensions;
    for (const auto& paths : *outputs)
      for (const std::string& path : paths)
        if (extensions.insert(lower_extension(path)).second)
          if (auto ok = check_output_encoding(path, WriteOptions{o.subtype}); !ok)
            return user_error(ok.error() + (o.outputs.empty() ? " (an -o pattern with another extension, such as "
                                                                "-o 'out/{dir}/{stem}.wav', converts)"
                                                              : ""));
  }
  std::vector<std::size_t> mine;  // indices of this shard's files
  for (std::size_t k = static_cast<std::size_t>(shard.first - 1); k < files->size();
       k += static_cast<std::size_t>(shard.second))
    mine.push_back(k);

  std::uint64_t total_bytes = 0;
  for (std::size_t k : mine) {
    std::error_code error;
    auto size = std::filesystem::file_size((*files)[k].path, error);
    total_bytes += error ? 1 : size;
  }

  auto before = std::make_tuple(counters().compiles.load(), counters().memory_hits.load(), counters().disk_hits.load(),
                                counters().dispatches.load());
  std::mutex mutex;  // guards what follows, and standard error
  std::size_t written = 0, skipped = 0, failed = 0, done = 0;
  std::uint64_t done_bytes = 0;
  double audio_seconds = 0;
  ProgressBar progress(total_bytes, "bytes", progress_mode(o));
  std::atomic<std::size_t> next{0};
  std::exception_ptr bug;  // an InternalError (or another exception) in a worker
  auto work = [&] {
    try {
      for (std::size_t at = next++; at < mine.size(); at = next++) {
        std::size_t k = mine[at];
        corpus::FileResult r = runner->process((*files)[k], (*outputs)[k]);
        std::error_code error;
        auto size = std::filesystem::file_size((*files)[k].path, error);
        std::lock_guard lock(mutex);
        if (!r.warnings.empty() || r.status == corpus::FileResult::Status::failed) progress.clear();
        std::cerr << r.warnings;
        switch (r.status) {
          case corpus::FileResult::Status::written:
            ++written;
            audio_seconds += static_cast<double>(r.frames) / r.sample_rate_hz;
            break;
          case corpus::FileResult::Status::skipped: ++skipped; break;
          case corpus::FileResult::Status::failed:
            ++failed;
            std::cerr << "error: " << r.message << "\n";
            break;
        }
        ++done;
        done_bytes += error ? 1 : size;
        progress.update(done_bytes, fmt::format("{}/{} files, {} of audio", done, mine.size(), duration_text(audio_seconds)));
      }
    } catch (...) {
      std::lock_guard lock(mutex);
      if (!bug) bug = std::current_exception();
      next = mine.size();  // the others stop after their file
    }
  };
  {
    std::vector<std::jthread> workers;
    const int wanted = std::min<int>(o.jobs, static_cast<int>(std::max<std::size_t>(mine.size(), 1)));
    for (int j = 1; j < wanted; ++j) {
      try {
        workers.emplace_back(work);
      } catch (const std::system_error& e) {
        // Threads the system will not give (ulimit -u, a memory limit): the run goes on with the
        // jobs it has, this thread's included, rather than stopping as a bug with files unrun.
        std::lock_guard lock(mutex);
        std::cerr << "warning: --jobs " << o.jobs << ": the system gave " << j << " job(s) (" << e.code().message()
                  << "); the run goes on with those\n";
        break;
      }
    }
    work();
  }
  progress.clear();
  if (bug) std::rethrow_exception(bug);
  // What an earlier, interrupted run of these outputs left (so --skip-existing resumes clean).
  {
    std::vector<std::string> all;
    for (std::size_t k : mine)
      for (const std::string& out : (*outputs)[k]) all.push_back(out);
    corpus::remove_abandoned_pending(all);
  }
  if (auto ok = write_trace(o.trace); !ok) return user_error(ok.error());

  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string files_text = std::to_string(mine.size()) + " file" + (mine.size() == 1 ? "" : "s");
  if (shard.second > 1)
    files_text += " (shard " + std::to_string(shard.first) + "/" + std::to_string(shard.second) + " of " +
                  std::to_string(files->size()) + ")";
  std::cerr << "fxc run: " << files_text << ": " << written << " written, " << skipped << " skipped, " << failed
            << " failed; " << duration_text(audio_seconds) << " of audio in " << duration_text(wall) << "\n";
  if (o.stats) {
    auto [compiles, memory_hits, disk_hits, dispatches] = before;
    std::cerr << "fxc run statistics (corpus of " << mine.size() << " file(s), " << o.jobs << " job(s))\n"
              << "  compiles          " << counters().compiles - compiles << "\n"
              << "  cache hits        " << counters().memory_hits - memory_hits << " memory, "
              << counters().disk_hits - disk_hits << " disk\n"
              << "  kernel dispatches " << counters().dispatches - dispatches << "\n"
              << "  audio             " << fmt::format("{:.3f}", audio_seconds) << " s\n"
              << "  wall time         " << fmt::format("{:.3f}", wall) << " s\n"
              << "  real-time factor  " << fmt::format("{:.1f}", wall > 0 ? audio_seconds / wall : 0) << "x\n"
              << "  peak RSS          " << peak_rss_kib() << " KiB\n";
  }
  return failed > 0 ? kUserError : kSuccess;
}

}  // namespace fxc::cli
