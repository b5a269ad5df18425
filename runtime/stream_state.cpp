// SPDX-License-Identifier: Apache-2.0
#include "runtime/stream_state.h"

namespace fxc {

DType dtype_of(const ir::Graph& scheduled) {
  std::vector<ir::NodeId> ids = scheduled.inputs();
  return ids.empty() ? DType::f64 : scheduled.node(ids[0]).type.dtype;
}

StreamState fresh_stream_state(DType signal) {
  if (signal == DType::f32) return {GraphState<float>{}};
  return {GraphState<double>{}};
}

template <class T>
void ready_chain_states(const ir::Graph& scheduled, const GraphValues& values, GraphState<T>& state) {
  state.chains.resize(scheduled.size());
  if constexpr (std::is_same_v<T, float>) state.wide_chains.resize(scheduled.size());
  for (ir::NodeId id = 0; id < scheduled.size(); ++id) {
    const ir::Node& node = scheduled.node(id);
    if (ir::holds<ir::Feedback>(node)) {
      ChainState<T>& s = state.chains[id];
      if (s.ready) continue;
      auto channels = static_cast<std::size_t>(node.type.channels);
      s.delay_lengths = values.nodes[id].delay_lengths;
      s.state.clear();
      s.positions.assign(channels, 0);
      s.lines.assign(channels, std::vector<T>(1, T(0)));
      s.fft_history.assign(channels, {});
      s.ready = true;
      continue;
    }
    const auto* chain = std::get_if<ir::Chain>(&node.op);
    if (!chain) continue;
    visit_chain_state(state, *chain, id, [&](auto& s) {
      using C = typename std::decay_t<decltype(s.state)>::value_type;
      if (s.ready) return;
      codegen::ChainLayout layout = codegen::layout_of(*chain);
      auto channels = static_cast<std::size_t>(node.type.channels);
      s.delay_lengths = values.nodes[id].delay_lengths;
      s.state.assign(channels * layout.state_per_channel, C(0));
      s.positions.assign(channels * layout.positions_per_channel(), 0);
      // One cell each to start with (a 0 delay has one): grow_delay_lines sizes them per call.
      s.lines.assign(channels * s.delay_lengths.size(), std::vector<C>(1, C(0)));
      s.fft_history.assign(channels, {});
      s.ready = true;
    });
  }
}

template void ready_chain_states(const ir::Graph&, const GraphValues&, GraphState<float>&);
template void ready_chain_states(const ir::Graph&, const GraphValues&, GraphState<double>&);

}  // namespace fxc
