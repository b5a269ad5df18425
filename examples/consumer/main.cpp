// SPDX-License-Identifier: Apache-2.0
// Compiles a second-order Butterworth low-pass, runs an impulse through it, retunes it, and
// prints the first output samples: the smallest use of the installed fxc library.
#include <fxc/fxc.h>

#include <iostream>

int main() {
  fxc::Options options;
  options.sample_rate_hz = 48000;
  options.cache_directory = "none";
  fxc::Program eq = fxc::Program::from_source(
      "input x : 1\nfc = 1 kHz\noutput y = x | butter(2, fc)\n", options);

  fxc::Signal x(1, 8, fxc::DType::f32);
  x.f32(0)[0] = 1;
  fxc::Signal y = eq.run(x);
  std::cout << "fxc " << fxc::version() << ": y[0] at fc = 1 kHz: " << y.f32(0)[0] << "\n";

  eq.set("fc", 2000);
  fxc::Signal y2 = eq.run(x);
  std::cout << "fxc " << fxc::version() << ": y[0] at fc = 2 kHz: " << y2.f32(0)[0] << "\n";
  return y.f32(0)[0] > 0 && y2.f32(0)[0] > y.f32(0)[0] ? 0 : 1;
}
