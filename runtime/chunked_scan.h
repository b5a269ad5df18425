// SPDX-License-Identifier: Apache-2.0
// The time-chunked scan for linear chains (sections and gains) on few channels: the chain's
// lanes kernel runs K chunks of each channel side by side as if they were channels, from zero
// state; then the exact state at each chunk's start is carried in float64 with A^L, and each
// chunk's output is corrected by the response to that state with zero input, which decays
// below the precision of the output after a few time constants.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codegen/kernel_abi.h"
#include "ir/nodes.h"
#include "ir/dtype.h"

namespace fxc {

/// True when `chain` can run as a chunked scan: it holds only sos and gain stages.
bool chunked_scan_applies(const ir::Chain& chain);

/// Runs `chain` (chunked_scan strategy, kernel compiled for lanes) over `samples` samples of
/// `channels` planar channels of type `signal` from `in` into `out` (which may be the same
/// memory) with `threads` threads, starting from the section state in `state`
/// (C[channels][2 * sections], the kernel's layout; C is codegen::compute_dtype's) and
/// leaving the final state there, so blocks of a stream continue exactly. Allocates.
void run_chunked_scan(const ir::Chain& chain, FxcChainKernel kernel, const void* const* in,
                      void* const* out, std::size_t channels, std::size_t samples, DType signal,
                      void* state, int lanes, int threads);

}  // namespace fxc
