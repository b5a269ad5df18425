// SPDX-License-Identifier: Apache-2.0
// Signal memory: long signals map their own blocks, freed blocks are kept for the next signal
// of about the same size (up to the policy's limit), and trimming gives them back.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>

#include "runtime/signal.h"
#include "runtime/signal_memory.h"

namespace fxc {
namespace {

// Restores the process's policy (other tests run after this one).
struct PolicyScope {
  SignalMemoryPolicy saved = signal_memory_policy();
  explicit PolicyScope(const SignalMemoryPolicy& p) { set_signal_memory_policy(p); }
  ~PolicyScope() { set_signal_memory_policy(saved); }
};

TEST_CASE("signal memory: long blocks are mapped, kept when freed and reused") {
  PolicyScope scope(SignalMemoryPolicy{true, true, std::size_t{64} << 20});
  trim_signal_memory();
  const std::size_t bytes = 10 << 20;
  SignalMemoryStats before = signal_memory_stats();
  void* a = allocate_signal_memory(bytes);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 64 == 0);
  std::memset(a, 1, bytes);
  free_signal_memory(a, bytes);
  CHECK(signal_memory_stats().kept_bytes == bytes);  // 10 MiB is a whole number of 2 MiB pages
  void* b = allocate_signal_memory(bytes - 1000);    // about the same size: the same block
  CHECK(b == a);
  SignalMemoryStats after = signal_memory_stats();
  CHECK(after.mappings == before.mappings + 1);
  CHECK(after.reuses == before.reuses + 1);
  // A much smaller signal does not take a big kept block.
  free_signal_memory(b, bytes - 1000);
  void* small = allocate_signal_memory(2 << 20);
  CHECK(small != a);
  free_signal_memory(small, 2 << 20);
  trim_signal_memory();
  CHECK(signal_memory_stats().kept_bytes == 0);
}

TEST_CASE("signal memory: the kept bytes stay within the policy's limit") {
  PolicyScope scope(SignalMemoryPolicy{true, false, std::size_t{8} << 20});
  trim_signal_memory();
  void* a = allocate_signal_memory(6 << 20);
  void* b = allocate_signal_memory(6 << 20);
  free_signal_memory(a, 6 << 20);
  free_signal_memory(b, 6 << 20);
  CHECK(signal_memory_stats().kept_bytes == std::size_t{6} << 20);  // the older one unmapped
  void* c = allocate_signal_memory(20 << 20);  // above the limit: never kept
  free_signal_memory(c, 20 << 20);
  CHECK(signal_memory_stats().kept_bytes == std::size_t{6} << 20);
  trim_signal_memory();
}

TEST_CASE("signal memory: blocks made under one policy are freed correctly under another") {
  void* heap = nullptr;
  {
    PolicyScope scope(SignalMemoryPolicy{false, false, 0});
    heap = allocate_signal_memory(4 << 20);
    std::memset(heap, 0, 4 << 20);
  }
  free_signal_memory(heap, 4 << 20);  // from the heap, freed to it, though mapping is on again
  void* small = allocate_signal_memory(100);
  free_signal_memory(small, 100);
  // Signals use it: a long one's samples are zeros when asked for, and it can be copied.
  Signal s(2, 1 << 20, DType::f32);
  CHECK(s.f32(1)[12345] == 0.0f);
  Signal copy = s;
  CHECK(copy.f32(0)[1] == 0.0f);
}

}  // namespace
}  // namespace fxc
