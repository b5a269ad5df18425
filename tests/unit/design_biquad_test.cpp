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
#include "worse.h"

using fxc::test::worse;

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
      worst = worse(worst, error);
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

// Near 0 Hz and near Nyquist the cookbook's 1 - cos(w0) and 1 + cos(w0) cancel: a 1 Hz
// lowpass at 192 kHz kept 8 of its b's 16 digits. Each coefficient here is within a few ulp of
// itself, as the cookbook's formulas give it evaluated with 50 digits (mpmath, from the same
// doubles f0 and fs), where the reference above only bounds errors by the largest one.
TEST_CASE("biquads near 0 Hz and near Nyquist keep every coefficient's digits") {
  struct Case {
    BiquadType type;
    double f0, fs;
    double exact[5];  // b0 b1 b2 a1 a2, divided by a0
  };
  const Case cases[] = {
      {BiquadType::lowpass, 1.0, 192000.0, {2.6772395894901278019e-10, 5.3544791789802556039e-10, 2.6772395894901278019e-10, -1.9999537199694024438, 9.9995372104029827957e-1}},
      {BiquadType::lowpass, 0.1, 48000.0, {4.283642816265296606e-11, 8.567285632530593212e-11, 4.283642816265296606e-11, -1.9999814879877582021, 9.9998148815910391478e-1}},
      {BiquadType::highpass, 47999.99, 96000.0, {1.0709201212517996992e-13, -2.1418402425035993984e-13, 1.0709201212517996992e-13, 1.9999990743993876952, 9.9999907439981606322e-1}},
      {BiquadType::highpass, 22049.0, 44100.0, {5.0743312533883835597e-9, -1.0148662506776767119e-8, 5.0743312533883835597e-9, 1.9997985087109691905, 9.9979852900829420404e-1}},
      {BiquadType::bandpass, 95999.99, 192000.0, {2.3140009936183569935e-7, 0.0, -2.3140009936183569935e-7, 1.9999995371996941843, 9.9999953719980127633e-1}},
      {BiquadType::lowpass, 23999.0, 48000.0, {9.9990744422233866104e-1, 1.9998148884446773221, 9.9990744422233866104e-1, 1.9998148798781053252, 9.9981489701124931892e-1}},
  };
  for (const Case& c : cases) {
    BiquadSpec spec;
    spec.type = c.type;
    spec.f0_hz = c.f0;
    const auto s = design_biquad(spec, c.fs);
    REQUIRE(s.has_value());
    const double ours[5] = {s->b0, s->b1, s->b2, s->a1, s->a2};
    for (int i = 0; i < 5; ++i) {
      CAPTURE(c.f0);
      CAPTURE(c.fs);
      CAPTURE(i);
      CHECK(std::abs(ours[i] - c.exact[i]) <= 4e-15 * std::abs(c.exact[i]));
    }
  }
}

}  // namespace fxc::design
