// SPDX-License-Identifier: Apache-2.0
// The CUDA threads of a block that synchronizes run as fibers on the launching thread, one
// after another: each runs until its next __syncthreads (fxc_sync) or barrier of its warp's
// (fxc_sync_warp, mma.sync's lanes), then hands over to the next, and a barrier opens once
// every unfinished thread it waits for has arrived. OS threads with a
// std::barrier did the same at the cost of the scheduler: 128 to 1024 threads contending for
// two cores at every barrier (the suite's run, its modules compiled: 3.7 minutes with threads,
// 50 s with fibers, on 2 cores). Turns taken in a fixed order also make a missing barrier show
// the same way in every run, not when the timing happens to: a thread runs ahead to its next
// barrier and reads what its neighbours have not written (NaN: the rules). The order goes up
// the block in one launch and down it in the next.
#pragma once

#include "cuda_emulation_context.h"

namespace fxc::test {

/// The running fiber's context (FxcThreadContextFn), else the calling thread's own (a kernel
/// that does not synchronize runs its threads in a loop on the launching thread).
FxcThreadContext* emulated_thread_context();

/// Runs `part(job, t)` for t in [0, width) as fibers on the calling thread, and returns when
/// all are done (FxcRunFn): null, or the launch's fault (a thread that ended while others
/// waited at a barrier). One launch at a time, from any thread.
const char* run_fibers(int width, void (*part)(void*, int), void* job);

/// __syncthreads among the running fibers (FxcSyncFn): returns once every unfinished one has
/// called it; null, or a fault (called outside a launch's fibers).
const char* sync_fibers();

/// A barrier of the running fiber's warp (its 32 threads; FxcSyncFn), as mma.sync's lanes
/// exchange their operands: returns once every unfinished thread of the warp has called it;
/// null, or a fault. Threads that wait at different barriers fail the launch instead of hanging.
const char* sync_warp_fibers();

}  // namespace fxc::test
