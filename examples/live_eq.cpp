// SPDX-License-Identifier: Apache-2.0
// examples/eq.fx as a plugin would run it: a Processor fed 64-frame blocks on an "audio"
// thread while a "UI" thread sweeps the live low cut (fc, declared in [20 Hz, 120 Hz]).
#include <fxc/fxc.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

int main(int argc, char** argv) try {
  fxc::Options o{.sample_rate_hz = 48000, .dtype = fxc::DType::f32, .max_block = 64};
  fxc::Program eq = fxc::Program::from_file(argc > 1 ? argv[1] : "examples/eq.fx", o);
  for (const fxc::ParamInfo& p : eq.params()) std::printf("parameter %s = %g %s\n", p.name.c_str(), p.value, p.unit.c_str());
  fxc::Processor live = eq.processor();  // prepare(): everything allocated here

  std::atomic<bool> done{false};
  std::thread ui([&] {
    for (double fc = 20; fc <= 120; fc += 5) live.set("fc", fc);  // designs here, hands over
    done = true;
  });
  std::vector<float> l(64, 0.5f), r(64, -0.5f);  // DC in: the low cut takes it away
  float* io[] = {l.data(), r.data()};
  int blocks = 0;
  while (!done || blocks < 100) {
    std::fill(l.begin(), l.end(), 0.5f);
    std::fill(r.begin(), r.end(), -0.5f);
    live.process(io, io, 64);  // in place; no allocation, no lock
    ++blocks;
  }
  ui.join();
  // The Processor has its own copy of the parameters: eq.get("fc") is still the file's value.
  std::printf("%d blocks while fc swept 20..120 Hz; last sample %.6f (the low cut removes DC)\n", blocks, l[63]);
} catch (const fxc::Error& e) {
  std::fprintf(stderr, "%s", e.what());
  return 1;
}
