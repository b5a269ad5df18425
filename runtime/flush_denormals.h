// SPDX-License-Identifier: Apache-2.0
// Flush-to-zero and denormals-are-zero while kernels run, the caller's mode restored after.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace fxc {

/// Denormal operands make x86 FP units take microcode assists, 100x slower; in audio they are
/// inaudible, so kernels run with FTZ and DAZ: a guard for the run on the caller's thread, and
/// one for each part a pool thread runs (the mode is per thread; without it, the channels a
/// worker ran would keep subnormals that the caller's thread flushes). Not set at all when the
/// thread has them already (audio hosts often do): writing MXCSR stalls the pipeline for a few
/// nanoseconds each time.
class FlushDenormals {
 public:
#if defined(__x86_64__) || defined(__i386__)
  static constexpr unsigned kFtzDaz = 0x8040;
  FlushDenormals() : saved_(_mm_getcsr()) {
    if ((saved_ & kFtzDaz) != kFtzDaz) _mm_setcsr(saved_ | kFtzDaz);
  }
  ~FlushDenormals() {
    if ((saved_ & kFtzDaz) != kFtzDaz) _mm_setcsr(saved_);
  }
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  unsigned saved_;
#endif
};

}  // namespace fxc
