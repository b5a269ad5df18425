// SPDX-License-Identifier: Apache-2.0
// Memory for long signals. A fresh mapping costs a page fault per 4 KiB page the first time it
// is written (W2, 8 ch x 60 s through execute_cpu: about two thirds of the run), and glibc maps
// every block above 32 MiB afresh and unmaps it when freed. Blocks of at least
// kSignalMappingMinBytes are therefore mapped here: with MADV_HUGEPAGE (one fault per 2 MiB
// where the kernel allows it), and kept after they are freed, up to a limit, for the next
// signal of about the same size, whose pages are then already there.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fxc {

/// Blocks below this come from the ordinary heap.
inline constexpr std::size_t kSignalMappingMinBytes = std::size_t{1} << 20;

// AddressSanitizer checks heap blocks only: under it signals stay on the heap.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kMapSignalMemory = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kMapSignalMemory = false;
#else
inline constexpr bool kMapSignalMemory = true;
#endif
#else
inline constexpr bool kMapSignalMemory = true;
#endif

struct SignalMemoryPolicy {
  bool map = kMapSignalMemory;  ///< false: every block from the ordinary heap
  bool huge_pages = true;     ///< madvise(MADV_HUGEPAGE) on fresh mappings
  std::size_t keep_bytes = std::size_t{1} << 30;  ///< freed blocks kept for reuse, at most
};

/// Applies from the next allocation on; blocks already made are freed the way they were made.
void set_signal_memory_policy(const SignalMemoryPolicy& policy);
SignalMemoryPolicy signal_memory_policy();

/// At least `bytes` bytes, aligned to 64, uninitialized (for a mapping: zeros the first time,
/// whatever an earlier signal left when reused). Throws std::bad_alloc.
void* allocate_signal_memory(std::size_t bytes);
/// Frees a block from allocate_signal_memory of the same `bytes`.
void free_signal_memory(void* block, std::size_t bytes) noexcept;
/// Unmaps every freed block kept for reuse.
void trim_signal_memory() noexcept;

struct SignalMemoryStats {
  std::uint64_t mappings = 0;   ///< fresh mappings made
  std::uint64_t reuses = 0;     ///< blocks served from the kept ones
  std::size_t kept_bytes = 0;   ///< freed blocks kept now
};
SignalMemoryStats signal_memory_stats();

}  // namespace fxc
