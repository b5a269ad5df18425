// SPDX-License-Identifier: Apache-2.0
// BlockExecutor: blocks of any length give the whole signal's output on every strategy;
// values staged from other threads arrive at block boundaries; its state is CpuStream's.
// Allocation-freedom is tested in realtime_alloc_test.cpp (its own binary).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "expected_text.h"
#include "block_test_support.h"
#include "random_graphs.h"
#include "runtime/graph_values.h"
#include "runtime/reference_interpreter.h"
#include "runtime/stream_state_bytes.h"

namespace fxc {
namespace {

using namespace fxc::literals;
using namespace fxc::test;

constexpr std::size_t kMaxBlock = 64;

BlockExecutor make_executor(const Compiled& c, std::size_t max_block = kMaxBlock,
                            const std::map<ir::NodeId, std::vector<std::int64_t>>& max_delays = {}) {
  auto executor = BlockExecutor::create(c.scheduled, c.kernels, max_block, max_delays);
  REQUIRE(executor);
  return std::move(*executor);
}

// FFT overlap-save convolves in steps that start where blocks begin, so its rounding differs
// from the whole signal's: float32's 6e-8 per operation, grown by the transform's log2(N)
// stages and the taps' sum, stays below 1e-5 of the signal's peak; float64's 1.1e-16 below
// 1e-12.
constexpr double kFftTolerance = 1e-5;
constexpr double kFftToleranceF64 = 1e-12;

void check_same(const std::vector<Signal>& got, const std::vector<Signal>& want, bool exact) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    CAPTURE(k);
    if (exact) CHECK(bit_equal(got[k], want[k]));
    else CHECK(relative_difference(got[k], want[k]) <= (want[k].dtype() == DType::f64 ? kFftToleranceF64 : kFftTolerance));
  }
}

// The reference interpreter's outputs (direct sums in float64) for `g`, a graph of one
// stereo input, on `inputs`.
std::vector<Signal> interpreted(const ir::Graph& g, const std::vector<Signal>& inputs) {
  DiagnosticEngine diags;
  passes::PassContext oracle{diags, {48000.0, 2, DType::f64}};
  auto designed = passes::run_pipeline(g, oracle, {.passes = {"infer-types", "design-filters"}});
  REQUIRE(designed);
  std::vector<Signal> wide;
  for (const Signal& s : inputs) wide.push_back(s.converted(DType::f64));
  auto want = interpret(*designed, wide);
  REQUIRE(want);
  return std::move(*want);
}

// The FFT block of the graph's one FFT FIR chain.
int fft_block_of(const ir::Graph& scheduled) {
  int block = 0;
  for (const ir::Node& n : scheduled.nodes())
    if (auto* chain = std::get_if<ir::Chain>(&n.op)) block = chain->fft_block;
  return block;
}

// Samples [from, from + count) of each signal.
std::vector<Signal> slice(const std::vector<Signal>& signals, std::size_t from, std::size_t count) {
  std::vector<Signal> out;
  for (const Signal& s : signals) {
    Signal part(s.channels(), count, s.dtype());
    for (std::size_t c = 0; c < s.channels(); ++c)
      std::memcpy(data_of(part, c), static_cast<const std::byte*>(data_of(s, c)) + from * size_of(s.dtype()),
                  count * size_of(s.dtype()));
    out.push_back(std::move(part));
  }
  return out;
}

// `state` with its header's lines from "graph " up to "sha256 " replaced by `lines`.
std::string with_header_lines(const std::string& state, const std::string& lines) {
  const std::size_t from = state.find("graph "), to = state.find("sha256 ");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  return state.substr(0, from) + lines + state.substr(to);
}

