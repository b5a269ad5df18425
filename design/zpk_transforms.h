// SPDX-License-Identifier: Apache-2.0
// Frequency transformations of an analog lowpass prototype and the bilinear transform:
// scipy.signal.{lp2lp_zpk, lp2hp_zpk, lp2bp_zpk, lp2bs_zpk, bilinear_zpk}.
// Each requires at least as many poles as zeros, which every prototype here satisfies.
#pragma once

#include "design/zpk.h"

namespace fxc::design {

/// Lowpass to lowpass with cutoff `wo` rad/s.
Zpk lp2lp_zpk(const Zpk& prototype, double wo);
/// Lowpass to highpass with cutoff `wo` rad/s.
Zpk lp2hp_zpk(const Zpk& prototype, double wo);
/// Lowpass to bandpass with centre `wo` and width `bw` rad/s.
Zpk lp2bp_zpk(const Zpk& prototype, double wo, double bw);
/// Lowpass to bandstop with centre `wo` and width `bw` rad/s.
Zpk lp2bs_zpk(const Zpk& prototype, double wo, double bw);
/// Analog to digital by the bilinear transform s = 2 fs (z - 1) / (z + 1).
Zpk bilinear_zpk(const Zpk& analog, double fs);

}  // namespace fxc::design
