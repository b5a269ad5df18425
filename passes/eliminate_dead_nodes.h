// SPDX-License-Identifier: Apache-2.0
// Pass: remove nodes no output depends on.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// Before: a valid graph. After: every node except the inputs feeds some output; inputs stay
/// even when unused, since they are the graph's interface. Ids are renumbered in order.
ir::Graph eliminate_dead_nodes(const ir::Graph& graph, PassContext& context);

}  // namespace fxc::passes
