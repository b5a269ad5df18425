// SPDX-License-Identifier: Apache-2.0
// Pass: fold a loop through one mix into one chain that runs it sample by sample.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace fxc::passes {

/// Before: chains fused (fuse-chains). After, on either target: each loop of the form
///   s = a x + b (body of f),   f = feedback(s, D)
/// where the mix s has two operands, x comes from outside the loop, and the body is at most one
/// chain of sos, gain, tanh and clip stages read only by s (after the delay: `y | delay(D) |
/// lowpass(f)`, not `y | lowpass(f) | delay(D)`), is one chain on x with the stages
/// [loop_read D, body..., loop_write a b]. It gives s, or f when only f is read outside the
/// loop (loop_write's output_read); a loop whose s and f are both read outside stays as it is.
/// A fused loop read only by a mix of it and its own input x, `a loop + b x`, takes that mix
/// too (loop_write's dry_mix).
/// The chain keeps the loop's line in its own state and runs it one sample at a time (SIMD
/// across channels on the CPU, a thread per channel on the GPU), instead of a kernel per stage
/// per block with copies of the line (on the GPU: a launch per kernel per pass of the delay's
/// length, a pass per sample for a one-sample delay). The arithmetic is the same: outputs are
/// unchanged. Other loops (several mixes, routing, FIRs or delays in the body, values read from
/// inside the loop) keep their feedback nodes. On the GPU, thresholds.gpu_fuse_loops = 0 keeps
/// every loop's feedback nodes (to compare).
ir::Graph fuse_loops(const ir::Graph& graph, PassContext& context);

}  // namespace fxc::passes
