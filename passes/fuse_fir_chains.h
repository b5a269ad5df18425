// SPDX-License-Identifier: Apache-2.0
// Pass: merge FIR filters in series into one FIR by convolving their taps.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// Before: a designed graph. After: no fir node reads a fir node that has no other user,
/// where running the convolved taps costs no more than running the two filters apart (see
/// fir_cost in cost_model.h; with direct or FFT convolution, one filter of la + lb - 1 taps
/// is never dearer than filters of la and lb taps). Outputs change only by float64 rounding.
ir::Graph fuse_fir_chains(const ir::Graph& graph, PassContext& context);

}  // namespace fxc::passes
