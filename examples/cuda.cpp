// SPDX-License-Identifier: Apache-2.0
// The same graph on an NVIDIA GPU (Target::cuda: CUDA C++ compiled by NVRTC), checked against
// the CPU. Without a GPU or the CUDA toolkit it says why and exits 77 (CTest: skipped), or 1
// when FXC_REQUIRE_CUDA_DEVICE is set.
#include <fxc/fxc.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

int main() {
  using namespace fxc::literals;
  fxc::Flow x = fxc::input("x", 2);
  std::vector<fxc::Output> graph = {fxc::output("y", x | fxc::butter(4, 80_Hz, fxc::highpass) | fxc::peaking(1_kHz, 1.0, 3_dB))};
  fxc::Options o{.sample_rate_hz = 48000, .dtype = fxc::DType::f32};
  fxc::Signal in(2, 48000, fxc::DType::f32);
  for (std::size_t n = 0; n < in.samples(); ++n) in.f32(0)[n] = in.f32(1)[n] = std::sin(0.01f * n);
  fxc::Signal cpu = fxc::Program(graph, o).run(in);
  try {
    o.target = fxc::Target::cuda;
    fxc::Signal gpu = fxc::Program(graph, o).run(in);
    double worst = 0;
    for (std::size_t n = 0; n < in.samples(); ++n) worst = std::max(worst, double(std::abs(gpu.f32(0)[n] - cpu.f32(0)[n])));
    std::printf("GPU against CPU: largest difference %.1e\n", worst);
    return worst < 1e-3 ? 0 : 1;
  } catch (const fxc::Error& e) {
    std::printf("no CUDA run: %s", e.what());
    // CI on a GPU machine sets FXC_REQUIRE_CUDA_DEVICE=1: there, not running is a failure.
    return std::getenv("FXC_REQUIRE_CUDA_DEVICE") ? 1 : 77;
  }
}
