// SPDX-License-Identifier: Apache-2.0
// fxc freqz: plot the magnitude and phase response of every output as an SVG.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <CLI/CLI.hpp>
#include <fxc/fxc.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "support/float_format.h"
#include "tools/fxc/commands.h"
#include "tools/fxc/freqz_plot.h"

namespace fxc::cli {
namespace {

struct FreqzOptions {
  std::string graph;
  double fs_hz = 0;
  std::string output;
  int points = 512;
};

int freqz(const FreqzOptions& o) {
  if (!(o.fs_hz > 0 && std::isfinite(o.fs_hz)))
    return user_error("--fs must be a positive number of Hz, got " + format_double(o.fs_hz));
  // An SVG of more points than a screen has pixels shows nothing more, and a billion would
  // run for minutes and fill the memory.
  constexpr int kMaxPoints = 100000;
  if (o.points < 2 || o.points > kMaxPoints)
    return user_error("--points must be from 2 to " + std::to_string(kMaxPoints) + ", got " + std::to_string(o.points));
  check_paths_apart({{"the output", o.output}}, {{"the graph", o.graph}});
  // The plot is SVG whatever the name says: x.png would hold SVG text an image viewer refuses.
  // A device or pipe that exists (/dev/stdout, a shell's >(...)) takes it as it comes.
  std::string ext = std::filesystem::path(o.output).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::error_code error;
  const auto status = std::filesystem::status(o.output, error);
  const bool stream = !error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
                      !std::filesystem::is_directory(status);
  if (ext != ".svg" && !stream)
    throw UsageError{"freqz writes SVG: give -o a name ending in .svg, not '" + o.output + "'"};

  // Log-spaced from 10 Hz (or fs/1000 at low rates) to just below Nyquist.
  double nyquist = o.fs_hz / 2;
  double low = std::min(10.0, o.fs_hz / 1000);
  std::vector<double> f(o.points);
  for (int k = 0; k < o.points; ++k) f[k] = low * std::pow(nyquist / low, static_cast<double>(k) / (o.points - 1));

  Options options;
  options.sample_rate_hz = o.fs_hz;
  options.dtype = DType::f64;
  options.channels = 1;
  options.live_unranged_params = false;
  options.compile_kernels = false;  // the response is exact, from the design: no kernels run
  options.cache_directory = "none";
  std::vector<ResponseCurve> curves;
  std::string title;
  try {
    Program program = program_from_file(o.graph, options);
    bool several_inputs = program.inputs().size() > 1;
    for (FrequencyResponse& r : program.frequency_response(f)) {
      std::string label = r.output.empty() ? "output " + std::to_string(r.output_index) : r.output;
      if (several_inputs) label += " from " + r.input;
      curves.push_back({label, f, std::move(r.response)});
    }
    title = program.name().empty() ? o.graph : program.name();
    std::cerr << program.warnings();
  } catch (const Error& e) {
    return report(e);
  }
  if (auto ok = write_freqz_svg(o.output, title, o.fs_hz, curves); !ok) return user_error(ok.error());
  return kSuccess;
}

}  // namespace

void add_freqz_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<FreqzOptions>();
  CLI::App* cmd = app.add_subcommand(
      "freqz", "Plot the magnitude (dB) and phase response of every output as an SVG.");
  cmd->add_option("graph", o->graph, "The .fx graph file (linear stages only)")->required();
  cmd->add_option("--fs", o->fs_hz, "Sample rate in Hz")->required();
  cmd->add_option("-o,--output", o->output, "The SVG file to write")->required();
  cmd->add_option("--points", o->points, "Number of frequencies, log-spaced up to Nyquist")
      ->capture_default_str();
  cmd->footer("Example:\n  fxc freqz examples/crossover.fx --fs 48000 -o crossover.svg");
  cmd->callback([&action, o] { action = [o] { return freqz(*o); }; });
}

}  // namespace fxc::cli
