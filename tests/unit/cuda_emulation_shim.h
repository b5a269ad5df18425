// SPDX-License-Identifier: Apache-2.0
// Lets the CUDA C++ that fxc generates compile as host C++, to check the kernels' logic
// without a GPU (tests/unit/cuda_emulator.cpp). A launch runs its blocks one after another;
// within a block, a kernel that synchronizes gets one std::thread per CUDA thread and a
// std::barrier for __syncthreads, others run their threads in a loop. __shared__ arrays become
// function statics: shared by the threads of a block, reused by the next block.
#pragma once

#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>
#include <thread>
#include <vector>

#include "cuda_emulation_context.h"

// The emulated thread's indices are the test executable's thread-local state, not this
// module's (cuda_emulation_context.h says why); the emulator binds the accessor after dlopen.
static FxcThreadContextFn fxc_context = nullptr;
extern "C" void fxc_emu_bind(FxcThreadContextFn context) { fxc_context = context; }

static inline void __syncthreads() { fxc_context()->barrier->arrive_and_wait(); }

#define __global__
#define __device__
#define __shared__ static

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
  for (long long b = 0; b < grid; ++b) {
    auto thread = [&](int t) {
      FxcThreadContext& c = *fxc_context();
      c.block_idx = {static_cast<unsigned>(b), 0, 0};
      c.thread_idx = {static_cast<unsigned>(t), 0, 0};
      c.block_dim = {static_cast<unsigned>(block), 1, 1};
      c.grid_dim = {static_cast<unsigned>(grid), 1, 1};
      body();
    };
    if (!synchronizes) {
      for (int t = 0; t < block; ++t) thread(t);
      continue;
    }
    std::barrier<> barrier(block);
    std::vector<std::thread> threads;
    for (int t = 0; t < block; ++t)
      threads.emplace_back([&, t] {
        fxc_context()->barrier = &barrier;
        thread(t);
      });
    for (auto& t : threads) t.join();
  }
}

// What the generated kernels read, after the shim's own code.
#define threadIdx (fxc_context()->thread_idx)
#define blockIdx (fxc_context()->block_idx)
#define blockDim (fxc_context()->block_dim)
#define gridDim (fxc_context()->grid_dim)
