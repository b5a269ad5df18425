// SPDX-License-Identifier: Apache-2.0
// Lets the CUDA C++ that fxc generates compile as host C++, to check the kernels' logic
// without a GPU (tests/unit/cuda_emulator.cpp). A launch runs its blocks one after another.
// A kernel that synchronizes runs each CUDA thread of a block as a fiber of the emulator's
// (cuda_emulation_context.h), which take turns from one __syncthreads to the next, with one
// more barrier between blocks (a block's __shared__ arrays are the next block's); others run
// their threads in a loop. __shared__ arrays become function statics (so two host threads must
// not launch one module's kernel at once: no test does, and a launch that synchronizes takes
// the emulator's lock). Async copies (cp.async) and a warp's matrix products (mma.sync) keep the
// GPU's rules, below.
#pragma once

#define FXC_EMULATION 1  // the generated source's async copies call the shim's (fxc_emu_copy_async)

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>

#include "cuda_emulation_context.h"

// The emulated thread's indices are the test executable's thread-local state, not this
// module's (cuda_emulation_context.h says why); the emulator binds the accessor after dlopen.
static FxcThreadContextFn fxc_context = nullptr;
static FxcRunFn fxc_run = nullptr;    // the emulator's fibers, shared by every module
static FxcSyncFn fxc_sync = nullptr;  // their barrier
static FxcSyncFn fxc_sync_warp = nullptr;  // a barrier of the calling thread's warp
extern "C" void fxc_emu_bind(FxcThreadContextFn context, FxcRunFn run, FxcSyncFn sync, FxcSyncFn sync_warp) {
  fxc_context = context;
  fxc_run = run;
  fxc_sync = sync;
  fxc_sync_warp = sync_warp;
}

static inline void fxc_emu_fault(const char* what);
static inline void __syncthreads() {
  if (const char* fault = fxc_sync()) fxc_emu_fault(fault);
}

// Nonzero for every thread of the block when `predicate` is nonzero for any. The flag is the
// module's (blocks run one after another); the third barrier keeps a thread that is already
// at its next call from setting it before thread 0 has cleared it.
static inline int __syncthreads_or(int predicate) {
  static std::atomic<int> any{0};
  if (predicate) any.store(1);
  __syncthreads();
  const int result = any.load();
  __syncthreads();
  if (fxc_context()->thread_idx.x == 0) any.store(0);
  __syncthreads();
  return result;
}

// The first fault of a launch (a misaligned async copy, barriers its threads do not all
// reach): the launcher returns it, and the
// emulator fails the launch with it, as the driver fails a kernel that faults.
static std::atomic<const char*> fxc_fault{nullptr};
static inline void fxc_emu_fault(const char* what) {
  const char* none = nullptr;
  fxc_fault.compare_exchange_strong(none, what);
}

// cp.async as the GPU runs it (PTX ISA, "cp.async"), where the host fallback of the generated
// fxc_copy_async would copy at once and so hide a missing wait: a copy is issued now and lands
// at the thread's first wait that leaves fewer groups than its own under way; until then its
// destination reads as NaN (all bits set), so a sample read too early spoils the output. Its
// bytes are taken when it is issued: the chunk passes copy from inputs no kernel writes. Both
// addresses must be aligned to the copy's size (else the GPU faults with a misaligned address).
template <int Bytes, class T>
static inline void fxc_emu_copy_async(T* to, const T* from, bool valid) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
  if (reinterpret_cast<std::uintptr_t>(to) % Bytes != 0 || reinterpret_cast<std::uintptr_t>(from) % Bytes != 0) {
    fxc_emu_fault("misaligned address: an async copy (cp.async) whose source or destination is not aligned to its size");
    return;
  }
  FxcPendingCopy copy;
  copy.to = to;
  copy.size = Bytes;
  if (valid) std::memcpy(copy.bytes, from, Bytes);  // else zeros (ignore-src)
  std::memset(to, 0xff, Bytes);
  fxc_context()->copies.push_back(copy);
}

static inline void fxc_emu_copy_commit() {
  FxcThreadContext& c = *fxc_context();
  ++c.committed;
  for (FxcPendingCopy& copy : c.copies)
    if (copy.group < 0) copy.group = c.committed;
}

// cp.async.wait_group N: every committed group but the N newest has landed.
static inline void fxc_emu_copy_wait(int newest_left) {
  FxcThreadContext& c = *fxc_context();
  std::size_t kept = 0;
  for (FxcPendingCopy& copy : c.copies) {
    if (copy.group >= 0 && copy.group <= c.committed - newest_left)
      std::memcpy(copy.to, copy.bytes, copy.size);
    else
      c.copies[kept++] = copy;
  }
  c.copies.resize(kept);
}

