// SPDX-License-Identifier: Apache-2.0
// Lets the CUDA C++ that fxc generates compile as host C++, to check the kernels' logic
// without a GPU (tests/unit/cuda_emulator.cpp). A launch runs its blocks one after another.
// A kernel that synchronizes runs each CUDA thread of a block on a thread of the emulator's
// pool (cuda_emulation_context.h), with a std::barrier for __syncthreads and one more between
// blocks (a block's __shared__ arrays are the next block's); others run their threads in a
// loop. __shared__ arrays become function statics (so two host threads must not launch one
// module's kernel at once: no test does, and a launch that synchronizes takes the pool's lock).
// The pool's threads are made once per
// process, not per block or launch: under AddressSanitizer a thread costs milliseconds, and a
// launch has thousands of blocks.
#pragma once

#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>

#include "cuda_emulation_context.h"

// The emulated thread's indices are the test executable's thread-local state, not this
// module's (cuda_emulation_context.h says why); the emulator binds the accessor after dlopen.
static FxcThreadContextFn fxc_context = nullptr;
static FxcRunFn fxc_run = nullptr;  // the emulator's thread pool, shared by every module
extern "C" void fxc_emu_bind(FxcThreadContextFn context, FxcRunFn run) {
  fxc_context = context;
  fxc_run = run;
}

static inline void __syncthreads() { fxc_context()->barrier->arrive_and_wait(); }

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

#define __global__
#define __device__
#define __shared__ static
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


template <class F>
static void fxc_emulate(long long grid, int block, bool synchronizes, F body) {
  auto run = [&](long long b, int t) {
    FxcThreadContext& c = *fxc_context();
    c.block_idx = {static_cast<unsigned>(b), 0, 0};
    c.thread_idx = {static_cast<unsigned>(t), 0, 0};
    c.block_dim = {static_cast<unsigned>(block), 1, 1};
    c.grid_dim = {static_cast<unsigned>(grid), 1, 1};
    body();
  };
  if (!synchronizes) {
    for (long long b = 0; b < grid; ++b)
      for (int t = 0; t < block; ++t) run(b, t);
    return;
  }
  std::barrier<> barrier(block);
  auto part = [&](int t) {
    fxc_context()->barrier = &barrier;
    for (long long b = 0; b < grid; ++b) {
      run(b, t);
      barrier.arrive_and_wait();  // the block's shared arrays are read before the next block's
    }
  };
  using Part = decltype(part);
  fxc_run(block, [](void* job, int t) { (*static_cast<Part*>(job))(t); }, &part);
}

// What the generated kernels read, after the shim's own code.
#define threadIdx (fxc_context()->thread_idx)
#define blockIdx (fxc_context()->block_idx)
#define blockDim (fxc_context()->block_dim)
#define gridDim (fxc_context()->grid_dim)
