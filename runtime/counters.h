// SPDX-License-Identifier: Apache-2.0
// Counters of what the runtime did, for tests, `fxc run --stats` and benchmarks.
#pragma once

#include <atomic>
#include <cstdint>

namespace fxc {

struct Counters {
  std::atomic<std::uint64_t> compiles{0};      ///< kernels generated and compiled
  std::atomic<std::uint64_t> memory_hits{0};   ///< kernels found in this process
  std::atomic<std::uint64_t> disk_hits{0};     ///< kernels loaded from the disk cache
  std::atomic<std::uint64_t> dispatches{0};    ///< kernel calls
  std::atomic<std::uint64_t> damaged_entries{0};  ///< disk entries found damaged and rebuilt
  std::atomic<std::uint64_t> cache_write_failures{0};  ///< entries that could not be stored on disk
  std::atomic<std::uint64_t> gpu_launches{0};     ///< CUDA launches of the graph's kernels (replayed ones included; not the layout transposes of an interleaved stream's copies)
  std::atomic<std::uint64_t> gpu_graph_launches{0};  ///< CUDA graph replays
  std::atomic<std::uint64_t> gpu_bytes_copied{0};    ///< bytes copied host to device and back

  void reset() {
    compiles = memory_hits = disk_hits = dispatches = damaged_entries = cache_write_failures = 0;
    gpu_launches = gpu_graph_launches = gpu_bytes_copied = 0;
  }
};

/// The process-wide counters.
Counters& counters();

}  // namespace fxc
