// SPDX-License-Identifier: Apache-2.0
#include "runtime/cuda_stream_state.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "codegen/chain_layout.h"
#include "runtime/graph_values.h"
#include "runtime/partitioned_convolution.h"

namespace fxc {
namespace {

using codegen::CudaKernelKind;

template <class V>
std::vector<V> values_from(const std::vector<std::uint8_t>& bytes) {
  std::vector<V> out(bytes.size() / sizeof(V));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(V));
  return out;
}

template <class V>
std::vector<std::uint8_t> bytes_from(const std::vector<V>& values) {
  std::vector<std::uint8_t> out(values.size() * sizeof(V));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::size_t cells_of(std::int64_t length) { return static_cast<std::size_t>(std::max<std::int64_t>(length, 1)); }

std::string mismatch(ir::NodeId id) {
  return "the GPU stream's state of node %" + std::to_string(id) + " does not fit its graph (an fxc defect)";
}

// A lone FIR run by FFT (codegen::runs_in_runtime): the ring on the device, the history of the
// CPU runtime's state.
bool fft_fir(const codegen::CudaKernelInfo& k) {
  return k.kind == CudaKernelKind::fir_fft || k.kind == CudaKernelKind::fir_partitioned;
}

template <class T>
Expected<std::monostate, std::string> to_host(const CudaProgram& program, const ir::Graph& g,
                                              const CudaStreamState& snapshot, GraphState<T>& state) {
  const GraphValues values = graph_values(g);
  ready_chain_states(g, values, state);
  if (snapshot.kernels.size() != program.kernels.size())
    return Unexpected{std::string("the GPU stream's state does not fit its program (an fxc defect)")};
  for (std::size_t i = 0; i < program.kernels.size(); ++i) {
    const codegen::CudaKernelInfo& k = program.kernels[i];
    const CudaKernelState& from = snapshot.kernels[i];
    const ir::Node& node = g.node(k.node);
    const auto channels = static_cast<std::size_t>(node.type.channels);
    if (k.kind == CudaKernelKind::feedback) {
      ChainState<T>& s = state.chains[k.node];
      const std::size_t cells = cells_of(s.delay_lengths.at(0));
      const std::vector<T> lines = values_from<T>(from.lines);
      s.positions = values_from<std::int64_t>(from.positions);
      if (lines.size() != channels * cells || s.positions.size() != channels) return Unexpected{mismatch(k.node)};
      for (std::size_t c = 0; c < channels; ++c) {
        s.lines[c].resize(cells);
        for (std::size_t cell = 0; cell < cells; ++cell) s.lines[c][cell] = lines[cell * channels + c];
      }
      continue;
    }
    const auto* chain = std::get_if<ir::Chain>(&node.op);
    if (!chain) continue;  // sums and routes keep nothing
    std::string error;
    visit_chain_state(state, *chain, k.node, [&](auto& s) {
      using C = typename std::decay_t<decltype(s.state)>::value_type;
      const codegen::ChainLayout layout = codegen::layout_of(*chain);
      const std::vector<C> ring_state = values_from<C>(from.state);
      std::vector<std::int64_t> positions = values_from<std::int64_t>(from.positions);
      if ((k.state_dtype == DType::f64) != std::is_same_v<C, double> || ring_state.size() != s.state.size() ||
          positions.size() != s.positions.size()) {
        error = mismatch(k.node);
        return;
      }
      if (fft_fir(k)) {
        // The newest inputs, the newest last, from the ring: x[-j] is ring[(pos - j) mod taps].
        const auto taps = static_cast<std::int64_t>(k.fir_taps);
        const std::size_t history = fft_history_length(static_cast<std::size_t>(taps), chain->fft_block);
        const std::size_t per_channel = static_cast<std::size_t>(layout.state_per_channel);
        const auto at = static_cast<std::size_t>(layout.stages[0].state_offset);
        for (std::size_t c = 0; c < channels; ++c) {
          const C* ring = ring_state.data() + c * per_channel + at;
          const std::int64_t pos = positions[c * static_cast<std::size_t>(layout.positions_per_channel()) +
                                             static_cast<std::size_t>(layout.delay_count)];
          std::vector<C>& h = s.fft_history[c];
          h.assign(history, C(0));
          for (std::int64_t j = 1; j <= taps && j <= static_cast<std::int64_t>(history); ++j)
            h[history - static_cast<std::size_t>(j)] = ring[((pos - j) % taps + taps) % taps];
        }
        std::fill(positions.begin(), positions.end(), std::int64_t{0});  // a block's phase 0
        s.positions = std::move(positions);
        return;  // the CPU's state ring of such a chain is not used: zeros
      }
      s.state = ring_state;
      s.positions = std::move(positions);
      const std::vector<C> lines = values_from<C>(from.lines);
      std::size_t at = 0;
      for (std::size_t c = 0; c < channels; ++c)
        for (std::size_t d = 0; d < s.delay_lengths.size(); ++d) {
          const std::size_t cells = cells_of(s.delay_lengths[d]);
          if (at + cells > lines.size()) {
            error = mismatch(k.node);
            return;
          }
          s.lines[c * s.delay_lengths.size() + d].assign(lines.begin() + static_cast<std::ptrdiff_t>(at),
                                                         lines.begin() + static_cast<std::ptrdiff_t>(at + cells));
          at += cells;
        }
      if (at != lines.size() && !(at == 0 && s.delay_lengths.empty())) error = mismatch(k.node);
    });
    if (!error.empty()) return Unexpected{error};
  }
  return std::monostate{};
}

template <class T>
Expected<CudaStreamState, std::string> to_device(const CudaProgram& program, const ir::Graph& g,
                                                 GraphState<T>& state, const CudaStreamState& like) {
  CudaStreamState out = like;
  for (std::size_t i = 0; i < program.kernels.size(); ++i) {
    const codegen::CudaKernelInfo& k = program.kernels[i];
    CudaKernelState& to = out.kernels.at(i);
    const ir::Node& node = g.node(k.node);
    const auto channels = static_cast<std::size_t>(node.type.channels);
    if (k.kind == CudaKernelKind::feedback) {
      const ChainState<T>& s = state.chains.at(k.node);
      const std::size_t cells = cells_of(s.delay_lengths.at(0));
      std::vector<T> lines(channels * cells, T(0));
      for (std::size_t c = 0; c < channels; ++c)
        for (std::size_t cell = 0; cell < s.lines[c].size() && cell < cells; ++cell)
          lines[cell * channels + c] = s.lines[c][cell];
      to.lines = bytes_from(lines);
      to.positions = bytes_from(s.positions);
    } else if (const auto* chain = std::get_if<ir::Chain>(&node.op)) {
      visit_chain_state(state, *chain, k.node, [&](const auto& s) {
        using C = typename std::decay_t<decltype(s.state)>::value_type;
        const codegen::ChainLayout layout = codegen::layout_of(*chain);
        const auto per_channel = static_cast<std::size_t>(layout.positions_per_channel());
        std::vector<C> ring_state = s.state;
        std::vector<std::int64_t> positions = s.positions;
        if (fft_fir(k)) {
          // The ring from the newest inputs, at position 0: x[-j] is ring[taps - j].
          const auto taps = static_cast<std::size_t>(k.fir_taps);
          const std::size_t at = static_cast<std::size_t>(layout.stages[0].state_offset);
          std::fill(ring_state.begin(), ring_state.end(), C(0));
          for (std::size_t c = 0; c < channels; ++c) {
            const std::span<const C> h = chain_fft_history(s, c);
            C* ring = ring_state.data() + c * static_cast<std::size_t>(layout.state_per_channel) + at;
            for (std::size_t j = 1; j <= taps && j <= h.size(); ++j) ring[taps - j] = h[h.size() - j];
          }
          std::fill(positions.begin(), positions.end(), std::int64_t{0});
        }
        std::vector<C> lines;
        for (std::size_t c = 0; c < channels; ++c)
          for (std::size_t d = 0; d < s.delay_lengths.size(); ++d) {
            const std::vector<C>& line = s.lines[c * s.delay_lengths.size() + d];
            const std::size_t cells = cells_of(s.delay_lengths[d]);
            std::vector<C> full(cells, C(0));  // the cells a line has not reached yet are zeros
            std::copy(line.begin(), line.end(), full.begin());
            if (k.kind == CudaKernelKind::chain_elementwise) {
              // In time order, oldest first, position 0: the ring read from its position.
              std::int64_t& pos = positions[c * per_channel + d];
              std::rotate(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(pos), full.end());
              pos = 0;
            }
            lines.insert(lines.end(), full.begin(), full.end());
          }
        to.state = bytes_from(ring_state);
        to.positions = bytes_from(positions);
        if (!lines.empty()) to.lines = bytes_from(lines);
      });
    } else {
      continue;
    }
    const CudaKernelState& now = like.kernels.at(i);
    if (to.state.size() != now.state.size() || to.positions.size() != now.positions.size() ||
        to.lines.size() != now.lines.size())
      return Unexpected{mismatch(k.node)};
  }
  return out;
}

}  // namespace

Expected<StreamState, std::string> host_stream_state(const CudaProgram& program, const ir::Graph& scheduled,
                                                     const CudaStreamState& snapshot) {
  StreamState out = fresh_stream_state(dtype_of(scheduled));
  Expected<std::monostate, std::string> ok = std::visit(
      [&](auto& graph_state) { return to_host(program, scheduled, snapshot, graph_state); }, out.graph);
  if (!ok) return Unexpected{ok.error()};
  return out;
}

Expected<CudaStreamState, std::string> device_stream_state(const CudaProgram& program, const ir::Graph& scheduled,
                                                           const StreamState& state, const CudaStreamState& like) {
  if (like.kernels.size() != program.kernels.size())
    return Unexpected{std::string("the GPU stream's state does not fit its program (an fxc defect)")};
  // A chain that a saved stream never ran is not ready in it: zeros, as it starts.
  StreamState ready = state;
  const GraphValues values = graph_values(scheduled);
  return std::visit(
      [&](auto& graph_state) {
        ready_chain_states(scheduled, values, graph_state);
        return to_device(program, scheduled, graph_state, like);
      },
      ready.graph);
}

}  // namespace fxc