// mma.sync.aligned.m8n8k4.row.col.f64 as a warp runs it (PTX ISA, "Matrix Fragments for
// mma.m8n8k4 with .f64 floating point type"): D = A B + C for an 8 x 4 A and a 4 x 8 B, of
// which each lane gives one element, a (A's row lane / 4, column lane % 4) and b (B's row
// lane % 4, column lane / 4), and holds two of C and D, c (row lane / 4, columns 2 (lane % 4)
// and the next). The lanes pass their elements through an array at a barrier of the warp's
// (fxc_sync_warp), so a kernel that gives the wrong element, or calls it from a lane that the
// warp's others do not wait for, shows as on the GPU. Each sum in k's order, each step an FMA.
// The array is two, a thread's calls taking turns: a lane that gives its next call's elements
// has passed that call's barrier, which every lane reaches only after reading this call's.
static inline void fxc_emu_mma_m8n8k4_f64(double (&c)[2], double a, double b) {
  static double operands[2][1024][2];  // the block's threads' a and b, its warps one after another
  FxcThreadContext& context = *fxc_context();
  const unsigned t = context.thread_idx.x, lane = t % 32, warp = t - lane;
  if (context.block_dim.x % 32 != 0) {
    fxc_emu_fault("mma.sync in a block whose last warp has fewer than 32 threads");
    return;
  }
  double (&given)[1024][2] = operands[context.matrix_products++ % 2];
  given[t][0] = a;
  given[t][1] = b;
  if (const char* fault = fxc_sync_warp()) {
    fxc_emu_fault(fault);
    return;
  }
  const unsigned g = lane / 4, q = lane % 4;
  for (unsigned k = 0; k < 4; ++k)
    for (unsigned i = 0; i < 2; ++i) c[i] = std::fma(given[warp + 4 * g + k][0], given[warp + 4 * (2 * q + i) + k][1], c[i]);
}

#define __global__
#define __device__
// __shared__ arrays are statics in a section of their own, so that each block can start with
// them all NaN (fxc_poison_shared): on a GPU a block's shared memory holds whatever was there,
// and a kernel that reads an element its block has not written is wrong there. (GCC 12
// ignores the attribute on a static inside a template function, without a word: such an
// array would not be poisoned. No generated kernel is a template.)
#define __shared__ static __attribute__((section("fxc_shared")))
#define __launch_bounds__(threads)
#define __noinline__ __attribute__((noinline))
#define __align__(bytes) __attribute__((aligned(bytes)))

// CUDA's 16-byte vector types, as the chunk passes' planar tile reads and stores them.
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(16) double2 {
  double x, y;
};

using std::fma;
using std::tanh;

template <class T>
static T fxc_arg(std::uint64_t bits) {
  T value;
  static_assert(sizeof(T) == sizeof bits);
  std::memcpy(&value, &bits, sizeof value);
  return value;
}


extern "C" char __start_fxc_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_fxc_shared[] __attribute__((weak, visibility("hidden")));
static void fxc_poison_shared() {
  if (__start_fxc_shared != nullptr) std::memset(__start_fxc_shared, 0xff, static_cast<std::size_t>(__stop_fxc_shared - __start_fxc_shared));
}

template <class F>
static void fxc_emulate(long long grid, int block, bool synchronizes, F body) {
  auto run = [&](long long b, int t) {
    FxcThreadContext& c = *fxc_context();
    c.block_idx = {static_cast<unsigned>(b), 0, 0};
    c.thread_idx = {static_cast<unsigned>(t), 0, 0};
    c.block_dim = {static_cast<unsigned>(block), 1, 1};
    c.grid_dim = {static_cast<unsigned>(grid), 1, 1};
    // A thread starts with no copies under way: those a thread left when it ended would land
    // in a shared array its block no longer reads.
    c.copies.clear();
    c.committed = 0;
    c.matrix_products = 0;
    body();
  };
  if (!synchronizes) {
    for (long long b = 0; b < grid; ++b) {
      fxc_poison_shared();
      for (int t = 0; t < block; ++t) run(b, t);
    }
    return;
  }
  auto part = [&](int t) {
    for (long long b = 0; b < grid; ++b) {
      if (t == 0) fxc_poison_shared();
      __syncthreads();  // a fresh block's shared memory, before any thread of it runs
      run(b, t);
      __syncthreads();  // the block's shared arrays are read before the next block's
    }
  };
  using Part = decltype(part);
  if (const char* fault = fxc_run(block, [](void* job, int t) { (*static_cast<Part*>(job))(t); }, &part))
    fxc_emu_fault(fault);
}

// What the generated kernels read, after the shim's own code.
#define threadIdx (fxc_context()->thread_idx)
#define blockIdx (fxc_context()->block_idx)
#define blockDim (fxc_context()->block_dim)
#define gridDim (fxc_context()->grid_dim)
