// SPDX-License-Identifier: Apache-2.0
// How much a cascade of sections loses when its state and arithmetic are float32.
#pragma once

#include <vector>

#include "design/filter_types.h"

namespace fxc::passes {

/// The relative RMS error of `sections` run in float32 (transposed direct form II with float32
/// coefficients and state, as the float32 kernels run them) against the same in float64, on
/// 8192 samples of seeded white noise after a warm-up of 4096 (for poles inside r = 0.99): a measurement, not a bound,
/// of the roundoff each section's recurrence amplifies and the later sections carry to the
/// output. It is what the pole radius alone misses: a high-order design near Nyquist can lose
/// 90 dB with every pole inside r = 0.99. Deterministic, and remembered by coefficients (a
/// set() schedules the graph again); microseconds per section the first time.
double float32_state_error(const std::vector<design::Section>& sections);

/// float32_state_error of `sections` where split-precision puts them: after `before` in
/// float64, whose output is rounded to float32 on its way in. The same sections may measure
/// far less on white noise: a wide band-stop near Nyquist whose output alone was near silence
/// (under the floor below) measured 1.3e-11 there and 1.8e-4 after a 433 Hz lowpass (a graph
/// of the random precision test).
double float32_state_error_after(const std::vector<design::Section>& before,
                                 const std::vector<design::Section>& sections);

/// The same for float64 against extended precision (x86's 80-bit long double; 0 where there
/// is none): how much of float64's precision a cascade's recurrences amplify away. A design
/// whose poles crowd z = 1 or z = -1 at a high order (a wide 12th-order band-stop) loses all of
/// it: its float64 output is rounding noise, in fxc as in SciPy.
double float64_state_error(const std::vector<design::Section>& sections);

}  // namespace fxc::passes
