// SPDX-License-Identifier: Apache-2.0
// A linear chain (sos and gain stages) as a float64 state-space system, for the chunked
// scans of both backends: the state is every section's (z0, z1) in the kernels' state layout,
// and A^L carries a chunk's start state over L samples of zero input.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/nodes.h"

namespace fxc {

class LinearChain {
 public:
  /// The sos and gain stages of `chain`, in order (other stages are ignored: callers check
  /// chunked_scan_applies first).
  explicit LinearChain(const ir::Chain& chain);

  /// The state's dimension: two per section.
  int dimension() const { return dimension_; }

  /// One sample through the chain, transposed direct form II; advances `z`.
  double step(double* z, double x) const;

  /// Chains that decay() runs side by side: 8, or 4 where no more are needed.
  static constexpr int kDecayLanes = 8;
  static constexpr int kNarrowDecayLanes = 4;

  /// `samples` steps of zero input for `lanes` chains side by side (kDecayLanes or
  /// kNarrowDecayLanes): each lane as step(z, 0.0) would advance it, with the same operations
  /// in the same order (the same bits), the lanes in vectors. State r of lane l is
  /// z[r * lanes + l]; lane l's output at step i goes to y[i * lanes + l]. The chunked scan's
  /// fix-up of many chunks at once: one chain's step is a chain of dependent operations, those
  /// of several chains are independent.
  void decay(double* z, double* y, int samples, int lanes) const;

  /// A: the state after one step with zero input, as a matrix (row-major, D x D).
  std::vector<double> transition() const;

  /// A^n (row-major, D x D), by repeated squaring in float64: the carries must not lose
  /// what float32 would.
  std::vector<double> transition_power(std::int64_t n) const;

  /// What each of `length` input samples adds to the state at their end, from zero state:
  /// that state is sum over n < length of R[n] x[n], with R[n] = A^(length - 1 - n) B (B: the
  /// state one sample of 1 leaves). Row-major, length x D, row n = R[n]; in float64, a step
  /// of zero input at a time (no matrix products).
  std::vector<double> input_to_state(std::int64_t length) const;

  /// A stage as step() runs it: a gain or a section.
  struct Op {
    bool is_gain;
    double gain;
    design::Section section;
  };

 private:
  std::vector<Op> ops_;
  int dimension_ = 0;
};

}  // namespace fxc
