// SPDX-License-Identifier: Apache-2.0
// Every rejected design parameter comes back as a DesignError naming the .fx parameter, with
// the message users see; never an exception, never NaN coefficients.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "design/filter_design.h"

namespace fxc::design {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <class T>
void check_error(const DesignResult<T>& result, const std::string& param,
                 const std::string& message) {
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().param == param);
  CHECK(result.error().message == message);
}

IirSpec butter_spec(int order, std::vector<double> cutoff_hz, BandType btype = BandType::lowpass) {
  IirSpec spec;
  spec.order = order;
  spec.cutoff_hz = std::move(cutoff_hz);
  spec.btype = btype;
  return spec;
}

}  // namespace

TEST_CASE("IIR order") {
  check_error(design_iir(butter_spec(0, {1000}), 48000), "N", "order must be at least 1, got 0");
  check_error(design_iir(butter_spec(-3, {1000}), 48000), "N", "order must be at least 1, got -3");
  check_error(design_iir(butter_spec(100, {1000}), 48000), "N", "order must be at most 64, got 100");
  CHECK(design_iir(butter_spec(64, {1000}), 48000).has_value());
}

TEST_CASE("IIR cutoff frequencies") {
  check_error(design_iir(butter_spec(4, {30000}), 48000), "Wn",
              "cutoff 30000 Hz must lie strictly between 0 and the Nyquist frequency 24000 Hz "
              "(fs = 48000 Hz)");
  check_error(design_iir(butter_spec(4, {22050}), 44100), "Wn",
              "cutoff 22050 Hz must lie strictly between 0 and the Nyquist frequency 22050 Hz "
              "(fs = 44100 Hz)");
  check_error(design_iir(butter_spec(4, {0}), 48000), "Wn",
              "cutoff 0 Hz must lie strictly between 0 and the Nyquist frequency 24000 Hz "
              "(fs = 48000 Hz)");
  check_error(design_iir(butter_spec(4, {-5.5}), 48000), "Wn",
              "cutoff -5.5 Hz must lie strictly between 0 and the Nyquist frequency 24000 Hz "
              "(fs = 48000 Hz)");
  check_error(design_iir(butter_spec(4, {kNan}), 48000), "Wn",
              "cutoff must be a finite number, got nan");
  check_error(design_iir(butter_spec(4, {kInf}), 48000), "Wn",
              "cutoff must be a finite number, got inf");
  check_error(design_iir(butter_spec(4, {2000, 1000}, BandType::bandpass), 48000), "Wn",
              "band edges must be increasing: got [2000, 1000] Hz");
  check_error(design_iir(butter_spec(4, {1000, 1000}, BandType::bandstop), 48000), "Wn",
              "band edges must be increasing: got [1000, 1000] Hz");
  check_error(design_iir(butter_spec(4, {1000}, BandType::bandpass), 48000), "Wn",
              "bandpass needs two band edges [low, high], got 1");
  check_error(design_iir(butter_spec(4, {100, 200, 300}, BandType::bandstop), 48000), "Wn",
              "bandstop needs two band edges [low, high], got 3");
  check_error(design_iir(butter_spec(4, {1000, 2000}), 48000), "Wn",
              "lowpass needs one cutoff frequency, got 2");
  check_error(design_iir(butter_spec(4, {}, BandType::highpass), 48000), "Wn",
              "highpass needs one cutoff frequency, got 0");
  check_error(design_iir(butter_spec(4, {1000, 30000}, BandType::bandpass), 48000), "Wn",
              "cutoff 30000 Hz must lie strictly between 0 and the Nyquist frequency 24000 Hz "
              "(fs = 48000 Hz)");
}

TEST_CASE("IIR sample rate") {
  check_error(design_iir(butter_spec(4, {1000}), 0), "fs",
              "sample rate must be a positive finite number, got 0 Hz");
  check_error(design_iir(butter_spec(4, {1000}), -48000), "fs",
              "sample rate must be a positive finite number, got -48000 Hz");
  check_error(design_iir(butter_spec(4, {1000}), kNan), "fs",
              "sample rate must be a positive finite number, got nan Hz");
  check_error(design_iir(butter_spec(4, {1000}), kInf), "fs",
              "sample rate must be a positive finite number, got inf Hz");
}

