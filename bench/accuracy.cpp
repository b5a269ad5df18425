// SPDX-License-Identifier: Apache-2.0
// fxc_accuracy: the float32 error of every CPU strategy against the float64 reference
// interpreter, on the standard workloads and on hard cases, with the chain's state in float32
// and in float64 (docs/errors.md, "Numerical accuracy", prints this table).
//
//   build/bench/fxc_accuracy [--seconds S]     the table
//   build/bench/fxc_accuracy --long               ten minutes through a high-Q low filter
//
// Input: white noise in [-1, 1] (bench::noise, seed 1234), the same float32 samples for the
// kernel and the reference. Error: RMS(out - ref) / RMS(ref) over every channel and sample,
// also as an SNR in dB, and the largest |out - ref|. The time column is the median of three
// runs of the kernel, float64 state over float32 state, measured in the same run.
//
// --long: 10 minutes at 48 kHz (5 of noise, then 5 of silence, where the state decays
// through the denormal range) run as a stream of one-second blocks through a 40 Hz, Q 30
// peak and a 20 Hz highpass, with float32 and float64 state; reports the error against the
// reference over the whole run and the median block time in the noise and in the silence.
// For contrast, a plain C++ float32 biquad loop without flush-to-zero on the same input.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "design/filter_design.h"
#include "frontend/fx_file.h"
#include "runtime/cpu_executor.h"
#include "runtime/reference_interpreter.h"

namespace {

using namespace fxc;

struct Case {
  const char* name;
  const char* chain;  // after `input x`: `output x | ...`
  double fs;
};

// W1 to W5 of design/performance.md, then filters whose poles sit near the unit circle.
const Case kCases[] = {
    {"W1 api", "cheby1(4, 0.1 dB, 20 Hz, highpass) | cheby1(4, 0.1 dB, 60 Hz, highpass) | "
               "cheby1(4, 0.1 dB, 65 Hz, highpass) | butter(5, 5000 Hz) | butter(5, 4900 Hz) | "
               "butter(5, 4850 Hz)", 44100},
    {"W2 iir", "butter(2, 1000 Hz, highpass) | butter(2, 5000 Hz) | "
               "cheby1(2, 0.1 dB, 1500 Hz, highpass) | cheby1(2, 0.1 dB, 1800 Hz)", 44100},
    {"W3 fir", "firwin(101, 1000 Hz) | firwin(102, 5000 Hz) | firwin(103, 1500 Hz) | firwin(104, 1800 Hz) | "
               "firwin(105, 1850 Hz)", 44100},
    {"W4/W5 profile", "butter(4, 80 Hz, highpass) | butter(8, 12 kHz)", 48000},
    {"highpass 20 Hz at 96 kHz", "butter(4, 20 Hz, highpass)", 96000},
    {"lowpass 20 Hz at 96 kHz", "butter(4, 20 Hz)", 96000},
    {"peaking 40 Hz Q 30 at 96 kHz", "peaking(40 Hz, 30, 12 dB)", 96000},
    {"ellip(12) lowpass 1 kHz", "ellip(12, 0.1 dB, 80 dB, 1 kHz)", 48000},
    {"ellip(12) lowpass 100 Hz", "ellip(12, 0.1 dB, 80 dB, 100 Hz)", 48000},
    {"butter(2) highpass 300 Hz", "butter(2, 300 Hz, highpass)", 48000},
    {"butter(2) highpass 100 Hz", "butter(2, 100 Hz, highpass)", 48000},
};

struct Strategy {
  const char* name;
  int channels;
  std::vector<std::pair<const char*, const char*>> thresholds;
};

const Strategy kStrategies[] = {
    {"channel_lanes", 8, {{"lane_fill", "0"}}},
    {"section_wavefront", 1, {{"lane_fill", "2"}, {"chunked_min_samples", "4e18"}}},
    {"chunked_scan", 1, {{"chunked_min_samples", "0"}, {"chunk_decay_ratio", "0"}, {"chunk_length", "32768"}}},
    {"direct FIR", 1, {{"fir_fft_min_taps", "1e9"}, {"fir_fft_min_taps_f64", "1e9"}, {"lane_fill", "2"}, {"chunked_min_samples", "4e18"}}},
};

// The largest pole radius of the graph's sections: what decides the state's precision.
double pole_radius(const ir::Graph& scheduled) {
  double r = 0;
  for (const ir::Node& node : scheduled.nodes())
    if (const auto* chain = std::get_if<ir::Chain>(&node.op))
      for (const ir::Stage& stage : chain->stages)
        if (const auto* sos = std::get_if<ir::SosCascade>(&stage))
          r = std::max(r, design::max_pole_radius(sos->sections));
  return r;
}

struct Error {
  double relative_rms = 0, max_abs = 0;
};

Error error_of(const std::vector<Signal>& got, const std::vector<Signal>& want) {
  double err2 = 0, ref2 = 0, worst = 0;
  for (std::size_t k = 0; k < want.size(); ++k)
    for (std::size_t c = 0; c < want[k].channels(); ++c)
      for (std::size_t n = 0; n < want[k].samples(); ++n) {
        double e = got[k].at(c, n) - want[k].at(c, n);
        err2 += e * e;
        ref2 += want[k].at(c, n) * want[k].at(c, n);
        worst = std::max(worst, std::abs(e));
      }
  return {ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2), worst};
}

