// SPDX-License-Identifier: Apache-2.0
// Roots of a real polynomial as numpy.roots finds them: eigenvalues of the companion matrix.
#pragma once

#include <optional>
#include <vector>

#include "design/zpk.h"

namespace fxc::design {

/// Roots of c[0] x^n + c[1] x^(n-1) + ... + c[n] (numpy.roots): leading zeros are dropped,
/// trailing zeros give roots at the origin (listed last), an all-zero polynomial has none.
/// Complex roots come in exactly conjugate pairs. Nullopt if the QR iteration fails.
std::optional<std::vector<Complex>> polynomial_roots(const std::vector<double>& coefficients);

}  // namespace fxc::design
