// SPDX-License-Identifier: Apache-2.0
#include "emulation_fibers.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <vector>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace fxc::test {
namespace {

thread_local FxcThreadContext* current_fiber = nullptr;  // the running fiber's, on this thread

// Under AddressSanitizer each switch of stacks is announced (its fake stacks, for
// detect_stack_use_after_return, follow the fiber), a stack is cleared of the poison its last
// frames left before a fiber starts on it again (FiberRunner::kStackCleared), and the switch
// is the C library's own: AddressSanitizer's swapcontext does these two itself but warns on
// its first call ("doesn't fully support makecontext/swapcontext"), which
// scripts/sanitize.sh counts as a report.
#if defined(__SANITIZE_ADDRESS__)
void before_switch(void** fake_stack, const void* bottom, std::size_t size) {
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
}
void after_switch(void* fake_stack) { __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr); }
void after_first_switch(const void** from_bottom, std::size_t* from_size) {
  __sanitizer_finish_switch_fiber(nullptr, from_bottom, from_size);
}
void clear_stack(void* stack, std::size_t size) { __asan_unpoison_memory_region(stack, size); }
int switch_context(ucontext_t* from, const ucontext_t* to) {
  using Swap = int (*)(ucontext_t*, const ucontext_t*);
  static const Swap libc_swap = [] {
    void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    return libc ? reinterpret_cast<Swap>(dlsym(libc, "swapcontext")) : nullptr;
  }();
  return libc_swap ? libc_swap(from, to) : swapcontext(from, to);
}
#else
void before_switch(void**, const void*, std::size_t) {}
void after_switch(void*) {}
void after_first_switch(const void**, std::size_t*) {}
void clear_stack(void*, std::size_t) {}
int switch_context(ucontext_t* from, const ucontext_t* to) { return swapcontext(from, to); }
#endif

class FiberRunner {
 public:
  ~FiberRunner() {
    for (Fiber& f : fibers_) munmap(f.mapped, kStackBytes + kGuardBytes);
  }

  const char* run(int width, void (*part)(void*, int), void* job) {
    std::lock_guard<std::mutex> one_launch(mutex_);  // __shared__ arrays are module statics
    while (static_cast<int>(fibers_.size()) < width) fibers_.push_back(make_fiber());
    part_ = part;
    job_ = job;
    width_ = running_ = width;
    arrived_ = 0;
    warps_.assign(static_cast<std::size_t>((width + kWarp - 1) / kWarp), Warp{});
    for (std::size_t w = 0; w < warps_.size(); ++w)
      warps_[w].running = std::min(kWarp, width - static_cast<int>(w) * kWarp);
    warp_waiting_ = 0;
    fault_ = nullptr;
    // The turns go up the block in one launch and down it in the next, so that a missing
    // barrier shows whichever way round its threads depend on each other.
    downward_ = !downward_;
    for (int t = 0; t < width; ++t) {
      Fiber& f = fibers_[t];
      f.done = false;
      f.context.copies.clear();
      clear_stack(f.stack + kStackBytes - kStackCleared, kStackCleared);
      getcontext(&f.ucontext);
      f.ucontext.uc_stack.ss_sp = f.stack;
      f.ucontext.uc_stack.ss_size = kStackBytes;
      f.ucontext.uc_link = nullptr;
      makecontext(&f.ucontext, reinterpret_cast<void (*)()>(&FiberRunner::start), 0);
    }
    current_ = 0;
    current_fiber = &fibers_[0].context;
    void* fake_stack = nullptr;
    before_switch(&fake_stack, fibers_[0].stack, kStackBytes);
    switch_context(&launcher_, &fibers_[0].ucontext);
    after_switch(fake_stack);
    current_fiber = nullptr;
    return fault_;
  }

  /// __syncthreads: waits until every unfinished fiber of the block has arrived. Outside a
  /// launch's fibers (a kernel not marked as synchronizing) it is a fault.
  const char* sync() {
    if (!current_fiber) return "__syncthreads in a kernel launched as one that does not synchronize";
    if (++arrived_ == running_) {
      open();
      return nullptr;
    }
    const long long generation = generation_;
    open_if_stuck();
    while (generation_ == generation) switch_to(next_after(current_), true);
    return nullptr;
  }

  /// A barrier of the current fiber's warp (threads 32 w .. 32 w + 31): waits until every
  /// unfinished one of them has arrived. Outside a launch's fibers it is a fault.
  const char* sync_warp() {
    if (!current_fiber) return "a warp's barrier (mma.sync) in a kernel launched as one that does not synchronize";
    const int w = current_ / kWarp;
    Warp& warp = warps_[static_cast<std::size_t>(w)];
    ++warp_waiting_;
    if (++warp.arrived == warp.running) {
      open_warp(w);
      return nullptr;
    }
    const long long generation = warp.generation;
    open_if_stuck();
    while (warp.generation == generation) switch_to(next_after(current_), true);
    return nullptr;
  }

 private:
  static constexpr int kWarp = 32;
  static constexpr std::size_t kStackBytes = std::size_t{1} << 20, kGuardBytes = 4096;
  // What a fiber's last frames poisoned (start, finish_current and switch_to, at the stack's
  // top; the modules are not instrumented) is cleared before the stack is used again.
  static constexpr std::size_t kStackCleared = std::size_t{64} << 10;
  struct Fiber {
    ucontext_t ucontext{};
    FxcThreadContext context;
    void* mapped = nullptr;
    char* stack = nullptr;
    bool done = false;
  };
  struct Warp {  // a barrier of 32 threads' (sync_warp)
    int running = 0, arrived = 0;
    long long generation = 0;
  };

