// SPDX-License-Identifier: Apache-2.0
// A vocal chain built with the C++ DSL: its IR before and after the passes, then one second
// of stereo through the compiled kernels and through the float64 reference interpreter.
#include <fxc/fxc.h>

#include <cmath>
#include <cstdio>
#include <iostream>

int main() try {
  using namespace fxc::literals;
  fxc::Flow x = fxc::input("x", 2);
  fxc::Flow wet = x | fxc::butter(4, 80_Hz, fxc::highpass) | fxc::peaking(3_kHz, 1.0, 4_dB) |
                  fxc::highshelf(10_kHz, -2_dB) | fxc::tanh() | fxc::gain(-3_dB);
  std::vector<fxc::Output> graph = {fxc::output("y", 0.7 * wet + 0.3 * (x | fxc::delay(5_ms)))};
  fxc::Options o{.sample_rate_hz = 48000, .dtype = fxc::DType::f64};
  fxc::Program compiled(graph, o);
  std::cout << "== IR, designed ==\n" << compiled.dump("ir") << "== IR, scheduled ==\n" << compiled.dump("ir-opt");

  fxc::Signal in(2, 48000);  // 100 Hz + 5 kHz, the right channel half as loud
  for (std::size_t n = 0; n < in.samples(); ++n) {
    double v = 0.5 * std::sin(2 * M_PI * 100 * n / 48000.0) + 0.25 * std::sin(2 * M_PI * 5000 * n / 48000.0);
    in.f64(0)[n] = v;
    in.f64(1)[n] = 0.5 * v;
  }
  o.target = fxc::Target::reference;
  fxc::Signal y = compiled.run(in), want = fxc::Program(graph, o).run(in);
  double worst = 0;
  for (std::size_t c = 0; c < 2; ++c)
    for (std::size_t n = 0; n < in.samples(); ++n) worst = std::max(worst, std::abs(y.f64(c)[n] - want.f64(c)[n]));
  std::printf("compiled against the reference interpreter: largest difference %.1e\n", worst);
  return worst < 1e-9 ? 0 : 1;
} catch (const fxc::Error& e) {
  std::fprintf(stderr, "%s", e.what());
  return 1;
}
