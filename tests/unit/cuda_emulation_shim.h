// SPDX-License-Identifier: Apache-2.0
// Lets the CUDA C++ that fxc generates compile as host C++, to check the kernels' logic
// without a GPU (tests/unit/cuda_emulator.cpp). A launch runs its blocks one after another.
// A kernel that synchronizes runs each CUDA thread of a block on a thread of the module's
// pool, with a std::barrier for __syncthreads and one more between blocks (a block's
// __shared__ arrays are the next block's); others run their threads in a loop. __shared__
// arrays become function statics. The pool's threads are made once per module, not per block
// or launch: under AddressSanitizer a thread costs milliseconds, and a launch has thousands
// of blocks.
#pragma once

#include <barrier>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <math.h>
#include <mutex>
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

// Threads that run a job of `width` parts, part t on thread t, and wait for the next; joined
// when the module is unloaded. One job at a time (`launch` serializes callers).
class FxcPool {
 public:
  ~FxcPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  void run(int width, const std::function<void(int)>& job) {
    std::lock_guard<std::mutex> launch(launch_);
    std::unique_lock<std::mutex> lock(mutex_);
    while (static_cast<int>(threads_.size()) < width) {
      const int t = static_cast<int>(threads_.size());
      threads_.emplace_back([this, t] { work(t); });
    }
    job_ = &job;
    width_ = width;
    running_ = width;
    ++generation_;
    wake_.notify_all();
    done_.wait(lock, [this] { return running_ == 0; });
    job_ = nullptr;
  }

 private:
  void work(int t) {
    long long seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (t >= width_) continue;
      const std::function<void(int)>* job = job_;
      lock.unlock();
      (*job)(t);
      lock.lock();
      if (--running_ == 0) done_.notify_one();
    }
  }
  std::mutex launch_, mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* job_ = nullptr;
  long long generation_ = 0;
  int width_ = 0, running_ = 0;
  bool stop_ = false;
};
static FxcPool fxc_pool;

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
  fxc_pool.run(block, [&](int t) {
    fxc_context()->barrier = &barrier;
    for (long long b = 0; b < grid; ++b) {
      run(b, t);
      barrier.arrive_and_wait();  // the block's shared arrays are read before the next block's
    }
  });
}

// What the generated kernels read, after the shim's own code.
#define threadIdx (fxc_context()->thread_idx)
#define blockIdx (fxc_context()->block_idx)
#define blockDim (fxc_context()->block_dim)
#define gridDim (fxc_context()->grid_dim)
