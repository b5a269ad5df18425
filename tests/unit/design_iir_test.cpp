// SPDX-License-Identifier: Apache-2.0
// design_iir against SciPy: every filter in tests/data/design/iir.json (written by
// scripts/gen_design_reference.py from scipy.signal 1.10) is designed again here and compared.
#include <doctest/doctest.h>

#include <algorithm>
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
namespace {

nlohmann::json load_reference(const std::string& name) {
  std::ifstream in(std::string(FXC_TEST_DATA_DIR) + "/design/" + name);
  REQUIRE_MESSAGE(in.good(),
                  "missing reference file " << name << "; run scripts/gen_design_reference.py");
  return nlohmann::json::parse(in);
}

Sos sos_from_rows(const nlohmann::json& rows) {
  Sos sos;
  for (const auto& row : rows) {
    const double a0 = row[3].get<double>();
    REQUIRE(a0 == 1.0);
    sos.push_back({row[0].get<double>(), row[1].get<double>(), row[2].get<double>(),
                   row[4].get<double>(), row[5].get<double>()});
  }
  return sos;
}

IirSpec spec_from_case(const nlohmann::json& c) {
  IirSpec spec;
  spec.family = *parse_enum<IirFamily>(c["family"].get<std::string>());
  spec.btype = *parse_enum<BandType>(c["btype"].get<std::string>());
  spec.order = c["order"].get<int>();
  spec.cutoff_hz = c["cutoff_hz"].get<std::vector<double>>();
  if (c.contains("rp")) spec.rp_db = c["rp"].get<double>();
  if (c.contains("rs")) spec.rs_db = c["rs"].get<double>();
  if (c.contains("norm")) spec.norm = *parse_enum<BesselNorm>(c["norm"].get<std::string>());
  return spec;
}

std::string describe(const nlohmann::json& c) {
  std::string text =
      c["family"].get<std::string>() + " N=" + std::to_string(c["order"].get<int>()) + " " +
      c["btype"].get<std::string>() + " Wn=" + c["cutoff_hz"].dump() + " fs=" + c["fs"].dump();
  for (const char* key : {"rp", "rs", "norm"}) {
    if (c.contains(key)) text += std::string(" ") + key + "=" + c[key].dump();
  }
  return text;
}

// 64 frequencies, log-spaced from 1 Hz to Nyquist, in radians per sample.
std::vector<double> log_spaced_frequencies(double fs_hz) {
  std::vector<double> w;
  const double lo = 1.0;
  const double hi = fs_hz / 2;
  for (int i = 0; i < 64; ++i) {
    const double f = lo * std::pow(hi / lo, i / 63.0);
    w.push_back(2 * std::numbers::pi * std::min(f, hi) / fs_hz);
  }
  return w;
}

}  // namespace

