// SPDX-License-Identifier: Apache-2.0
// BlockExecutor::process and reset, and fxc::Processor::process and reset on top of it,
// allocate nothing. This file replaces the global operator
// new and delete (every form: sized, aligned, nothrow, arrays) and, on glibc without
// sanitizers, malloc, calloc, realloc, free and the aligned allocators, counting calls made by
// this thread while counting is on. It is built as its own binary (fxc_realtime_tests): the
// replacements hold for every allocation in the process, and the unit binary should not run
// on them.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>

#include <fxc/fxc.h>

#include "expected_text.h"
#include "block_test_support.h"

namespace {

// Counting is per thread, so that another thread's allocation is never blamed on process().
// Plain thread_local bools in the executable: initial-exec TLS, reading it allocates nothing.
thread_local bool counting = false;
thread_local std::size_t allocations = 0;

void note_allocation() {
  if (counting) ++allocations;
}

}  // namespace

#include "sanitizer.h"
#if defined(__GLIBC__) && !defined(FXC_UNDER_SANITIZER)
#define FXC_COUNT_MALLOC 1
#endif

#ifdef FXC_COUNT_MALLOC
// glibc's own entry points, under the names it exports for interposers like this one. Under
// a sanitizer its runtime interposes malloc itself, so only operator new is counted there.
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

