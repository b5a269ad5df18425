// SPDX-License-Identifier: Apache-2.0
#include "runtime/pinned_host_cache.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "support/trace.h"

namespace fxc {

namespace {
constexpr std::size_t kPage = 4096;
}  // namespace

PinnedHostCache::PinnedHostCache(Allocate allocate, Free free, std::size_t limit)
    : allocate_(std::move(allocate)), free_(std::move(free)), limit_(limit) {}

PinnedHostCache::~PinnedHostCache() { trim(); }

std::size_t PinnedHostCache::block_size(std::size_t bytes) {
  if (bytes <= kPage) return kPage;
  const std::size_t octave = std::bit_floor(bytes);
  const std::size_t step = std::max(octave / 8, kPage);
  return (bytes + step - 1) / step * step;
}

Expected<void*, std::string> PinnedHostCache::take(std::size_t bytes) {
  {
    std::lock_guard lock(mutex_);
    // At most twice the block a new one would be (a request under a page takes a page).
    const std::size_t largest = 2 * block_size(bytes);
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if (it->bytes >= bytes && it->bytes <= largest && (best == kept_.end() || it->bytes < best->bytes)) best = it;
    if (best != kept_.end()) {
      void* block = best->block;
      lend(block, best->bytes);
      kept_bytes_ -= best->bytes;
      kept_.erase(best);
      return block;
    }
  }
  // Pinning takes milliseconds: not under the lock, which every stream's staging goes through.
  const std::size_t size = block_size(bytes);
  // A fresh process's first run pays this: the trace shows how much of its "GPU run" it is
  // (the vocal example's took 50 ms on an H200, where its kernels take under 1 ms).
  TraceSpan span("allocate pinned staging", "cuda", {{"bytes", std::to_string(size)}});
  auto block = allocate_(size);
  if (!block) {
    // The blocks kept may be what leaves none to pin (page-locked memory is limited): once
    // more without them.
    trim();
    block = allocate_(size);
    if (!block) return block;
  }
  std::lock_guard lock(mutex_);
  lend(*block, size);
  return block;
}

void PinnedHostCache::lend(void* block, std::size_t bytes) {
  out_.emplace(block, bytes);
  out_bytes_ += bytes;
  peak_bytes_ = std::max(peak_bytes_, out_bytes_);
}

void PinnedHostCache::give_back(void* block) noexcept {
  if (!block) return;
  std::vector<void*> to_free;
  {
    std::lock_guard lock(mutex_);
    auto it = out_.find(block);
    if (it == out_.end()) {
      to_free.push_back(block);
    } else {
      const std::size_t size = it->second;
      out_.erase(it);
      out_bytes_ -= size;
      // Lent and kept together within the limit, or within the most lent at once (which
      // this block was part of, so it always fits once older blocks are freed).
      const std::size_t room = std::max(limit_, peak_bytes_);
      while (!kept_.empty() && out_bytes_ + kept_bytes_ + size > room) {
        to_free.push_back(kept_.front().block);
        kept_bytes_ -= kept_.front().bytes;
        kept_.pop_front();
      }
      kept_.push_back({block, size});
      kept_bytes_ += size;
    }
  }
  for (void* p : to_free) free_(p);
}

void PinnedHostCache::trim() noexcept {
  std::list<Kept> kept;
  {
    std::lock_guard lock(mutex_);
    kept.swap(kept_);
    kept_bytes_ = 0;
  }
  for (const Kept& k : kept) free_(k.block);
}

std::size_t PinnedHostCache::kept_bytes() const {
  std::lock_guard lock(mutex_);
  return kept_bytes_;
}

std::size_t PinnedHostCache::kept_blocks() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

}  // namespace fxc
