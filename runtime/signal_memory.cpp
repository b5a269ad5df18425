// SPDX-License-Identifier: Apache-2.0
#include "runtime/signal_memory.h"

#include <sys/mman.h>

#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace fxc {
namespace {

constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
constexpr std::align_val_t kAlignment{64};

struct Registry {
  std::mutex mutex;
  SignalMemoryPolicy policy;
  std::unordered_map<void*, std::size_t> live;  // mapped blocks in use -> mapped bytes
  struct Kept {
    void* block;
    std::size_t bytes;
  };
  std::vector<Kept> kept;  // freed mappings, oldest first
  std::size_t kept_bytes = 0;
  std::uint64_t mappings = 0, reuses = 0;

  // Unmaps the oldest kept blocks until at most `limit` bytes are kept.
  void shrink_to(std::size_t limit) {
    std::size_t drop = 0;
    while (kept_bytes > limit && drop < kept.size()) {
      munmap(kept[drop].block, kept[drop].bytes);
      kept_bytes -= kept[drop].bytes;
      ++drop;
    }
    kept.erase(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(drop));
  }
};

// Never destroyed: signals may be freed by other static destructors.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

}  // namespace

void set_signal_memory_policy(const SignalMemoryPolicy& policy) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.policy = policy;
  r.shrink_to(policy.keep_bytes);
}

SignalMemoryPolicy signal_memory_policy() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.policy;
}

void* allocate_signal_memory(std::size_t bytes) {
  if (bytes < kSignalMappingMinBytes) return ::operator new(bytes, kAlignment);
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  if (!r.policy.map) {
    lock.unlock();
    return ::operator new(bytes, kAlignment);
  }
  std::size_t size = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  // The smallest kept block that fits without wasting more than a quarter of it.
  std::size_t best = r.kept.size();
  for (std::size_t i = 0; i < r.kept.size(); ++i)
    if (r.kept[i].bytes >= size && r.kept[i].bytes - size <= r.kept[i].bytes / 4 &&
        (best == r.kept.size() || r.kept[i].bytes < r.kept[best].bytes))
      best = i;
  r.live.reserve(r.live.size() + 1);  // may throw here, before anything changes
  if (best < r.kept.size()) {
    Registry::Kept k = r.kept[best];
    r.kept.erase(r.kept.begin() + static_cast<std::ptrdiff_t>(best));
    r.kept_bytes -= k.bytes;
    r.live.emplace(k.block, k.bytes);
    ++r.reuses;
    return k.block;
  }
  void* block = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (r.policy.huge_pages) madvise(block, size, MADV_HUGEPAGE);  // advice: failure changes nothing
#endif
  r.live.emplace(block, size);
  ++r.mappings;
  return block;
}

void free_signal_memory(void* block, std::size_t bytes) noexcept {
  if (!block) return;
  if (bytes < kSignalMappingMinBytes) {
    ::operator delete(block, kAlignment);
    return;
  }
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto it = r.live.find(block);
  if (it == r.live.end()) {  // made from the heap (policy.map was off)
    lock.unlock();
    ::operator delete(block, kAlignment);
    return;
  }
  std::size_t size = it->second;
  r.live.erase(it);
  if (size > r.policy.keep_bytes) {
    munmap(block, size);
    return;
  }
  try {
    r.kept.push_back({block, size});
  } catch (...) {
    munmap(block, size);
    return;
  }
  r.kept_bytes += size;
  r.shrink_to(r.policy.keep_bytes);
}

void trim_signal_memory() noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.shrink_to(0);
}

SignalMemoryStats signal_memory_stats() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return {r.mappings, r.reuses, r.kept_bytes};
}

}  // namespace fxc
