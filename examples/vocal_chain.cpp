// SPDX-License-Identifier: Apache-2.0
// Builds a vocal chain with the C++ pipe DSL, prints its IR before and after filter design,
// and filters one second of generated stereo audio with the reference interpreter.
#include <cmath>
#include <iostream>

#include "frontend/dsl.h"
#include "ir/print.h"
#include "runtime/reference_interpreter.h"

int main() {
  using namespace fxc::literals;
  fxc::Flow x = fxc::input("x", 2);
  fxc::Chain rumble = fxc::butter(4, 80_Hz, fxc::highpass);
  fxc::Chain tone = fxc::peaking(3_kHz, 1.0, 4_dB) | fxc::highshelf(10_kHz, -2_dB);
  fxc::Flow wet = x | rumble | tone | fxc::tanh() | fxc::gain(-3_dB);
  fxc::ir::Graph graph =
      fxc::make_graph("vocal", {fxc::output("y", 0.7 * wet + 0.3 * (x | fxc::delay(5_ms)))});

  std::cout << "== IR as built ==\n" << fxc::ir::to_text(graph, {.locations = false});

  // One second of a 100 Hz + 5 kHz mix at 48 kHz, the right channel half as loud.
  const double fs = 48000;
  fxc::Signal in(2, 48000);
  for (std::size_t n = 0; n < in.samples(); ++n) {
    double t = n / fs;
    double v = 0.5 * std::sin(2 * M_PI * 100 * t) + 0.25 * std::sin(2 * M_PI * 5000 * t);
    in.f64(0)[n] = v;
    in.f64(1)[n] = 0.5 * v;
  }

  fxc::DiagnosticEngine diags;
  auto out = fxc::run_reference(graph, fs, {&in, 1}, diags);
  if (!out) {
    std::cerr << diags.str();
    return 1;
  }
  auto rms = [](const fxc::Signal& s, std::size_t c) {
    double sum = 0;
    for (double v : s.f64(c)) sum += v * v;
    return std::sqrt(sum / s.samples());
  };
  std::cout << "== filtered 1 s of stereo at 48 kHz with the reference interpreter ==\n";
  for (std::size_t c = 0; c < 2; ++c)
    std::cout << "channel " << c << ": rms in " << rms(in, c) << ", rms out " << rms((*out)[0], c)
              << '\n';
  return 0;
}
