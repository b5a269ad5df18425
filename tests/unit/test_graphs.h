// SPDX-License-Identifier: Apache-2.0
// Graphs shared by the unit tests, built with the C++ DSL.
#pragma once

#include <random>
#include <vector>

#include "frontend/dsl.h"
#include "ir/graph.h"

namespace fxc::test {

/// `n` FIR taps drawn uniformly from [-1, 1] / n: a random filter of unit order of gain.
inline std::vector<double> random_taps(std::mt19937_64& rng, int n) {
  std::uniform_real_distribution<double> tap(-1, 1);
  std::vector<double> h(static_cast<std::size_t>(n));
  for (double& v : h) v = tap(rng) / n;
  return h;
}

/// The vocal chain of the .fx contract's example.
inline ir::Graph vocal_graph() {
  using namespace fxc::literals;
  Flow x = input("x", 2);
  Flow clean = x | butter(4, 80_Hz, highpass);
  Flow tone = clean | peaking(3_kHz, 1.0, 4_dB) | highshelf(10_kHz, -2_dB);
  Flow wet = tone | tanh() | gain(-3_dB);
  return make_graph("vocal", {output("", 0.7 * wet + 0.3 * (x | delay(5_ms)))});
}

/// W1's chain (design/performance.md): three cheby1(4, 0.1 dB) highpasses at 20-65 Hz (6
/// sections with poles past r = 0.99) and three butter(5) lowpasses near 5 kHz (9 sections
/// well inside); one input of undeclared channels.
inline ir::Graph w1_graph() {
  using namespace fxc::literals;
  Flow x = input("x");
  return make_graph("w1", {output("y", x | cheby1(4, 0.1_dB, 20_Hz, highpass) | cheby1(4, 0.1_dB, 60_Hz, highpass) |
                                           cheby1(4, 0.1_dB, 65_Hz, highpass) | butter(5, 5000_Hz) |
                                           butter(5, 4900_Hz) | butter(5, 4850_Hz))});
}

/// One node of every kind (specifications and concrete stages), two inputs, two outputs.
inline ir::Graph every_kind_graph() {
  using namespace fxc::literals;
  Flow a = input("a", 1);
  Flow b = input("b");
  Flow designed = a | butter(3, {300_Hz, 3_kHz}, bandpass) | cheby1(2, 0.5_dB, 1_kHz) |
                  cheby2(3, 40_dB, 2_kHz, highpass) | ellip(4, 1_dB, 50_dB, 5_kHz) |
                  bessel(2, 800_Hz, lowpass, design::BesselNorm::mag) | notch(50_Hz, 10) |
                  lowshelf(100_Hz, 3_dB) | allpass(2_kHz) |
                  firwin(31, {1000.0, 2000.0}, design::Window::kaiser, false, 5.0);
  Flow raw = b | sos({{1, 2, 1, 1, -0.5, 0.25}}) | tf({0.1, 0.2}, {1, -0.3}) |
             fir({0.25, 0.5, 0.25}) | delay(3_samples) | clip(-0.5, 0.5) | gain(0.1);
  return make_graph("every_kind", {output("designed", designed), output("raw", raw - a)});
}

}  // namespace fxc::test
