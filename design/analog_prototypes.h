// SPDX-License-Identifier: Apache-2.0
// Analog lowpass prototypes with a cutoff of 1 rad/s: scipy.signal.{buttap, cheb1ap, cheb2ap,
// ellipap, besselap}, with their poles and zeros in SciPy's order.
#pragma once

#include <optional>

#include "design/filter_types.h"
#include "design/zpk.h"

namespace fxc::design {

/// Butterworth (buttap). `order` >= 1.
Zpk butter_prototype(int order);
/// Chebyshev type I with `rp_db` of passband ripple (cheb1ap).
Zpk cheby1_prototype(int order, double rp_db);
/// Chebyshev type II with `rs_db` of stopband attenuation (cheb2ap).
Zpk cheby2_prototype(int order, double rs_db);
/// Elliptic (ellipap). Nullopt where SciPy's computation fails (for example rs <= rp).
std::optional<Zpk> ellip_prototype(int order, double rp_db, double rs_db);
/// Bessel/Thomson (besselap). Nullopt if the root finder does not converge.
std::optional<Zpk> bessel_prototype(int order, BesselNorm norm);

}  // namespace fxc::design
