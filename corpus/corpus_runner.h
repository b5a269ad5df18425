// SPDX-License-Identifier: Apache-2.0
// One graph over many files: each file read, run at its own sample rate and channel count
// through fxc::Program, and its outputs written atomically. A file's failure is a result,
// not an exception, so that a corpus run reports it and goes on.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fxc/fxc.h>

#include "corpus/file_list.h"
#include "corpus/sample_scan.h"
#include "runtime/signal.h"

namespace fxc::corpus {

/// What became of one input file.
struct FileResult {
  enum class Status { written, skipped, failed };
  std::string input;                 ///< its path
  std::vector<std::string> outputs;  ///< the paths it was to be written to
  Status status = Status::failed;
  std::string message;    ///< failed: the reason, naming the file
  std::string warnings;   ///< "warning: ..." lines (NaN in the input, a rebuilt cache entry), one per line
  std::uint64_t frames = 0;
  double sample_rate_hz = 0;
  int channels = 0;
  double peak = 0;     ///< the largest |sample| written, over all outputs
  double seconds = 0;  ///< wall time for this file
};

/// The options of `fxc run` as defaults: each file's own rate and channel count, float64
/// computation, constants without a range compiled in (Options::live_unranged_params false).
Options default_corpus_options();

struct RunnerOptions {
  /// How to compile. sample_rate_hz 0: each file's own rate (a .npy file then fails: it has
  /// none); channels 0: each file's own (for an input declared without a count). The runner
  /// sets signal_length and max_block per file as `fxc run` does for one file.
  Options options = default_corpus_options();
  /// Audio encoding of the outputs (`--subtype`). Unset: the input's encoding where the
  /// output's container can hold it, else the container's default.
  std::optional<std::string> subtype;
  bool skip_existing = false;       ///< a file whose outputs all exist is skipped, not run
  /// > 0: each file runs through an fxc::Processor in blocks of this many frames, read and
  /// written a chunk at a time where its format allows (`fxc run --block`), so that a job's
  /// memory does not grow with its file.
  std::size_t block = 0;
  bool create_directories = true;   ///< make the outputs' directories
};

class CorpusRunner {
 public:
  /// `graph`: a .fx file's path or, with `is_source`, .fx text named `source_name` in messages
  /// (its imports are relative to that name's directory). Throws fxc::Error for a graph that
  /// does not parse or lower, or that has other than exactly one input.
  CorpusRunner(std::string graph, bool is_source, RunnerOptions options, std::string source_name = "<source>");

  /// The graph's outputs' names, in declaration order ("" for an unnamed one).
  const std::vector<std::string>& output_names() const;
  const RunnerOptions& options() const { return options_; }

  /// Reads `input`, runs it, and writes one file per graph output to `outputs` (pending name,
  /// then renamed into place; nothing at all when the file fails). The bytes are those of
  /// `fxc run GRAPH -i INPUT -o OUTPUT` with the same options and subtype. Thread-safe. Every
  /// failure of the file (unreadable, a channel count or sample rate the graph cannot take, a
  /// write error) is a failed result; only a bug in fxc (fxc::InternalError) is thrown.
  FileResult process(const InputFile& input, const std::vector<std::string>& outputs) const;

 private:
  struct Shapes;  // the (rate, channels) shapes compiled so far
  // The lock of files of `fs_hz` and `channels`, held while one compiles (its Program, and a
  // Processor's kernels), so that the others of that shape wait and find them cached.
  std::unique_lock<std::mutex> compiling(double fs_hz, int channels) const;
  std::string source_, name_;
  RunnerOptions options_;
  int declared_channels_ = 0;  // the graph input's declared count, 0 for none
  std::vector<std::string> output_names_;
  std::shared_ptr<Shapes> shapes_;
};

/// The warning `fxc run` gives for an input that holds NaN or infinite samples (they are not
/// errors, but seldom meant), or "" for one that holds none.
std::string non_finite_warning(const Signal& signal, const std::string& path);
/// The same from counts gathered over a file's blocks (sample_scan.h).
std::string non_finite_warning(const NonFiniteSamples& found, const std::string& path);

}  // namespace fxc::corpus
