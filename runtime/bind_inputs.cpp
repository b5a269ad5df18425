// SPDX-License-Identifier: Apache-2.0
#include "runtime/bind_inputs.h"

namespace fxc {

std::optional<ir::Graph> bind_inputs(const ir::Graph& graph, std::span<const Signal> signals,
                                     DiagnosticEngine& diags,
                                     std::span<const std::string> sources) {
  ir::Graph bound = graph;
  std::vector<ir::NodeId> inputs = graph.inputs();
  bool ok = true;
  for (std::size_t i = 0; i < inputs.size() && i < signals.size(); ++i) {
    ir::Node& node = bound.node(inputs[i]);
    int have = static_cast<int>(signals[i].channels());
    if (node.type.channels == 0) {
      node.type.channels = have;
    } else if (node.type.channels != have) {
      std::string what = i < sources.size()              ? "'" + sources[i] + "'"
                         : !signals[i].source().empty() ? "'" + signals[i].source() + "'"
                                                        : "its signal";
      diags.error(node.loc,
                  "input '" + std::get<ir::Input>(node.op).name + "' is declared with " +
                      std::to_string(node.type.channels) + " channel(s), but " + what + " has " +
                      std::to_string(have),
                  "fxc-channels");
      ok = false;
    }
  }
  // Every input of a graph has the same length (docs/fx-language.md). A signal without a
  // source is named by its port (a number read 1-based here and 0-based by the API's other
  // messages, "input 0's channel 1").
  auto name = [&](std::size_t i) {
    if (i < sources.size()) return "'" + sources[i] + "'";
    if (!signals[i].source().empty()) return "'" + signals[i].source() + "'";
    return "input '" + std::get<ir::Input>(graph.node(inputs[i]).op).name + "'";
  };
  for (std::size_t i = 1; i < inputs.size() && i < signals.size(); ++i)
    if (signals[i].samples() != signals[0].samples()) {
      diags.error({},
                  "inputs have different lengths: " + name(0) + " has " +
                      std::to_string(signals[0].samples()) + " samples, " + name(i) + " has " +
                      std::to_string(signals[i].samples()) +
                      " (every input of a graph must have the same length)",
                  "fxc-length");
      ok = false;
      break;
    }
  if (!ok) return std::nullopt;
  return bound;
}

}  // namespace fxc