TEST_CASE("BlockExecutor: blocks of random lengths give execute_cpu's output, per strategy") {
  for (const StrategyCase& c : strategy_cases()) {
    CAPTURE(c.name);
    Compiled compiled = compile_case(c, 0, kMaxBlock);
    std::vector<Signal> inputs = noise_signals(compiled.scheduled.inputs().size(), c.channels, 5000, c.dtype, 7);
    auto whole = execute_cpu(compiled.scheduled, *compiled.kernels, inputs);
    REQUIRE(whole);
    BlockExecutor executor = make_executor(compiled);
    check_same(run_in_blocks(executor, compiled.scheduled, inputs, random_block_lengths(5000, kMaxBlock, 1)), *whole,
               c.exact);
    // Calls longer than max_block run as several blocks.
    BlockExecutor long_calls = make_executor(compiled);
    check_same(run_in_blocks(long_calls, compiled.scheduled, inputs, random_block_lengths(5000, 5 * kMaxBlock, 2)),
               *whole, c.exact);
  }
}

TEST_CASE("BlockExecutor: a long FIR in short blocks runs partitioned, and equals the interpreter") {
  // 3000 taps for blocks of up to 256: a partitioned convolution, the first 128 taps direct
  // and the rest by 256-point FFTs a block of 128 inputs at a time, where a whole signal's
  // overlap-save would take 16384 points (4x the taps) and a 256-sample call's 4096. The
  // reference interpreter convolves directly.
  std::vector<double> taps(3000);
  for (std::size_t i = 0; i < taps.size(); ++i) taps[i] = std::cos(0.013 * static_cast<double>(i)) / (1.0 + 0.003 * i);
  Flow x = input("x");
  ir::Graph g = make_graph("reverb_tail", {output("y", x | fir(taps))});
  for (DType dtype : {DType::f64, DType::f32}) {
    CAPTURE(name(dtype));
    Compiled c = compile_graph(g, 2, dtype, 256);
    CHECK(fft_block_of(c.scheduled) == 256);
    // The spectra's serial follows the taps alone: values computed again for the same taps
    // (a value staged for another node) keep it, so the channels do not rebuild.
    const auto serial = [](const ir::Graph& scheduled) {
      std::uint64_t s = 0;
      for (const NodeValues& v : graph_values(scheduled).nodes) s = v.fft_serial != 0 ? v.fft_serial : s;
      return s;
    };
    CHECK(serial(c.scheduled) != 0);
    CHECK(serial(c.scheduled) == serial(c.scheduled));
    ir::Graph other = c.scheduled;
    for (ir::NodeId id = 0; id < other.size(); ++id)
      if (auto* chain = std::get_if<ir::Chain>(&other.node(id).op))
        std::get<ir::FirFilter>(chain->stages[0]).taps[7] += 0.25;
    CHECK(serial(other) != serial(c.scheduled));
    std::vector<Signal> inputs = noise_signals(1, 2, 9000, dtype, 13);
    auto want = interpreted(g, inputs);
    BlockExecutor executor = make_executor(c, 256);
    auto got = run_in_blocks(executor, c.scheduled, inputs, random_block_lengths(9000, 256, 5));
    REQUIRE(got.size() == 1);
    CHECK(relative_difference(got[0], want[0]) <= (dtype == DType::f64 ? kFftToleranceF64 : kFftTolerance));
    // The executor's streams are built silent when it is made; a CpuStream's are rebuilt from
    // the zero history at its first call, in one call here: the same outputs, bit for bit.
    CpuStream whole(c.scheduled, c.kernels);
    auto at_once = whole.process(inputs);
    REQUIRE(at_once);
    check_same(got, *at_once, true);

    // The stream's history lives in its partitions' memory between calls (the chain's copy is
    // written only when saved): a saved state goes on bit for bit in another executor, in
    // other block lengths, and reset gives a fresh executor's output.
    std::vector<Signal> more = noise_signals(1, 2, 3000, dtype, 14);
    const std::string saved = executor.save_state();
    BlockExecutor loaded = make_executor(c, 256);
    REQUIRE(loaded.load_state(saved));
    std::vector<Signal> going_on = run_in_blocks(executor, c.scheduled, more, random_block_lengths(3000, 256, 6));
    check_same(run_in_blocks(loaded, c.scheduled, more, random_block_lengths(3000, 256, 7)), going_on, true);
    CHECK(loaded.save_state() == executor.save_state());
    BlockExecutor fresh = make_executor(c, 256);
    executor.reset();
    check_same(run_in_blocks(executor, c.scheduled, more, {256}), run_in_blocks(fresh, c.scheduled, more, {256}), true);
  }
}

