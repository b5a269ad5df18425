// SPDX-License-Identifier: Apache-2.0
// The state of an emulated CUDA thread (its indices, its async copies, its matrix products). It
// lives in the test executable (a fiber's, or the thread's own storage) (cuda_emulator.cpp), and
// each compiled module reaches it through a function that the emulator binds after dlopen
// (cuda_emulation_shim.h): a module with thread-local variables of its own takes a slot of
// dynamic TLS, and with a few dozen such modules loaded, LeakSanitizer's scan of dynamic TLS at
// exit read a bogus range and crashed ("Tracer caught signal 11"), failing scripts/sanitize.sh.
#pragma once

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
  std::vector<FxcPendingCopy> copies;  ///< the thread's async copies under way
  long long committed = 0;             ///< the thread's groups closed so far
  long long matrix_products = 0;       ///< the thread's mma.sync calls so far (the shim's)
};

/// Returns the running CUDA thread's context.
using FxcThreadContextFn = FxcThreadContext* (*)();

/// Runs a job of `width` parts, `part(job, t)` on fiber t of the emulator's (one fiber per
/// CUDA thread of a block, taking turns on the calling thread), and returns when all are done:
/// null, or the fault that fails the launch. The emulator's for every module: the fibers'
/// stacks are made once per process.
using FxcRunFn = const char* (*)(int width, void (*part)(void* job, int t), void* job);

/// __syncthreads among the running job's fibers, or a barrier of the calling fiber's warp (the
/// lanes of mma.sync): null, or a fault.
using FxcSyncFn = const char* (*)();
