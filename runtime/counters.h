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

  void reset() {
    compiles = memory_hits = disk_hits = dispatches = damaged_entries = 0;
  }
};

/// The process-wide counters.
Counters& counters();

}  // namespace fxc
