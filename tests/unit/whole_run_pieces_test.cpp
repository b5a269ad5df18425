// SPDX-License-Identifier: Apache-2.0
// Whole runs whose kernels pass values on through slots go in pieces (slot_piece_frames,
// runtime/cpu_executor.h): bit for bit what a stream of blocks gives, in place too, with each
// step given as many threads in a piece as over the whole signal; graphs without slots and
// chunked scans run whole.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "block_test_support.h"
#include "runtime/counters.h"
#include "runtime/execution_plan.h"
#include "runtime/run_graph.h"
#include "runtime/thread_pool.h"

namespace fxc {
namespace {

using namespace fxc::literals;
using namespace fxc::test;

// The vocal example's shape on `channels`: a chain, a delay of the input read after it, and
// their sum (three kernels; the chain's and the delay's values pass through slots).
ir::Graph vocal_shape(int channels) {
  Flow x = input("x", channels);
  Flow wet = x | butter(4, 80_Hz, highpass) | peaking(3_kHz, 1.0, 4_dB) | tanh() | gain(-3_dB);
  return make_graph("pieces", {output("y", 0.7 * wet + 0.3 * (x | delay(5_ms)))});
}

std::uint64_t dispatches_of(const std::function<void()>& run) {
  const std::uint64_t before = counters().dispatches.load();
  run();
  return counters().dispatches.load() - before;
}

// Restores the shared pool's thread count when a test case ends.
struct ThreadsKept {
  int threads = ThreadPool::shared().threads();
  ~ThreadsKept() { ThreadPool::shared().set_threads(threads); }
};

TEST_CASE("whole runs through slots go in pieces, bit for bit as blocks, in place too") {
  ThreadsKept kept;
  constexpr std::size_t kFrames = 300001;  // 4 pieces of 2^16 frames and a short fifth
  for (int channels : {2, 8})
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(channels);
      CAPTURE(name(dtype));
      Compiled c = compile_graph(vocal_shape(channels), channels, dtype, static_cast<std::int64_t>(kFrames));
      auto plan = plan_execution(c.scheduled, *c.kernels);
      REQUIRE(plan);
      REQUIRE(plan->steps.size() == 3);
      std::vector<Signal> in = noise_signals(1, channels, kFrames, dtype, 7);

      ThreadPool::shared().set_threads(1);
      REQUIRE(slot_piece_frames(c.scheduled, *plan, dtype, kFrames, 1) == std::size_t{1} << 16);
      Expected<std::vector<Signal>, std::string> whole = Unexpected{std::string()};
      // Each of the three kernels once per piece: the run went in five pieces.
      CHECK(dispatches_of([&] { whole = execute_cpu(c.scheduled, *c.kernels, in); }) == 15);
      REQUIRE(whole);

      // A stream of blocks carries the state exactly (channel lanes, a delay, a sum).
      auto executor = BlockExecutor::create(c.scheduled, c.kernels, 4096, {});
      REQUIRE(executor);
      std::vector<Signal> blocks = run_in_blocks(*executor, c.scheduled, in, random_block_lengths(kFrames, 4096, 3));
      REQUIRE(blocks.size() == 1);
      CHECK(bit_equal((*whole)[0], blocks[0]));

      // In place: the output over the input's memory, which the delay reads after the chain
      // wrote its value (so the sum writes it at the end of each piece).
      std::vector<Signal> same = {in[0]};
      Pointers p(same, same);
      REQUIRE(execute_cpu_into(c.scheduled, *c.kernels, p.inputs, p.outputs, kFrames));
      CHECK(bit_equal(same[0], (*whole)[0]));

      // With the machine's threads, or four: the same bits.
      for (int threads : {0, 4}) {
        ThreadPool::shared().set_threads(threads);
        auto threaded = execute_cpu(c.scheduled, *c.kernels, in);
        REQUIRE(threaded);
        CHECK(bit_equal((*threaded)[0], (*whole)[0]));
      }
    }
}

TEST_CASE("whole-run pieces give every step its threads, and are no longer than that needs") {
  for (int channels : {1, 2, 8, 64})
    for (DType dtype : {DType::f32, DType::f64})
      for (int threads : {1, 2, 4, 16}) {
        CAPTURE(channels);
        CAPTURE(name(dtype));
        CAPTURE(threads);
        constexpr std::size_t kFrames = 48000 * 120;
        Compiled c = compile_graph(vocal_shape(channels), channels, dtype, static_cast<std::int64_t>(kFrames));
        auto plan = plan_execution(c.scheduled, *c.kernels);
        REQUIRE(plan);
        const std::size_t piece = slot_piece_frames(c.scheduled, *plan, dtype, kFrames, threads);
        CHECK(piece >= std::size_t{1} << 16);
        bool needed = piece == std::size_t{1} << 16;
        for (const ExecutionPlan::Step& step : plan->steps) {
          const int whole = step_threads(c.scheduled, *plan, step, dtype, kFrames, threads);
          CHECK(step_threads(c.scheduled, *plan, step, dtype, std::min(piece, kFrames), threads) == whole);
          needed = needed || step_threads(c.scheduled, *plan, step, dtype, piece / 2, threads) < whole;
        }
        CHECK(needed);  // half as long would have taken a thread from some step
        if (threads == 1) CHECK(piece == std::size_t{1} << 16);
      }
}

TEST_CASE("whole runs without values in slots, or with a chunked scan, go in one piece") {
  constexpr std::size_t kFrames = 300001;
  // One kernel into the caller's output: nothing in a slot.
  Compiled single = compile_graph(make_graph("single", {output("y", input("x", 2) | butter(4, 1_kHz, lowpass))}), 2,
                                  DType::f64, static_cast<std::int64_t>(kFrames));
  std::vector<Signal> in = noise_signals(1, 2, kFrames, DType::f64, 1);
  CHECK(dispatches_of([&] { REQUIRE(execute_cpu(single.scheduled, *single.kernels, in)); }) == 1);

  // A chunked scan splits the whole signal in time itself (its chunks follow the call).
  Flow x = input("x", 1);
  Compiled scan = compile_graph(make_graph("scan", {output("y", 0.5 * (x | butter(4, 1_kHz, lowpass)) + 0.5 * x)}),
                                1, DType::f64, static_cast<std::int64_t>(kFrames));
  bool chunked = false;
  for (const ir::Node& n : scan.scheduled.nodes())
    if (const auto* chain = std::get_if<ir::Chain>(&n.op)) chunked |= chain->strategy == ir::IirStrategy::chunked_scan;
  REQUIRE(chunked);
  auto plan = plan_execution(scan.scheduled, *scan.kernels);
  REQUIRE(plan);
  std::vector<Signal> mono = noise_signals(1, 1, kFrames, DType::f64, 2);
  CHECK(dispatches_of([&] { REQUIRE(execute_cpu(scan.scheduled, *scan.kernels, mono)); }) == plan->steps.size());
}

TEST_CASE("whole runs with an FFT FIR go in one piece: the same bits on any thread count") {
  // Overlap-save steps from the start of each call: in pieces its frames moved, and its
  // rounding with them (and with the piece length, the thread count).
  ThreadsKept kept;
  constexpr std::size_t kFrames = 300001;
  std::mt19937_64 rng(5);
  std::vector<double> taps(300);
  for (double& t : taps) t = std::uniform_real_distribution<double>(-1, 1)(rng) / 300;
  for (int channels : {1, 8}) {
    CAPTURE(channels);
    Flow x = input("x", channels);
    Compiled c = compile_graph(
        make_graph("fft", {output("y", x | fir(taps) | delay(1_ms) | butter(4, 1_kHz, lowpass))}), channels,
        DType::f64, static_cast<std::int64_t>(kFrames));
    bool fft = false;
    for (const ir::Node& n : c.scheduled.nodes())
      if (const auto* chain = std::get_if<ir::Chain>(&n.op)) fft |= chain->fir_method == ir::FirMethod::fft_overlap_save;
    REQUIRE(fft);
    auto plan = plan_execution(c.scheduled, *c.kernels);
    REQUIRE(plan);
    std::vector<Signal> in = noise_signals(1, channels, kFrames, DType::f64, 9);
    ThreadPool::shared().set_threads(1);
    Expected<std::vector<Signal>, std::string> one = Unexpected{std::string()};
    CHECK(dispatches_of([&] { one = execute_cpu(c.scheduled, *c.kernels, in); }) == plan->steps.size());
    REQUIRE(one);
    for (int threads : {2, 4}) {
      ThreadPool::shared().set_threads(threads);
      auto many = execute_cpu(c.scheduled, *c.kernels, in);
      REQUIRE(many);
      CHECK(bit_equal((*many)[0], (*one)[0]));
    }
  }
}

}  // namespace
}  // namespace fxc