void* malloc(std::size_t n) {
  note_allocation();
  return __libc_malloc(n);
}
void* calloc(std::size_t count, std::size_t n) {
  note_allocation();
  return __libc_calloc(count, n);
}
void* realloc(void* p, std::size_t n) {
  note_allocation();
  return __libc_realloc(p, n);
}
void free(void* p) {
  note_allocation();
  __libc_free(p);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) {
  note_allocation();
  return __libc_memalign(alignment, n);
}
void* memalign(std::size_t alignment, std::size_t n) {
  note_allocation();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  note_allocation();
  void* p = __libc_memalign(alignment, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}
#endif

// operator new and delete, every replaceable form, on malloc/free (counted once: here).
namespace {

void* allocate(std::size_t n, std::size_t alignment = 0) {
  bool was = counting;
  note_allocation();
  counting = false;  // the malloc below is this same allocation
  void* p = nullptr;
  if (alignment > alignof(std::max_align_t)) {
    if (posix_memalign(&p, alignment, n ? n : 1) != 0) p = nullptr;
  } else {
    p = std::malloc(n ? n : 1);
  }
  counting = was;
  return p;
}

void release(void* p) {
  bool was = counting;
  note_allocation();
  counting = false;
  std::free(p);
  counting = was;
}

}  // namespace

void* operator new(std::size_t n) {
  if (void* p = allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = allocate(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  if (void* p = allocate(n, static_cast<std::size_t>(a))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
  if (void* p = allocate(n, static_cast<std::size_t>(a))) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }

namespace fxc {
namespace {

using namespace fxc::test;

// Counts this thread's allocations and frees while alive.
class CountAllocations {
 public:
  CountAllocations() {
    allocations = 0;
    counting = true;
  }
  ~CountAllocations() { counting = false; }
  std::size_t count() const { return allocations; }
};

TEST_CASE("the allocation counter sees every form") {
  std::size_t seen = 0;
  {
    CountAllocations counter;
    // Through volatile pointers, so that the compiler cannot elide a pair.
    int* volatile one = new int(1);
    delete one;
    double* volatile three = new double[3];
    delete[] three;
    void* volatile aligned = ::operator new(64, std::align_val_t{64});
    ::operator delete(aligned, std::align_val_t{64});
    void* volatile nothrow = ::operator new(8, std::nothrow);
    ::operator delete(nothrow, std::nothrow);
#ifdef FXC_COUNT_MALLOC
    void* volatile p = std::malloc(16);  // the malloc family
    std::free(p);
#endif
    seen = counter.count();
  }
#ifdef FXC_COUNT_MALLOC
  CHECK(seen == 10);
#else
  CHECK(seen == 8);
#endif
}

TEST_CASE("BlockExecutor::process and reset allocate nothing, on every strategy") {
  constexpr std::size_t kMaxBlock = 64;
  constexpr int kBlocks = 10000;
  for (const StrategyCase& c : strategy_cases()) {
    CAPTURE(c.name);
    Compiled v[2] = {compile_case(c, 0, kMaxBlock), compile_case(c, 1, kMaxBlock)};
    auto made = BlockExecutor::create(v[0].scheduled, v[0].kernels, kMaxBlock, all_delays_up_to(v[0].scheduled, 32));
    REQUIRE(made);
    BlockExecutor& executor = *made;
    std::size_t inputs_count = v[0].scheduled.inputs().size();
    std::vector<Signal> in = noise_signals(inputs_count, c.channels, kMaxBlock, c.dtype, 1);
    std::vector<Signal> out = output_signals(v[0].scheduled, kMaxBlock);
    Pointers p(in, out);
    std::mt19937 rng(2);
    std::size_t inside = 0;
    for (int b = 0; b < kBlocks; ++b) {
      // Values change every 50 blocks (delay lengths too), staged on this thread between
      // blocks: the staging allocates, the block that takes the values must not.
      if (b % 50 == 49) REQUIRE(executor.stage_values(v[(b / 50) % 2].scheduled));
      std::size_t n = std::uniform_int_distribution<std::size_t>(1, kMaxBlock)(rng);
      CountAllocations counter;
      executor.process(p.inputs, p.outputs, n);
      if (b % 1000 == 999) executor.reset();
      inside += counter.count();
    }
    CHECK(inside == 0);
    // In place too (the output in the input's memory), and longer calls split into blocks.
    if (inputs_count == 1 && out.size() == 1) {
      std::vector<Signal> buffer = noise_signals(1, c.channels, 4 * kMaxBlock, c.dtype, 3);
      std::vector<Signal> unused = output_signals(v[0].scheduled, 4 * kMaxBlock);
      Pointers q(buffer, unused);
      for (std::size_t ch = 0; ch < q.out[0].size(); ++ch) q.out[0][ch] = const_cast<void*>(q.in[0][ch]);
      CountAllocations counter;
      executor.process(q.inputs, q.outputs, 4 * kMaxBlock);
      CHECK(counter.count() == 0);
    }
  }
}

TEST_CASE("fxc::Processor::process allocates nothing, in either sample type, while set() runs elsewhere") {
  // A live cutoff, a live delay whose range prepare() reserves, and a sum: what a plugin has.
  constexpr const char* kGraph =
      "input x : 2\n"
      "fc = 200 Hz in [20 Hz, 2 kHz]\n"
      "d = 2 ms in [1 ms, 20 ms]\n"
      "output y = 0.7 * (x | butter(4, fc, highpass) | peaking(1 kHz, 1.0, 3 dB)) + 0.3 * (x | delay(d))\n";
  for (fxc::DType dtype : {fxc::DType::f32, fxc::DType::f64}) {
    CAPTURE(dtype == fxc::DType::f32 ? "float32 program" : "float64 program");
    fxc::Options o;
    o.sample_rate_hz = 48000;
    o.dtype = dtype;
    o.cache_directory = "none";
    o.max_block = 128;
    fxc::Program program = fxc::Program::from_source(kGraph, o);
    fxc::Processor live = program.processor();
    std::vector<float> fl(512, 0.25f), fr(512, -0.5f);
    std::vector<double> dl(512, 0.25), dr(512, -0.5);
    const float* fin[] = {fl.data(), fr.data()};
    float* fout[] = {fl.data(), fr.data()};  // in place
    const double* din[] = {dl.data(), dr.data()};
    double* dout[] = {dl.data(), dr.data()};
    std::atomic<bool> stop{false};
    std::atomic<int> sets{0};
    std::thread control([&] {  // allocates as much as it likes: it is not the audio thread
      for (int i = 0; !stop; ++i) {
        live.set("fc", 20.0 + (i % 50) * 30);
        live.set("d", 0.001 * (1 + i % 19));  // in seconds
        ++sets;
      }
    });
    std::mt19937 rng(5);
    std::size_t inside = 0;
    for (int b = 0; b < 4000 || sets < 20; ++b) {
      std::size_t n = std::uniform_int_distribution<std::size_t>(1, 512)(rng);  // over max_block too
      // Fresh input each block: in place, the output would otherwise be fed back through the
      // +3 dB bell thousands of times and overflow.
      std::fill(fl.begin(), fl.end(), 0.25f);
      std::fill(fr.begin(), fr.end(), -0.5f);
      std::fill(dl.begin(), dl.end(), 0.25);
      std::fill(dr.begin(), dr.end(), -0.5);
      CountAllocations counter;
      if (b % 2 == 0) live.process(fin, fout, n);
      else live.process(din, dout, n);  // the other type for one of the two programs
      if (b % 997 == 996) live.reset();
      inside += counter.count();
    }
    stop = true;
    control.join();
    CHECK(inside == 0);
    CHECK(sets >= 20);
    CHECK(std::isfinite(fl[0]));
    CHECK(std::isfinite(dl[0]));
  }
}

}  // namespace
}  // namespace fxc
