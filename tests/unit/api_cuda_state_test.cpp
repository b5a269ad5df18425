// SPDX-License-Identifier: Apache-2.0
// A Processor's state saved and loaded on Target::cuda (Processor::save_state, load_state;
// runtime/cuda_stream_state.h): GPU to GPU bit for bit, and across targets, on the host
// emulation and, where there is one, on the GPU.
#include <fxc/fxc.h>

#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "../api/api_test_support.h"
#include "cuda_emulator.h"
#include "cuda_test_device.h"

namespace fxc {
namespace {

using test::noise;
using test::relative_error;
using test::same_bits;


// Frames [start, start + count) of `x` through `p` in calls of at most `call` frames, into
// the same frames of `out` (samples of the Program's type).
void process_range(Processor& p, const Signal& x, Signal& out, std::size_t start, std::size_t count, std::size_t call) {
  const bool f32 = x.dtype() == DType::f32;
  for (std::size_t at = start; at < start + count;) {
    const std::size_t n = std::min(call, start + count - at);
    std::vector<const void*> ins;
    std::vector<void*> outs;
    for (std::size_t c = 0; c < x.channels(); ++c) {
      if (f32) {
        ins.push_back(x.f32(c).data() + at);
        outs.push_back(out.f32(c).data() + at);
      } else {
        ins.push_back(x.f64(c).data() + at);
        outs.push_back(out.f64(c).data() + at);
      }
    }
    if (f32) p.process(reinterpret_cast<const float* const*>(ins.data()), reinterpret_cast<float* const*>(outs.data()), n);
    else p.process(reinterpret_cast<const double* const*>(ins.data()), reinterpret_cast<double* const*>(outs.data()), n);
    at += n;
  }
}

// The frames [start, end) of `s`.
Signal frames_of(const Signal& s, std::size_t start, std::size_t end) {
  Signal out(s.channels(), end - start, s.dtype());
  for (std::size_t c = 0; c < s.channels(); ++c)
    for (std::size_t i = start; i < end; ++i)
      if (s.dtype() == DType::f32) out.f32(c)[i - start] = s.f32(c)[i];
      else out.f64(c)[i - start] = s.f64(c)[i];
  return out;
}

std::string taps_list(std::size_t taps) {
  std::string list = "[";
  for (std::size_t k = 0; k < taps; ++k)
    list += (k ? ", " : "") + std::to_string(0.5 * std::exp(-0.01 * static_cast<double>(k)) * (k % 2 ? -0.3 : 1.0) /
                                              static_cast<double>(taps / 8 + 1));
  return list + "]";
}

constexpr const char* kVocal =
    "input x : 2\nclean = x | butter(4, 80 Hz, highpass)\n"
    "wet = clean | peaking(3 kHz, 1.0, 4 dB) | tanh() | gain(-3 dB)\n"
    "output 0.7 * wet + 0.3 * (x | delay(5 ms))\n";

constexpr const char* kSections =
    "input x : 2\nfc = 200 Hz in [20 Hz, 2 kHz]\n"
    "output y = x | butter(4, fc, highpass) | peaking(1 kHz, 1.0, 3 dB) | gain(-2 dB)\n";

struct Case {
  std::string name, text;
  DType dtype = DType::f32;
  /// Whether the CPU schedules the graph to the GPU's shape, so that a state crosses targets.
  bool crosses = true;
  /// Cost-model thresholds for both targets (the CPU ignores the GPU's).
  std::vector<std::pair<std::string, double>> thresholds{};
  /// What the GPU's schedule (its "ir-opt" dump) must hold for the case to test its shape.
  std::string shown{};
};

std::vector<Case> cases() {
  return {
      // The chunked scan on the GPU (sections, float64 state in a float32 signal), a live value.
      {"sections", kSections},
      // The vocal example: the scan with a tanh, an elementwise delay (its line in time order on
      // the GPU, a ring on the CPU), a sum.
      // In float32 the GPU runs its sections in two precisions, the hot ones first
      // (state_precision mixed), where the CPU keeps them in float64 in their order: two shapes.
      {"vocal", kVocal, DType::f32, false},
      {"vocal f64", kVocal, DType::f64},
      // One thread per channel: sections and a delay ring in one chain, a short direct FIR.
      {"ring", "input x : 2\noutput y = x | butter(2, 500 Hz) | delay(2 ms) | fir([0.25, 0.5, 0.25]) | gain(0.5)\n"},
      // A lone direct FIR (tiled on the GPU).
      {"fir tiled", "input x : 2\noutput y = x | fir(" + taps_list(40) + ")\n", DType::f64},
      // By FFT overlap-save on both targets (float64: from 176 taps on the CPU, 64 on the GPU).
      {"fir fft", "input x : 2\noutput y = x | fir(" + taps_list(300) + ")\n", DType::f64},
      // By FFT on the GPU (from 64 taps), directly on the CPU (below 176 in float64): the FIR
      // method is part of the shape, so the state stays on its target.
      {"fir fft, direct on the CPU", "input x : 2\noutput y = x | fir(" + taps_list(100) + ")\n", DType::f64, false},
      // Partitioned on the GPU (above 1024 taps in float64).
      {"fir partitioned", "input x : 1\noutput y = x | fir(" + taps_list(1500) + ")\n", DType::f64},
      // A lookahead limiter: its rings and their positions.
      {"limiter", "input x : 2\noutput y = x | gain(12 dB) | limiter(-1 dB, 50 ms, lookahead=1 ms)\n"},
      // Two chains of one thread per channel launched side by side (a compressor, a gate), and
      // a chain of two delays around sections.
      {"side by side", "input x : 2\nsquash = x | compressor(-20 dB, 4, 5 ms, 80 ms, knee=6 dB)\n"
                       "gated = x | gate(-30 dB, 1 ms, 50 ms)\noutput 0.5 * squash + 0.5 * gated\n"},
      {"two delays", "input x : 2\noutput y = x | delay(1 ms) | butter(2, 3 kHz) | delay(7 ms)\n", DType::f64},
      // A fused loop (its line in the chain) and an unfused one (a feedback node's line).
      {"fused loop", "input x : 2\ny = x + 0.5 * (y | delay(3 ms) | lowpass(3 kHz))\noutput y\n"},
      // 40 channels: interleaved on the GPU, the chunked scan and an elementwise delay.
      {"interleaved", "input x : 40\noutput y = 0.5 * (x | butter(2, 300 Hz) | gain(0.5)) + 0.5 * (x | delay(1 ms))\n",
       DType::f64},
      {"unfused loop", "input x : 2\ny = x + 0.5 * (y | delay(3 ms) | fir([0.5, 0.5]))\noutput y\n"},
      // The chunk passes as a wavefront (every step of a sample in flight at once).
      {"sections, a wavefront", kSections, DType::f32, true, {{"gpu_wavefront_max_steps", 1 << 20}},
       "strategy=gpu_chunked_wavefront"},
      {"vocal f64, a wavefront", kVocal, DType::f64, true, {{"gpu_wavefront_max_steps", 1 << 20}},
       "strategy=gpu_chunked_wavefront"},
      // Float64 arithmetic in float pairs (a device with slow float64): every stage
      // (state_precision pairs, a lone float64 chain), or the hot first stage of a mixed chain
      // (mixed_pairs, the vocal chain in float32: two shapes, as without pairs).
      {"sections in pairs", kSections, DType::f32, true, {{"gpu_float_pairs_max_f64_rate", 1}},
       "state_precision=pairs"},
      {"vocal in pairs", kVocal, DType::f32, false, {{"gpu_float_pairs_max_f64_rate", 1}},
       "state_precision=mixed_pairs"},
  };
}

// Each case streamed to `split` frames, saved, loaded into a fresh Processor (GPU or CPU) and
// streamed on, against one unbroken stream with the same calls.
void check_state_files() {
  const std::size_t frames = 3000, call = 512;
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    Options options_gpu = test::options(c.dtype, Target::cuda);
    Options options_cpu = test::options(c.dtype, Target::cpu);
    options_gpu.thresholds = options_cpu.thresholds = c.thresholds;
    const Program gpu = Program::from_source(c.text, options_gpu);
    const Program cpu = Program::from_source(c.text, options_cpu);
    CHECK(gpu.dump("ir-opt").find(c.shown) != std::string::npos);
    const std::size_t channels = c.text.find("x : 40") != std::string::npos ? 40
                                 : c.text.find("x : 1") != std::string::npos ? 1
                                                                              : 2;
    const Signal x = noise(channels, frames, c.dtype, 11);
    // 100: before a delay line wraps (the CPU's line is shorter than its delay); 1300: after;
    // 2600: after the 1500-tap FIR's ring is full.
    for (std::size_t split : {std::size_t{100}, std::size_t{1300}, std::size_t{2600}}) {
      CAPTURE(split);
      auto unbroken = [&](const Program& program) {
        Processor p(program);
        p.prepare(call);
        Signal out(channels, frames, c.dtype);
        process_range(p, x, out, 0, split, call);
        process_range(p, x, out, split, frames - split, call);
        return out;
      };
      auto saved_after_split = [&](const Program& program, Signal& out) {
        Processor p(program);
        p.prepare(call);
        process_range(p, x, out, 0, split, call);
        return p.save_state();
      };
      auto go_on = [&](const Program& program, const std::string& state, Signal& out) {
        Processor p(program);
        p.prepare(call);
        p.load_state(state);
        process_range(p, x, out, split, frames - split, call);
      };
      const Signal want_gpu = unbroken(gpu), want_cpu = unbroken(cpu);
      Signal got(channels, frames, c.dtype);
      const std::string from_gpu = saved_after_split(gpu, got);
      go_on(gpu, from_gpu, got);
      CHECK(same_bits(got, want_gpu));
      // Without the state the rest differs: the check above can fail.
      Processor fresh(gpu);
      fresh.prepare(call);
      Signal cold(channels, frames, c.dtype);
      process_range(fresh, x, cold, split, frames - split, call);
      CHECK(relative_error(frames_of(cold, split, frames), frames_of(want_gpu, split, frames)) > 1e-6);
      // A GPU's state is a CPU stream's bytes: `fxc run --save-state` files load on either.
      const double tolerance = c.dtype == DType::f32 ? 2e-6 : 1e-12;
      Signal cpu_after_gpu = want_cpu, gpu_after_cpu = want_gpu;
      Signal cpu_part(channels, frames, c.dtype);
      const std::string from_cpu = saved_after_split(cpu, cpu_part);
      if (c.crosses) {
        go_on(cpu, from_gpu, cpu_after_gpu);
        go_on(gpu, from_cpu, gpu_after_cpu);
        CHECK(relative_error(frames_of(cpu_after_gpu, split, frames), frames_of(want_cpu, split, frames)) <= tolerance);
        CHECK(relative_error(frames_of(gpu_after_cpu, split, frames), frames_of(want_gpu, split, frames)) <= tolerance);
      } else {
        Processor p(cpu);
        p.prepare(call);
        CHECK_THROWS_WITH_AS(p.load_state(from_gpu), doctest::Contains("another shape"), Error);
      }
    }
  }

