// SPDX-License-Identifier: Apache-2.0
// Seeded random graphs for property tests: random stages with valid random parameters,
// fan-out, reused chains, mixes and delays. The same seed gives the same graph.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace fxc::test {

/// A random graph of 1 or 2 inputs (1 to 3 channels), 2 to 12 steps, 1 or 2 outputs, whose
/// filters are valid at a sample rate of 48 kHz and stable.
ir::Graph random_graph(std::uint64_t seed);

}  // namespace fxc::test
