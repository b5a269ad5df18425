// SPDX-License-Identifier: Apache-2.0
// design_firwin against scipy.signal.firwin (tests/data/design/firwin.json, written by
// scripts/gen_design_reference.py), every window and band type.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string>

#include "design/filter_design.h"
#include "expected_text.h"
#include "worse.h"

using fxc::test::worse;

namespace fxc::design {

// Criterion: every tap within 1e-12 of SciPy's, absolutely (taps are at most ~1 after the
// unit-gain scaling). We evaluate the same sinc and window formulas; the differences come
// from summation order in the scale factor and from I0 (series here, Chebyshev fits in
// SciPy), both a few ulp; observed below 1e-15.
TEST_CASE("design_firwin matches SciPy's firwin") {
  std::ifstream in(std::string(FXC_TEST_DATA_DIR) + "/design/firwin.json");
  REQUIRE_MESSAGE(in.good(), "missing firwin.json; run scripts/gen_design_reference.py");
  const nlohmann::json reference = nlohmann::json::parse(in);
  const auto& cases = reference["cases"];
  REQUIRE(cases.size() > 100);
  double worst = 0;
  for (const auto& c : cases) {
    CAPTURE(c["kind"].get<std::string>());
    CAPTURE(c["window"].get<std::string>());
    CAPTURE(c["numtaps"].get<int>());
    CAPTURE(c["cutoff_hz"].dump());
    FirwinSpec spec;
    spec.numtaps = c["numtaps"].get<int>();
    spec.cutoff_hz = c["cutoff_hz"].get<std::vector<double>>();
    spec.window = *parse_enum<Window>(c["window"].get<std::string>());
    if (c.contains("beta")) spec.kaiser_beta = c["beta"].get<double>();
    spec.pass_zero = c["pass_zero"].get<bool>();
    const auto taps = design_firwin(spec, c["fs"].get<double>());
    REQUIRE(taps);
    const auto expected = c["taps"].get<std::vector<double>>();
    REQUIRE(taps->size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const double error = std::abs((*taps)[i] - expected[i]);
      CHECK(error <= 1e-12);
      worst = worse(worst, error);
    }
  }
  MESSAGE("worst firwin tap error: " << worst);
}

TEST_CASE("firwin is scaled to unit gain in its first passband") {
  const double fs = 48000;
  FirwinSpec spec;
  spec.numtaps = 101;
  spec.cutoff_hz = {5000};
  auto taps = design_firwin(spec, fs);
  REQUIRE(taps.has_value());
  CHECK(std::abs(frequency_response(*taps, 0.0)) == doctest::Approx(1.0).epsilon(1e-14));

  spec.pass_zero = false;  // highpass: unit gain at Nyquist
  taps = design_firwin(spec, fs);
  REQUIRE(taps.has_value());
  CHECK(std::abs(frequency_response(*taps, std::numbers::pi)) ==
        doctest::Approx(1.0).epsilon(1e-14));

  spec.cutoff_hz = {4000, 8000};  // bandpass: unit gain at the band centre
  taps = design_firwin(spec, fs);
  REQUIRE(taps.has_value());
  const double centre = 2 * std::numbers::pi * 6000 / fs;
  CHECK(std::abs(frequency_response(*taps, centre)) == doctest::Approx(1.0).epsilon(1e-3));

  // Linear phase: the taps are symmetric.
  for (std::size_t i = 0; i < taps->size(); ++i) {
    CHECK((*taps)[i] == doctest::Approx((*taps)[taps->size() - 1 - i]).epsilon(1e-15));
  }
}

}  // namespace fxc::design
