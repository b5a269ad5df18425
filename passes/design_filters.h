// SPDX-License-Identifier: Apache-2.0
// Pass: turn filter specifications into concrete coefficients at the bound sample rate.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// Before: any valid graph; the context has a sample rate.
/// After: no specification nodes remain. iir_design and tf become sos, biquad becomes a
/// one-section sos, fir_design becomes fir, a delay in seconds becomes a delay in samples
/// (rounded to nearest, halves up). Raw sos and tf are checked for stability unless they
/// allow instability. Node ids, locations and types are unchanged.
///
/// A bad parameter (a cutoff at or above Nyquist, ...) is reported at the location of that
/// parameter's value; the returned graph is then incomplete and must not be used.
ir::Graph design_filters(const ir::Graph& graph, PassContext& context);

}  // namespace fxc::passes
