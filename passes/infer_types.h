// SPDX-License-Identifier: Apache-2.0
// Pass: bind channel counts and the sample type, and propagate them through the graph.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// Before: a graph whose inputs may lack a channel count.
/// After: every input without one gets `binding.channels` (when non-zero), every node has its
/// operands' channel count and `binding.dtype`. Operands of a sum whose channel counts
/// disagree are reported at the sum's location.
ir::Graph infer_types(const ir::Graph& graph, PassContext& context);

}  // namespace fxc::passes