TEST_CASE("an FFT FIR's state saved with one FFT block goes on in a stream with another") {
  // The FFT block follows the length of one call: a whole-file run convolves by overlap-save
  // in blocks of 4x the taps, a stream of short blocks by a partitioned convolution, whose
  // P follows the block. A state saved by any of them goes on in any other from its newest
  // inputs, within the FFTs' rounding of the direct sums (not bit for bit: its blocks begin
  // elsewhere), and in one of the same block bit for bit.
  std::vector<double> taps(1500);
  for (std::size_t i = 0; i < taps.size(); ++i) taps[i] = std::sin(0.021 * static_cast<double>(i)) / (1.0 + 0.002 * i);
  Flow x = input("x");
  ir::Graph g = make_graph("room", {output("y", x | fir(taps))});
  for (DType dtype : {DType::f64, DType::f32}) {
    CAPTURE(name(dtype));
    const double tolerance = dtype == DType::f64 ? kFftToleranceF64 : kFftTolerance;
    struct Case {
      const char* name;
      std::int64_t length;  // what the schedule was made for (0: a whole signal of unknown length)
      std::size_t block;    // the calls: BlockExecutor blocks of at most this, or 0: one CpuStream call
    };
    const std::vector<Case> cases = {
        {"whole signal", 0, 0}, {"blocks of 1024", 1024, 1024}, {"blocks of 64", 64, 64}, {"blocks of 64, P = 32", 64, 64}};
    std::vector<Compiled> compiled;
    for (const Case& c : cases) compiled.push_back(compile_graph(g, 2, dtype, c.length));
    // The cost model takes P = 64 for every short block of these taps: the last case's
    // schedule is edited to P = 32, so that a state also crosses between two partitionings.
    for (ir::NodeId id = 0; id < compiled[3].scheduled.size(); ++id)
      if (auto* chain = std::get_if<ir::Chain>(&compiled[3].scheduled.node(id).op)) chain->fft_block = 64;
    {
      DiagnosticEngine kernel_diags;
      KernelCache cache("");
      auto kernels = cache.cpu_kernels(compiled[3].scheduled, kernel_diags);
      REQUIRE(kernels);
      compiled[3].kernels = *kernels;
    }
    // Overlap-save in two blocks (above the taps), partitioned in two (P = block / 2).
    CHECK(fft_block_of(compiled[0].scheduled) == 8192);
    CHECK(fft_block_of(compiled[1].scheduled) == 2048);
    CHECK(fft_block_of(compiled[2].scheduled) == 128);

    std::vector<Signal> signal = noise_signals(1, 2, 7000, dtype, 21);
    auto want = interpreted(g, signal);
    const std::size_t cut = 4000;
    const std::vector<Signal> first = slice(signal, 0, cut), second = slice(signal, cut, 7000 - cut);
    const std::vector<Signal> second_want = slice(want, cut, 7000 - cut);

    auto save_after_first = [&](std::size_t k) {
      if (cases[k].block == 0) {
        CpuStream stream(compiled[k].scheduled, compiled[k].kernels);
        REQUIRE(stream.process(first));
        return stream.save_state();
      }
      BlockExecutor executor = make_executor(compiled[k], cases[k].block);
      run_in_blocks(executor, compiled[k].scheduled, first, random_block_lengths(cut, cases[k].block, 3));
      return executor.save_state();
    };
    auto continue_from = [&](std::size_t k, const std::string& saved) {
      if (cases[k].block == 0) {
        CpuStream stream(compiled[k].scheduled, compiled[k].kernels);
        auto loaded = stream.load_state(saved);
        REQUIRE_MESSAGE(loaded, loaded.error());
        auto out = stream.process(second);
        REQUIRE(out);
        return *out;
      }
      BlockExecutor executor = make_executor(compiled[k], cases[k].block);
      auto loaded = executor.load_state(saved);
      REQUIRE_MESSAGE(loaded, loaded.error());
      return run_in_blocks(executor, compiled[k].scheduled, second, random_block_lengths(7000 - cut, cases[k].block, 4));
    };
    for (std::size_t from = 0; from < cases.size(); ++from) {
      const std::string saved = save_after_first(from);
      for (std::size_t to = 0; to < cases.size(); ++to) {
        CAPTURE(cases[from].name);
        CAPTURE(cases[to].name);
        std::vector<Signal> got = continue_from(to, saved);
        REQUIRE(got.size() == 1);
        CHECK(relative_difference(got[0], second_want[0]) <= tolerance);
      }
    }

    // A state written before the FFT blocks left the graph line (the hash with them, no
    // "fft_blocks" line) still loads into a stream of its own block, and goes on bit for bit;
    // into another it is from another shape, as it was.
    const Compiled& blocks = compiled[2];
    const std::string saved = save_after_first(2);
    const std::string old = with_header_lines(saved, "graph " + schedule_free_hash(blocks.scheduled, false) + "\n");
    CHECK(bit_equal(continue_from(2, old)[0], continue_from(2, saved)[0]));
    CpuStream whole(compiled[0].scheduled, compiled[0].kernels);
    auto refused = whole.load_state(old);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().find("another shape") != std::string::npos);

    // A damaged blocks line is refused, and the stream keeps its state.
    BlockExecutor executor = make_executor(blocks, 64);
    REQUIRE(executor.load_state(saved));
    const std::string kept = executor.save_state();
    const std::string graph_line = saved.substr(saved.find("graph "), saved.find('\n', saved.find("graph ")) + 1 -
                                                                          saved.find("graph "));
    const std::size_t at = saved.find("fft_blocks ") + 11;
    const std::string fir = saved.substr(at, saved.find(':', at) - at);  // the FIR chain's node id
    REQUIRE(fir != "0");
    for (const std::string& lines : {std::string(""), "fft_blocks " + fir + ":3\n", "fft_blocks " + fir + ":abc\n",
                                     std::string("fft_blocks 0:512\n"), std::string("fft_blocks\n")}) {
      CAPTURE(lines);
      auto damaged = executor.load_state(with_header_lines(saved, graph_line + lines));
      REQUIRE_FALSE(damaged);
      CHECK(damaged.error().find("header is damaged") != std::string::npos);
      CHECK(executor.save_state() == kept);
    }
    // Blocks that do not match the history's length: the FFT history is damaged.
    auto wrong = executor.load_state(with_header_lines(saved, graph_line + "fft_blocks " + fir + ":64\n"));
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().find("FFT history") != std::string::npos);
  }
}