  static Fiber make_fiber() {
    Fiber f;
    // A stack of its own each, below a page that faults: a kernel that overflows it stops
    // the test there rather than writing over the next fiber's.
    f.mapped = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (f.mapped == MAP_FAILED) throw std::runtime_error("emulation: no memory for a fiber's stack");
    if (mprotect(f.mapped, kGuardBytes, PROT_NONE) != 0)
      throw std::runtime_error("emulation: cannot protect a fiber's guard page");
    f.stack = static_cast<char*>(f.mapped) + kGuardBytes;
    return f;
  }

  static void start();

  void open() {
    arrived_ = 0;
    ++generation_;
  }

  void open_warp(int w) {
    Warp& warp = warps_[static_cast<std::size_t>(w)];
    warp_waiting_ -= warp.arrived;
    warp.arrived = 0;
    ++warp.generation;
  }

  // Every unfinished fiber waits, and no barrier can open: some wait at __syncthreads and some
  // at their warp's, or a warp's lanes at a barrier its other lanes passed by. A GPU hangs or
  // leaves it undefined; the launch fails, and every barrier opens, so that it ends.
  void open_if_stuck() {
    if (running_ == 0 || arrived_ + warp_waiting_ < running_) return;
    if (!fault_) fault_ = "the threads of a block wait at different barriers (some at __syncthreads, some at their warp's: mma.sync)";
    if (arrived_ > 0) open();
    for (std::size_t w = 0; w < warps_.size(); ++w)
      if (warps_[w].arrived > 0) open_warp(static_cast<int>(w));
  }

  int next_after(int t) const {
    const int step = downward_ ? width_ - 1 : 1;
    for (int k = 1; k <= width_; ++k) {
      const int next = static_cast<int>((t + static_cast<long long>(k) * step) % width_);
      if (!fibers_[next].done) return next;
    }
    return -1;
  }

  // From the current fiber to fiber `to` (-1: back to the launcher). `returns`: whether the
  // current fiber will run again (else its fake stacks go: a dying fiber's switch_to reads
  // nothing of its frame after the switch, which it never returns from).
  void switch_to(int to, bool returns) {
    const int from = current_;
    if (to == from) return;
    void* fake_stack = nullptr;
    current_ = to;
    current_fiber = to < 0 ? nullptr : &fibers_[to].context;
    if (to < 0) {
      before_switch(returns ? &fake_stack : nullptr, launcher_stack_bottom_, launcher_stack_size_);
      switch_context(&fibers_[from].ucontext, &launcher_);
    } else {
      before_switch(returns ? &fake_stack : nullptr, fibers_[to].stack, kStackBytes);
      switch_context(&fibers_[from].ucontext, &fibers_[to].ucontext);
    }
    after_switch(fake_stack);
    current_fiber = &fibers_[current_].context;
  }

  void finish_current() {
    fibers_[current_].done = true;
    --running_;
    const int w = current_ / kWarp;
    Warp& warp = warps_[static_cast<std::size_t>(w)];
    --warp.running;
    // Every thread passes as many barriers (fxc_emulate adds one after each block): one that
    // ends while others wait at a barrier is a kernel whose threads do not, which a GPU
    // leaves undefined. The launch fails; the others go on, so that it ends.
    if (arrived_ > 0) {
      if (!fault_) fault_ = "a thread ended while others of its block waited at __syncthreads";
      if (arrived_ == running_) open();
    }
    if (warp.arrived > 0) {
      if (!fault_) fault_ = "a thread ended while others of its warp waited at the warp's barrier (mma.sync)";
      if (warp.arrived == warp.running) open_warp(w);
    }
    open_if_stuck();
    switch_to(running_ == 0 ? -1 : next_after(current_), false);
  }

  std::mutex mutex_;
  std::vector<Fiber> fibers_;
  ucontext_t launcher_{};
  const void* launcher_stack_bottom_ = nullptr;  // the launching thread's stack, for
  std::size_t launcher_stack_size_ = 0;          // AddressSanitizer's switch back to it
  void (*part_)(void*, int) = nullptr;
  void* job_ = nullptr;
  int width_ = 0, running_ = 0, arrived_ = 0, current_ = 0;
  bool downward_ = true;  // this launch's turns go down the block
  const char* fault_ = nullptr;  // the launch's
  long long generation_ = 0;
  std::vector<Warp> warps_;  // the block's, this launch
  int warp_waiting_ = 0;     // fibers at a warp's barrier, all warps
};

FiberRunner& fiber_runner() {
  static FiberRunner runner;
  return runner;
}

void FiberRunner::start() {
  FiberRunner& r = fiber_runner();
  // Fiber 0 starts first, from the launcher's stack: its bounds are where the last one returns.
  if (r.current_ == 0) after_first_switch(&r.launcher_stack_bottom_, &r.launcher_stack_size_);
  else after_switch(nullptr);
  r.part_(r.job_, r.current_);
  r.finish_current();
  std::abort();  // not reached: the last fiber switches back to the launcher (uc_link is null)
}

}  // namespace

FxcThreadContext* emulated_thread_context() {
  static thread_local FxcThreadContext context;
  return current_fiber ? current_fiber : &context;
}

const char* run_fibers(int width, void (*part)(void*, int), void* job) { return fiber_runner().run(width, part, job); }

const char* sync_fibers() { return fiber_runner().sync(); }

const char* sync_warp_fibers() { return fiber_runner().sync_warp(); }

}  // namespace fxc::test
