// SPDX-License-Identifier: Apache-2.0
// Content hashes of graphs, for kernel-cache keys.
#pragma once

#include <string>

#include "ir/graph.h"

namespace fxc::ir {

/// SHA-256 (hex) of the graph's shape: kinds, topology, types, orders, section and tap
/// counts, strategies. Coefficient values, cutoffs, gains, names and locations are excluded,
/// so graphs that differ only in values hash the same.
std::string structural_hash(const Graph& graph);

/// SHA-256 (hex) of the shape and every value (names and locations still excluded).
std::string value_hash(const Graph& graph);

}  // namespace fxc::ir
