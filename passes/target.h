// SPDX-License-Identifier: Apache-2.0
// What the passes know about the machine a graph is compiled for.
#pragma once

#include <string>

#include "ir/dtype.h"

namespace fxc::passes {

enum class TargetKind { cpu, cuda };

/// What the GPU cost model knows of a device. The defaults are an H100 SXM's; the driver fills
/// them from the device it compiles for (driver/compile_cuda.cpp).
struct GpuProperties {
  int sms = 132;                 ///< streaming multiprocessors
  int threads_per_sm = 2048;     ///< resident threads per multiprocessor
  double f64_rate = 0.5;         ///< float64 FMA throughput / float32's (1:64 on consumer parts)
  double bandwidth_gbs = 3350;   ///< DRAM bandwidth, GB/s
  /// The threads the device holds at once.
  long long resident_threads() const { return static_cast<long long>(sms) * threads_per_sm; }
  /// The independent threads that keep it busy: half the resident ones. A recursive filter's
  /// thread is a chain of dependent fused multiply-adds; an SM's float64 pipes (64 FMAs per
  /// cycle on an H100) need about 64 x their latency (4-8 cycles) chains in flight, and
  /// memory about as many loads. docs/cuda.md's model; to be measured on a GPU.
  long long busy_threads() const { return resident_threads() / 2; }
};

struct Target {
  TargetKind kind = TargetKind::cpu;
  int simd_bytes = 32;  ///< vector register width: 16 (SSE/NEON), 32 (AVX2), 64 (AVX-512)
  int cores = 1;        ///< cores a kernel may use
  GpuProperties gpu;    ///< TargetKind::cuda: the device

  /// Samples of `dtype` per vector register.
  int lanes(DType dtype) const { return simd_bytes / static_cast<int>(size_of(dtype)); }
};

/// The machine fxc runs on: its widest usable vector unit and its core count.
Target host_target();

/// A CUDA device: `gpu`'s size decides between one thread per channel and time chunks, and the
/// chunks' length (passes/cost_model.h).
Target cuda_target(const GpuProperties& gpu = {});

std::string describe(const Target& target);

}  // namespace fxc::passes