TEST_CASE("BlockExecutor: random graphs in random blocks give the whole signal's output") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    ir::Graph g = random_graph(seed);
    int channels = g.node(g.inputs()[0]).type.channels;
    for (DType dtype : {DType::f64, DType::f32}) {
      Compiled c = compile_graph(g, channels, dtype, kMaxBlock);
      bool fft = false;
      for (const ir::Node& n : c.scheduled.nodes())
        if (auto* chain = std::get_if<ir::Chain>(&n.op)) fft |= chain->fir_method == ir::FirMethod::fft_overlap_save;
      std::vector<Signal> inputs = noise_signals(g.inputs().size(), channels, 700, dtype, seed);
      auto whole = execute_cpu(c.scheduled, *c.kernels, inputs);
      REQUIRE(whole);
      BlockExecutor executor = make_executor(c);
      check_same(run_in_blocks(executor, c.scheduled, inputs, random_block_lengths(700, kMaxBlock, 3)), *whole,
                 !fft);
    }
  }
}

TEST_CASE("BlockExecutor: outputs may be the inputs' memory") {
  std::vector<StrategyCase> cases = strategy_cases();
  for (const StrategyCase& c : cases) {
    CAPTURE(c.name);
    Compiled compiled = compile_case(c, 0, kMaxBlock);
    if (compiled.scheduled.inputs().size() != 1) continue;
    std::vector<Signal> inputs = noise_signals(1, c.channels, 1000, c.dtype, 9);
    BlockExecutor apart = make_executor(compiled);
    std::vector<std::size_t> sizes = random_block_lengths(1000, kMaxBlock, 4);
    std::vector<Signal> want = run_in_blocks(apart, compiled.scheduled, inputs, sizes);

    // The first output in the input's memory, channel for channel.
    BlockExecutor in_place = make_executor(compiled);
    std::vector<Signal> buffer = inputs;
    std::vector<Signal> others = output_signals(compiled.scheduled, 1000);
    Pointers p(buffer, others);
    for (std::size_t c2 = 0; c2 < p.out[0].size(); ++c2) p.out[0][c2] = const_cast<void*>(p.in[0][c2]);
    for (std::size_t n : sizes) {
      in_place.process(p.inputs, p.outputs, n);
      p.advance(n, c.dtype);
    }
    CHECK(bit_equal(buffer[0], want[0]));
    for (std::size_t k = 1; k < want.size(); ++k) CHECK(bit_equal(others[k], want[k]));

    // Crossed: output channel c in input channel c + 1's memory. Writing it directly would
    // overwrite an input another channel still reads, so the executor must not.
    if (c.channels < 2) continue;
    BlockExecutor crossed = make_executor(compiled);
    buffer = inputs;
    Pointers q(buffer, others);
    for (std::size_t c2 = 0; c2 < q.out[0].size(); ++c2)
      q.out[0][c2] = const_cast<void*>(q.in[0][(c2 + 1) % q.in[0].size()]);
    for (std::size_t n : sizes) {
      crossed.process(q.inputs, q.outputs, n);
      q.advance(n, c.dtype);
    }
    for (std::size_t c2 = 0; c2 < buffer[0].channels(); ++c2)
      for (std::size_t n = 0; n < 1000; ++n)
        CHECK(buffer[0].at((c2 + 1) % buffer[0].channels(), n) == want[0].at(c2, n));
  }
}

