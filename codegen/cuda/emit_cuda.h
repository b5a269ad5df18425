// The CUDA backend's first step: CUDA C++ source for a scheduled graph (passes run with
// passes::cuda_target()). The source needs no header beyond what NVRTC provides, so it
// compiles on a machine without a GPU (codegen/cuda/nvrtc.h); this file needs no CUDA toolkit.
//
// One kernel per chain node (`fxc_chain_<id>`, the same symbol as the CPU backend's) and one
// per sum node (`fxc_sum_<id>`). Every coefficient arrives as a kernel argument, in the
// order of codegen::layout_of / values_of, so a new cutoff or sample rate reuses the code.
// docs/cuda.md describes the kernels' arguments and how the runtime is to launch them.
#pragma once

#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "support/expected.h"

namespace fxc::codegen {

/// What a generated kernel computes, and so how it is launched.
enum class CudaKernelKind {
  /// One thread per channel, the whole chain per sample, state in registers. Grid: at least
  /// `channels` threads. Arguments: (in, out, channels, samples, channel_stride,
  /// sample_stride, params, delay_lengths, state, delay_lines, positions).
  chain_thread_per_channel,
  /// The first pass of the chunked scan: one thread per (channel, chunk of chunk_length
  /// samples), the chain from zero state over its chunk; writes the zero-state output and
  /// each chunk's final state. Grid: at least channels * ceil(samples / chunk_length)
  /// threads. Arguments: (in, out, channels, samples, channel_stride, sample_stride, params,
  /// chunk_state). The carry and fix-up passes are not generated yet (docs/cuda.md).
  chain_chunked_zero_state,
  /// out = sum_i weights[i] * operands[i], elementwise. Grid: any; a grid-stride loop covers
  /// channels * samples. Arguments: (operands, out, channels, samples, channel_stride,
  /// sample_stride, weights).
  sum,
};

struct CudaKernelInfo {
  std::string symbol;  ///< fxc_chain_<id> or fxc_sum_<id>
  ir::NodeId node = 0;
  CudaKernelKind kind = CudaKernelKind::chain_thread_per_channel;
  DType dtype = DType::f64;
  int chunk_length = 0;  ///< chain_chunked_zero_state: samples per chunk
  std::string note;      ///< why this kind, for people (and the source's comment)
};

/// The kernels emit_cuda_source generates for `scheduled`, in increasing node order.
/// Fails for a node that no CUDA kernel can run (an unscheduled specification, a chain with a
/// CPU strategy, a chain whose FIR runs by FFT).
Expected<std::vector<CudaKernelInfo>, std::string> cuda_kernels(const ir::Graph& scheduled);

/// True when `chain` can run as a GPU chunked scan: only sos and gain stages (linear, with
/// no ring buffers), as the CPU's chunked_scan_applies.
bool cuda_chunked_scan_applies(const ir::Chain& chain);

/// Readable, deterministic CUDA C++ for every kernel of `scheduled` (what
/// `fxc dump --emit cuda` prints). Compile it with codegen::compile_cuda, whose options
/// (cuda_compile_options) the arithmetic relies on.
Expected<std::string, std::string> emit_cuda_source(const ir::Graph& scheduled);

}  // namespace fxc::codegen
