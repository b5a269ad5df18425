// SPDX-License-Identifier: Apache-2.0
// What the tests that compare compiled kernels with the reference interpreter share: seeded
// noise inputs, the relative RMS error of docs/testing.md, and one call from a graph to its
// designed form (the oracle's input), its scheduled form and its CPU kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "codegen/cpu/cpu_compiler.h"
#include "ir/graph.h"
#include "passes/strategy_thresholds.h"
#include "driver/kernel_cache.h"
#include "runtime/signal.h"

namespace fxc::test {

/// One signal per input of `inputs` channels x `samples` samples, uniform noise in [-1, 1],
/// seeded; rounded to `dtype` (so that the float64 oracle sees the samples a float32 kernel
/// sees) and held as float64.
std::vector<Signal> noise_inputs(std::size_t inputs, int channels, std::size_t samples, DType dtype,
                                 std::uint64_t seed);

/// The worst over outputs and channels of RMS(got - want) / max(RMS(want), floor), where
/// `floor` (of full scale) keeps near-silent outputs from turning rounding into large ratios.
double relative_rms_error(const std::vector<Signal>& got, const std::vector<Signal>& want, double floor = 1e-3);

struct CompiledCpu {
  ir::Graph designed;   ///< filters designed, not optimized: the oracle's input
  ir::Graph scheduled;  ///< the whole pipeline for the CPU
  std::shared_ptr<const codegen::CpuKernels> kernels;
};

/// The pipeline at 48 kHz for `channels` channels of `dtype` and an expected `length`, with
/// `thresholds`, then the kernels from `cache` (a memory-only cache when null). REQUIREs
/// success.
CompiledCpu compile_cpu(const ir::Graph& graph, int channels, DType dtype, std::int64_t length,
                        const passes::StrategyThresholds& thresholds = {}, KernelCache* cache = nullptr);

/// The chains of a scheduled graph, in node order.
std::vector<const ir::Chain*> chains_of(const ir::Graph& scheduled);

}  // namespace fxc::test