// Runs `blocks` blocks of `sizes` through a BlockExecutor and a CpuStream side by side,
// changing values (variant 0 and 1) every `every` blocks; both must agree bit for bit.
TEST_CASE("BlockExecutor: staged values arrive at the next block, as CpuStream::update_values") {
  for (const StrategyCase& c : strategy_cases()) {
    CAPTURE(c.name);
    Compiled v[2] = {compile_case(c, 0, kMaxBlock), compile_case(c, 1, kMaxBlock)};
    REQUIRE(ir::structural_hash(v[0].scheduled) == ir::structural_hash(v[1].scheduled));
    BlockExecutor executor = make_executor(v[0], kMaxBlock, all_delays_up_to(v[0].scheduled, 32));
    CpuStream stream(v[0].scheduled, v[0].kernels);
    std::vector<Signal> inputs = noise_signals(v[0].scheduled.inputs().size(), c.channels, 6000, c.dtype, 11);
    std::vector<std::size_t> sizes = random_block_lengths(6000, kMaxBlock, 5);
    std::vector<Signal> got = output_signals(v[0].scheduled, 6000);
    Pointers p(inputs, got);
    std::size_t start = 0;
    for (std::size_t b = 0; b < sizes.size(); ++b) {
      if (b % 37 == 36) {
        const Compiled& next = v[(b / 37) % 2 == 0 ? 1 : 0];
        auto staged = executor.stage_values(next.scheduled);
        REQUIRE(staged);
        REQUIRE(stream.update_values(next.scheduled));
      }
      executor.process(p.inputs, p.outputs, sizes[b]);
      p.advance(sizes[b], c.dtype);
      std::vector<Signal> block;
      for (const Signal& s : inputs) {
        Signal part(s.channels(), sizes[b], s.dtype());
        for (std::size_t ch = 0; ch < s.channels(); ++ch)
          std::memcpy(data_of(part, ch), static_cast<const std::byte*>(data_of(s, ch)) + start * size_of(c.dtype),
                      sizes[b] * size_of(c.dtype));
        block.push_back(std::move(part));
      }
      auto want = stream.process(block);
      REQUIRE(want);
      for (std::size_t k = 0; k < want->size(); ++k)
        for (std::size_t ch = 0; ch < (*want)[k].channels(); ++ch)
          REQUIRE(std::memcmp(static_cast<const std::byte*>(data_of(got[k], ch)) + start * size_of(c.dtype),
                              data_of((*want)[k], ch), sizes[b] * size_of(c.dtype)) == 0);
      start += sizes[b];
    }
  }
}

