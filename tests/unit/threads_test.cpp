// SPDX-License-Identifier: Apache-2.0
// One compiled graph used from several threads at once: execute_cpu and streams of their own
// on shared kernels, the chunked scan's worker threads inside them, and kernel-cache lookups
// of one key. Each thread's outputs must equal, bit for bit, what the same call gives alone.
// scripts/tsan.sh runs these cases under ThreadSanitizer.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "accuracy_support.h"
#include "expected_text.h"
#include "frontend/dsl.h"
#include "runtime/cpu_executor.h"
#include "driver/kernel_cache.h"
#include "test_graphs.h"

namespace fxc {
namespace {

using namespace fxc::literals;

constexpr int kThreads = 4;

ir::Graph w1_like() {
  Flow x = input("x", 1);
  return make_graph("w1", {output("y", x | butter(4, 80_Hz, highpass) | butter(6, 9_kHz))});
}

bool same_bits(const std::vector<Signal>& a, const std::vector<Signal>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t o = 0; o < a.size(); ++o) {
    if (a[o].channels() != b[o].channels() || a[o].samples() != b[o].samples() || a[o].dtype() != b[o].dtype())
      return false;
    for (std::size_t c = 0; c < a[o].channels(); ++c)
      for (std::size_t n = 0; n < a[o].samples(); ++n) {
        double x = a[o].at(c, n), y = b[o].at(c, n);
        if (std::memcmp(&x, &y, sizeof x) != 0) return false;
      }
  }
  return true;
}

// The outputs of `inputs` in blocks of 100 samples through a stream of its own.
std::vector<Signal> in_blocks(const test::CompiledCpu& c, const std::vector<Signal>& inputs, DType dtype) {
  CpuStream stream(c.scheduled, c.kernels);
  std::size_t total = inputs[0].samples();
  std::vector<Signal> whole;
  for (std::size_t start = 0; start < total; start += 100) {
    std::size_t count = std::min<std::size_t>(100, total - start);
    std::vector<Signal> block;
    for (const Signal& s : inputs) {
      Signal part(s.channels(), count);
      for (std::size_t ch = 0; ch < s.channels(); ++ch)
        std::copy_n(s.f64(ch).begin() + static_cast<std::ptrdiff_t>(start), count, part.f64(ch).begin());
      block.push_back(part.converted(dtype));
    }
    auto out = stream.process(block);
    if (!out) return {};
    if (whole.empty())
      for (const Signal& o : *out) whole.emplace_back(o.channels(), total);
    for (std::size_t o = 0; o < out->size(); ++o)
      for (std::size_t ch = 0; ch < (*out)[o].channels(); ++ch)
        for (std::size_t i = 0; i < count; ++i) whole[o].f64(ch)[start + i] = (*out)[o].at(ch, i);
  }
  return whole;
}

TEST_CASE("one compiled graph runs from several threads at once, each call as it runs alone") {
  struct Case {
    const char* what;
    ir::Graph graph;
    int channels;
    DType dtype;
    std::size_t samples;
    passes::StrategyThresholds thresholds;
  };
  passes::StrategyThresholds chunky;  // the chunked scan, and its own threads: 2^22 samples
  chunky.chunked_min_samples = 0;
  chunky.chunk_decay_ratio = 0;
  const Case cases[] = {
      {"vocal chain, float32", test::vocal_graph(), 2, DType::f32, 3000, {}},
      {"every kind, float64", test::every_kind_graph(), 1, DType::f64, 3000, {}},
      {"chunked scan with worker threads", w1_like(), 1, DType::f32, std::size_t{1} << 22, chunky},
  };
  for (const Case& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    // Lookups of one key from every thread while it compiles: one entry, the same kernels.
    clear_memory_cache();
    test::CompiledCpu compiled = test::compile_cpu(c.graph, c.channels, c.dtype, static_cast<std::int64_t>(c.samples),
                                                   c.thresholds);
    if (c.thresholds.chunked_min_samples == 0)
      REQUIRE(test::chains_of(compiled.scheduled).at(0)->strategy == ir::IirStrategy::chunked_scan);
    std::vector<std::shared_ptr<const codegen::CpuKernels>> looked_up(kThreads);
    std::vector<std::vector<Signal>> inputs(kThreads), alone(kThreads), together(kThreads), streamed(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      inputs[t] = test::noise_inputs(compiled.scheduled.inputs().size(), c.channels, c.samples, c.dtype, 100 + t);
      auto out = execute_cpu(compiled.scheduled, *compiled.kernels, inputs[t]);
      REQUIRE(out);
      alone[t] = std::move(*out);
    }
    const bool streams = c.samples <= 10000;  // blocks of 100: short signals only
    std::vector<std::vector<Signal>> streamed_alone(kThreads);
    if (streams)
      for (int t = 0; t < kThreads; ++t) streamed_alone[t] = in_blocks(compiled, inputs[t], c.dtype);
    clear_memory_cache();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        KernelCache cache("");
        DiagnosticEngine diags;
        if (auto k = cache.cpu_kernels(compiled.scheduled, diags)) looked_up[t] = *k;
        if (auto out = execute_cpu(compiled.scheduled, *compiled.kernels, inputs[t])) together[t] = std::move(*out);
        if (streams) streamed[t] = in_blocks(compiled, inputs[t], c.dtype);
      });
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < kThreads; ++t) {
      CAPTURE(t);
      REQUIRE(looked_up[t]);
      CHECK(looked_up[t] == looked_up[0]);  // one compile, shared
      CHECK(same_bits(together[t], alone[t]));
      if (streams) CHECK(same_bits(streamed[t], streamed_alone[t]));
    }
  }
}

