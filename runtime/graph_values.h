// SPDX-License-Identifier: Apache-2.0
// The values of a scheduled graph's kernels (coefficients, gains, clip bounds, sum weights,
// delay lengths) in the types the kernels read them: what changes when a parameter changes,
// while the graph's shape, and so its kernels and state layout, stay.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ir/graph.h"

namespace fxc {

struct NodeValues {
  /// A chain's coefficients in kernel layout (codegen::values_of) in its compute type, or a
  /// sum's weights or a matrix's gains in the signal type: one of the two lists is used.
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<std::int64_t> delay_lengths;  ///< a chain's delays, or a feedback node's one, in samples
  /// FFT overlap-save chains: the taps' spectrum in the signal type, one of the two (the
  /// taps themselves are in f64).
  std::vector<std::complex<float>> fft_response_f32;
  std::vector<std::complex<double>> fft_response_f64;
  /// A partitioned convolution's (an FFT block not above the taps,
  /// runtime/partitioned_convolution.h): its partitions' spectra one after another, each split
  /// into real and imaginary parts (PartitionedConvolver::transform_taps); one of the two.
  std::vector<float> partition_spectra_f32;
  std::vector<double> partition_spectra_f64;
  /// A hash of the taps and FFT block those spectra come from, odd (so never 0, nor
  /// kSilentSpectraSerial): a partitioned convolution's channels rebuild their tails when it
  /// changes.
  std::uint64_t fft_serial = 0;

  template <class C>
  const C* params() const {
    if constexpr (std::is_same_v<C, float>) return f32.data();
    else return f64.data();
  }
  template <class T>
  const std::vector<std::complex<T>>& fft_response() const {
    if constexpr (std::is_same_v<T, float>) return fft_response_f32;
    else return fft_response_f64;
  }
  template <class T>
  const std::vector<T>& partition_spectra() const {
    if constexpr (std::is_same_v<T, float>) return partition_spectra_f32;
    else return partition_spectra_f64;
  }
};

/// By node id; empty for nodes other than chains, sums, matrices and feedback nodes.
struct GraphValues {
  std::vector<NodeValues> nodes;
};

/// The values of every chain and sum of `scheduled` (allocates; FFT chains transform their
/// taps here, once per set of values, not per call).
GraphValues graph_values(const ir::Graph& scheduled);

}  // namespace fxc
