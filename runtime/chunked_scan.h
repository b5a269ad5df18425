// SPDX-License-Identifier: Apache-2.0
// The time-chunked scan for linear chains (sections and gains) on few channels: the chain's
// lanes kernel runs K chunks of each channel side by side as if they were channels, from zero
// state; then the exact state at each chunk's start is carried in float64 with A^L, and each
// chunk's output is corrected by the response to that state with zero input, which decays
// below the precision of the output after a few time constants.
#pragma once

#include <cstddef>
#include <cstdint>

#include <vector>

#include "codegen/kernel_abi.h"
#include "ir/nodes.h"
#include "ir/dtype.h"
#include "runtime/linear_chain.h"

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

/// The chunked scan's fix-up: adds to each of `chunks` chunks (`out[k]`, `length` samples) the
/// chain's response to its start state (`starts`, chunks x dimension, float64) with zero input,
/// until that state falls to `tolerance` times its largest element (checked every 32 samples);
/// a state with a NaN or an infinity runs the whole chunk. Chunks step side by side in vectors
/// (LinearChain::decay) on `threads` threads, each giving what one at a time with
/// LinearChain::step gives, bit for bit.
template <class T>
void add_start_responses(const LinearChain& linear, const std::vector<double>& starts, T* const* out,
                         std::int64_t chunks, std::int64_t length, double tolerance, int threads);

}  // namespace fxc
