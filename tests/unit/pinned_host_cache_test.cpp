// SPDX-License-Identifier: Apache-2.0
// The page-locked block cache both GPU devices allocate through, on plain host memory.
#include "runtime/pinned_host_cache.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fxc {
namespace {

// Blocks from malloc, counted: what is live, what was ever allocated.
struct Heap {
  std::map<void*, std::size_t> live;
  int allocations = 0;
  bool fail = false;
  PinnedHostCache::Allocate allocate() {
    return [this](std::size_t bytes) -> Expected<void*, std::string> {
      if (fail) return Unexpected{std::string("cannot allocate " + std::to_string(bytes) + " bytes")};
      void* p = std::malloc(bytes);
      live[p] = bytes;
      ++allocations;
      return p;
    };
  }
  PinnedHostCache::Free free() {
    return [this](void* p) {
      CHECK(live.erase(p) == 1);  // only what it allocated, once
      std::free(p);
    };
  }
};

}  // namespace

TEST_CASE("pinned host cache: blocks of an eighth of an octave, whole pages") {
  CHECK(PinnedHostCache::block_size(0) == 4096);
  CHECK(PinnedHostCache::block_size(1) == 4096);
  CHECK(PinnedHostCache::block_size(4096) == 4096);
  CHECK(PinnedHostCache::block_size(4097) == 8192);
  CHECK(PinnedHostCache::block_size(65536) == 65536);
  CHECK(PinnedHostCache::block_size(65537) == 65536 + 8192);
  // A 60 s stereo float32 staging buffer (23 MB): at most 12.5% more.
  const std::size_t sixty = 2 * 2880000 * 4;
  CHECK(PinnedHostCache::block_size(sixty) >= sixty);
  CHECK(PinnedHostCache::block_size(sixty) <= sixty + sixty / 8);
  CHECK(PinnedHostCache::block_size(sixty) % 4096 == 0);
}

TEST_CASE("pinned host cache: a block given back is lent again to a request of at most its size, at least half") {
  {
    // Under a page: a page, lent again (a short run's staging of a few hundred bytes).
    Heap small_heap;
    PinnedHostCache cache(small_heap.allocate(), small_heap.free(), std::size_t{1} << 20);
    void* page = *cache.take(100);
    cache.give_back(page);
    CHECK(*cache.take(800) == page);
    cache.give_back(page);
    CHECK(small_heap.allocations == 1);
  }
  Heap heap;
  {
    PinnedHostCache cache(heap.allocate(), heap.free(), std::size_t{1} << 20);
    void* a = *cache.take(100000);
    CHECK(heap.live.at(a) == PinnedHostCache::block_size(100000));
    cache.give_back(a);
    CHECK(cache.kept_blocks() == 1);
    CHECK(cache.kept_bytes() == heap.live.at(a));
    CHECK(*cache.take(90000) == a);  // smaller: the same block
    CHECK(cache.kept_blocks() == 0);
    cache.give_back(a);
    void* larger = *cache.take(200000);  // larger: a new one
    CHECK(larger != a);
    void* small = *cache.take(40000);  // under half: not the kept 104 KB block
    CHECK(small != a);
    CHECK(heap.allocations == 3);
    // The smallest that fits of those kept.
    cache.give_back(larger);
    CHECK(*cache.take(99000) == a);
    cache.give_back(a);
    cache.give_back(small);
    CHECK(cache.kept_blocks() == 3);
    cache.trim();
    CHECK(cache.kept_blocks() == 0);
    CHECK(heap.live.empty());
    // Failing allocations are the caller's errors; nothing is kept of them.
    heap.fail = true;
    auto failed = cache.take(5000);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().find("cannot allocate") != std::string::npos);
    heap.fail = false;
    void* kept = *cache.take(5000);
    cache.give_back(kept);
  }
  CHECK(heap.live.empty());  // the destructor freed what it kept
}

TEST_CASE("pinned host cache: lent and kept within the limit, or the most lent at once; oldest freed first") {
  Heap heap;
  PinnedHostCache cache(heap.allocate(), heap.free(), 3 * 65536);
  // One block at a time: at most the limit kept.
  std::vector<void*> one_at_a_time;
  for (std::size_t k = 0; k < 4; ++k) {
    one_at_a_time.push_back(*cache.take(65536 * (k + 2)));  // 128, 192, 256, 320 KiB: none fits another
    cache.give_back(one_at_a_time.back());
    CHECK(cache.kept_bytes() <= 3 * 65536 + 65536 * (k + 2));  // the one given back may pass alone
  }
  CHECK(heap.allocations == 4);
  CHECK(cache.kept_blocks() == 1);  // each pushed out the older: the room is the largest lent (320 KiB)
  CHECK(heap.live.count(one_at_a_time[3]) == 1);
  cache.trim();
  // Four lent at once (as four threads' runs): all four kept, and lent again next round.
  std::vector<void*> blocks;
  for (int k = 0; k < 4; ++k) blocks.push_back(*cache.take(100000));
  for (void* b : blocks) cache.give_back(b);
  CHECK(cache.kept_blocks() == 4);
  const int before = heap.allocations;
  for (int k = 0; k < 4; ++k) blocks[static_cast<std::size_t>(k)] = *cache.take(100000);
  CHECK(heap.allocations == before);
  for (void* b : blocks) cache.give_back(b);
  // A block of none of their sizes: the least recently given back go to make room.
  void* large = *cache.take(400000);
  cache.give_back(large);
  CHECK(cache.kept_bytes() <= std::max<std::size_t>(3 * 65536, 4 * PinnedHostCache::block_size(100000)));
  CHECK(heap.live.count(blocks[0]) == 0);
  CHECK(heap.live.count(large) == 1);
  // A pointer the cache did not lend is freed as it is.
  void* stranger = *heap.allocate()(1000);
  cache.give_back(stranger);
  CHECK(heap.live.count(stranger) == 0);
  cache.give_back(nullptr);
}

TEST_CASE("pinned host cache: threads taking and giving back at once get blocks no other holds") {
  Heap heap;
  std::mutex heap_mutex;  // the heap's map, not the cache, needs this
  PinnedHostCache cache(
      [&](std::size_t bytes) -> Expected<void*, std::string> {
        std::lock_guard lock(heap_mutex);
        return heap.allocate()(bytes);
      },
      [&](void* p) {
        std::lock_guard lock(heap_mutex);
        heap.live.erase(p);
        std::free(p);
      },
      std::size_t{1} << 20);
  std::vector<int> clashes(4, 0);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int round = 0; round < 500; ++round) {
          auto* p = static_cast<unsigned char*>(*cache.take(4096 + static_cast<std::size_t>(round % 3) * 1000));
          for (int i = 0; i < 64; ++i) p[i] = static_cast<unsigned char>(t);
          std::this_thread::yield();
          for (int i = 0; i < 64; ++i) clashes[t] += p[i] != t;
          cache.give_back(p);
        }
      });
  }
  for (int t = 0; t < 4; ++t) CHECK(clashes[t] == 0);
  CHECK(heap.allocations <= 4 * 3);  // each thread's blocks, reused
}

}  // namespace fxc
