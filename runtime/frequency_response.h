// SPDX-License-Identifier: Apache-2.0
// The exact frequency response of a designed, linear graph, from each input to each output.
#pragma once

#include <complex>
#include <vector>

#include "ir/graph.h"
#include "support/diagnostics.h"

namespace fxc {

/// The response of one output to one input, the other inputs held at zero.
struct PathResponse {
  ir::NodeId input;
  ir::NodeId output;
  std::vector<std::complex<double>> response;  ///< one value per requested frequency
};

/// H(e^{jw}) at each angular frequency in `w_rad` (radians per sample) for every (input,
/// output) pair where the output depends on the input. The graph must be designed (no
/// specifications). A linear loop (feedback through linear stages) has one: it is solved as
/// a linear system per frequency. A non-linear stage (tanh, clip) or channel routing on a
/// path has none: it is reported at its location and the result is empty.
std::vector<PathResponse> frequency_response(const ir::Graph& graph,
                                             const std::vector<double>& w_rad,
                                             DiagnosticEngine& diags);

}  // namespace fxc
