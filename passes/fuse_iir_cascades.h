// SPDX-License-Identifier: Apache-2.0
// Pass: merge IIR filters in series into one cascade of second-order sections.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// Before: a designed graph (every IIR filter is an sos node). After: no sos node reads an
/// sos node that has no other user: each such run is one sos node holding all the sections
/// in order, at the place of the run's last node, with the run's locations as origins. A
/// fan-out (a node with several users) or any other stage ends a run. The arithmetic is the
/// same, section by section, so outputs are unchanged.
ir::Graph fuse_iir_cascades(const ir::Graph& graph, PassContext& context);

}  // namespace fxc::passes
