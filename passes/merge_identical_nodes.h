// SPDX-License-Identifier: Apache-2.0
// Pass: compute identical branches once.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// Before: a valid graph. After: no two nodes other than outputs have the same kind, fields,
/// type and operands; the later of two such nodes is replaced by the earlier one everywhere
/// (so `x | f` written twice is filtered once). Ids are renumbered in order.
ir::Graph merge_identical_nodes(const ir::Graph& graph, PassContext& context);

}  // namespace fxc::passes
