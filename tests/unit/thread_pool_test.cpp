// SPDX-License-Identifier: Apache-2.0
// The shared worker pool (runtime/thread_pool.h) and the whole-signal runs that use it: every
// part runs once, callers never wait on each other, and a chain split across threads computes
// every channel bit for bit as one call does.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "accuracy_support.h"
#include "frontend/dsl.h"
#include "runtime/cpu_executor.h"
#include "runtime/thread_pool.h"

namespace fxc {
namespace {

using namespace fxc::literals;

// Restores the pool's size at the end of a case.
struct PoolSize {
  explicit PoolSize(int threads) { ThreadPool::shared().set_threads(threads); }
  ~PoolSize() { ThreadPool::shared().set_threads(0); }
};

bool same_bits(const std::vector<Signal>& a, const std::vector<Signal>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::size_t c = 0; c < a[k].channels(); ++c)
      for (std::size_t i = 0; i < a[k].samples(); ++i)
        if (a[k].at(c, i) != b[k].at(c, i)) return false;
  return true;
}

}  // namespace

TEST_CASE("the pool runs every part once, from several callers at once") {
  PoolSize size(3);
  CHECK(available_cores() >= 1);
  CHECK(ThreadPool::shared().threads() == 3);
  for (int parts : {1, 2, 3, 7, 64}) {
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(parts));
    ThreadPool::shared().run(parts, [&](int p) { runs[static_cast<std::size_t>(p)]++; });
    for (auto& r : runs) CHECK(r.load() == 1);
  }
  // Four threads run at once: one holds the workers, the others run their parts themselves.
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int i = 0; i < 50; ++i) ThreadPool::shared().run(5, [&](int) { total++; });
    });
  for (auto& t : callers) t.join();
  CHECK(total.load() == 4 * 50 * 5);
}

TEST_CASE("chains split across threads compute every channel as one call does") {
  // Long enough that each part has at least a million section-samples; channel counts that
  // give whole vector groups, groups and a remainder, and per-channel loops.
  struct Case {
    const char* what;
    int channels;
    DType dtype;
  };
  const Case cases[] = {{"8 channels float64 (two groups of four)", 8, DType::f64},
                        {"6 channels float64 (a group and a remainder)", 6, DType::f64},
                        {"3 channels float32 (per-channel loops)", 3, DType::f32},
                        {"2 channels float32 with float64 state", 2, DType::f32}};
  Flow x = input("x");
  ir::Graph graph = make_graph("w", {output("y", x | butter(4, 80_Hz, highpass) | butter(8, 12_kHz) |
                                                 peaking(2_kHz, 1.0, 3_dB) | delay(100_samples))});
  for (const Case& c : cases) {
    CAPTURE(c.what);
    passes::StrategyThresholds no_chunks;  // the chunked scan has its own threading
    no_chunks.chunked_min_samples = std::int64_t{1} << 60;
    test::CompiledCpu compiled = test::compile_cpu(graph, c.channels, c.dtype, 400000, no_chunks);
    std::vector<Signal> inputs;
    for (const Signal& s : test::noise_inputs(1, c.channels, 400000, c.dtype, 5)) inputs.push_back(s.converted(c.dtype));
    std::vector<Signal> one, two;
    {
      PoolSize size(1);
      auto out = execute_cpu(compiled.scheduled, *compiled.kernels, inputs);
      REQUIRE(out);
      one = std::move(*out);
    }
    {
      PoolSize size(2);
      auto out = execute_cpu(compiled.scheduled, *compiled.kernels, inputs);
      REQUIRE(out);
      two = std::move(*out);
    }
    CHECK(same_bits(one, two));
    // In two blocks through a stream, where each part's state must come back to its own
    // channels for the second block: still every bit (blocks equal the whole for these
    // strategies, docs/streaming.md).
    {
      PoolSize size(2);
      CpuStream stream(compiled.scheduled, compiled.kernels);
      std::vector<Signal> first, second;
      for (const Signal& s : inputs) {
        Signal a(s.channels(), 200000, s.dtype()), b(s.channels(), 200000, s.dtype());
        for (std::size_t ch = 0; ch < s.channels(); ++ch)
          for (std::size_t i = 0; i < 200000; ++i) {
            if (s.dtype() == DType::f32) a.f32(ch)[i] = s.f32(ch)[i], b.f32(ch)[i] = s.f32(ch)[200000 + i];
            else a.f64(ch)[i] = s.f64(ch)[i], b.f64(ch)[i] = s.f64(ch)[200000 + i];
          }
        first.push_back(std::move(a));
        second.push_back(std::move(b));
      }
      auto y1 = stream.process(first);
      auto y2 = stream.process(second);
      REQUIRE(y1);
      REQUIRE(y2);
      bool same = true;
      for (std::size_t ch = 0; ch < one[0].channels(); ++ch)
        for (std::size_t i = 0; i < 200000; ++i)
          same = same && (*y1)[0].at(ch, i) == one[0].at(ch, i) && (*y2)[0].at(ch, i) == one[0].at(ch, 200000 + i);
      CHECK(same);
    }
  }
}

}  // namespace fxc