TEST_CASE("BlockExecutor: stage_values refuses another shape and delays longer than prepared") {
  auto graph_with = [](std::int64_t delay_samples, int order) {
    return make_graph("d", {output("y", input("x", 1) | butter(order, 1_kHz) |
                                            delay(Samples{static_cast<double>(delay_samples)}))});
  };
  Compiled base = compile_graph(graph_with(10, 2), 1, DType::f64, kMaxBlock);
  BlockExecutor executor = make_executor(base, kMaxBlock, all_delays_up_to(base.scheduled, 100));
  Compiled other_shape = compile_graph(graph_with(10, 4), 1, DType::f64, kMaxBlock);
  auto refused = executor.stage_values(other_shape.scheduled);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("another shape") != std::string::npos);
  Compiled too_long = compile_graph(graph_with(101, 2), 1, DType::f64, kMaxBlock);
  refused = executor.stage_values(too_long.scheduled);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("longer than the 100 it was prepared for") != std::string::npos);
  Compiled longest = compile_graph(graph_with(100, 2), 1, DType::f64, kMaxBlock);
  REQUIRE(executor.stage_values(longest.scheduled));

  // The refusals published nothing: the executor runs with the longest delay, as a fresh one.
  std::vector<Signal> inputs = noise_signals(1, 1, 500, DType::f64, 3);
  auto whole = execute_cpu(longest.scheduled, *longest.kernels, inputs);
  REQUIRE(whole);
  check_same(run_in_blocks(executor, base.scheduled, inputs, random_block_lengths(500, kMaxBlock, 6)), *whole, true);
}

