// SPDX-License-Identifier: Apache-2.0
#include "emulation_fibers.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <cstddef>
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
void after_first_switch(const void**, std::size_t* from_size) { *from_size = 1; }
void clear_stack(void*, std::size_t) {}
int switch_context(ucontext_t* from, const ucontext_t* to) { return swapcontext(from, to); }
#endif

class FiberRunner {
 public:
  ~FiberRunner() {
    for (Fiber& f : fibers_) munmap(f.mapped, kStackBytes + kGuardBytes);
  }

  void run(int width, void (*part)(void*, int), void* job) {
    std::lock_guard<std::mutex> one_launch(mutex_);  // __shared__ arrays are module statics
    while (static_cast<int>(fibers_.size()) < width) fibers_.push_back(make_fiber());
    part_ = part;
    job_ = job;
    width_ = running_ = width;
    arrived_ = 0;
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
    launcher_stack_size_ = 0;  // learnt by the first fiber
    void* fake_stack = nullptr;
    before_switch(&fake_stack, fibers_[0].stack, kStackBytes);
    switch_context(&launcher_, &fibers_[0].ucontext);
    after_switch(fake_stack);
    current_fiber = nullptr;
  }

  /// __syncthreads: waits until every unfinished fiber of the block has arrived.
  void sync() {
    if (++arrived_ == running_) {
      open();
      return;
    }
    const long long generation = generation_;
    while (generation_ == generation) switch_to(next_after(current_), true);
  }

 private:
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

  static Fiber make_fiber() {
    Fiber f;
    // A stack of its own each, below a page that faults: a kernel that overflows it stops
    // the test there rather than writing over the next fiber's.
    f.mapped = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (f.mapped == MAP_FAILED) throw std::runtime_error("emulation: no memory for a fiber's stack");
    mprotect(f.mapped, kGuardBytes, PROT_NONE);
    f.stack = static_cast<char*>(f.mapped) + kGuardBytes;
    return f;
  }

  static void start();

  void open() {
    arrived_ = 0;
    ++generation_;
  }

  int next_after(int t) const {
    for (int step = 1; step <= width_; ++step) {
      const int next = (t + step) % width_;
      if (!fibers_[next].done) return next;
    }
    return -1;
  }

  // From the current fiber to fiber `to` (-1: back to the launcher). `returns`: whether the
  // current fiber will run again (else its fake stacks go).
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
    // A block whose other threads all wait at a barrier: it opens (threads that have exited
    // do not count, as on the GPU since Volta).
    if (running_ > 0 && arrived_ == running_) open();
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
  long long generation_ = 0;
};

FiberRunner& fiber_runner() {
  static FiberRunner runner;
  return runner;
}

void FiberRunner::start() {
  FiberRunner& r = fiber_runner();
  // The first fiber comes from the launcher's stack: its bounds are where the last one returns.
  if (r.launcher_stack_size_ == 0) after_first_switch(&r.launcher_stack_bottom_, &r.launcher_stack_size_);
  else after_switch(nullptr);
  r.part_(r.job_, r.current_);
  r.finish_current();
}

}  // namespace

FxcThreadContext* emulated_thread_context() {
  static thread_local FxcThreadContext context;
  return current_fiber ? current_fiber : &context;
}

void run_fibers(int width, void (*part)(void*, int), void* job) { fiber_runner().run(width, part, job); }

void sync_fibers() { fiber_runner().sync(); }

}  // namespace fxc::test
