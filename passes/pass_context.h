// What every pass receives besides the graph: the binding (sample rate, channels, dtype),
// the diagnostics sink, and tunable options.
#pragma once

#include <optional>

#include "ir/dtype.h"
#include "support/diagnostics.h"

namespace fxc::passes {

/// The values a graph is bound to before it can be designed and run.
struct Binding {
  std::optional<double> sample_rate_hz;  ///< needed by design_filters
  int channels = 0;        ///< channel count for inputs declared without one; 0 = leave unknown
  DType dtype = DType::f64;
};

struct PassContext {
  DiagnosticEngine& diags;
  Binding binding;
};

}  // namespace fxc::passes
