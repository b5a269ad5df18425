// SPDX-License-Identifier: Apache-2.0
// The freqz SVG: written whole or not at all, and refused for impossible inputs.
#include "tools/fxc/freqz_plot.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <random>
#include <sstream>

namespace fs = std::filesystem;
using namespace fxc;

namespace {

struct PlotDir {
  fs::path path;
  PlotDir() {
    std::random_device rd;
    path = fs::temp_directory_path() /
           ("fxc-freqz-test-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~PlotDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  std::size_t count() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(path), {}));
  }
};

// A one-pole low-pass and a pure delay, on log-spaced frequencies, plus an exact null.
std::vector<ResponseCurve> sample_curves(double fs_hz) {
  std::vector<ResponseCurve> curves(2);
  curves[0].label = "lowpass";
  curves[1].label = "delay";
  for (int i = 0; i < 400; ++i) {
    double f = 10 * std::pow(fs_hz / 20 / 10, i / 399.0);
    std::complex<double> z = std::polar(1.0, -2 * std::numbers::pi * f / fs_hz);
    for (auto& c : curves) c.frequency_hz.push_back(f);
    curves[0].response.push_back(0.1 / (1.0 - 0.9 * z));
    curves[1].response.push_back(i == 200 ? std::complex<double>(0) : z * z * z);
  }
  return curves;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("freqz writes an SVG document and nothing else") {
  PlotDir dir;
  const std::string out = dir / "response.svg";
  auto r = write_freqz_svg(out, "eq_chain", 48000, sample_curves(48000));
  REQUIRE(r);
  const std::string svg = read_text(out);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(dir.count() == 1);
}

TEST_CASE("freqz accepts curves without labels, with no points, and with zero frequency") {
  PlotDir dir;
  std::vector<ResponseCurve> curves(2);
  curves[0].frequency_hz = {0, 100, 1000, 22050};
  curves[0].response = {1.0, 1.0, 0.5, 0.0};
  REQUIRE(write_freqz_svg(dir / "a.svg", "flat", 44100, curves));
  REQUIRE(write_freqz_svg(dir / "b.svg", "nothing", 8000, {}));
  CHECK(dir.count() == 2);
}

TEST_CASE("freqz errors: a bad path, a bad sample rate, mismatched curve lengths") {
  PlotDir dir;
  const std::string missing = dir / "no-such-dir";
  auto r = write_freqz_svg(missing + "/r.svg", "g", 48000, sample_curves(48000));
  REQUIRE_FALSE(r);
  CHECK(r.error() ==
        "cannot write '" + missing + "/r.svg': directory '" + missing + "' does not exist");

  auto bad_fs = write_freqz_svg(dir / "r.svg", "g", 0, {});
  REQUIRE_FALSE(bad_fs);
  CHECK(bad_fs.error() == "cannot write '" + dir / "r.svg" +
                              "': the sample rate must be a positive number of Hz, "
                              "not 0");

  std::vector<ResponseCurve> uneven(1);
  uneven[0].label = "out";
  uneven[0].frequency_hz = {1, 2, 3};
  uneven[0].response = {1.0};
  auto u = write_freqz_svg(dir / "r.svg", "g", 48000, uneven);
  REQUIRE_FALSE(u);
  CHECK(u.error() ==
        "cannot write '" + dir / "r.svg" + "': curve 'out' has 3 frequencies but 1 responses");
  CHECK(dir.count() == 0);
}
