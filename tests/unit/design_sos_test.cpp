// SPDX-License-Identifier: Apache-2.0
// Raw coefficients and cascade analysis: tf_to_sos against scipy.signal.tf2sos
// (tests/data/design/tf2sos.json), normalize_sos, is_stable, max_pole_radius and the two
// frequency_response overloads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
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

using Complex = std::complex<double>;

// H of b(z^-1) / a(z^-1) by direct summation, as a reference for tf_to_sos.
Complex tf_response(const std::vector<double>& b, const std::vector<double>& a, double w) {
  auto poly = [w](const std::vector<double>& c) {
    Complex sum(0.0, 0.0);
    for (std::size_t n = 0; n < c.size(); ++n) sum += c[n] * std::polar(1.0, -w * double(n));
    return sum;
  };
  return poly(b) / poly(a);
}

}  // namespace

// Criterion: at 64 frequencies spread over (0, pi], the response of our sections equals that
// of SciPy's sections to 1e-9 relative, with a floor of 1e-6 of the peak (exact zeros).
// SciPy's roots come from LAPACK's eigenvalue solver and ours from our own QR iteration; both
// are backward stable, so each set of sections has the original transfer function up to
// rounding of the coefficients, even where repeated roots themselves are perturbed by
// sqrt(eps). The same criterion is checked against the magnitude of the (b, a) response
// itself. (The worst case is the pair of repeated poles, where SciPy's and our roots differ
// by about 1e-8 and the sections by rounding.)
TEST_CASE("tf_to_sos matches SciPy's tf2sos") {
  std::ifstream in(std::string(FXC_TEST_DATA_DIR) + "/design/tf2sos.json");
  REQUIRE_MESSAGE(in.good(), "missing tf2sos.json; run scripts/gen_design_reference.py");
  const nlohmann::json reference = nlohmann::json::parse(in);
  double worst = 0;
  for (const auto& c : reference["cases"]) {
    CAPTURE(c["name"].get<std::string>());
    const auto b = c["b"].get<std::vector<double>>();
    const auto a = c["a"].get<std::vector<double>>();
    Sos expected;
    for (const auto& row : c["sos"]) {
      expected.push_back({row[0].get<double>(), row[1].get<double>(), row[2].get<double>(),
                          row[4].get<double>(), row[5].get<double>()});
    }
    const auto ours = tf_to_sos(b, a);
    REQUIRE(ours);
    // SciPy drops leading numerator coefficients below 1e-14 (after dividing by a[0]) and
    // with them the delay lfilter reads in them; ours keep it: SciPy's sections times z^-k.
    std::size_t delay = 0;
    const double a0 = *std::find_if(a.begin(), a.end(), [](double v) { return v != 0; });
    while (delay + 1 < b.size() && std::abs(b[delay] / a0) <= 1e-14) ++delay;
    CAPTURE(delay);
    CHECK(ours->size() >= expected.size());
    std::vector<double> w;
    for (int i = 1; i <= 64; ++i) w.push_back(std::numbers::pi * i / 64.0);
    double peak = 0;
    for (double wi : w) peak = std::max(peak, std::abs(frequency_response(expected, wi)));
    for (double wi : w) {
      const Complex h_scipy = frequency_response(expected, wi) * std::polar(1.0, -wi * double(delay));
      const double scale = std::max(std::abs(h_scipy), 1e-6 * peak);
      const double error = std::abs(frequency_response(*ours, wi) - h_scipy) / scale;
      CHECK(error <= 1e-9);
      // And as lfilter(b, a) reads (b, a), in negative powers of z, phase included (where
      // a[0] is not 0: lfilter refuses that; both drop a's leading zeros).
      if (a[0] != 0) {
        const double lfilter_error = std::abs(frequency_response(*ours, wi) - tf_response(b, a, wi));
        CHECK(lfilter_error / scale <= 1e-9);
      }
      worst = worse(worst, error);
    }
  }
  MESSAGE("worst tf_to_sos response error: " << worst);
}

TEST_CASE("tf_to_sos of simple transfer functions") {
  // A pure gain: one section [k, 0, 0, 1, 0, 0].
  auto sos = tf_to_sos({3.0}, {2.0});
  REQUIRE(sos.has_value());
  REQUIRE(sos->size() == 1);
  CHECK((*sos)[0] == Section{1.5, 0, 0, 0, 0});
  // One pole: (0.5) / (1 - 0.9 z^-1), zero padded at the origin.
  sos = tf_to_sos({0.5}, {1.0, -0.9});
  REQUIRE(sos.has_value());
  REQUIRE(sos->size() == 1);
  CHECK((*sos)[0].b0 == doctest::Approx(0.5));
  CHECK((*sos)[0].a1 == doctest::Approx(-0.9));
  CHECK((*sos)[0].a2 == doctest::Approx(0.0));
}

