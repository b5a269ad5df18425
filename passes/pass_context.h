// SPDX-License-Identifier: Apache-2.0
// What every pass receives besides the graph: the binding (sample rate, channels, dtype,
// expected length), the target, the cost model's thresholds, and the diagnostics sink.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

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

/// A live chain over its parameters' ranges, as the live analysis found it on the graph it
/// designed. The ids are that graph's: a compile whose graph differs (a batch, widened, where
/// split-precision splits another chain; another pipeline) may put another chain at the id,
/// so the bounds hold only in a graph of as many nodes and for a chain of the same `shape`
/// (live_chain_shape); a live chain without its bounds is treated as the worst its range
/// could be.
struct LiveChainBounds {
  /// The largest pole radius its sections reach (1 where a parameter without a declared range
  /// moves a pole): state precision and chunking are decided from it.
  double pole_radius = 0;
  /// For a float32 program, the largest relative error its sections measure in float32
  /// (float32_state_error) at the sampled values, where the radius alone does not give them
  /// float64 state: with the radius alone, a ranged band-stop ran in float32 at 0.27 error.
  double float32_error = 0;
  std::string shape;
};

struct PassContext {
  DiagnosticEngine& diags;
  Binding binding;
  Target target = host_target();
  StrategyThresholds thresholds;
  /// false: fuse_chains gives every stage a kernel of its own (for `fxc bench`'s comparison).
  bool fusion = true;
  /// Live chains (ir::Node::live) by node id of the graph select_strategy sees: what their
  /// parameters' ranges reach (driver/live_parameters.h), so that any value in the range
  /// runs with the same kernels.
  std::map<std::uint32_t, LiveChainBounds> live_chains;
  /// The node count of the graph the live analysis designed: a graph of another count has
  /// other ids (a chain split in one and not the other), and its live chains take the worst.
  std::size_t live_designed_nodes = 0;
};

}  // namespace fxc::passes