struct Run {
  std::string plan;
  double pole_radius = 0;
  Error error;
  double seconds = 0;
};

std::optional<Run> run(const ir::Graph& graph, const Case& c, const Strategy& s, bool f64_state,
                       std::size_t samples, const std::vector<Signal>& input,
                       const std::vector<Signal>& reference) {
  DiagnosticEngine diags;
  CpuCompileRequest request;
  request.sample_rate_hz = c.fs;
  request.dtype = DType::f32;
  request.channels = s.channels;
  request.length_samples = static_cast<std::int64_t>(samples);
  for (auto [name, value] : s.thresholds) request.thresholds.set(name, value);
  request.thresholds.set("f64_state_pole_radius", f64_state ? "0" : "2");
  auto compiled = compile_for_cpu(graph, request, diags);
  if (!compiled) {
    std::fprintf(stderr, "%s: %s\n", c.name, diags.str().c_str());
    return std::nullopt;
  }
  std::vector<double> times;
  std::vector<Signal> out;
  for (int i = 0; i < 3; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto result = execute_cpu(compiled->scheduled, *compiled->kernels, input);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!result) {
      std::fprintf(stderr, "%s: %s\n", c.name, result.error().c_str());
      return std::nullopt;
    }
    out = std::move(*result);
  }
  std::sort(times.begin(), times.end());
  return Run{bench::plan_label(compiled->scheduled), pole_radius(compiled->scheduled),
             error_of(out, reference), times[1]};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The same transposed direct form II as the kernels, in plain float32 C++, run in the
// caller's floating-point mode (no flush-to-zero): the denormal hazard fxc avoids.
struct PlainBiquad {
  float b0, b1, b2, a1, a2, z0 = 0, z1 = 0;
  float step(float x) {
    float y = b0 * x + z0;
    z0 = b1 * x - a1 * y + z1;
    z1 = b2 * x - a2 * y;
    return y;
  }
};

