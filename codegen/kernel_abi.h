// SPDX-License-Identifier: Apache-2.0
// The calling convention of compiled chain kernels, shared by the code generators and the
// runtime. A kernel is `void fxc_node_N(const FxcChainArgs*)`, one per chain or sum node; its code
// depends only on the chain's shape, and every value arrives through these arguments.
#pragma once

#include <cstdint>

extern "C" {

struct FxcChainArgs {
  const void* const* in;     ///< per channel: the input samples (T*)
  void* const* out;          ///< per channel: the output samples (T*); may equal `in`
  std::int64_t channels;
  std::int64_t samples;
  const void* params;        ///< T[param_count]: sections, taps, gains, clip bounds
  const std::int64_t* delay_lengths;  ///< per delay stage, in samples
  void* state;               ///< T[channels][state_per_channel]: section and FIR memory
  void* const* delay_lines;  ///< [channel * delay_count + k]: a T ring of delay_lengths[k]
  std::int64_t* positions;   ///< [channel][delay_count + ring_count]: ring positions
};

typedef void (*FxcChainKernel)(const FxcChainArgs*);
}
