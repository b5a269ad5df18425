// SPDX-License-Identifier: Apache-2.0
// The state of an emulated CUDA thread (its indices and its block's barrier). It lives in the
// test executable's thread-local storage (cuda_emulator.cpp), and each compiled module reaches
// it through a function that the emulator binds after dlopen (cuda_emulation_shim.h): a module
// with thread-local variables of its own takes a slot of dynamic TLS, and with a few dozen
// such modules loaded, LeakSanitizer's scan of dynamic TLS at exit read a bogus range and
// crashed ("Tracer caught signal 11"), failing scripts/sanitize.sh.
#pragma once

#include <barrier>
#include <vector>

struct FxcDim3 {
  unsigned x = 0, y = 0, z = 0;
};

/// An async copy (cp.async) under way: its bytes, taken when it was issued, land in `to` at
/// the wait that covers its group (cuda_emulation_shim.h).
struct FxcPendingCopy {
  void* to = nullptr;
  unsigned char bytes[16] = {};
  unsigned size = 0;
  long long group = -1;  ///< -1 until a commit closes it into a group
};

struct FxcThreadContext {
  FxcDim3 thread_idx, block_idx, block_dim, grid_dim;
  std::barrier<>* barrier = nullptr;  ///< the block's, for __syncthreads
  std::vector<FxcPendingCopy> copies;  ///< the thread's async copies under way
  long long committed = 0;             ///< the thread's groups closed so far
};

/// Returns the calling thread's context.
using FxcThreadContextFn = FxcThreadContext* (*)();

/// Runs a job of `width` parts, part t on thread t of the emulator's one pool (each part
/// calls `part(job, t)`), and returns when all are done. One pool for every module: a pool per
/// module kept its threads for the process's life (modules stay loaded), and a test process
/// that loads a hundred modules of 256-thread blocks ran out of threads or memory maps.
using FxcRunFn = void (*)(int width, void (*part)(void* job, int t), void* job);
