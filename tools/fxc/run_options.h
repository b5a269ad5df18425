// SPDX-License-Identifier: Apache-2.0
// fxc run's command line, shared by its two modes: files given one per graph port (one item,
// or a batch; cmd_run.cpp) and corpora (--out-dir or an -o pattern; cmd_run_corpus.cpp).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <fxc/fxc.h>

#include "support/expected.h"
#include "tools/fxc/progress_bar.h"

namespace fxc::cli {

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
  bool batch = false;  ///< -i/-o given k times the graph's inputs and outputs run as k items
  bool time_passes = false;
  int threads = 0;  // --threads: 0 for the default
  std::string pipe_format;  // --pipe-format wav|npy: "" follows the input's kind
  std::string progress = "auto";  // --progress auto|always|never
  bool live_pipe = false;  ///< --live-pipe: a WAV on standard input run and written as it comes
  // Corpus mode.
  std::string out_dir;
  int jobs = 1;
  bool skip_existing = false;
  std::string shard;  // "I/N"
};

/// --progress as the progress line takes it.
ProgressMode progress_mode(const RunOptions& o);

/// True when the command line asks for corpus mode: --out-dir, or an -o with a {field}.
bool is_corpus_run(const RunOptions& o);

/// fxc run over a corpus (tools/fxc/cmd_run_corpus.cpp); returns the exit status.
int run_corpus(const RunOptions& o);

/// fxc run --live-pipe (tools/fxc/cmd_run_live.cpp): standard input to standard output a
/// block at a time; returns the exit status.
int run_live_pipe(const RunOptions& o);

/// The values every mode of fxc run checks alike: --set's form (a UsageError), --threads and
/// --fs. The exit status where one is wrong (its message printed), else nothing.
std::optional<int> check_run_values(const RunOptions& o);

/// The Options every mode of fxc run compiles with, from its command line (`thresholds`
/// parsed): the sample rate (--fs, else 0 until an input gives it), dtype, target, cache,
/// thresholds, --set values, and constants without a range compiled in.
Options run_options(const RunOptions& o, const std::vector<std::pair<std::string, double>>& thresholds);

/// --trace: the Chrome trace so far, written whole or not at all; nothing without a path.
Expected<std::monostate, std::string> write_trace(const std::string& path);

/// Peak resident memory of this process so far, in KiB (getrusage), for --stats.
long peak_rss_kib();

}  // namespace fxc::cli