TEST_CASE("BlockExecutor::create refuses chunked scans, too much memory and stray maxima") {
  passes::StrategyThresholds chunky;
  chunky.chunked_min_samples = 0;
  chunky.chunk_length = 1024;
  chunky.chunk_decay_ratio = 0;
  Compiled chunked = compile_graph(make_graph("c", {output("y", input("x", 1) | butter(4, 80_Hz, highpass))}), 1,
                                   DType::f64, 20000, chunky);
  auto refused = BlockExecutor::create(chunked.scheduled, chunked.kernels, kMaxBlock);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("chunked scan") != std::string::npos);

  Compiled far = compile_graph(make_graph("far", {output("y", input("x", 2) | delay(100000000_samples))}), 2,
                               DType::f64, kMaxBlock);
  refused = BlockExecutor::create(far.scheduled, far.kernels, kMaxBlock);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("1526 MiB (1526 MiB of it delay lines at their longest)") != std::string::npos);
  Compiled near = compile_graph(make_graph("near", {output("y", input("x", 2) | delay(100_samples))}), 2,
                                DType::f64, kMaxBlock);
  refused = BlockExecutor::create(near.scheduled, near.kernels, kMaxBlock, all_delays_up_to(near.scheduled, 100000000));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("more than the 1024 MiB") != std::string::npos);

  ir::NodeId input_id = near.scheduled.inputs()[0];
  refused = BlockExecutor::create(near.scheduled, near.kernels, kMaxBlock, {{input_id, {10}}});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("name no delay") != std::string::npos);
  CHECK_FALSE(BlockExecutor::create(near.scheduled, near.kernels, 0));
  auto ok = BlockExecutor::create(near.scheduled, near.kernels, kMaxBlock, all_delays_up_to(near.scheduled, 48000));
  REQUIRE(ok);
  CHECK(ok->memory_bytes() >= 2 * 48000 * 8);
}

TEST_CASE("BlockExecutor: reset, and states that move to and from CpuStream") {
  for (const StrategyCase& c : strategy_cases()) {
    CAPTURE(c.name);
    Compiled compiled = compile_case(c, 0, kMaxBlock);
    std::size_t inputs_count = compiled.scheduled.inputs().size();
    std::vector<Signal> a = noise_signals(inputs_count, c.channels, 300, c.dtype, 1);
    std::vector<Signal> b = noise_signals(inputs_count, c.channels, 64, c.dtype, 2);
    std::vector<std::size_t> sizes = random_block_lengths(300, kMaxBlock, 8);

    BlockExecutor executor = make_executor(compiled);
    run_in_blocks(executor, compiled.scheduled, a, sizes);
    CpuStream stream(compiled.scheduled, compiled.kernels);
    std::size_t start = 0;
    for (std::size_t n : sizes) {
      std::vector<Signal> block;
      for (const Signal& s : a) {
        Signal part(s.channels(), n, s.dtype());
        for (std::size_t ch = 0; ch < s.channels(); ++ch)
          std::memcpy(data_of(part, ch), static_cast<const std::byte*>(data_of(s, ch)) + start * size_of(c.dtype),
                      n * size_of(c.dtype));
        block.push_back(std::move(part));
      }
      REQUIRE(stream.process(block));
      start += n;
    }
    // The same blocks leave the same state, byte for byte.
    std::string saved = executor.save_state();
    CHECK(saved == stream.save_state());

    auto want = stream.process(b);
    REQUIRE(want);
    // BlockExecutor -> CpuStream, and CpuStream -> BlockExecutor.
    CpuStream loaded_stream(compiled.scheduled, compiled.kernels);
    REQUIRE(loaded_stream.load_state(saved));
    auto from_executor = loaded_stream.process(b);
    REQUIRE(from_executor);
    check_same(*from_executor, *want, true);
    BlockExecutor loaded = make_executor(compiled);
    auto ok = loaded.load_state(saved);
    REQUIRE(ok);
    check_same(run_in_blocks(loaded, compiled.scheduled, b, {64}), *want, true);

    // A damaged state is refused and the state kept; reset gives a fresh executor's output.
    std::string damaged = saved;
    damaged[damaged.size() - 2] ^= 0x10;
    CHECK_FALSE(loaded.load_state(damaged));
    BlockExecutor fresh = make_executor(compiled);
    std::vector<Signal> from_zero = run_in_blocks(fresh, compiled.scheduled, b, {64});
    executor.reset();
    check_same(run_in_blocks(executor, compiled.scheduled, b, {64}), from_zero, true);
  }
}

