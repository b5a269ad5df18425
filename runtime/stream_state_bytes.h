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

/// `state` of a stream of `scheduled`, as bytes. Coefficients are not part of it: they are
/// the stream's graph's.
std::string save_stream_state(const StreamState& state, const ir::Graph& scheduled);

/// The state in `bytes` (from save_stream_state) for a stream of `scheduled` whose delays run
/// at `values`' lengths. Fails for bytes that are damaged, truncated, or from a graph of
/// another shape or sample type; every size and position is checked against the graph, so
/// that no such file can make a kernel read or write out of bounds.
Expected<StreamState, std::string> load_stream_state(std::string_view bytes, const ir::Graph& scheduled,
                                                     const GraphValues& values);

}  // namespace fxc