TEST_CASE("IIR ripple and attenuation") {
  IirSpec spec = butter_spec(4, {1000});
  spec.family = IirFamily::cheby1;
  spec.rp_db = 0;
  check_error(design_iir(spec, 48000), "rp", "passband ripple rp must be positive (in dB), got 0");
  spec.rp_db = -1;
  check_error(design_iir(spec, 48000), "rp", "passband ripple rp must be positive (in dB), got -1");
  spec.rp_db = kNan;
  check_error(design_iir(spec, 48000), "rp", "passband ripple rp must be a finite number, got nan");
  spec.rp_db = 5000;
  check_error(design_iir(spec, 48000), "rp",
              "passband ripple rp must be at most 1000 dB, got 5000");

  spec.family = IirFamily::cheby2;
  spec.rs_db = 0;
  check_error(design_iir(spec, 48000), "rs",
              "stopband attenuation rs must be positive (in dB), got 0");
  spec.rs_db = kInf;
  check_error(design_iir(spec, 48000), "rs",
              "stopband attenuation rs must be a finite number, got inf");

  spec.family = IirFamily::ellip;
  spec.rp_db = 3;
  spec.rs_db = 2;
  check_error(design_iir(spec, 48000), "rs",
              "stopband attenuation rs must be greater than the passband ripple rp (3 dB), got 2");
  spec.rp_db = 0;
  spec.rs_db = 40;
  check_error(design_iir(spec, 48000), "rp", "passband ripple rp must be positive (in dB), got 0");

  // rp and rs are ignored by the families that do not use them, as in SciPy.
  spec.family = IirFamily::butter;
  CHECK(design_iir(spec, 48000).has_value());
}

TEST_CASE("biquad parameters") {
  BiquadSpec spec;
  spec.type = BiquadType::peaking;
  spec.f0_hz = 30000;
  check_error(design_biquad(spec, 48000), "f0",
              "f0 30000 Hz must lie strictly between 0 and the Nyquist frequency 24000 Hz "
              "(fs = 48000 Hz)");
  spec.f0_hz = kNan;
  check_error(design_biquad(spec, 48000), "f0", "f0 must be a finite number, got nan");
  spec.f0_hz = 1000;
  spec.q = 0;
  check_error(design_biquad(spec, 48000), "q", "q must be positive, got 0");
  spec.q = -0.5;
  check_error(design_biquad(spec, 48000), "q", "q must be positive, got -0.5");
  spec.q = kInf;
  check_error(design_biquad(spec, 48000), "q", "q must be a finite number, got inf");
  spec.q = 1;
  spec.gain_db = kNan;
  check_error(design_biquad(spec, 48000), "gain", "gain must be a finite number, got nan");
  check_error(design_biquad(spec, 0), "fs",
              "sample rate must be a positive finite number, got 0 Hz");
  // A gain whose A = 10^(gain/40) overflows is an error, not a section of NaNs.
  spec.gain_db = 20000;
  const auto huge = design_biquad(spec, 48000);
  REQUIRE_FALSE(huge.has_value());
  CHECK(huge.error().param == "gain");
}

TEST_CASE("firwin parameters") {
  FirwinSpec spec;
  spec.numtaps = 0;
  spec.cutoff_hz = {1000};
  check_error(design_firwin(spec, 48000), "numtaps", "numtaps must be at least 1, got 0");
  spec.numtaps = 100000;
  check_error(design_firwin(spec, 48000), "numtaps", "numtaps must be at most 65536, got 100000");
  spec.numtaps = 64;
  spec.cutoff_hz = {};
  check_error(design_firwin(spec, 48000), "cutoff",
              "cutoff needs at least one frequency, got none");
  spec.cutoff_hz = {24000};
  check_error(design_firwin(spec, 48000), "cutoff",
              "cutoff 24000 Hz must lie strictly between 0 and the Nyquist frequency 24000 Hz "
              "(fs = 48000 Hz)");
  spec.cutoff_hz = {3000, 1000};
  check_error(design_firwin(spec, 48000), "cutoff",
              "band edges must be increasing: got [3000, 1000] Hz");
  spec.cutoff_hz = {kNan};
  check_error(design_firwin(spec, 48000), "cutoff", "cutoff must be a finite number, got nan");
  // SciPy's rule: an even number of taps cannot pass Nyquist (highpass, bandstop).
  spec.cutoff_hz = {1000};
  spec.pass_zero = false;
  check_error(design_firwin(spec, 48000), "numtaps",
              "a filter that passes the Nyquist frequency needs an odd numtaps, got 64 (an "
              "even-length linear-phase FIR has a zero at Nyquist)");
  spec.cutoff_hz = {1000, 2000};
  spec.pass_zero = true;
  CHECK_FALSE(design_firwin(spec, 48000).has_value());
  spec.pass_zero = false;  // bandpass with 64 taps is fine
  CHECK(design_firwin(spec, 48000).has_value());

  spec.window = Window::kaiser;
  spec.kaiser_beta = -1;
  check_error(design_firwin(spec, 48000), "beta", "kaiser beta must lie between 0 and 700, got -1");
  spec.kaiser_beta = kNan;
  check_error(design_firwin(spec, 48000), "beta", "kaiser beta must be a finite number, got nan");
  spec.kaiser_beta = 800;
  check_error(design_firwin(spec, 48000), "beta",
              "kaiser beta must lie between 0 and 700, got 800");
  // beta is only read by the kaiser window.
  spec.window = Window::hann;
  CHECK(design_firwin(spec, 48000).has_value());
  check_error(design_firwin(spec, kNan), "fs",
              "sample rate must be a positive finite number, got nan Hz");
}

