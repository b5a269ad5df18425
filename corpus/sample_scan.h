// SPDX-License-Identifier: Apache-2.0
// Whole-signal scans a corpus run makes of every file it reads and writes: the largest |sample|
// (the manifest's peak) and the non-finite samples (the input warning). They read every sample
// of files of minutes, so they are written to run at memory speed: on the samples' bits, in
// independent lanes, without a branch or a compare chain per sample (a per-sample compare chain
// through one accumulator took about 12 ms a stereo minute in float64, a sixth of a corpus
// file's time on a 2-core machine).
#pragma once

#include <cstddef>
#include <cstdint>

#include "fxc/signal.h"

namespace fxc::corpus {

/// The largest |sample| of `s` over every channel; NaN where any sample is NaN (whatever its
/// place), 0 for an empty signal.
double peak_magnitude(const Signal& s);

/// The NaN and infinite samples of `s`, and where the first is: the lowest sample index of any
/// channel, and of those the lowest channel.
struct NonFiniteSamples {
  std::uint64_t nans = 0;
  std::uint64_t infinities = 0;
  std::size_t first_sample = 0;
  std::size_t first_channel = 0;
};
NonFiniteSamples non_finite_samples(const Signal& s);

/// Adds to `seen` (of a stream's earlier pieces) what `found` counted in the piece that starts
/// at sample `start`: the first stays the earliest.
inline void add_piece(NonFiniteSamples& seen, const NonFiniteSamples& found, std::size_t start) {
  if (seen.nans + seen.infinities == 0 && found.nans + found.infinities > 0) {
    seen.first_sample = start + found.first_sample;
    seen.first_channel = found.first_channel;
  }
  seen.nans += found.nans;
  seen.infinities += found.infinities;
}

/// `a` or `b`, whichever is larger; NaN where either is.
inline double larger_peak(double a, double b) { return a != a || b != b ? a + b : (a < b ? b : a); }

}  // namespace fxc::corpus
