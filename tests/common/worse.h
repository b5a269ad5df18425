// SPDX-License-Identifier: Apache-2.0
// The worst of a test's errors, with NaN the worst of all. std::max(worst, e) returns `worst`
// when `e` is NaN (NaN compares false), so a kernel whose every output was NaN passed
// "worst <= bound" checks that took their worst that way: they could not fail.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace fxc::test {

/// The larger of `worst` and `e`; NaN when either is NaN.
template <class T>
T worse(T worst, T e) {
  return std::isnan(worst) || std::isnan(e) ? std::numeric_limits<T>::quiet_NaN() : std::max(worst, e);
}

}  // namespace fxc::test
