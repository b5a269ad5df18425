// SPDX-License-Identifier: Apache-2.0
// Which kernels run side by side in one launch (CudaSideBySide), and that launch's shape. The
// emitter (emit_cuda.cpp) and the runtime (runtime/cuda_executor.cpp) both take the groups from
// here, so the source and the launches agree.
#include <algorithm>

#include "codegen/cuda/emit_cuda.h"
#include "ir/graph_algorithms.h"

namespace fxc::codegen {

std::vector<CudaSideBySide> cuda_side_by_side(const ir::Graph& g, const std::vector<CudaKernelInfo>& kernels) {
  const auto order = ir::loop_order(g);
  if (!order) return {};
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> kernel_of(g.size(), kNone);
  for (std::size_t i = 0; i < kernels.size(); ++i) kernel_of[kernels[i].node] = i;
  // The runtime launches kernels in this order; a loop's kernels form a region of their own.
  std::vector<ir::NodeId> launched;  // kernel nodes, in launch order
  std::vector<long long> position(g.size(), -1);
  for (ir::NodeId id : order->order)
    if (kernel_of[id] != kNone) {
      position[id] = static_cast<long long>(launched.size());
      launched.push_back(id);
    }
  auto candidate = [&](ir::NodeId id) {
    return order->loop[id] < 0 && kernels[kernel_of[id]].kind == CudaKernelKind::chain_thread_per_channel;
  };
  // Launched at position p, node `id` finds its operands ready when each is an input or
  // launched before p.
  auto ready_at = [&](ir::NodeId id, long long p) {
    for (ir::NodeId operand : g.node(id).operands) {
      if (position[operand] < 0 && !ir::holds<ir::Input>(g.node(operand))) return false;
      if (position[operand] >= p) return false;
    }
    return true;
  };
  std::vector<bool> taken(g.size(), false);
  std::vector<CudaSideBySide> out;
  for (std::size_t p = 0; p < launched.size(); ++p) {
    const ir::NodeId first = launched[p];
    if (taken[first] || !candidate(first)) continue;
    if (!ready_at(first, static_cast<long long>(p))) continue;
    std::vector<ir::NodeId> members = {first};
    // Later kernels of the same stretch outside loops, of the same sample type (the side
    // kernel's one shared row of inputs ahead a thread), that need nothing launched from p on.
    for (std::size_t q = p + 1; q < launched.size() && members.size() < kCudaSideByMaxMembers; ++q) {
      const ir::NodeId id = launched[q];
      if (order->loop[id] >= 0) break;  // a loop's region: the stretch ends
      if (taken[id] || !candidate(id) || kernels[kernel_of[id]].dtype != kernels[kernel_of[first]].dtype ||
          !ready_at(id, static_cast<long long>(p)))
        continue;
      members.push_back(id);
    }
    if (members.size() < 2) continue;
    CudaSideBySide side;
    side.symbol = "fxc_side_" + std::to_string(first);
    side.entry.symbol = side.symbol;
    for (ir::NodeId id : members) {
      taken[id] = true;
      const CudaKernelInfo& k = kernels[kernel_of[id]];
      side.members.push_back(kernel_of[id]);
      side.entry.parameters.insert(side.entry.parameters.end(), k.entries[0].parameters.begin(),
                                   k.entries[0].parameters.end());
      side.entry.synchronizes = side.entry.synchronizes || k.entries[0].synchronizes;
    }
    out.push_back(std::move(side));
  }
  return out;
}

CudaLaunch cuda_side_launch(const std::vector<long long>& channels) {
  long long grid = 0;
  for (long long c : channels) grid += (std::max(c, 0LL) + kCudaBlockThreads - 1) / kCudaBlockThreads;
  return {grid, kCudaBlockThreads};
}

}  // namespace fxc::codegen