  // Bad bytes are refused, and the stream goes on from the state it had.
  const Program gpu = Program::from_source(cases()[0].text, test::options(DType::f32, Target::cuda));
  const Program vocal = Program::from_source(kVocal, test::options(DType::f32, Target::cuda));
  const Signal x = noise(2, frames, DType::f32, 5);
  Processor p(gpu), q(gpu), other(vocal);
  p.prepare(call);
  q.prepare(call);
  other.prepare(call);
  Signal a(2, frames, DType::f32), b(2, frames, DType::f32);
  process_range(p, x, a, 0, 1000, call);
  process_range(q, x, b, 0, 1000, call);
  std::string state = p.save_state();
  CHECK_THROWS_WITH_AS(p.load_state("not a state"), doctest::Contains("not an fxc stream state"), Error);
  std::string damaged = state;
  damaged.back() = static_cast<char>(damaged.back() ^ 1);
  CHECK_THROWS_WITH_AS(p.load_state(damaged), doctest::Contains("damaged"), Error);
  CHECK_THROWS_WITH_AS(p.load_state(state.substr(0, state.size() - 9)), doctest::Contains("damaged"), Error);
  CHECK_THROWS_WITH_AS(other.load_state(state), doctest::Contains("another shape"), Error);
  process_range(p, x, a, 1000, frames - 1000, call);
  process_range(q, x, b, 1000, frames - 1000, call);
  CHECK(same_bits(a, b));
  // A value set() staged is taken first: the state is the one the next block starts from, so
  // a delay's new length is in it (saved with the old one, it would be refused below).
  const char* ranged = "input x : 2\nd = 5 ms in [1 ms, 20 ms]\noutput y = x | delay(d) | butter(2, 2 kHz)\n";
  const Program delays = Program::from_source(ranged, test::options(DType::f32, Target::cuda));
  Processor r(delays);
  r.prepare(call);
  Signal d1(2, frames, DType::f32), d2(2, frames, DType::f32);
  process_range(r, x, d1, 0, 1000, call);
  r.set("d", 0.012);
  state = r.save_state();
  // Into a Processor that has run a block at the new length (saved at the old one, the state
  // would not fit it), and into one where the value is staged (checked against the old one,
  // it would not fit either).
  Processor s(delays), u(delays);
  s.prepare(call);
  s.set("d", 0.012);
  Signal silence(2, call, DType::f32), ignored(2, call, DType::f32);
  process_range(s, silence, ignored, 0, call, call);
  u.prepare(call);
  u.set("d", 0.012);
  s.load_state(state);
  u.load_state(state);
  Signal d3(2, frames, DType::f32);
  process_range(r, x, d1, 1000, frames - 1000, call);
  process_range(s, x, d2, 1000, frames - 1000, call);
  process_range(u, x, d3, 1000, frames - 1000, call);
  CHECK(same_bits(frames_of(d1, 1000, frames), frames_of(d2, 1000, frames)));
  CHECK(same_bits(frames_of(d1, 1000, frames), frames_of(d3, 1000, frames)));
  // Before prepare(): an error, not a crash.
  Processor unprepared(gpu);
  CHECK_THROWS_WITH_AS((void)unprepared.save_state(), doctest::Contains("prepare()"), Error);
  CHECK_THROWS_WITH_AS(unprepared.load_state(state), doctest::Contains("prepare()"), Error);
}


}  // namespace

TEST_CASE("CUDA emulation: a Processor's state saved and loaded on Target::cuda, and across targets") {
  test::UseCudaDevice emulated(std::make_shared<test::EmulatedDevice>());
  check_state_files();
}

TEST_CASE("CUDA device: a Processor's state saved and loaded on Target::cuda, and across targets") {
  if (!test::real_cuda_device()) return;
  check_state_files();
}

}  // namespace fxc
