// SPDX-License-Identifier: Apache-2.0
// Zeros, poles and gain to second-order sections: scipy.signal.zpk2sos with pairing='nearest'
// (its default for digital filters), section for section.
#pragma once

#include <optional>

#include "design/filter_types.h"
#include "design/zpk.h"

namespace fxc::design {

/// SciPy's _cplxreal: conjugate pairs (one per pair, positive imaginary part, sorted by real
/// part then imaginary magnitude) followed by the real roots (sorted), all as complex values
/// with exactly zero imaginary part for the reals. Nullopt if a complex root has no conjugate.
std::optional<std::vector<Complex>> pair_conjugates(const std::vector<Complex>& roots);

/// zpk2sos(z, p, k, pairing='nearest'). Nullopt where SciPy raises (unpaired complex roots).
std::optional<Sos> zpk_to_sos(const Zpk& zpk);

}  // namespace fxc::design
