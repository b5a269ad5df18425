// SPDX-License-Identifier: Apache-2.0
// What every fxc subcommand shares: exit codes, errors and diagnostics on standard error,
// command-line values (thresholds, lengths) for fxc::Options.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fxc/error.h>
#include <fxc/program.h>

#include "ir/dtype.h"
#include "support/diagnostics.h"
#include "support/expected.h"

namespace CLI {
class App;
}

namespace fxc::cli {

/// Exit statuses, as the command-line contract specifies.
enum ExitCode : int {
  kSuccess = 0,
  kUserError = 1,      ///< bad graph, bad file, bad value
  kUsageError = 2,     ///< the command line itself is wrong
  kInternalError = 3,  ///< a bug in fxc
};

/// A subcommand's body, run after the command line was parsed; returns the exit status.
using Action = std::function<int()>;

/// Thrown by a subcommand that finds the command line wrong after parsing (for example, the
/// number of -i files does not match the graph's inputs): exit status 2.
struct UsageError {
  std::string message;
  /// "Run with --help" follows the message; not where the options are right but name files
  /// that clash, which the help does not explain.
  bool help_hint = true;
};

std::string version_string();

/// True when standard error is a terminal and NO_COLOR is unset.
bool colour_enabled();

/// Writes the diagnostics to standard error; returns kUserError if any is an error.
int report(const DiagnosticEngine& diags);
/// Writes the public API's error report to standard error; returns kUserError.
int report(const Error& error);

/// The kernel-cache directory: --cache-dir, else $FXC_CACHE_DIR, else $XDG_CACHE_HOME/fxc,
/// else ~/.cache/fxc.
std::string cache_directory(const std::string& override_dir = {});

/// `--threshold NAME=VALUE` settings as fxc::Options::thresholds, or the first bad value's
/// message (the Program checks names and ranges); throws UsageError for one that is not
/// NAME=VALUE.
Expected<std::vector<std::pair<std::string, double>>, std::string> parse_thresholds(
    const std::vector<std::string>& settings);

/// The text of the graph file `path`, read on first use and kept: a command reads its graph
/// several times (its ports, then compiled, ...), and a graph on a pipe (`<(...)`,
/// /dev/stdin) can be read only once (the second read found it empty). Throws Error (fx-io)
/// as Program::from_file does.
const std::string& graph_text(const std::string& path);
/// Program::from_source and inspect_source on graph_text(path), named as from_file names them.
Program program_from_file(const std::string& path, const Options& options);
GraphInfo inspect_graph_file(const std::string& path, const std::vector<std::string>& settings = {});

/// A file a command names: what it is to the command ("the output", "--trace") and its path.
struct NamedPath {
  std::string what;
  std::string path;
};

/// Throws UsageError when a file in `writes` is one in `reads`, or another in `writes`: a
/// run must not overwrite its program or a file it reads for another purpose, nor write two
/// things to one name. Names compare as the files they reach (relative, `./x`, `..` and symbolic links
/// resolved as far as they exist). Standard input and output ("-") are never files here.
void check_paths_apart(const std::vector<NamedPath>& writes, const std::vector<NamedPath>& reads);

/// Warns on standard error about `--channels C`, given on the command line, where nothing
/// uses it: every input of the graph declares its count and one declares another than C
/// (--channels binds only inputs declared without a count; the contract lets scripts pass it
/// to every file, so it is not an error).
void warn_unused_channels(const GraphInfo& graph, int channels, bool given);

/// A user error without a source location, as "error: MESSAGE" on standard error.
int user_error(const std::string& message, const std::string& code = {});

/// `--seconds` at `fs_hz` as a whole number of samples, or the message for a value that is
/// negative, NaN, or more than 2^53 samples (where a double stops counting every sample).
Expected<std::int64_t, std::string> samples_for_seconds(double seconds, double fs_hz);

}  // namespace fxc::cli
