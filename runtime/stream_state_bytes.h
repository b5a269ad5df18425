// SPDX-License-Identifier: Apache-2.0
// A stream's state as bytes (`fxc run --save-state`, CpuStream::save_state,
// BlockExecutor::save_state), to continue in another stream of the same graph shape, in this
// process or another on the same machine architecture (numbers are in host byte order).
#pragma once

#include <string>
#include <string_view>

#include "ir/graph.h"
#include "runtime/graph_values.h"
#include "runtime/stream_state.h"
#include "support/expected.h"

namespace fxc {

/// The graph's structural hash without what the strategy choice decides: the IIR strategy
/// and chunk length (every strategy keeps a section's state in the same layout, and the
/// strategy follows the length of one call, so a state saved by a run over a whole file loads
/// into a stream of short blocks), and with `ignore_state_precision` the state precision too
/// (CpuStream::update_values with kernels converts state between float32 and float64). The
/// FIR method stays: a direct FIR keeps a ring, an FFT one a history. Saved states carry the
/// hash with the state precision and without the FFT blocks (which also follow the length of
/// one call), and the blocks on a line of their own: a state saved with another block loads,
/// its FIR histories converted (load_stream_state).
std::string schedule_free_hash(const ir::Graph& scheduled, bool ignore_state_precision);

/// `state` of a stream of `scheduled`, as bytes. Coefficients are not part of it: they are
/// the stream's graph's.
std::string save_stream_state(const StreamState& state, const ir::Graph& scheduled);

/// The state in `bytes` (from save_stream_state) for a stream of `scheduled` whose delays run
/// at `values`' lengths. Fails for bytes that are damaged, truncated, or from a graph of
/// another shape or sample type; every size and position is checked against the graph, so
/// that no such file can make a kernel read or write out of bounds. An FFT FIR saved with
/// another FFT block (a stream of another call length) goes on from its newest inputs, within
/// the FFTs' rounding of an unbroken stream rather than bit for bit.
Expected<StreamState, std::string> load_stream_state(std::string_view bytes, const ir::Graph& scheduled,
                                                     const GraphValues& values);

}  // namespace fxc
