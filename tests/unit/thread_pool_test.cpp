// SPDX-License-Identifier: Apache-2.0
// The shared worker pool (runtime/thread_pool.h) and the whole-signal runs that use it: every
// part runs once, callers never wait on each other, and a chain split across threads computes
// every channel bit for bit as one call does.
#include <doctest/doctest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "accuracy_support.h"
#include "frontend/dsl.h"
#include "passes/cost_model.h"
#include "runtime/cpu_executor.h"
#include "runtime/thread_pool.h"
#include "test_graphs.h"

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

// Samples [begin, end) of every channel.
Signal part_of(const Signal& s, std::size_t begin, std::size_t end) {
  Signal out(s.channels(), end - begin, s.dtype());
  for (std::size_t c = 0; c < s.channels(); ++c)
    for (std::size_t i = begin; i < end; ++i) {
      if (s.dtype() == DType::f32) out.f32(c)[i - begin] = s.f32(c)[i];
      else out.f64(c)[i - begin] = s.f64(c)[i];
    }
  return out;
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

TEST_CASE("FIR chains in time lanes split in time across threads: every bit as one call, state and in place too") {
  // A part after the first starts 100 + 32 samples early from zero state (both FIRs' taps - 1),
  // so each output adds the same products in the same order as one call: same bits. The last
  // part's state is the stream's for its next block; a run in place (outputs on the inputs)
  // does not split, as a part's early samples would be its neighbour's outputs.
  std::mt19937_64 rng(3);
  auto taps = [&](int n) { return test::random_taps(rng, n); };
  Flow x = input("x");
  ir::Graph graph = make_graph("firs", {output("y", x | fir(taps(101)) | tanh() | fir(taps(33)) | gain(0.5))});
  const std::size_t n = 400000, half = n / 2;
  for (DType dtype : {DType::f32, DType::f64})
    for (int channels : {1, 2}) {
      CAPTURE(name(dtype));
      CAPTURE(channels);
      test::CompiledCpu compiled = test::compile_cpu(graph, channels, dtype, static_cast<std::int64_t>(n));
      for (const ir::Node& node : compiled.scheduled.nodes())
        if (auto* chain = std::get_if<ir::Chain>(&node.op)) REQUIRE(passes::fir_time_lanes(*chain, dtype, channels));
      std::vector<Signal> inputs;
      for (const Signal& s : test::noise_inputs(1, channels, n, dtype, 9)) inputs.push_back(s.converted(dtype));
      std::vector<Signal> one;
      {
        PoolSize size(1);
        auto out = execute_cpu(compiled.scheduled, *compiled.kernels, inputs);
        REQUIRE(out);
        one = std::move(*out);
      }
      for (int threads : {2, 3, 5}) {
        CAPTURE(threads);
        PoolSize size(threads);
        auto out = execute_cpu(compiled.scheduled, *compiled.kernels, inputs);
        REQUIRE(out);
        CHECK(same_bits(one, *out));
        // Two blocks through a stream: the second starts from the first's last part's state.
        CpuStream stream(compiled.scheduled, compiled.kernels);
        std::vector<Signal> first, second;
        for (const Signal& s : inputs) {
          first.push_back(part_of(s, 0, half));
          second.push_back(part_of(s, half, n));
        }
        auto y1 = stream.process(first);
        auto y2 = stream.process(second);
        REQUIRE(y1);
        REQUIRE(y2);
        CHECK(same_bits({(*y1)[0]}, {part_of(one[0], 0, half)}));
        CHECK(same_bits({(*y2)[0]}, {part_of(one[0], half, n)}));
        // In place.
        std::vector<Signal> buffer = inputs;
        std::vector<const void*> in;
        std::vector<void*> place;
        for (std::size_t c = 0; c < buffer[0].channels(); ++c) {
          void* data = dtype == DType::f32 ? static_cast<void*>(buffer[0].f32(c).data())
                                           : static_cast<void*>(buffer[0].f64(c).data());
          in.push_back(data);
          place.push_back(data);
        }
        const void* const* ins[] = {in.data()};
        void* const* outs[] = {place.data()};
        REQUIRE(execute_cpu_into(compiled.scheduled, *compiled.kernels, ins, outs, n));
        CHECK(same_bits({buffer[0]}, {one[0]}));
      }
    }
}

}  // namespace fxc
