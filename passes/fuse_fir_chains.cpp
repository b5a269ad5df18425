// SPDX-License-Identifier: Apache-2.0
#include "passes/fuse_fir_chains.h"

#include <algorithm>
#include <cmath>

#include "ir/rewrite.h"
#include "passes/cost_model.h"

namespace fxc::passes {
namespace {

std::vector<double> convolve(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out(a.size() + b.size() - 1, 0.0);
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) out[i + j] += a[i] * b[j];
  return out;
}

}  // namespace

// Algorithm: absorb_single_use_operands, where a fir node convolves the taps of a fir
// operand into its own when the cost model says the merged filter is no dearer.
ir::Graph fuse_fir_chains(const ir::Graph& graph, PassContext& context) {
  return ir::absorb_single_use_operands(graph, [&](ir::Node& node, ir::Node& operand) {
    auto* fir = std::get_if<ir::FirFilter>(&node.op);
    auto* first = std::get_if<ir::FirFilter>(&operand.op);
    if (!fir || !first) return false;
    std::size_t merged = fir->taps.size() + first->taps.size() - 1;
    if (fir_cost(merged, context) >
        fir_cost(fir->taps.size(), context) + fir_cost(first->taps.size(), context))
      return false;
    std::vector<double> taps = convolve(first->taps, fir->taps);
    // Taps so large that their products overflow stay two filters, which overflow (or not)
    // sample by sample as written.
    if (!std::all_of(taps.begin(), taps.end(), [](double t) { return std::isfinite(t); })) return false;
    fir->taps = std::move(taps);
    return true;
  });
}

}  // namespace fxc::passes