TEST_CASE("the memory cache serves a key to some threads while another inserts a new one") {
  // A lookup must not race with an insert of another key. The readers wait for the insert
  // through a relaxed atomic, which orders them in time but gives ThreadSanitizer no
  // happens-before edge: only the cache's own lock may provide it, so an unlocked lookup is
  // reported. (Threads that all miss one key and compile it are ordered by the locks inside
  // LLVM instead, which hides such a race.)
  auto graph_of_order = [](int order) {
    Flow x = input("x", 2);
    return make_graph("order", {output("y", x | butter(order, 1_kHz))});
  };
  test::CompiledCpu warm = test::compile_cpu(graph_of_order(2), 2, DType::f64, 100);
  // Keys on both sides of the warm one (they are hashes): some land where its lookup walks.
  std::vector<test::CompiledCpu> others;
  for (int order = 3; order <= 8; ++order) others.push_back(test::compile_cpu(graph_of_order(order), 2, DType::f64, 100));
  clear_memory_cache();
  KernelCache cache("");
  DiagnosticEngine diags;
  auto first = cache.cpu_kernels(warm.scheduled, diags);
  REQUIRE(first);
  std::atomic<bool> inserted{false};
  bool insert_ok = false;
  std::vector<int> hits_ok(kThreads, 0);
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    KernelCache mine("");
    DiagnosticEngine d;
    insert_ok = true;
    for (const test::CompiledCpu& o : others) insert_ok = insert_ok && mine.cpu_kernels(o.scheduled, d).has_value();
    inserted.store(true, std::memory_order_relaxed);
  });
  for (int t = 1; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      while (!inserted.load(std::memory_order_relaxed)) std::this_thread::yield();
      KernelCache mine("");
      DiagnosticEngine d;
      for (int round = 0; round < 20; ++round)
        if (auto k = mine.cpu_kernels(warm.scheduled, d); k && *k == *first) ++hits_ok[t];
    });
  for (std::thread& t : threads) t.join();
  CHECK(insert_ok);
  for (int t = 1; t < kThreads; ++t) {
    CAPTURE(t);
    CHECK(hits_ok[t] == 20);
  }
}

}  // namespace
}  // namespace fxc
