// Emits the LLVM IR of one chain kernel. Internal to codegen/cpu.
#pragma once

#include <llvm/IR/Module.h>

#include "ir/graph.h"

namespace fxc::codegen {

/// Adds `void fxc_chain_<id>(ptr args)` for the chain node `id` of `graph` to `module`.
void emit_chain_kernel(llvm::Module& module, const ir::Graph& graph, ir::NodeId id);

}  // namespace fxc::codegen
