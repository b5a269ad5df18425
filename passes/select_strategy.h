// SPDX-License-Identifier: Apache-2.0
// Pass: choose how each kernel runs, and say why.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// Before: a graph whose stages are in chain nodes (fuse_chains). After: every chain node
/// has a strategy for its IIR sections (sequential, channels across SIMD lanes, section
/// wavefront, time-chunked scan with its chunk length for chains of only sections and gains
/// whose state decays fast enough for the signal's length, or a GPU variant), an FIR method
/// (direct or FFT overlap-save with its block length) and a one-line reason, chosen by
/// choose_schedule in cost_model.h from the channels, the expected length, the sections and
/// taps, the dtype, the target and the thresholds.
ir::Graph select_strategy(const ir::Graph& graph, PassContext& context);

}  // namespace fxc::passes