TEST_CASE("raw sections") {
  check_error(normalize_sos({}), "sos", "sos needs at least one section, got none");
  check_error(normalize_sos({{1, 0, 0, 1, 0, 0}, {1, 0, 0, 0, 0.5, 0}}), "sos",
              "section 2 has a0 = 0; sections are normalized by a0");
  check_error(normalize_sos({{1, 0, 0, 1, 0}}), "sos",
              "section 1 has 5 coefficients; each section is [b0, b1, b2, a0, a1, a2]");
  check_error(normalize_sos({{1, 0, 0, 1, 0, 0}, {1, kNan, 0, 1, 0, 0}}), "sos",
              "section 2 has a non-finite coefficient: [1, nan, 0, 1, 0, 0]");
  check_error(normalize_sos({{1e300, 0, 0, 1e-300, 0, 0}}), "sos",
              "section 1 overflows when normalized by a0 = 1e-300: [1e+300, 0, 0, 1e-300, 0, 0]");
}

TEST_CASE("transfer functions") {
  check_error(tf_to_sos({}, {1}), "b", "b needs at least one coefficient, got none");
  check_error(tf_to_sos({1}, {}), "a", "a needs at least one coefficient, got none");
  check_error(tf_to_sos({1, 2}, {0, 0}), "a", "a must have at least one nonzero coefficient");
  check_error(tf_to_sos({1, kNan}, {1}), "b",
              "coefficient 2 of b must be a finite number, got nan");
  check_error(tf_to_sos({1}, {1, -kInf}), "a",
              "coefficient 2 of a must be a finite number, got -inf");
  check_error(tf_to_sos(std::vector<double>(300, 1.0), {1}), "b",
              "b has 300 coefficients; at most 256 are supported");
}

TEST_CASE("no design ever returns non-finite coefficients") {
  // A sweep over orders, families and extreme cutoffs: either an error or finite sections.
  int designed = 0;
  for (IirFamily family : {IirFamily::butter, IirFamily::cheby1, IirFamily::cheby2,
                           IirFamily::ellip, IirFamily::bessel}) {
    for (BandType btype :
         {BandType::lowpass, BandType::highpass, BandType::bandpass, BandType::bandstop}) {
      for (int order : {1, 7, 33, 64}) {
        for (double low : {1e-6, 1.0, 23999.0}) {
          IirSpec spec;
          spec.family = family;
          spec.btype = btype;
          spec.order = order;
          spec.rp_db = 0.5;
          spec.rs_db = 200;
          spec.cutoff_hz = is_band(btype) ? std::vector<double>{low, std::min(low * 2, 23999.5)}
                                          : std::vector<double>{low};
          const auto sos = design_iir(spec, 48000);
          if (!sos) {
            CHECK_FALSE(sos.error().message.empty());
            continue;
          }
          ++designed;
          for (const Section& s : *sos) {
            for (double v : {s.b0, s.b1, s.b2, s.a1, s.a2}) CHECK(std::isfinite(v));
          }
        }
      }
    }
  }
  CHECK(designed > 0);
}

TEST_CASE("enum names round-trip") {
  CHECK(name(BandType::bandstop) == "bandstop");
  CHECK(name(IirFamily::cheby2) == "cheby2");
  CHECK(name(BesselNorm::mag) == "mag");
  CHECK(name(BiquadType::highshelf) == "highshelf");
  CHECK(name(Window::kaiser) == "kaiser");
  CHECK(enum_names<BiquadType>() == std::vector<std::string_view>{"lowpass", "highpass", "bandpass",
                                                                  "notch", "allpass", "peaking",
                                                                  "lowshelf", "highshelf"});
  CHECK(enum_names<IirFamily>().size() == 5);
  CHECK(enum_names<BandType>().size() == 4);
  CHECK(enum_names<BesselNorm>().size() == 3);
  CHECK(enum_names<Window>().size() == 5);
  for (auto word : enum_names<Window>()) CHECK(name(*parse_enum<Window>(word)) == word);
  for (auto word : enum_names<BiquadType>()) CHECK(name(*parse_enum<BiquadType>(word)) == word);
  for (auto word : enum_names<IirFamily>()) CHECK(name(*parse_enum<IirFamily>(word)) == word);
  for (auto word : enum_names<BandType>()) CHECK(name(*parse_enum<BandType>(word)) == word);
  for (auto word : enum_names<BesselNorm>()) CHECK(name(*parse_enum<BesselNorm>(word)) == word);
  CHECK_FALSE(parse_enum<Window>("hanning").has_value());
  CHECK_FALSE(parse_enum<BandType>("Lowpass").has_value());
  CHECK_FALSE(parse_enum<IirFamily>("").has_value());
}

}  // namespace fxc::design