// A repeated root makes the plain double-shift QR cycle: (x^2 - 1)^2, the numerator of every
// second-order Butterworth band-pass written as (b, a), was "could not find the roots of b".
TEST_CASE("tf_to_sos finds repeated roots: a band-pass written as (b, a)") {
  auto sos = tf_to_sos({1, 0, -2, 0, 1}, {1, -0.5});
  REQUIRE(sos.has_value());
  // scipy.signal.butter(2, [1000, 4000], 'bandpass', fs=48000): b has double zeros at +1 and -1.
  const std::vector<double> b{0.02995458220809248, 0.0, -0.05990916441618496, 0.0, 0.02995458220809248};
  const std::vector<double> a{1.0, -3.3350085811769876, 4.277092779492613, -2.5125378243960017, 0.5740619150839548};
  auto bandpass = tf_to_sos(b, a);
  REQUIRE(bandpass.has_value());
  // Its response equals b/a's at every frequency, to the repeated roots' eps^(1/2) and below.
  for (double w : {0.01, 0.2, 0.5, 1.0, 2.0, 3.0}) {
    std::complex<double> z = std::polar(1.0, -w), num = 0, den = 0, zk = 1;
    for (std::size_t k = 0; k < b.size(); ++k, zk *= z) {
      num += b[k] * zk;
      den += a[k] * zk;
    }
    CAPTURE(w);
    CHECK(std::abs(frequency_response(*bandpass, w) - num / den) < 1e-7);
  }
  for (const std::vector<double>& power : {std::vector<double>{1, 0, -3, 0, 3, 0, -1}, std::vector<double>{1, 4, 6, 4, 1}})
    CHECK(tf_to_sos(power, {1}).has_value());  // (x^2 - 1)^3, (x + 1)^4
}

TEST_CASE("tf_to_sos keeps the delay of leading zeros in b, as lfilter reads them") {
  // z^-1 / (1 - 0.5 z^-1): SciPy's tf2sos gives 1 / (1 - 0.5 z^-1), a sample early. The
  // numerator's trailing zero takes the delay: one section, [0, 1, 0].
  auto sos = tf_to_sos({0, 1}, {1, -0.5});
  REQUIRE(sos);
  REQUIRE(sos->size() == 1);
  CHECK((*sos)[0].b0 == 0);
  CHECK((*sos)[0].b1 == 1);
  CHECK((*sos)[0].b2 == 0);
  CHECK((*sos)[0].a1 == doctest::Approx(-0.5));
  // The impulse responses of the cascade and of the difference equation, sample by sample.
  auto impulse_of_sections = [](const Sos& sections, std::size_t n) {
    std::vector<double> x(n, 0.0);
    x[0] = 1;
    for (const Section& s : sections) {
      double x1 = 0, x2 = 0, y1 = 0, y2 = 0;
      for (double& v : x) {
        const double y = s.b0 * v + s.b1 * x1 + s.b2 * x2 - s.a1 * y1 - s.a2 * y2;
        x2 = x1, x1 = v, y2 = y1, y1 = y, v = y;
      }
    }
    return x;
  };
  auto lfilter_impulse = [](const std::vector<double>& b, const std::vector<double>& a, std::size_t n) {
    std::vector<double> y(n, 0.0);
    for (std::size_t t = 0; t < n; ++t) {
      double acc = t < b.size() ? b[t] : 0.0;  // the input is an impulse
      for (std::size_t k = 1; k < a.size() && k <= t; ++k) acc -= a[k] * y[t - k];
      y[t] = acc / a[0];
    }
    return y;
  };
  const std::vector<std::pair<std::vector<double>, std::vector<double>>> cases = {
      {{0, 1}, {1, -0.5}},
      {{0, 0, 0, 1}, {1}},                                   // a pure delay of 3
      {{0, 1, 2, 1}, {1, -0.2, 0.3, -0.1}},                  // delay and zeros of b, 3 poles
      {{0, 0, 1, 0.5}, {2, -0.4}},                           // a0 not 1, b longer than a
      {{1e-20, 1}, {1, -0.5}},                               // below 1e-14: a delay, as SciPy drops it
      {{0, 0, 0, 0, 0, 1, -1}, {1, -1.8, 0.81}},             // more delay than sections hold
  };
  for (const auto& [b, a] : cases) {
    CAPTURE(b.size());
    CAPTURE(a.size());
    auto got = tf_to_sos(b, a);
    REQUIRE(got);
    const std::vector<double> ours = impulse_of_sections(*got, 32), want = lfilter_impulse(b, a, 32);
    for (std::size_t t = 0; t < 32; ++t) {
      CAPTURE(t);
      CHECK(ours[t] == doctest::Approx(want[t]).epsilon(1e-12).scale(1));
    }
  }
  // A zero numerator stays one zero section (no delay sections after it).
  sos = tf_to_sos({0, 0}, {1, -0.5});
  REQUIRE(sos);
  CHECK(sos->size() == 1);
}

