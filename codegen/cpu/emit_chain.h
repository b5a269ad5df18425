// SPDX-License-Identifier: Apache-2.0
// Emits the LLVM IR of one kernel: a chain, or a sum. Internal to codegen/cpu.
#pragma once

#include <llvm/IR/Module.h>

#include "ir/graph.h"

namespace fxc::codegen {

/// Adds `void fxc_node_<id>(ptr args)` for the chain node `id` of `graph` to `module`.
void emit_chain_kernel(llvm::Module& module, const ir::Graph& graph, ir::NodeId id);

/// Adds `void fxc_node_<id>(ptr args)` for the sum node `id`: out = sum of weights[i] x
/// operand i, channel by channel, with the operands' channel pointers operand-major in `in`
/// and the weights in `params`.
void emit_sum_kernel(llvm::Module& module, const ir::Graph& graph, ir::NodeId id);

}  // namespace fxc::codegen
