// SPDX-License-Identifier: Apache-2.0
#include "passes/target.h"

#include <thread>

namespace fxc::passes {

Target host_target() {
  Target t;
  t.kind = TargetKind::cpu;
#if defined(__x86_64__) || defined(__i386__)
  // AVX-512 is treated as 32-byte vectors: its frequency penalty on many parts makes 512-bit
  // IIR kernels no faster, and every AVX-512 machine has AVX2.
  t.simd_bytes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 32 : 16;
#else
  t.simd_bytes = 16;
#endif
  unsigned cores = std::thread::hardware_concurrency();
  t.cores = cores ? static_cast<int>(cores) : 1;
  return t;
}

Target cuda_target(const GpuProperties& gpu) { return {TargetKind::cuda, 4, 1, gpu}; }

std::string describe(const Target& target) {
  if (target.kind == TargetKind::cuda) return "cuda";
  return "cpu (" + std::to_string(target.simd_bytes * 8) + "-bit vectors, " +
         std::to_string(target.cores) + " cores)";
}

}  // namespace fxc::passes
