// SPDX-License-Identifier: Apache-2.0
// Pass: fold constant gains into their neighbours.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// Before: a designed graph. After, with the output unchanged up to float64 rounding:
///   - gains of exactly 1 are gone, and gains in series are one gain;
///   - a gain next to an sos or fir node that is its only user (or whose only user it is) is
///     folded into the first section's b coefficients or into the taps;
///   - a gain read only by a sum is folded into that sum's weight, and a gain of a sum read
///     only by that gain is folded into all its weights;
///   - a sum that reads the same signal several times reads it once with the weights added
///     (with merge_identical_nodes, a sum of equally-filtered branches filters once), and a
///     sum of one operand becomes a gain.
ir::Graph fold_gains(const ir::Graph& graph, PassContext& context);

}  // namespace fxc::passes
