// SPDX-License-Identifier: Apache-2.0
// Many signals through one graph at once: one kernel dispatch for the whole batch, items of
// different lengths, each output as if run alone.
#include <fxc/fxc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

int main() try {
  using namespace fxc::literals;
  fxc::Flow x = fxc::input("x", 2);
  fxc::Program program({fxc::output("y", x | fxc::butter(4, 80_Hz, fxc::highpass) | fxc::butter(8, 12_kHz))},
                       {.sample_rate_hz = 48000, .dtype = fxc::DType::f32});
  std::vector<std::vector<fxc::Signal>> items;
  for (std::size_t k = 1; k <= 8; ++k) {
    fxc::Signal s(2, 4800 * k, fxc::DType::f32);  // 0.1 s, 0.2 s, ... each an impulse
    s.f32(0)[0] = s.f32(1)[0] = 1;
    items.push_back({std::move(s)});
  }
  auto outputs = program.run_batch(items);
  fxc::Signal alone = program.run(items[7][0]);
  for (std::size_t k = 0; k < outputs.size(); ++k)
    std::printf("item %zu: %zu samples, y[0] = %.6f\n", k, outputs[k][0].samples(), outputs[k][0].f32(0)[0]);
  // The batch's 16 channels may run another schedule than one item's 2 (the float64-state
  // sections in a chain of their own, at float32's full width): equal up to float32 rounding.
  double worst = 0;
  for (std::size_t i = 0; i < alone.samples(); ++i)
    worst = std::max(worst, static_cast<double>(std::abs(alone.f32(0)[i] - outputs[7][0].f32(0)[i])));
  bool same = worst <= 1e-6;
  std::printf("the last item %s its own run (largest difference %.1e)\n", same ? "equals" : "DIFFERS FROM", worst);
  return same ? 0 : 1;
} catch (const fxc::Error& e) {
  std::fprintf(stderr, "%s", e.what());
  return 1;
}
