// SPDX-License-Identifier: Apache-2.0
// What every fxc subcommand shares: exit codes, diagnostics on standard error, loading and
// binding a graph.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "passes/pipeline.h"
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
};

std::string version_string();

/// True when standard error is a terminal and NO_COLOR is unset.
bool colour_enabled();

/// Writes the diagnostics to standard error; returns kUserError if any is an error.
int report(const DiagnosticEngine& diags);

/// Reads and lowers a .fx file; diagnostics go to `diags`. `sets` are `--set NAME=VALUE`
/// overrides of constant bindings.
std::optional<ir::Graph> load_graph(const std::string& path, DiagnosticEngine& diags,
                                    const std::vector<std::string>& sets = {});

/// Runs the pipeline (or the chosen passes) on a graph bound to `binding`.
std::optional<ir::Graph> bind_and_run_passes(const ir::Graph& graph,
                                             const passes::Binding& binding,
                                             const passes::PipelineOptions& options,
                                             DiagnosticEngine& diags);

/// The kernel-cache directory: --cache-dir, else $FXC_CACHE_DIR, else $XDG_CACHE_HOME/fxc,
/// else ~/.cache/fxc.
std::string cache_directory(const std::string& override_dir = {});

/// Applies `--threshold NAME=VALUE` settings; returns the first error.
std::optional<std::string> apply_thresholds(const std::vector<std::string>& settings,
                                            passes::StrategyThresholds& thresholds);
/// The default thresholds with `settings` applied (report their errors with apply_thresholds
/// first: here a bad setting is skipped).
passes::StrategyThresholds thresholds_from(const std::vector<std::string>& settings);

/// A user error without a source location, as "error: MESSAGE" on standard error.
int user_error(const std::string& message);

/// `--seconds` at `fs_hz` as a whole number of samples, or the message for a value that is
/// negative, NaN, or more than 2^53 samples (where a double stops counting every sample).
Expected<std::int64_t, std::string> samples_for_seconds(double seconds, double fs_hz);

}  // namespace fxc::cli
