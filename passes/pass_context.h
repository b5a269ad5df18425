// SPDX-License-Identifier: Apache-2.0
// What every pass receives besides the graph: the binding (sample rate, channels, dtype,
// expected length), the target, the cost model's thresholds, and the diagnostics sink.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "ir/dtype.h"
#include "passes/strategy_thresholds.h"
#include "passes/target.h"
#include "support/diagnostics.h"

namespace fxc::passes {

/// The values a graph is bound to before it can be designed, scheduled and run.
struct Binding {
  std::optional<double> sample_rate_hz;  ///< needed by design_filters
  int channels = 0;        ///< channel count for inputs declared without one; 0 = leave unknown
  DType dtype = DType::f64;
  /// Expected samples per signal, when known (a file's length); guides select_strategy.
  std::optional<std::int64_t> length_samples;
  /// Signals run together in one dispatch (a batch); each adds its channels to the lanes.
  int batch = 1;
};

struct PassContext {
  DiagnosticEngine& diags;
  Binding binding;
  Target target = host_target();
  StrategyThresholds thresholds;
  /// false: fuse_chains gives every stage a kernel of its own (for `fxc bench`'s comparison).
  bool fusion = true;
  /// Live chains (ir::Node::live) by node id of the scheduled graph: the largest pole radius
  /// their sections reach over their parameters' ranges (1 where a parameter without a
  /// declared range moves a pole). select_strategy decides state precision and chunking
  /// from it, so that any value in the range runs with the same kernels.
  std::map<std::uint32_t, double> live_pole_radius;
  /// Live chains by node id of the scheduled graph: the largest relative error their sections
  /// measure in float32 (float32_state_error) at their parameters' sampled values, for a
  /// float32 program. select_strategy gives float64 state where it exceeds the bound, as for
  /// a fixed chain: with the radius alone, a ranged band-stop ran in float32 at 0.27 error.
  std::map<std::uint32_t, double> live_float32_error;
};

}  // namespace fxc::passes
