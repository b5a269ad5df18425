// SPDX-License-Identifier: Apache-2.0
// Whether a routing node (select, matrix, link, multiply) fits its operands' channel counts,
// in the words a user reads: the one check that the frontend (counts declared in the source)
// and infer-types (counts known from the inputs) both report, as fx-channels errors.
#pragma once

#include <string>

#include "ir/graph.h"

namespace fxc::ir {

/// Why routing node `id` of `g` cannot take its operands' channel counts (a matrix with
/// another number of columns, a channel index past the signal's, ...); empty when they fit or
/// are not known yet, and for a node that is not routing. An empty matrix (a sum of channels)
/// fits any count.
std::string routing_channel_mismatch(const Graph& g, NodeId id);

}  // namespace fxc::ir
