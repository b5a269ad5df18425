// SPDX-License-Identifier: Apache-2.0
#include "tools/fxc/cli_support.h"

#include "driver/kernel_cache.h"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

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

Expected<std::vector<std::pair<std::string, double>>, std::string> parse_thresholds(
    const std::vector<std::string>& settings) {
  std::vector<std::pair<std::string, double>> out;
  for (const std::string& setting : settings) {
    auto eq = setting.find('=');
    if (eq == std::string::npos) return Unexpected{"--threshold expects NAME=VALUE, got '" + setting + "'"};
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

}  // namespace fxc::cli
