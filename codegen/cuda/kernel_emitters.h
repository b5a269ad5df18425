// SPDX-License-Identifier: Apache-2.0
// The kernel emitters that live in files of their own, for emit_cuda_source (emit_cuda.cpp).
// Internal to codegen/cuda.
#pragma once

#include "codegen/cuda/kernel_source.h"

namespace fxc::codegen::cuda_source {

/// fxc_copy_async, fxc_copy_commit and fxc_copy_wait, once in a source whose chunked scans use
/// them (emit_chunked_scan.cpp).
void emit_async_copy(Writer& w);
/// fxc_table_column and, for sm_80 and sm_90, fxc_mma_f64, once in a source whose chunked scans
/// sum their chunks' end states with a table (emit_chunked_scan.cpp).
void emit_state_table_helpers(Writer& w);
/// A chain_chunked_scan kernel's five entries (emit_chunked_scan.cpp).
void emit_chunked_scan(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain);
/// A lone FIR's kernels and their ring: direct in tiles, FFT overlap-save, partitioned (emit_fir.cpp).
void emit_fir_tiled(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain);
void emit_fir_fft(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain);
void emit_fir_partitioned(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain);

}  // namespace fxc::codegen::cuda_source
