// SPDX-License-Identifier: Apache-2.0
// What the passes know about the machine a graph is compiled for.
#pragma once

#include <string>

#include "ir/dtype.h"

namespace fxc::passes {

enum class TargetKind { cpu, cuda };

struct Target {
  TargetKind kind = TargetKind::cpu;
  int simd_bytes = 32;  ///< vector register width: 16 (SSE/NEON), 32 (AVX2), 64 (AVX-512)
  int cores = 1;        ///< cores a kernel may use

  /// Samples of `dtype` per vector register.
  int lanes(DType dtype) const { return simd_bytes / static_cast<int>(size_of(dtype)); }
};

/// The machine fxc runs on: its widest usable vector unit and its core count.
Target host_target();

/// A CUDA device (the strategy choice does not depend on its details yet).
Target cuda_target();

std::string describe(const Target& target);

}  // namespace fxc::passes
