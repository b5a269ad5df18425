// SPDX-License-Identifier: Apache-2.0
// Fuzz target, differential: the compiled CPU kernels (LLVM, the whole pass pipeline) against
// the reference interpreter on random stable graphs. The bytes are the choices of a graph
// generator (as tests/unit/random_graphs.cpp, but read from the input so that the fuzzer can
// mutate structure): 1 or 2 inputs of 1 to 3 channels, up to 10 steps of IIR designs from
// 20 Hz to 23.9 kHz (near Nyquist included), cookbook biquads, raw sections with pole radius
// up to 0.999, first-order transfer functions, FIRs of up to 96 taps (FFT convolution from
// 64 in float32), windowed FIRs, gains, delays, tanh, clips and mixes. Each graph runs
// float64 and float32 on 512 samples of noise.
//
// Checks: no crash or sanitizer report, and relative RMS error per output (floor 1e-3 of
// full scale, as tests/unit/cpu_backend_test.cpp) at most 1e-9 in float64 (the same
// recurrences; FMA contraction and gain folding round differently) and 3e-4 in float32 (the
// CPU backend's documented bound: float32 rounding amplified by poles below radius 0.99,
// float64 state above). A graph the pipeline refuses (a band edge past Nyquist) is skipped.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/cpu/cpu_compiler.h"
#include "frontend/dsl.h"
#include "fuzz/fuzz_support.h"
#include "ir/print.h"
#include "passes/pipeline.h"
#include "runtime/cpu_executor.h"
#include "runtime/reference_interpreter.h"

namespace {

using namespace fxc;

constexpr double kSampleRateHz = 48000;
constexpr std::size_t kSamples = 512;

// The input's bytes as a stream of choices; zeros once it runs out.
class Choices {
 public:
  Choices(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  int pick(int lo, int hi) {  // in [lo, hi]
    unsigned span = static_cast<unsigned>(hi - lo) + 1;
    return lo + static_cast<int>(word() % span);
  }
  double real(double lo, double hi) { return lo + (hi - lo) * (word() / 65535.0); }

 private:
  unsigned word() {
    unsigned v = 0;
    for (int i = 0; i < 2; ++i) v = v << 8 | (at_ < size_ ? data_[at_++] : 0u);
    return v;
  }
  const std::uint8_t* data_;
  std::size_t size_, at_ = 0;
};

class Generator {
 public:
  explicit Generator(Choices& c) : c_(c) {}

  ir::Graph make() {
    const int channels = c_.pick(1, 3);
    std::vector<Flow> pool;
    for (int i = 0, n = c_.pick(1, 2); i < n; ++i) pool.push_back(input("in" + std::to_string(i), channels));
    for (int s = 0, steps = c_.pick(1, 10); s < steps; ++s) {
      const Flow& from = pool[static_cast<std::size_t>(c_.pick(0, static_cast<int>(pool.size()) - 1))];
      if (c_.pick(0, 5) == 0) {
        const Flow& other = pool[static_cast<std::size_t>(c_.pick(0, static_cast<int>(pool.size()) - 1))];
        pool.push_back(c_.real(-2, 2) * from + c_.real(-1, 1) * other);
      } else {
        Chain chain = stage();
        for (int extra = c_.pick(0, 2); extra > 0; --extra) chain = chain | stage();
        pool.push_back(from | chain);
      }
    }
    std::vector<Output> outputs{output("y0", pool.back())};
    if (c_.pick(0, 1)) outputs.push_back(output("y1", pool[static_cast<std::size_t>(c_.pick(0, static_cast<int>(pool.size()) - 1))]));
    return make_graph("fuzz", outputs);
  }

 private:
  Frequency freq() { return {20 * std::pow(1195.0, c_.real(0, 1))}; }  // 20 Hz to 23.9 kHz

  Chain iir() {
    auto band = static_cast<design::BandType>(c_.pick(0, 3));
    bool two = design::is_band(band);
    int order = c_.pick(1, two ? 4 : 8);
    Frequency lo = freq(), hi = freq();
    if (lo.hz > hi.hz) std::swap(lo, hi);
    Band edges{lo, hi};
    Level rp{c_.real(0.1, 3)}, rs{c_.real(20, 80)};
    switch (c_.pick(0, 4)) {
      case 0: return two ? butter(order, edges, band) : butter(order, lo, band);
      case 1: return two ? cheby1(order, rp, edges, band) : cheby1(order, rp, lo, band);
      case 2: return two ? cheby2(order, rs, edges, band) : cheby2(order, rs, lo, band);
      case 3: return two ? ellip(order, rp, rs, edges, band) : ellip(order, rp, rs, lo, band);
      default:
        return bessel(order, lo, two ? design::BandType::lowpass : band,
                      static_cast<design::BesselNorm>(c_.pick(0, 2)));
    }
  }

