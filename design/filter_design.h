// SPDX-License-Identifier: Apache-2.0
// Digital filter design with SciPy's semantics (scipy.signal), in double precision.
//
// Every function validates its parameters and returns a DesignError naming the offending
// parameter instead of throwing or producing NaN coefficients. Frequencies are in Hz at the
// sample rate `fs_hz`, as with SciPy's `fs=` argument.
#pragma once

#include <complex>
#include <string>
#include <vector>

#include "design/filter_types.h"
#include "support/expected.h"

namespace fxc::design {

/// A rejected design parameter. `param` is the parameter's name as written in the .fx stage
/// tables ("N", "Wn", "rp", "f0", "numtaps", ...) or "fs" for the sample rate.
struct DesignError {
  std::string param;
  std::string message;
};
template <class T>
using DesignResult = Expected<T, DesignError>;

/// An IIR design: scipy.signal.{butter,cheby1,cheby2,ellip,bessel}(..., output='sos').
struct IirSpec {
  IirFamily family = IirFamily::butter;
  int order = 1;                   ///< N, at least 1
  BandType btype = BandType::lowpass;
  std::vector<double> cutoff_hz;   ///< Wn: one edge, or [low, high] for band types
  double rp_db = 0;                ///< passband ripple (cheby1, ellip)
  double rs_db = 0;                ///< stopband attenuation (cheby2, ellip)
  BesselNorm norm = BesselNorm::phase;
};

/// Designs the sections exactly as SciPy does (zpk2sos with pairing='nearest').
DesignResult<Sos> design_iir(const IirSpec& spec, double fs_hz);

/// The number of sections design_iir returns for `spec`, known without a sample rate.
int iir_section_count(const IirSpec& spec);

/// An Audio EQ Cookbook biquad (R. Bristow-Johnson), A = 10^(gain_db/40).
struct BiquadSpec {
  BiquadType type = BiquadType::lowpass;
  double f0_hz = 1000;
  double q = 0.7071067811865476;   ///< the cookbook's Q (also for the shelves)
  double gain_db = 0;              ///< peaking and shelves only
};
DesignResult<Section> design_biquad(const BiquadSpec& spec, double fs_hz);

/// scipy.signal.firwin(numtaps, cutoff, window=..., pass_zero=..., fs=fs).
struct FirwinSpec {
  int numtaps = 1;
  std::vector<double> cutoff_hz;
  Window window = Window::hamming;
  double kaiser_beta = 0;          ///< only for Window::kaiser
  bool pass_zero = true;
};
DesignResult<std::vector<double>> design_firwin(const FirwinSpec& spec, double fs_hz);

/// Raw sections in SciPy's layout [b0, b1, b2, a0, a1, a2], each normalized by its a0.
/// An a0 of 0, a row of the wrong length, or a non-finite value is an error.
DesignResult<Sos> normalize_sos(const std::vector<std::vector<double>>& rows);

/// A transfer function (b, a) as scipy.signal.tf2sos(b, a) would split it.
DesignResult<Sos> tf_to_sos(const std::vector<double>& b, const std::vector<double>& a);

/// True when every pole of every section lies strictly inside the unit circle.
bool is_stable(const Sos& sos);
/// The largest pole magnitude over all sections (0 for an all-zero cascade).
double max_pole_radius(const Sos& sos);

/// H(e^{jw}) of the cascade at normalized angular frequency `w` (radians per sample).
std::complex<double> frequency_response(const Sos& sos, double w);
/// H(e^{jw}) of FIR taps.
std::complex<double> frequency_response(const std::vector<double>& taps, double w);

}  // namespace fxc::design