TEST_CASE("normalize_sos divides each section by its a0") {
  const auto sos = normalize_sos({{2, 4, 2, 2, -1, 0.5}, {1, 0, 0, 1, 0, 0}});
  REQUIRE(sos.has_value());
  REQUIRE(sos->size() == 2);
  CHECK((*sos)[0] == Section{1, 2, 1, -0.5, 0.25});
  CHECK((*sos)[1] == Section{1, 0, 0, 0, 0});
}

TEST_CASE("is_stable and max_pole_radius") {
  // Complex pair of radius 0.9: z^2 - 2 r cos(t) z + r^2.
  const double r = 0.9;
  const double t = 0.3;
  const Section pair{1, 0, 0, -2 * r * std::cos(t), r * r};
  CHECK(is_stable({pair}));
  CHECK(max_pole_radius({pair}) == doctest::Approx(0.9).epsilon(1e-15));
  // Real poles 0.5 and -0.8.
  const Section reals{1, 0, 0, -(0.5 - 0.8), 0.5 * -0.8};
  CHECK(is_stable({reals}));
  CHECK(max_pole_radius({reals}) == doctest::Approx(0.8).epsilon(1e-15));
  // A pole exactly on the unit circle is not stable; nor is one outside.
  CHECK_FALSE(is_stable({Section{1, 0, 0, -1, 0}}));
  CHECK(max_pole_radius({Section{1, 0, 0, -1, 0}}) == doctest::Approx(1.0));
  CHECK_FALSE(is_stable({pair, Section{1, 0, 0, -2 * 1.01 * std::cos(t), 1.01 * 1.01}}));
  CHECK_FALSE(is_stable({Section{1, 0, 0, 0, 1}}));  // poles at +-j
  CHECK(max_pole_radius({Section{1, 0, 0, 0, 1}}) == doctest::Approx(1.0));
  // Double pole at 1 (a1 = -2, a2 = 1): the edge of the stability triangle.
  CHECK_FALSE(is_stable({Section{1, 0, 0, -2, 1}}));
  // All-zero denominators (FIR sections) and the empty cascade.
  CHECK(is_stable({Section{}}));
  CHECK(max_pole_radius({Section{}}) == 0.0);
  CHECK(is_stable({}));
  CHECK(max_pole_radius({}) == 0.0);
  // Every designed filter in the reference grid is stable; spot-check a sharp one.
  IirSpec spec;
  spec.family = IirFamily::ellip;
  spec.order = 12;
  spec.rp_db = 0.1;
  spec.rs_db = 100;
  spec.btype = BandType::bandpass;
  spec.cutoff_hz = {1000, 1100};
  const auto sharp = design_iir(spec, 48000);
  REQUIRE(sharp.has_value());
  CHECK(is_stable(*sharp));
  CHECK(max_pole_radius(*sharp) < 1.0);
  CHECK(max_pole_radius(*sharp) > 0.99);
}

TEST_CASE("frequency_response of sections and taps") {
  const Sos sos = {{0.2, 0.3, 0.1, -0.5, 0.25}, {1, -1.9, 1, -1.8, 0.95}};
  for (double w : {0.0, 1e-6, 0.01, 0.5, 1.0, 2.0, 3.0, std::numbers::pi}) {
    Complex direct(1.0, 0.0);
    const Complex z1 = std::polar(1.0, -w);
    for (const Section& s : sos) {
      direct *= (s.b0 + s.b1 * z1 + s.b2 * z1 * z1) / (1.0 + s.a1 * z1 + s.a2 * z1 * z1);
    }
    // The first section has a zero at Nyquist, where both values are rounding noise.
    CHECK(std::abs(frequency_response(sos, w) - direct) <= 1e-13 * std::max(std::abs(direct), 0.1));
  }
  // Near DC with poles close to z = 1 the evaluation keeps its relative accuracy: a
  // one-pole lowpass (1 - p) / (1 - p z^-1) has |H(w)|^2 = (1-p)^2 / (1 - 2p cos w + p^2).
  const double p = 1 - 1e-6;
  const Sos one_pole = {{1 - p, 0, 0, -p, 0}};
  const double w = 1e-7;
  const double exact =
      (1 - p) / std::sqrt((1 - p) * (1 - p) + 4 * p * std::pow(std::sin(w / 2), 2));
  CHECK(std::abs(frequency_response(one_pole, w)) == doctest::Approx(exact).epsilon(1e-12));

  const std::vector<double> taps = {0.25, 0.5, 0.25};
  CHECK(std::abs(frequency_response(taps, 0.0) - Complex(1.0, 0.0)) < 1e-15);
  CHECK(std::abs(frequency_response(taps, std::numbers::pi)) < 1e-15);
  // Linear phase: H(w) = e^{-jw} (0.5 + 0.5 cos w).
  const Complex h = frequency_response(taps, 1.0);
  CHECK(std::abs(h - std::polar(0.5 + 0.5 * std::cos(1.0), -1.0)) < 1e-15);
}

}  // namespace fxc::design
