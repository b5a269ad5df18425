// SPDX-License-Identifier: Apache-2.0
// The state a graph's chains carry from one call to the next (filter memories, FIR and delay
// rings, FFT histories), and the rules that size and restart it. One representation for every
// runner: execute_cpu (fresh each call), CpuStream and BlockExecutor; its bytes are in
// runtime/stream_state_bytes.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <type_traits>
#include <variant>
#include <vector>

#include "codegen/chain_layout.h"
#include "ir/graph.h"
#include "runtime/graph_values.h"
#include "runtime/partitioned_convolution.h"

namespace fxc {

/// A chain's memory, kept from one call to the next, in the chain's compute type C
/// (codegen::compute_dtype). Plain values only, so a copy is a snapshot. Coefficients are not
/// here: they are values (runtime/graph_values.h), which may change between calls.
template <class C>
struct ChainState {
  bool ready = false;
  std::vector<std::int64_t> delay_lengths;  ///< the lengths the lines run at now
  std::vector<C> state;                     ///< [channel][state_per_channel]
  std::vector<std::int64_t> positions;      ///< [channel][delays + firs]
  /// [channel * delays + k]. A line holds what it can have seen, not its whole length
  /// (grow_delay_lines); a runner that must not allocate reserves each line's full length.
  std::vector<std::vector<C>> lines;
  /// [channel], FFT FIR chains only. A partitioned chain's is as of its last rebuild: the
  /// newest is in fft_partitions (read it through chain_fft_history).
  std::vector<std::vector<C>> fft_history;
  /// [channel], partitioned FFT FIR chains only: built from fft_history when its serial is 0,
  /// then holding the newest history itself (a state's bytes take it from there), and the
  /// spectra derived from it, which are not in a state's bytes.
  std::vector<PartitionedStream<C>> fft_partitions;
};

/// T: the graph's signal type.
template <class T>
struct GraphState {
  using Sample = T;
  std::vector<ChainState<T>> chains;  ///< by node id
  /// By node id: the chains of a float32 graph that compute in float64 (StatePrecision::f64).
  std::vector<ChainState<double>> wide_chains;

  template <class C>
  std::vector<ChainState<C>>& of() {
    if constexpr (std::is_same_v<C, T>) return chains;
    else return wide_chains;
  }
  template <class C>
  const std::vector<ChainState<C>>& of() const {
    if constexpr (std::is_same_v<C, T>) return chains;
    else return wide_chains;
  }
};

/// The state of every chain of a graph between calls (opaque outside runtime/).
struct StreamState {
  std::variant<GraphState<float>, GraphState<double>> graph;
};

/// The signal type of a scheduled graph (its inputs'); float64 for a graph without inputs.
DType dtype_of(const ir::Graph& scheduled);

/// A state with no chain ready, as before the first call.
StreamState fresh_stream_state(DType signal);

/// Calls `f(chain_state)` with the typed state of chain node `id` (C = its compute type).
template <class T, class F>
void visit_chain_state(GraphState<T>& state, const ir::Chain& chain, ir::NodeId id, F&& f) {
  if constexpr (std::is_same_v<T, float>)
    if (codegen::compute_dtype(chain, DType::f32) == DType::f64) return f(state.wide_chains[id]);
  f(state.chains[id]);
}

/// Makes every chain and feedback node of `scheduled` ready that is not yet (sized for its
/// channels, zero memory, delay lines of one cell, the delay lengths of `values`). A feedback
/// node's state is a delay line per channel, laid out as a chain holding one delay, in the
/// signal type (`chains`). The lists are sized to the graph (wide_chains only in a float32
/// graph).
template <class T>
void ready_chain_states(const ir::Graph& scheduled, const GraphValues& values, GraphState<T>& state);

/// Before a call of `samples` samples, a delay line that has not wrapped yet grows to
/// min(length, position + samples + 1) cells (new cells are zeros, as the line starts). The
/// kernel wraps at the delay's length, which such a ring never reaches, so a delay longer than
/// the signal costs the signal's length, not the delay's. Within a reserved capacity this
/// allocates nothing.
template <class C>
void grow_delay_lines(ChainState<C>& s, std::size_t samples) {
  std::size_t delays = s.delay_lengths.size();
  if (delays == 0 || s.lines.empty()) return;
  std::size_t channels = s.lines.size() / delays;
  std::size_t per_channel = s.positions.size() / channels;
  for (std::size_t c = 0; c < channels; ++c)
    for (std::size_t k = 0; k < delays; ++k) {
      std::vector<C>& line = s.lines[c * delays + k];
      std::int64_t length = std::max<std::int64_t>(s.delay_lengths[k], 1);
      std::int64_t seen = s.positions[c * per_channel + k];
      std::int64_t needed = std::min<std::int64_t>(length, seen + static_cast<std::int64_t>(samples) + 1);
      if (needed > static_cast<std::int64_t>(line.size())) line.resize(static_cast<std::size_t>(needed), C(0));
    }
}

/// New delay lengths for a ready chain. A delay whose length changes restarts its line (zeros,
/// position 0): the old samples no longer fit. The sections keep their state, so filters do
/// not click. Within a reserved capacity this allocates nothing.
template <class C>
void restart_changed_delays(ChainState<C>& s, std::span<const std::int64_t> lengths) {
  std::size_t delays = s.delay_lengths.size();
  if (!s.ready || delays == 0 || std::equal(lengths.begin(), lengths.end(), s.delay_lengths.begin()))
    return;
  std::size_t channels = s.lines.size() / delays;
  std::size_t per_channel = channels ? s.positions.size() / channels : 0;
  for (std::size_t k = 0; k < delays; ++k) {
    if (s.delay_lengths[k] == lengths[k]) continue;
    s.delay_lengths[k] = lengths[k];
    for (std::size_t c = 0; c < channels; ++c) {
      s.lines[c * delays + k].assign(1, C(0));  // grown again as samples come
      s.positions[c * per_channel + k] = 0;
    }
  }
}

/// Channel c's FFT history as the stream has it now (current_history for a partitioned chain).
template <class C>
std::span<const C> chain_fft_history(const ChainState<C>& s, std::size_t c) {
  const std::vector<C>& h = s.fft_history[c];
  if (c < s.fft_partitions.size()) return current_history(s.fft_partitions[c], std::span<const C>(h));
  return h;
}

/// Zero memory in place, as a chain just made ready; keeps every buffer's capacity.
template <class C>
void clear_chain_state(ChainState<C>& s) {
  std::fill(s.state.begin(), s.state.end(), C(0));
  std::fill(s.positions.begin(), s.positions.end(), 0);
  for (auto& line : s.lines) line.assign(1, C(0));
  for (auto& h : s.fft_history) std::fill(h.begin(), h.end(), C(0));
  for (std::size_t c = 0; c < s.fft_partitions.size(); ++c)
    clear_partitioned_stream(s.fft_partitions[c], c < s.fft_history.size() ? s.fft_history[c].size() : 0);
}

}  // namespace fxc
