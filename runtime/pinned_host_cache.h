// SPDX-License-Identifier: Apache-2.0
// Page-locked host blocks given back, kept for the next allocation of about their size: the
// driver (cuMemAllocHost) pins and maps every page of a new block (milliseconds for the tens of MB a file's
// staging takes), and a process that lives longer than one run (a corpus of many file
// lengths, a plugin host, a Python loop) makes and drops programs, streams and Processors all
// the time. Both GPU devices (the driver's, runtime/cuda_device.cpp, and the tests'
// emulation) allocate page-locked memory through one, so the emulation reuses what a GPU does.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "support/expected.h"

namespace fxc {

/// The page-locked bytes a GPU device keeps, lent and unused together, at least: two sets of
/// a whole run's staging (kCudaStagingBytes each, runtime/cuda_executor.h), what one long run
/// takes at most.
inline constexpr std::size_t kKeptPinnedBytes = std::size_t{256} << 20;

class PinnedHostCache {
 public:
  using Allocate = std::function<Expected<void*, std::string>(std::size_t bytes)>;
  using Free = std::function<void(void*)>;

  /// Blocks come from `allocate` and go back through `free`. A block given back is kept while
  /// the blocks lent and kept together come to at most `limit` bytes, or to the most the
  /// process had lent at once where that is more (four threads' long runs at once take their
  /// staging back at the next round, rather than pinning it again); the least recently given
  /// back go first.
  PinnedHostCache(Allocate allocate, Free free, std::size_t limit);
  /// Frees every block kept; blocks still out are the owner's to give back first.
  ~PinnedHostCache();
  PinnedHostCache(const PinnedHostCache&) = delete;
  PinnedHostCache& operator=(const PinnedHostCache&) = delete;

  /// A block of at least `bytes`: the smallest kept one of at most twice block_size(bytes),
  /// else a new one of block_size(bytes) (where pinning fails, once more after trim()).
  Expected<void*, std::string> take(std::size_t bytes);
  /// A block take() gave, no longer used by any copy (the stream that used it synchronized):
  /// kept for the next take(), or freed where keeping it would pass the limit. A pointer
  /// take() did not give is freed as it is (allocated before the cache, or by the caller).
  void give_back(void* block) noexcept;
  /// Frees every block kept now.
  void trim() noexcept;

  std::size_t kept_bytes() const;
  std::size_t kept_blocks() const;

  /// The size a new block for `bytes` gets: rounded up to an eighth of an octave (at most
  /// 12.5% over) and to 4 KiB pages, so that requests of nearby sizes (files a few seconds
  /// apart in length) fit one another's blocks.
  static std::size_t block_size(std::size_t bytes);

 private:
  struct Kept {
    void* block;
    std::size_t bytes;
  };
  void lend(void* block, std::size_t bytes);  // under mutex_

  Allocate allocate_;
  Free free_;
  std::size_t limit_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, std::size_t> out_;  // blocks given out, with their sizes
  std::list<Kept> kept_;                        // least recently given back first
  std::size_t kept_bytes_ = 0;
  std::size_t out_bytes_ = 0;   // lent now
  std::size_t peak_bytes_ = 0;  // the most lent at once
};

}  // namespace fxc
