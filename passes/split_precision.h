// SPDX-License-Identifier: Apache-2.0
// Pass: split a float32 chain at the precision boundary.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// Before: fused chains. A float32 chain whose sections include some with poles near the unit
/// circle (radius >= thresholds.f64_state_pole_radius, which select_strategy gives float64
/// state) and others without would run wholly in float64, at half the SIMD width. After, when
/// the cost model says it pays (channel lanes: sections x channel groups of each width, plus
/// one more pass over the signal through memory, counted as four sections; chains on one
/// channel stay whole), those sections run first
/// in a chain of their own, and
/// the original chain keeps the rest at float32. Sections of a linear, time-invariant run
/// commute, so they move only across linear stages (sections, gains, FIRs, delays), never
/// across a tanh or clip; a chain with such sections after a non-linear stage stays whole.
/// Chains whose values follow live parameters stay whole (their precision is decided over the
/// parameters' ranges). Float32 bindings only. On the CUDA target there is no pass over memory
/// to pay for: the same sections move to the front of the same chain, as its first stage, and
/// the chain gets state_precision `mixed` (that stage in float64, the rest in float32, one
/// kernel), on any channel count, whenever the float32 part keeps float64 quality. The output
/// is unchanged up to the order in which float32 rounding happens.
ir::Graph split_precision(const ir::Graph& graph, PassContext& context);

}  // namespace fxc::passes