// The criterion. At each of 64 frequencies w, log-spaced from 1 Hz to Nyquist:
//
//   |H_ours(w) - H_scipy(w)| <= tol * max(|H_scipy(w)|, 1e-6 * peak),
//   tol = max(1e-9, 10 * ulp_sensitivity)
//
// where peak = max |H_scipy| over the 64 points. Both responses are evaluated here, in double
// precision, from the two sets of sections, so the evaluator's own error is common to both.
//
// Why: our design repeats SciPy's computation step by step, but a few elementary functions
// (numpy's SIMD exp, log, sinh, tan on AVX-512 machines against glibc's) differ in the last
// bit, and poles clustered near z = 1 (low cutoffs, high orders, wide bandstops) amplify
// that. Observed differences are below 3e-11 relative, so 1e-9 leaves a margin of 30 while
// still being far below anything a design change would produce. The floor, -120 dB under
// the peak, only matters at exact zeros (at DC or Nyquist, and the stopband zeros of cheby2
// and ellip), where a relative error is undefined. `ulp_sensitivity`, recorded by the
// generator, is how far SciPy's own response moves when one input moves by one ulp: no
// double-precision implementation can match SciPy more closely than that, so for the rare
// ill-conditioned design the bound is ten times it instead. The grid has five: two wide-band
// designs from 20 Hz to near Nyquist (a 3rd-order cheby2 bandstop at 2.9e-9 and an 8th-order
// bessel bandpass at 5e-10), and three elliptic designs of high order with loose ripple specs
// whose degree equation puts the modulus m within 1e-10 of 1 (up to 1.4e-5: SciPy's own
// result there depends on the last bit of numpy's exp, which differs between CPUs).
TEST_CASE("design_iir matches SciPy's sections and response") {
  const nlohmann::json reference = load_reference("iir.json");
  const auto& cases = reference["cases"];
  REQUIRE(cases.size() > 500);
  double worst_response = 0;
  std::string worst_response_case;
  int relaxed = 0;
  double worst_well_conditioned = 0;
  std::string worst_well_conditioned_case;
  double worst_coefficient = 0;
  std::string worst_coefficient_case;
  for (const auto& c : cases) {
    const std::string what = describe(c);
    CAPTURE(what);
    const IirSpec spec = spec_from_case(c);
    const double fs = c["fs"].get<double>();
    const Sos expected = sos_from_rows(c["sos"]);
    const auto designed = design_iir(spec, fs);
    REQUIRE(designed);
    const Sos& ours = *designed;
    CHECK(ours.size() == expected.size());
    CHECK(iir_section_count(spec) == static_cast<int>(expected.size()));
    if (ours.size() != expected.size()) continue;

    const std::vector<double> w = log_spaced_frequencies(fs);
    double peak = 0;
    for (double wi : w) peak = std::max(peak, std::abs(frequency_response(expected, wi)));
    double ratio = 0;
    for (double wi : w) {
      const auto h_scipy = frequency_response(expected, wi);
      const auto h_ours = frequency_response(ours, wi);
      const double scale = std::max(std::abs(h_scipy), 1e-6 * peak);
      ratio = worse(ratio, std::abs(h_ours - h_scipy) / scale);
    }
    const double sensitivity = c["ulp_sensitivity"].get<double>();
    const double tolerance = std::max(1e-9, 10 * sensitivity);
    CHECK(ratio <= tolerance);
    if (tolerance > 1e-9) {
      ++relaxed;
    } else if (ratio > worst_well_conditioned) {
      worst_well_conditioned = ratio;
      worst_well_conditioned_case = what;
    }
    if (ratio > worst_response) {
      worst_response = ratio;
      worst_response_case = what;
    }

    // Stronger than the response: the sections come out in SciPy's order with SciPy's
    // pairing. Each coefficient is compared relative to the largest numerator (or
    // denominator) coefficient of its section, since the first section's numerator carries
    // the overall gain and can be 1e-30 while its denominator is O(1). Same tolerance.
    double coefficient = 0;
    for (std::size_t i = 0; i < ours.size(); ++i) {
      const Section& a = ours[i];
      const Section& b = expected[i];
      const double b_scale = std::max({std::abs(b.b0), std::abs(b.b1), std::abs(b.b2)});
      const double a_scale = std::max({1.0, std::abs(b.a1), std::abs(b.a2)});
      for (auto [x, y, s] : {std::tuple{a.b0, b.b0, b_scale}, std::tuple{a.b1, b.b1, b_scale},
                             std::tuple{a.b2, b.b2, b_scale}, std::tuple{a.a1, b.a1, a_scale},
                             std::tuple{a.a2, b.a2, a_scale}}) {
        coefficient = worse(coefficient, std::abs(x - y) / s);
      }
    }
    CHECK(coefficient <= tolerance);
    if (coefficient > worst_coefficient && tolerance == 1e-9) {
      worst_coefficient = coefficient;
      worst_coefficient_case = what;
    }
  }
  MESSAGE("worst response error (relative, floor 1e-6 of peak): "
          << worst_response << " for " << worst_response_case << "; " << relaxed
          << " ill-conditioned case(s) checked against 10x SciPy's own ulp sensitivity");
  MESSAGE("worst response error among the others: " << worst_well_conditioned << " for "
                                                    << worst_well_conditioned_case);
  MESSAGE("worst section coefficient error (relative to the section's scale, well-conditioned "
          "cases): "
          << worst_coefficient << " for " << worst_coefficient_case);
}

TEST_CASE("iir_section_count follows SciPy's zpk2sos") {
  IirSpec spec;
  for (int order = 1; order <= 20; ++order) {
    spec.order = order;
    spec.btype = BandType::lowpass;
    CHECK(iir_section_count(spec) == (order + 1) / 2);
    spec.btype = BandType::highpass;
    CHECK(iir_section_count(spec) == (order + 1) / 2);
    spec.btype = BandType::bandpass;
    CHECK(iir_section_count(spec) == order);
    spec.btype = BandType::bandstop;
    CHECK(iir_section_count(spec) == order);
  }
  spec.order = 0;
  CHECK(iir_section_count(spec) == 0);
}

TEST_CASE("high-order designs stay finite and stable") {
  // Orders up to the cap of 64, at cutoffs where double precision still holds.
  for (IirFamily family : {IirFamily::butter, IirFamily::cheby1, IirFamily::cheby2,
                           IirFamily::ellip, IirFamily::bessel}) {
    for (int order : {20, 32, 48, 64}) {
      IirSpec spec;
      spec.family = family;
      spec.order = order;
      spec.rp_db = 1;
      spec.rs_db = 120;
      spec.cutoff_hz = {6000};
      CAPTURE(name(family));
      CAPTURE(order);
      const auto sos = design_iir(spec, 48000);
      REQUIRE(sos.has_value());
      CHECK(sos->size() == static_cast<std::size_t>((order + 1) / 2));
      CHECK(is_stable(*sos));
    }
  }
}

TEST_CASE("butterworth is -3 dB at the cutoff for every band type") {
  const double fs = 48000;
  const double half_power = 1 / std::sqrt(2.0);
  for (int order : {1, 2, 5, 12}) {
    IirSpec spec;
    spec.order = order;
    spec.cutoff_hz = {1000};
    const auto lp = design_iir(spec, fs);
    REQUIRE(lp.has_value());
    const double w = 2 * std::numbers::pi * 1000 / fs;
    CHECK(std::abs(frequency_response(*lp, w)) == doctest::Approx(half_power).epsilon(1e-12));
    CHECK(std::abs(frequency_response(*lp, 0.0)) == doctest::Approx(1.0).epsilon(1e-12));
    spec.btype = BandType::highpass;
    const auto hp = design_iir(spec, fs);
    REQUIRE(hp.has_value());
    CHECK(std::abs(frequency_response(*hp, w)) == doctest::Approx(half_power).epsilon(1e-12));
    CHECK(std::abs(frequency_response(*hp, std::numbers::pi)) ==
          doctest::Approx(1.0).epsilon(1e-12));
  }
}

}  // namespace fxc::design