// One audio thread processes blocks while two control threads stage alternating values; run
// under ThreadSanitizer (a TSan build's unit tests) it also checks the handover is race-free.
TEST_CASE("BlockExecutor: values staged from other threads while blocks run") {
  for (const StrategyCase& c : strategy_cases()) {
    CAPTURE(c.name);
    Compiled v[2] = {compile_case(c, 0, kMaxBlock), compile_case(c, 1, kMaxBlock)};
    BlockExecutor executor = make_executor(v[0], kMaxBlock, all_delays_up_to(v[0].scheduled, 32));
    std::size_t inputs_count = v[0].scheduled.inputs().size();
    std::vector<Signal> in = noise_signals(inputs_count, c.channels, kMaxBlock, c.dtype, 4);
    std::vector<Signal> out = output_signals(v[0].scheduled, kMaxBlock);
    Pointers p(in, out);

    std::atomic<int> running{2};
    std::atomic<bool> failed{false};
    auto control = [&](int first) {
      for (int i = 0; i < 200; ++i)
        if (!executor.stage_values(v[(first + i) % 2].scheduled)) failed = true;
      --running;
    };
    std::thread one(control, 0), two(control, 1);
    std::size_t blocks = 0;
    bool finite = true;
    std::mt19937 rng(5);
    while (running.load() > 0 || blocks < 1000) {
      std::size_t n = std::uniform_int_distribution<std::size_t>(1, kMaxBlock)(rng);
      executor.process(p.inputs, p.outputs, n);
      for (const Signal& s : out)
        for (std::size_t ch = 0; ch < s.channels(); ++ch)
          for (std::size_t i = 0; i < n; ++i) finite &= std::isfinite(s.at(ch, i)) && std::abs(s.at(ch, i)) < 100;
      ++blocks;
    }
    one.join();
    two.join();
    CHECK_FALSE(failed.load());
    CHECK(finite);
    // After the last values staged, a reset executor runs as a fresh one made with them.
    REQUIRE(executor.stage_values(v[1].scheduled));
    executor.reset();
    std::vector<Signal> block = noise_signals(inputs_count, c.channels, 200, c.dtype, 6);
    std::vector<Signal> got = run_in_blocks(executor, v[0].scheduled, block, {64, 64, 72});
    BlockExecutor fresh = make_executor(v[1], kMaxBlock, all_delays_up_to(v[1].scheduled, 32));
    check_same(got, run_in_blocks(fresh, v[1].scheduled, block, {64, 64, 72}), true);
  }
}

TEST_CASE("execute_cpu_into writes execute_cpu's outputs into the caller's memory, in place too") {
  for (const StrategyCase& c : strategy_cases()) {
    CAPTURE(c.name);
    Compiled compiled = compile_case(c, 0, 20000);
    std::vector<Signal> inputs = noise_signals(compiled.scheduled.inputs().size(), c.channels, 20000, c.dtype, 12);
    auto whole = execute_cpu(compiled.scheduled, *compiled.kernels, inputs);
    REQUIRE(whole);
    std::vector<Signal> outputs = output_signals(compiled.scheduled, 20000);
    Pointers p(inputs, outputs);
    auto done = execute_cpu_into(compiled.scheduled, *compiled.kernels, p.inputs, p.outputs, 20000);
    REQUIRE(done);
    check_same(outputs, *whole, true);
    if (inputs.size() != 1) continue;
    std::vector<Signal> buffer = inputs;
    Pointers q(buffer, outputs);
    for (std::size_t ch = 0; ch < q.out[0].size(); ++ch) q.out[0][ch] = const_cast<void*>(q.in[0][ch]);
    REQUIRE(execute_cpu_into(compiled.scheduled, *compiled.kernels, q.inputs, q.outputs, 20000));
    CHECK(bit_equal(buffer[0], (*whole)[0]));
  }
  Compiled any = compile_case(strategy_cases()[0], 0, 64);
  auto refused = execute_cpu_into(any.scheduled, *any.kernels, {}, {}, 10);
  REQUIRE_FALSE(refused);
  CHECK(refused.error() == "the graph has 1 input(s), got 0");
}

}  // namespace
}  // namespace fxc
