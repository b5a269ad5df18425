// SPDX-License-Identifier: Apache-2.0
#include "tools/fxc/cli_support.h"

#include "driver/kernel_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include <fxc/program.h>

#include "frontend/fx_file.h"
#include "support/api_error.h"
#include "support/file_io.h"
#include "support/float_format.h"
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

int report(const Error& error) {
  std::cerr << error.report(colour_enabled());
  return kUserError;
}

const std::string& graph_text(const std::string& path) {
  static std::map<std::string, std::string> texts;  // the command's one graph, by its path
  if (auto found = texts.find(path); found != texts.end()) return found->second;
  DiagnosticEngine diags;
  std::optional<std::string> text = frontend::read_fx_text(path, diags);
  if (!text) throw_diagnostics(diags);
  return texts.emplace(path, std::move(*text)).first->second;
}

Program program_from_file(const std::string& path, const Options& options) {
  return Program::from_source(graph_text(path), options, path);
}

GraphInfo inspect_graph_file(const std::string& path, const std::vector<std::string>& settings) {
  return inspect_source(graph_text(path), path, settings);
}

int user_error(const std::string& message, const std::string& code) {
  DiagnosticEngine diags;
  diags.error({}, message, code);
  return report(diags);
}

Expected<std::int64_t, std::string> samples_for_seconds(double seconds, double fs_hz) {
  double samples = seconds * fs_hz;
  if (!(seconds >= 0 && samples <= 9007199254740992.0))
    return Unexpected{"--seconds must be a non-negative number of at most 2^53 samples at " +
                      format_double(fs_hz) + " Hz, got " + format_double(seconds)};
  return static_cast<std::int64_t>(samples);
}

Expected<std::vector<std::pair<std::string, double>>, std::string> parse_thresholds(
    const std::vector<std::string>& settings) {
  std::vector<std::pair<std::string, double>> out;
  for (const std::string& setting : settings) {
    auto eq = setting.find('=');
    // No NAME=VALUE at all is the command line's mistake (exit status 2, as --set's); a bad
    // value is a bad value (1).
    if (eq == std::string::npos || eq == 0) throw UsageError{"--threshold expects NAME=VALUE, got '" + setting + "'"};
    std::string name = setting.substr(0, eq), text = setting.substr(eq + 1);
    std::optional<double> value = parse_double(text);
    if (!value || !std::isfinite(*value) || *value < 0)
      return Unexpected{"threshold '" + name + "' needs a non-negative number, got '" + text + "'"};
    out.emplace_back(std::move(name), *value);
  }
  return out;
}

std::string cache_directory(const std::string& override_dir) {
  return KernelCache::default_directory(override_dir);
}

namespace {

// Whether `path` is the file, pipe or device standard output writes to (/dev/stdout, or the
// file the shell redirected it to).
bool is_standard_output(const std::string& path) {
  struct stat named{}, out{};
  return ::stat(path.c_str(), &named) == 0 && ::fstat(STDOUT_FILENO, &out) == 0 && named.st_dev == out.st_dev &&
         named.st_ino == out.st_ino;
}

}  // namespace

void check_paths_apart(const std::vector<NamedPath>& writes, const std::vector<NamedPath>& reads) {
  auto file = [](const NamedPath& p) { return !p.path.empty() && p.path != "-"; };
  // With -o -, anything else written to the file behind standard output would mix with the
  // output in a pipe, or replace it in a redirected file.
  const bool to_standard_output =
      std::any_of(writes.begin(), writes.end(), [](const NamedPath& p) { return p.path == "-"; });
  if (to_standard_output)
    for (const NamedPath& w : writes)
      if (file(w) && is_standard_output(w.path))
        throw UsageError{w.what + " '" + w.path + "' is where standard output goes, which -o - writes the output "
                         "to: one would overwrite the other",
                         false};
  std::vector<std::string> read_ids;
  for (const NamedPath& read : reads) read_ids.push_back(file(read) ? file_identity(read.path) : std::string());
  for (std::size_t i = 0; i < writes.size(); ++i) {
    if (!file(writes[i])) continue;
    const std::string id = file_identity(writes[i].path);
    for (std::size_t r = 0; r < reads.size(); ++r)
      if (!read_ids[r].empty() && read_ids[r] == id)
        throw UsageError{writes[i].what + " '" + writes[i].path + "' names the same file as " + reads[r].what + " '" +
                         reads[r].path + "', which the run would overwrite (write it elsewhere)",
                         false};
    for (std::size_t j = 0; j < i; ++j)
      if (file(writes[j]) && file_identity(writes[j].path) == id)
        throw UsageError{writes[i].what == writes[j].what && writes[i].path == writes[j].path
                             ? writes[i].what + " '" + writes[i].path + "' is given twice"
                             : writes[i].what + " '" + writes[i].path + "' and " + writes[j].what + " '" +
                                   writes[j].path + "' are the same file: one would overwrite the other",
                         false};
  }
}

void warn_unused_channels(const GraphInfo& graph, int channels, bool given) {
  if (!given || graph.inputs.empty()) return;
  for (const PortInfo& input : graph.inputs)
    if (input.channels == 0) return;  // an input the option binds
  for (const PortInfo& input : graph.inputs)
    if (input.channels != channels) {
      std::cerr << "warning: --channels " << channels
                << " is not used: it binds inputs declared without a count, and every input of this graph "
                   "declares one ('"
                << input.name << "' has " << input.channels << ")\n";
      return;
    }
}

}  // namespace fxc::cli
