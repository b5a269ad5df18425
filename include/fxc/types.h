// SPDX-License-Identifier: Apache-2.0
// The small vocabulary every part of the public API shares: sample types and targets.
#pragma once

namespace fxc {

/// The sample type of a signal or a computation.
enum class DType { f32, f64 };

/// Where a Program runs.
enum class Target {
  cpu,        ///< kernels compiled to machine code by LLVM
  cuda,       ///< CUDA kernels through NVRTC, on an NVIDIA GPU
  reference,  ///< the float64 reference interpreter: slow, simple, the oracle
};

}  // namespace fxc
