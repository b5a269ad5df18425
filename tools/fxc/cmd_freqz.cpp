// SPDX-License-Identifier: Apache-2.0
// fxc freqz: plot the magnitude and phase response of every output as an SVG.
#include <CLI/CLI.hpp>
#include <cmath>
#include <memory>

#include "runtime/frequency_response.h"
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
  if (o.points < 2) return user_error("--points must be at least 2, got " + std::to_string(o.points));

  DiagnosticEngine diags;
  std::optional<ir::Graph> graph = load_graph(o.graph, diags);
  if (!graph) return report(diags);
  auto designed = bind_and_run_passes(*graph, {o.fs_hz, 1, DType::f64},
                                      {.passes = {"infer-types", "design-filters"}}, diags);
  if (!designed) return report(diags);

  // Log-spaced from 10 Hz (or fs/1000 at low rates) to just below Nyquist.
  double nyquist = o.fs_hz / 2;
  double low = std::min(10.0, o.fs_hz / 1000);
  std::vector<double> f(o.points), w(o.points);
  for (int k = 0; k < o.points; ++k) {
    f[k] = low * std::pow(nyquist / low, static_cast<double>(k) / (o.points - 1));
    w[k] = 2 * M_PI * f[k] / o.fs_hz;
  }
  std::vector<PathResponse> paths = frequency_response(*designed, w, diags);
  if (diags.has_errors()) return report(diags);

  std::vector<ResponseCurve> curves;
  std::size_t output_index = 0;
  for (ir::NodeId out : designed->outputs()) {
    std::string name = std::get<ir::Output>(designed->node(out).op).name;
    if (name.empty()) name = "output " + std::to_string(output_index);
    ++output_index;
    for (const PathResponse& p : paths)
      if (p.output == out) {
        std::string label = name;
        if (designed->inputs().size() > 1)
          label += " from " + std::get<ir::Input>(designed->node(p.input).op).name;
        curves.push_back({label, f, p.response});
      }
  }
  std::string title = designed->name.empty() ? o.graph : designed->name;
  if (auto ok = write_freqz_svg(o.output, title, o.fs_hz, curves); !ok) return user_error(ok.error());
  return report(diags);
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
  cmd->footer("Example:\n  fxc freqz examples/eq.fx --fs 48000 -o eq.svg");
  cmd->callback([&action, o] { action = [o] { return freqz(*o); }; });
}

}  // namespace fxc::cli
