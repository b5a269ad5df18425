// SPDX-License-Identifier: Apache-2.0
// CpuRunner: whole-signal runs that keep their plan, values and FFT work memory between runs
// give what a fresh execute_cpu gives, bit for bit, whatever ran before and from several
// threads at once.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <thread>

#include "driver/kernel_cache.h"
#include "frontend/dsl.h"
#include "passes/pipeline.h"
#include "runtime/cpu_executor.h"

namespace fxc {
namespace {

using namespace fxc::literals;

struct Compiled {
  ir::Graph scheduled;
  std::shared_ptr<const codegen::CpuKernels> kernels;
};

Compiled compile(const ir::Graph& g, DType dtype) {
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, 2, dtype}};
  auto scheduled = passes::run_pipeline(g, context);
  REQUIRE_MESSAGE(scheduled, diags.str());
  KernelCache cache("");
  auto kernels = cache.cpu_kernels(*scheduled, diags);
  REQUIRE(kernels);
  return {std::move(*scheduled), *kernels};
}

Signal noise(std::size_t samples, DType dtype, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Signal s(2, samples);
  for (int c = 0; c < 2; ++c)
    for (double& v : s.f64(c)) v = u(rng);
  return s.converted(dtype);
}

bool same_bits(const std::vector<Signal>& a, const std::vector<Signal>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k].channels() != b[k].channels() || a[k].samples() != b[k].samples()) return false;
    const std::size_t bytes = a[k].samples() * size_of(a[k].dtype());
    for (std::size_t c = 0; c < a[k].channels(); ++c) {
      const void* x = a[k].dtype() == DType::f32 ? static_cast<const void*>(a[k].f32(c).data()) : a[k].f64(c).data();
      const void* y = b[k].dtype() == DType::f32 ? static_cast<const void*>(b[k].f32(c).data()) : b[k].f64(c).data();
      if (bytes && std::memcmp(x, y, bytes) != 0) return false;
    }
  }
  return true;
}

TEST_CASE("CpuRunner: repeated and concurrent runs equal a fresh execute_cpu, bit for bit") {
  // A FIR long enough for FFT overlap-save (its plans are what the runner keeps) beside an IIR
  // chain, so that both kinds of work memory are reused.
  Flow x = input("x", 2);
  ir::Graph g = make_graph("runner", {output("fir", x | firwin(2001, {2000})),
                                      output("iir", x | butter(4, 1_kHz, highpass) | gain(-3_dB))});
  for (DType dtype : {DType::f32, DType::f64}) {
    CAPTURE(name(dtype));
    Compiled compiled = compile(g, dtype);
    bool fft = false;
    for (const ir::Node& n : compiled.scheduled.nodes())
      if (auto* c = std::get_if<ir::Chain>(&n.op)) fft |= c->fir_method == ir::FirMethod::fft_overlap_save;
    REQUIRE(fft);
    CpuRunner runner(compiled.scheduled, compiled.kernels);
    // Lengths that leave the FFT's work memory with another signal's last block, and none.
    for (std::size_t samples : {std::size_t{50000}, std::size_t{777}, std::size_t{0}, std::size_t{50000}}) {
      CAPTURE(samples);
      std::vector<Signal> in{noise(samples, dtype, samples + 1)};
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
      inputs.push_back({noise(30000 + 1000 * t, dtype, 100 + t)});
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
