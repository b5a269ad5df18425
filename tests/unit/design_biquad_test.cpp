// SPDX-License-Identifier: Apache-2.0
// design_biquad against the Audio EQ Cookbook formulas, as written out independently in
// scripts/gen_design_reference.py (tests/data/design/biquad.json), plus properties that
// follow from the cookbook (gain at f0, DC and Nyquist gains, unit allpass magnitude).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string>

#include "design/filter_design.h"

namespace fxc::design {
namespace {

nlohmann::json load_biquads() {
  std::ifstream in(std::string(FXC_TEST_DATA_DIR) + "/design/biquad.json");
  REQUIRE_MESSAGE(in.good(), "missing biquad.json; run scripts/gen_design_reference.py");
  return nlohmann::json::parse(in);
}

double magnitude_db(const Section& s, double f_hz, double fs_hz) {
  const double w = 2 * std::numbers::pi * f_hz / fs_hz;
  return 20 * std::log10(std::abs(frequency_response(Sos{s}, w)));
}

}  // namespace

// Criterion: each normalized coefficient within 1e-12 of the reference, relative to the
// largest coefficient of the section. The C++ and the Python evaluate the same closed-form
// expressions in double precision, in possibly different orders; the difference is a few
// ulp (observed below 1e-15), so 1e-12 leaves a wide margin without hiding a wrong formula,
// which would be off by far more.
TEST_CASE("design_biquad matches the cookbook formulas") {
  const nlohmann::json reference = load_biquads();
  const auto& cases = reference["cases"];
  REQUIRE(cases.size() > 100);
  double worst = 0;
  for (const auto& c : cases) {
    BiquadSpec spec;
    spec.type = *parse_enum<BiquadType>(c["type"].get<std::string>());
    spec.f0_hz = c["f0_hz"].get<double>();
    spec.q = c["q"].get<double>();
    spec.gain_db = c["gain_db"].get<double>();
    const double fs = c["fs"].get<double>();
    CAPTURE(c.dump());
    const auto designed = design_biquad(spec, fs);
    REQUIRE(designed.has_value());
    const auto& row = c["sos"];
    const double expected[5] = {row[0].get<double>(), row[1].get<double>(), row[2].get<double>(),
                                row[4].get<double>(), row[5].get<double>()};
    const double ours[5] = {designed->b0, designed->b1, designed->b2, designed->a1, designed->a2};
    double scale = 0;
    for (double v : expected) scale = std::max(scale, std::abs(v));
    for (int i = 0; i < 5; ++i) {
      const double error = std::abs(ours[i] - expected[i]) / scale;
      CHECK(error <= 1e-12);
      worst = std::max(worst, error);
    }
  }
  MESSAGE("worst biquad coefficient error (relative to the section's largest): " << worst);
}

TEST_CASE("biquad responses have the cookbook's defining gains") {
  const double fs = 48000;
  const double f0 = 1000;
  BiquadSpec spec;
  spec.f0_hz = f0;
  spec.q = 0.7071067811865476;

  spec.type = BiquadType::lowpass;
  auto s = design_biquad(spec, fs);
  REQUIRE(s.has_value());
  CHECK(magnitude_db(*s, 1e-3, fs) == doctest::Approx(0).epsilon(1e-9));
  CHECK(magnitude_db(*s, f0, fs) == doctest::Approx(-3.0103).epsilon(1e-4));

  spec.type = BiquadType::bandpass;  // constant 0 dB peak gain
  s = design_biquad(spec, fs);
  REQUIRE(s.has_value());
  CHECK(std::abs(magnitude_db(*s, f0, fs)) < 1e-9);

  spec.type = BiquadType::allpass;
  s = design_biquad(spec, fs);
  REQUIRE(s.has_value());
  for (double f : {10.0, 1000.0, 15000.0}) CHECK(std::abs(magnitude_db(*s, f, fs)) < 1e-9);

  spec.type = BiquadType::notch;
  s = design_biquad(spec, fs);
  REQUIRE(s.has_value());
  CHECK(magnitude_db(*s, f0, fs) < -200);

  // A = 10^(gain/40): peaking(1 kHz, 1, 6 dB) peaks at +6 dB, not +12.
  spec.type = BiquadType::peaking;
  spec.q = 1;
  spec.gain_db = 6;
  s = design_biquad(spec, fs);
  REQUIRE(s.has_value());
  CHECK(magnitude_db(*s, f0, fs) == doctest::Approx(6).epsilon(1e-12));

  // Shelves: the full gain at the far end, half of it (in dB) at f0.
  spec.type = BiquadType::lowshelf;
  spec.q = 0.7071067811865476;
  spec.gain_db = -12;
  s = design_biquad(spec, fs);
  REQUIRE(s.has_value());
  CHECK(magnitude_db(*s, 1e-3, fs) == doctest::Approx(-12).epsilon(1e-9));
  CHECK(magnitude_db(*s, f0, fs) == doctest::Approx(-6).epsilon(1e-9));
  CHECK(std::abs(magnitude_db(*s, fs / 2, fs)) < 1e-9);

  spec.type = BiquadType::highshelf;
  spec.gain_db = 9;
  s = design_biquad(spec, fs);
  REQUIRE(s.has_value());
  CHECK(magnitude_db(*s, fs / 2, fs) == doctest::Approx(9).epsilon(1e-9));
  CHECK(magnitude_db(*s, f0, fs) == doctest::Approx(4.5).epsilon(1e-9));
  CHECK(std::abs(magnitude_db(*s, 1e-3, fs)) < 1e-9);
}

}  // namespace fxc::design
