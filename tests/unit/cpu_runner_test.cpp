// SPDX-License-Identifier: Apache-2.0
// CpuRunner: whole-signal runs that keep their plan, values and FFT work memory between runs
// give what a fresh execute_cpu gives, bit for bit, whatever ran before and from several
// threads at once.
#include <doctest/doctest.h>

#include <algorithm>
#include <thread>

#include "block_test_support.h"

namespace fxc {
namespace {

using namespace fxc::literals;
using test::compile_graph;
using test::noise_signals;

// Every output of `a` bit for bit as `b`'s.
bool same_bits(const std::vector<Signal>& a, const std::vector<Signal>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), test::bit_equal);
}

TEST_CASE("CpuRunner: repeated and concurrent runs equal a fresh execute_cpu, bit for bit") {
  // A FIR long enough for FFT overlap-save (its plans are what the runner keeps) beside an IIR
  // chain, so that both kinds of work memory are reused.
  Flow x = input("x", 2);
  ir::Graph g = make_graph("runner", {output("fir", x | firwin(2001, {2000})),
                                      output("iir", x | butter(4, 1_kHz, highpass) | gain(-3_dB))});
  for (DType dtype : {DType::f32, DType::f64}) {
    CAPTURE(name(dtype));
    // Scheduled for the longest signal below, so that the FIR runs by overlap-save.
    test::Compiled compiled = compile_graph(g, 2, dtype, 50000);
    bool fft = false;
    for (const ir::Node& n : compiled.scheduled.nodes())
      if (auto* c = std::get_if<ir::Chain>(&n.op)) fft |= c->fir_method == ir::FirMethod::fft_overlap_save;
    REQUIRE(fft);
    CpuRunner runner(compiled.scheduled, compiled.kernels);
    // Lengths that leave the FFT's work memory with another signal's last block, and none.
    for (std::size_t samples : {std::size_t{50000}, std::size_t{777}, std::size_t{0}, std::size_t{50000}}) {
      CAPTURE(samples);
      std::vector<Signal> in = noise_signals(1, 2, samples, dtype, samples + 1);
      auto want = execute_cpu(compiled.scheduled, *compiled.kernels, in);
      REQUIRE(want);
      auto got = runner.run(in);
      REQUIRE(got);
      CHECK(same_bits(*got, *want));
    }
    // A run refused for its inputs leaves the runner usable.
    auto refused = runner.run({});
    REQUIRE_FALSE(refused);
    CHECK(refused.error() == "the graph has 1 input(s), got 0 signal(s)");
    // Four threads at once, each its own signal, twice.
    std::vector<std::vector<Signal>> inputs, wants;
    for (std::uint64_t t = 0; t < 4; ++t) {
      inputs.push_back(noise_signals(1, 2, 30000 + 1000 * t, dtype, 100 + t));
      wants.push_back(*execute_cpu(compiled.scheduled, *compiled.kernels, inputs.back()));
    }
    std::vector<int> matches(4, 0);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int round = 0; round < 2; ++round) {
          auto got = runner.run(inputs[t]);
          matches[t] += got && same_bits(*got, wants[t]);
        }
      });
    for (std::thread& t : threads) t.join();
    CHECK(matches == std::vector<int>{2, 2, 2, 2});
  }
}

}  // namespace
}  // namespace fxc