int run_long() {
  const double fs = 48000;
  const std::size_t block = 48000, blocks = 600, half = blocks / 2;
  const char* text = "graph long\ninput x\noutput x | peaking(40 Hz, 30, 12 dB) | butter(2, 20 Hz, highpass)\n";
  DiagnosticEngine diags;
  auto graph = frontend::compile_fx_source(text, "long", diags);
  if (!graph) return std::fprintf(stderr, "%s", diags.str().c_str()), 1;
  Signal whole(1, block * blocks, DType::f32);  // zeros after the first half
  {
    std::vector<Signal> n = bench::noise(1, block * half, DType::f32);
    std::copy(n[0].f32(0).begin(), n[0].f32(0).end(), whole.f32(0).begin());
  }
  std::vector<Signal> input;
  input.push_back(whole);
  auto reference = run_reference(*graph, fs, input, diags);
  if (!reference) return std::fprintf(stderr, "%s", diags.str().c_str()), 1;

  std::printf("10 minutes at 48 kHz (5 noise, 5 silence), peaking(40 Hz, 30, 12 dB) | "
              "butter(2, 20 Hz, highpass), float32 signal, 1 s blocks\n\n"
              "| state | rel. RMS error | max abs error | max abs error, last minute | "
              "median block, noise | median block, silence | silence/noise |\n"
              "|---|---|---|---|---|---|---|\n");
  for (bool f64_state : {false, true}) {
    CpuCompileRequest request;
    request.sample_rate_hz = fs;
    request.dtype = DType::f32;
    request.channels = 1;
    request.length_samples = static_cast<std::int64_t>(block);
    request.thresholds.set("f64_state_pole_radius", f64_state ? "0" : "2");
    auto compiled = compile_for_cpu(*graph, request, diags);
    if (!compiled) return std::fprintf(stderr, "%s", diags.str().c_str()), 1;
    CpuStream stream(compiled->scheduled, compiled->kernels);
    Signal out(1, block * blocks, DType::f32);
    std::vector<double> noise_times, silence_times;
    Signal piece(1, block, DType::f32);
    for (std::size_t b = 0; b < blocks; ++b) {
      std::copy_n(whole.f32(0).begin() + b * block, block, piece.f32(0).begin());
      auto start = std::chrono::steady_clock::now();
      auto result = stream.process(std::span<const Signal>(&piece, 1));
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!result) return std::fprintf(stderr, "%s\n", result.error().c_str()), 1;
      (b < half ? noise_times : silence_times).push_back(t);
      std::copy_n((*result)[0].f32(0).begin(), block, out.f32(0).begin() + b * block);
    }
    std::vector<Signal> got;
    got.push_back(std::move(out));
    Error e = error_of(got, *reference);
    double tail = 0;
    for (std::size_t n = block * (blocks - 60); n < block * blocks; ++n)
      tail = std::max(tail, std::abs(got[0].at(0, n) - (*reference)[0].at(0, n)));
    double tn = median(noise_times), ts = median(silence_times);
    std::printf("| %s | %.2e | %.2e | %.2e | %.3f ms | %.3f ms | %.2f |\n", f64_state ? "float64" : "float32",
                e.relative_rms, e.max_abs, tail, tn * 1e3, ts * 1e3, ts / tn);
  }

  // The contrast: a float32 biquad without flush-to-zero on the same input.
  PlainBiquad q{0.0001f, 0.0002f, 0.0001f, -1.99f, 0.9901f};  // a 40 Hz-ish resonance
  std::vector<double> noise_times, silence_times;
  volatile float sink = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    const float* x = whole.f32(0).data() + b * block;
    auto start = std::chrono::steady_clock::now();
    float acc = 0;
    for (std::size_t i = 0; i < block; ++i) acc += q.step(x[i]);
    sink = acc;
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    (b < half ? noise_times : silence_times).push_back(t);
  }
  (void)sink;
  double tn = median(noise_times), ts = median(silence_times);
  std::printf("\nContrast, a plain float32 biquad loop without flush-to-zero: median block %.3f ms "
              "in the noise, %.3f ms in the silence (%.1fx)\n", tn * 1e3, ts * 1e3, ts / tn);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 10;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--long")) return run_long();
    else {
      std::fprintf(stderr, "usage: fxc_accuracy [--seconds S] [--long]\n");
      return 2;
    }
  }
  double threshold = passes::StrategyThresholds{}.f64_state_pole_radius;
  std::printf("| case | pole radius | strategy | f32 state: rel. RMS error | SNR | max abs error | "
              "f64 state: rel. RMS error | SNR | max abs error | time f64/f32 | fxc picks |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Case& c : kCases) {
    DiagnosticEngine diags;
    std::string text = std::string("graph accuracy\ninput x\noutput x | ") + c.chain + "\n";
    auto graph = frontend::compile_fx_source(text, c.name, diags);
    if (!graph) {
      std::fprintf(stderr, "%s", diags.str().c_str());
      return 1;
    }
    auto samples = static_cast<std::size_t>(seconds * c.fs);
    std::vector<std::string> printed;
    for (const Strategy& s : kStrategies) {
      std::vector<Signal> input = bench::noise(s.channels, samples, DType::f32);
      auto reference = run_reference(*graph, c.fs, input, diags);
      if (!reference) {
        std::fprintf(stderr, "%s", diags.str().c_str());
        return 1;
      }
      auto narrow = run(*graph, c, s, false, samples, input, *reference);
      auto wide = run(*graph, c, s, true, samples, input, *reference);
      if (!narrow || !wide) return 1;
      if (std::find(printed.begin(), printed.end(), narrow->plan) != printed.end()) continue;
      printed.push_back(narrow->plan);
      auto db = [](double e) { return e > 0 ? -20 * std::log10(e) : INFINITY; };
      bool picks_f64 = narrow->pole_radius > 0 && narrow->pole_radius >= threshold;
      std::printf("| %s | %.6f | %s | %.2e | %.0f dB | %.2e | %.2e | %.0f dB | %.2e | %.2f | %s |\n",
                  c.name, narrow->pole_radius, narrow->plan.c_str(), narrow->error.relative_rms, db(narrow->error.relative_rms),
                  narrow->error.max_abs, wide->error.relative_rms, db(wide->error.relative_rms),
                  wide->error.max_abs, wide->seconds / narrow->seconds, picks_f64 ? "f64" : "f32");
      std::fflush(stdout);
    }
  }
  return 0;
}
