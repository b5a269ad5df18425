// SPDX-License-Identifier: Apache-2.0
// Pass: make each linear run of stages one kernel node.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// Before: a designed graph. After: every sos, fir, gain, delay, tanh and clip node is inside
/// a chain node. A chain holds a maximal run of such stages in which each stage but the last
/// is read only by the next, so a backend runs the whole run in one pass over memory. Fan-out
/// points, sums, inputs and outputs end runs. A chain keeps the locations of its stages as
/// origins; its strategy is left for select_strategy.
ir::Graph fuse_chains(const ir::Graph& graph, PassContext& context);

}  // namespace fxc::passes
