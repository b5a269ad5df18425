// SPDX-License-Identifier: Apache-2.0
// fxc info: versions, the host CPU, CUDA availability (the driver, and which NVRTC and why),
// and the cache directory.
#include <CLI/CLI.hpp>
#include <dlfcn.h>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "codegen/cpu/cpu_compiler.h"
#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/vector_math.h"
#include "passes/pipeline.h"
#include "passes/target.h"
#include "tools/fxc/commands.h"

namespace fxc::cli {
namespace {

struct CpuInfo {
  std::string model = "unknown";
  std::vector<std::string> features;  // the ones that matter to kernels
  unsigned cores = 0;
};

CpuInfo read_cpu_info() {
  CpuInfo info;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  static const std::set<std::string> kInteresting = {"sse4_2", "avx",     "avx2",     "fma",
                                                      "f16c",   "avx512f", "avx512vl", "avx512bw",
                                                      "neon",   "asimd",   "sve"};
  std::set<std::string> seen;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && info.model == "unknown") info.model = value;
    if (key == "processor") ++info.cores;
    if ((key == "flags" || key == "Features") && seen.empty()) {
      std::istringstream words(value);
      for (std::string w; words >> w;)
        if (kInteresting.count(w)) seen.insert(w);
    }
  }
  info.features.assign(seen.begin(), seen.end());
  return info;
}


int info() {
  CpuInfo cpu = read_cpu_info();
  std::cout << "fxc " << version_string() << '\n'
            << "backends:  cpu (" << codegen::llvm_version_string() << ", target "
            << codegen::cpu_target_id().substr(0, codegen::cpu_target_id().find(' '))
            << "), ref (float64 reference interpreter)\n"
            << "host CPU:  " << cpu.model << " (" << cpu.cores << " logical cores)\n"
            << "features: ";
  for (const std::string& f : cpu.features) std::cout << ' ' << f;
  const std::string tanh = codegen::libmvec_symbol("tanh", passes::host_target().lanes(DType::f64));
  std::cout << "\nmath:      "
            << (codegen::vector_math_id() == "libmvec"
                    ? "libmvec (float64 tanh, log10, exp a vector of channels a call: " + tanh + ")"
                    : std::string("libm (float64 tanh, log10, exp a channel a call: no libmvec with them)"));
  codegen::CudaDriverInfo cuda = codegen::query_cuda_driver();
  const codegen::NvrtcChoice& nvrtc = codegen::nvrtc_choice();
  std::cout << "\nCUDA:      " << codegen::cuda_status(cuda)
            << (cuda.devices.empty() ? " (--target cuda is unavailable: it needs an NVIDIA GPU and its driver)" : "")
            << "\nNVRTC:     " << codegen::nvrtc_status(nvrtc) << '\n';
  // Other NVRTCs found, not used: where a different one is wanted, $FXC_NVRTC_LIBRARY picks it.
  if (nvrtc.found() && !nvrtc.others.empty()) {
    std::cout << "           also found:";
    for (std::size_t i = 0; i < nvrtc.others.size(); ++i) std::cout << (i ? ", " : " ") << nvrtc.others[i];
    std::cout << '\n';
  }
  std::cout << "cache dir: " << cache_directory() << '\n' << "passes:   ";
  for (const passes::PassInfo& p : passes::all_passes()) std::cout << ' ' << p.name;
  std::cout << '\n';
  return kSuccess;
}

}  // namespace

void add_info_command(CLI::App& app, Action& action) {
  CLI::App* cmd = app.add_subcommand(
      "info", "Print the version, the host CPU and its features, CUDA devices and the cache directory.");
  cmd->footer("Example:\n  fxc info");
  cmd->callback([&action] { action = [] { return info(); }; });
}

}  // namespace fxc::cli
