// SPDX-License-Identifier: Apache-2.0
// The C++ pipe DSL's inside: what a DslNode holds and how expressions lower to an ir::Graph.
// The DSL itself (Flow, Chain, the stage functions, param) is public: include/fxc/dsl.h.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fxc/dsl.h>

#include "design/filter_types.h"
#include "frontend/parameters.h"
#include "ir/graph.h"

namespace fxc {

/// One node of a DSL expression: an op (built from parameter values each time the graph is
/// lowered) and its operands. A chain's stages are nodes without operands.
struct DslNode {
  /// The node's op for given parameter values.
  std::function<ir::Op(const ParamValues&)> make_op;
  std::vector<std::shared_ptr<const DslNode>> operands;
  SourceLoc loc;
  int channels = 0;                 ///< inputs only: the declared channel count (0 = any)
  std::vector<ParamRef> params;     ///< the live parameters its op reads
  /// The op with the declared parameter values.
  ir::Op op() const { return make_op({}); }
};

/// Lowers the expressions reaching `outputs` to an IR graph, with parameters at `values`.
/// A flow used several times becomes one node with several users; a chain used several
/// times is instantiated at each use. The result is not yet verified: run ir::verify (names
/// must be unique, ...).
ir::Graph make_graph(std::string name, const std::vector<Output>& outputs,
                     const ParamValues& values = {});

/// Every live parameter the expressions reaching `outputs` read, in the order first met.
/// Two different declarations of one name are reported as an error.
std::vector<ParamRef> collect_params(const std::vector<Output>& outputs);

}  // namespace fxc
