// SPDX-License-Identifier: Apache-2.0
#include "tools/fxc/cli_support.h"

#include "runtime/kernel_cache.h"

#include <cstdlib>
#include <iostream>
#include <unistd.h>

#include "frontend/fx_file.h"
#include "support/float_format.h"
#include "support/trace.h"
#include "support/version.h"


namespace fxc::cli {

std::string version_string() { return kVersion; }

bool colour_enabled() {
  const char* no_colour = std::getenv("NO_COLOR");
  return isatty(STDERR_FILENO) && (no_colour == nullptr || no_colour[0] == '\0');
}

int report(const DiagnosticEngine& diags) {
  diags.render(std::cerr, colour_enabled());
  return diags.has_errors() ? kUserError : kSuccess;
}

int user_error(const std::string& message) {
  DiagnosticEngine diags;
  diags.error({}, message);
  return report(diags);
}

Expected<std::int64_t, std::string> samples_for_seconds(double seconds, double fs_hz) {
  double samples = seconds * fs_hz;
  if (!(seconds >= 0 && samples <= 9007199254740992.0))
    return Unexpected{"--seconds must be a non-negative number of at most 2^53 samples at " +
                      format_double(fs_hz) + " Hz, got " + format_double(seconds)};
  return static_cast<std::int64_t>(samples);
}

std::optional<ir::Graph> load_graph(const std::string& path, DiagnosticEngine& diags,
                                    const std::vector<std::string>& sets) {
  std::vector<frontend::ConstantOverride> overrides;
  for (const std::string& set : sets) {
    auto eq = set.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError{"--set expects NAME=VALUE, got '" + set + "'"};
    overrides.push_back({set.substr(0, eq), set.substr(eq + 1)});
  }
  TraceSpan span("parse and lower", "frontend", {{"file", path}});
  return frontend::compile_fx_file(path, overrides, diags);
}

std::optional<ir::Graph> bind_and_run_passes(const ir::Graph& graph,
                                             const passes::Binding& binding,
                                             const passes::PipelineOptions& options,
                                             DiagnosticEngine& diags) {
  passes::PassContext context{diags, binding};
  return passes::run_pipeline(graph, context, options);
}

std::optional<std::string> apply_thresholds(const std::vector<std::string>& settings,
                                            passes::StrategyThresholds& thresholds) {
  for (const std::string& setting : settings) {
    auto eq = setting.find('=');
    if (eq == std::string::npos) return "--threshold expects NAME=VALUE, got '" + setting + "'";
    if (auto error = thresholds.set(setting.substr(0, eq), setting.substr(eq + 1))) return error;
  }
  return std::nullopt;
}

passes::StrategyThresholds thresholds_from(const std::vector<std::string>& settings) {
  passes::StrategyThresholds thresholds;
  apply_thresholds(settings, thresholds);
  return thresholds;
}

std::string cache_directory(const std::string& override_dir) {
  return KernelCache::default_directory(override_dir);
}

}  // namespace fxc::cli
