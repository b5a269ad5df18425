// SPDX-License-Identifier: Apache-2.0
// Seeded random graphs for property tests: random stages with valid random parameters,
// fan-out, reused chains, mixes and delays. The same seed gives the same graph.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace fxc::test {

/// A random graph of 1 or 2 inputs (1 to 3 channels), 2 to 12 steps, 1 or 2 outputs, whose
/// filters are valid at a sample rate of 48 kHz and stable.
ir::Graph random_graph(std::uint64_t seed);

/// A random .fx program (language version 2) of one input with 1 to 3 channels: filters,
/// mixes, feedback loops (a signal through stages and a delay of 1 to 40 samples back into a
/// mix, or two signals feeding each other), and channel routing (selections, splits,
/// concatenations, sums of channels, pans, mid/side, swaps). Loops stay stable: their gain
/// is below 0.9 and their stages do not amplify. Valid at 48 kHz.
std::string random_looped_program(std::uint64_t seed);

}  // namespace fxc::test
