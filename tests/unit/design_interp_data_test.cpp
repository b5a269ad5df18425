// SPDX-License-Identifier: Apache-2.0
// Sanity of tests/data/interp/filters.json, the SciPy vectors for the reference-interpreter
// tests: every case is complete, and filtering its input here (the direct form II transposed
// recurrences of sosfilt and lfilter) reproduces SciPy's stored output.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "design/filter_design.h"

namespace fxc::design {
namespace {

std::vector<double> sosfilt(const Sos& sos, std::vector<double> x) {
  for (const Section& s : sos) {
    double z1 = 0, z2 = 0;
    for (double& v : x) {
      const double y = s.b0 * v + z1;
      z1 = s.b1 * v - s.a1 * y + z2;
      z2 = s.b2 * v - s.a2 * y;
      v = y;
    }
  }
  return x;
}

std::vector<double> lfilter(std::vector<double> b, std::vector<double> a,
                            const std::vector<double>& x) {
  const double a0 = a[0];
  for (double& v : b) v /= a0;
  for (double& v : a) v /= a0;
  const std::size_t n = std::max(a.size(), b.size());
  b.resize(n, 0.0);
  a.resize(n, 0.0);
  std::vector<double> z(n, 0.0);
  std::vector<double> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    y[i] = b[0] * x[i] + z[0];
    for (std::size_t k = 1; k < n; ++k) {
      z[k - 1] = b[k] * x[i] - a[k] * y[i] + (k < n - 1 ? z[k] : 0.0);
    }
  }
  return y;
}

}  // namespace

// Criterion: |y_ours - y_scipy| <= 1e-12 * max|y_scipy|. Both run the same recurrences in
// double precision, SciPy in C with possibly different operation order, so they differ by
// rounding that the (stable) filters keep near 1e-15.
TEST_CASE("interpreter reference vectors are self-consistent") {
  std::ifstream in(std::string(FXC_TEST_DATA_DIR) + "/interp/filters.json");
  REQUIRE_MESSAGE(in.good(), "missing interp/filters.json; run scripts/gen_design_reference.py");
  const nlohmann::json reference = nlohmann::json::parse(in);
  const auto& cases = reference["cases"];
  CHECK(cases.size() >= 20);
  for (const auto& c : cases) {
    CAPTURE(c["name"].get<std::string>());
    REQUIRE(c.contains("fs"));
    const auto input = c["input"].get<std::vector<double>>();
    const auto output = c["output"].get<std::vector<double>>();
    REQUIRE(input.size() == output.size());
    std::vector<double> ours;
    if (c.contains("sos")) {
      const auto rows = c["sos"].get<std::vector<std::vector<double>>>();
      const auto sos = normalize_sos(rows);
      REQUIRE(sos.has_value());
      CHECK(is_stable(*sos));
      ours = sosfilt(*sos, input);
    } else {
      ours = lfilter(c["b"].get<std::vector<double>>(), c["a"].get<std::vector<double>>(), input);
    }
    double peak = 0;
    for (double v : output) peak = std::max(peak, std::abs(v));
    for (std::size_t i = 0; i < output.size(); ++i) {
      CHECK(std::abs(ours[i] - output[i]) <= 1e-12 * peak);
    }
  }
}

}  // namespace fxc::design
