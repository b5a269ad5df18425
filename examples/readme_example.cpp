// SPDX-License-Identifier: Apache-2.0
// The README's example: a graph compiled by fxc and run on audio, through the public API.
#include <fxc/fxc.h>
#include <cstdio>

int main() try {
  using namespace fxc::literals;
  fxc::Flow x = fxc::input("x", 2);
  fxc::Frequency cutoff = fxc::param("cutoff", 80_Hz, fxc::Band{20_Hz, 500_Hz});
  fxc::Flow y = x | fxc::butter(4, cutoff, fxc::highpass) | fxc::peaking(3_kHz, 1.0, 4_dB) | fxc::tanh();
  fxc::Program program({fxc::output("y", y)}, {.sample_rate_hz = 48000});

  fxc::Signal in(2, 48000, fxc::DType::f32);       // 1 s of stereo: an impulse
  in.f32(0)[0] = in.f32(1)[0] = 1;
  fxc::Signal out = program.run(in);                // compiled kernels, whole signal
  program.set("cutoff", 200);                       // new coefficients, no recompile
  fxc::Processor live = program.processor();        // for an audio callback
  live.prepare(64);
  const float* block_in[] = {in.f32(0).data(), in.f32(1).data()};
  float l[64], r[64];
  float* block_out[] = {l, r};
  live.process(block_in, block_out, 64);            // noexcept, state carried across blocks
  std::printf("y[0] = %.6f at 80 Hz, %.6f at 200 Hz\n", out.f32(0)[0], l[0]);
} catch (const fxc::Error& e) {
  std::fprintf(stderr, "%s", e.what());             // file:line:col: error: ... with a caret
  return 1;
}
