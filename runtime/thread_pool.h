// SPDX-License-Identifier: Apache-2.0
// The process's worker threads for whole-signal runs: made once, at the first parallel run,
// and kept, so that no run starts a thread. Streams and Processors never use them.
#pragma once

#include <functional>

namespace fxc {

/// The cores this process may use: its CPU affinity mask, lowered to a cgroup CPU quota when
/// one is set (containers), at least 1.
int available_cores();

class ThreadPool {
 public:
  /// The shared pool: FXC_THREADS threads (the caller included) if that is set, else
  /// available_cores(); set_threads() changes it.
  static ThreadPool& shared();

  /// Threads a run may use, the caller included (1: no workers).
  int threads() const;
  /// Another size (0: back to the default); takes effect at the next run.
  void set_threads(int threads);

  /// Runs task(p) for every p in [0, parts): part 0 on the calling thread, the others on
  /// workers; returns when all are done. While another caller's run holds the workers, this
  /// one runs every part itself (never waits for a pool). parts above threads() are fine.
  void run(int parts, const std::function<void(int)>& task);

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

 private:
  ThreadPool();
  struct Impl;
  Impl* impl_;
};

}  // namespace fxc