  Chain stage() {
    switch (c_.pick(0, 13)) {
      case 0:
      case 1:
      case 2: return iir();
      case 3: return peaking(freq(), c_.real(0.3, 10), Level{c_.real(-18, 18)});
      case 4: return c_.pick(0, 1) ? lowshelf(freq(), Level{c_.real(-12, 12)}, c_.real(0.4, 2))
                                   : highshelf(freq(), Level{c_.real(-12, 12)}, c_.real(0.4, 2));
      case 5: return c_.pick(0, 1) ? notch(freq(), c_.real(0.5, 20)) : allpass(freq(), c_.real(0.5, 5));
      case 6: {
        double r = c_.real(0, 0.999), theta = c_.real(0, 3.14159);  // a stable pole pair
        return sos({{c_.real(-1, 1), c_.real(-1, 1), c_.real(-1, 1), 1, -2 * r * std::cos(theta), r * r}});
      }
      case 7: return tf({c_.real(-1, 1), c_.real(-1, 1)}, {1, c_.real(-0.99, 0.99)});
      case 8: {
        std::vector<double> taps(static_cast<std::size_t>(c_.pick(1, 96)));
        for (double& t : taps) t = c_.real(-1, 1) / static_cast<double>(taps.size());
        return fir(taps);
      }
      case 9: return firwin(2 * c_.pick(1, 40) + 1, {freq().hz}, static_cast<design::Window>(c_.pick(0, 3)));
      case 10: return gain(c_.real(-2, 2));
      case 11: return delay(Samples{static_cast<double>(c_.pick(0, 40))});
      case 12: return tanh();
      default: return clip(-c_.real(0.1, 1), c_.real(0.1, 1));
    }
  }

  Choices& c_;
};

// rms(got - want) / max(rms(want), 1e-3), worst over outputs and channels; NaN if any is.
double worst_error(const std::vector<Signal>& got, const std::vector<Signal>& want) {
  double worst = 0;
  for (std::size_t o = 0; o < want.size(); ++o)
    for (std::size_t c = 0; c < want[o].channels(); ++c) {
      double err = 0, ref = 0;
      for (std::size_t n = 0; n < want[o].samples(); ++n) {
        double d = got[o].at(c, n) - want[o].at(c, n);
        err += d * d;
        ref += want[o].at(c, n) * want[o].at(c, n);
      }
      double e = std::sqrt(err / kSamples) / std::max(std::sqrt(ref / kSamples), 1e-3);
      if (std::isnan(e)) return e;
      worst = std::max(worst, e);
    }
  return worst;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Choices choices(data, size);
  const ir::Graph graph = Generator(choices).make();

  DiagnosticEngine diags;
  passes::PassContext oracle{diags, {kSampleRateHz, 0, DType::f64}};
  auto designed = passes::run_pipeline(graph, oracle, {.passes = {"infer-types", "design-filters"}});
  if (!designed) return 0;  // a design the pipeline refuses: not this target's concern

  std::vector<Signal> inputs;
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  for (ir::NodeId id : designed->inputs()) {
    Signal s(static_cast<std::size_t>(designed->node(id).type.channels), kSamples);
    for (std::size_t c = 0; c < s.channels(); ++c)
      for (double& v : s.f64(c)) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        v = static_cast<double>(state >> 11) / 4503599627370496.0 - 1.0;  // [-1, 1)
      }
    inputs.push_back(std::move(s));
  }
  for (DType dtype : {DType::f64, DType::f32}) {
    std::vector<Signal> rounded;
    for (const Signal& s : inputs) rounded.push_back(s.converted(dtype).converted(DType::f64));
    auto want = interpret(*designed, rounded);
    if (!want) fuzz::property_failed("the interpreter refuses a designed graph", ir::to_text(*designed), want.error());
    bool finite = true;
    for (const Signal& s : *want)
      for (std::size_t c = 0; c < s.channels(); ++c)
        for (std::size_t n = 0; n < s.samples(); ++n) finite = finite && std::isfinite(s.at(c, n));
    if (!finite) return 0;  // only stable graphs are generated, but a design may still overflow

    passes::PassContext context{diags, {kSampleRateHz, 0, dtype}};
    context.binding.length_samples = static_cast<std::int64_t>(kSamples);
    auto scheduled = passes::run_pipeline(graph, context);
    if (!scheduled) fuzz::property_failed("the pipeline refuses for the CPU what it designed", ir::to_text(graph), diags.str());
    auto kernels = codegen::compile_cpu_kernels(*scheduled);
    if (!kernels) fuzz::property_failed("the CPU backend cannot compile a scheduled graph", ir::to_text(*scheduled), kernels.error());
    auto got = execute_cpu(*scheduled, **kernels, rounded);
    if (!got) fuzz::property_failed("a compiled graph does not run", ir::to_text(*scheduled), got.error());
    const double bound = dtype == DType::f64 ? 1e-9 : 3e-4;
    const double error = worst_error(*got, *want);
    if (!(error <= bound)) {
      std::ostringstream what;
      what << name(dtype) << ": compiled kernels differ from the interpreter by " << error << " (bound " << bound << ")";
      fuzz::property_failed(what.str().c_str(), ir::to_text(*scheduled));
    }
  }
  return 0;
}
