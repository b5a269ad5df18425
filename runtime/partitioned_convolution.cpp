// SPDX-License-Identifier: Apache-2.0
#include "runtime/partitioned_convolution.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "support/diagnostics.h"
#include "support/vector_clones.h"

namespace fxc {

std::size_t fft_history_length(std::size_t taps, int fft_block) {
  if (!runs_partitioned(taps, fft_block)) return taps > 0 ? taps - 1 : 0;
  const std::size_t p = static_cast<std::size_t>(fft_block) / 2, m = (taps - 1) / p;  // ceil((taps - p) / p)
  return (m + 2) * p - 1;
}

template <class T>
PartitionedConvolver<T>::PartitionedConvolver(std::size_t taps, int block)
    : taps_(taps),
      p_(static_cast<std::size_t>(std::max(block, 2)) / 2),
      m_(taps > p_ ? (taps - 1) / p_ : 0),
      history_(fft_history_length(taps, block)),
      stride_(split_spectrum_size(p_) / 2),
      fft_(2 * p_),
      frame_(2 * p_, T(0)),
      out_(2 * p_, T(0)),
      spectrum_(p_ + 1),  // the bins of a 2P-point real FFT
      head_(p_, 0.0),
      window_(std::is_same_v<T, float> ? 2 * p_ : 0, 0.0) {
  FXC_INTERNAL_ASSERT(block >= 2 && (block & (block - 1)) == 0 && static_cast<std::size_t>(block) <= taps,
                      "a partitioned convolution's block must be a power of two, at most the taps");
}

namespace {

// A spectrum's bins into the split form (real parts, then imaginary parts, `stride` apart),
// and back.
template <class T>
void split_bins(std::span<const std::complex<T>> bins, T* split, std::size_t stride) noexcept {
  for (std::size_t b = 0; b < bins.size(); ++b) {
    split[b] = bins[b].real();
    split[stride + b] = bins[b].imag();
  }
}
template <class T>
void merge_bins(const T* split, std::size_t stride, std::span<std::complex<T>> bins) noexcept {
  for (std::size_t b = 0; b < bins.size(); ++b) bins[b] = {split[b], split[stride + b]};
}

}  // namespace

template <class T>
void PartitionedConvolver<T>::transform_taps(std::span<const double> taps, std::span<T> spectra) {
  FXC_INTERNAL_ASSERT(taps.size() == taps_ && spectra.size() == m_ * spectrum_size(),
                      "partition spectra of the wrong size");
  std::fill(spectra.begin(), spectra.end(), T(0));  // the padding
  const T scale = T(1) / static_cast<T>(2 * p_);
  for (std::size_t part = 0; part < m_; ++part) {
    std::fill(frame_.begin(), frame_.end(), T(0));
    const std::size_t first = (part + 1) * p_;
    for (std::size_t k = 0; k < p_ && first + k < taps_; ++k) frame_[k] = static_cast<T>(taps[first + k] * scale);
    fft_.forward(frame_, spectrum_);
    split_bins<T>(spectrum_, spectra.data() + part * spectrum_size(), stride_);
  }
}

template <class T>
void PartitionedConvolver<T>::reserve(PartitionedStream<T>& stream) const {
  stream.serial = 0;
  stream.recent.assign(capacity(), T(0));
  stream.spectra.assign(m_ * spectrum_size(), T(0));
  stream.nonfinite.assign(m_, 0);
  stream.tail.assign(p_, T(0));
  stream.next.assign(spectrum_size(), T(0));
  stream.next_done = 0;
}

template <class T>
void PartitionedConvolver<T>::push_frame(PartitionedStream<T>& s, std::size_t end) noexcept {
  s.newest = s.newest + 1 == m_ ? 0 : s.newest + 1;
  std::copy(s.recent.begin() + static_cast<std::ptrdiff_t>(end - 2 * p_),
            s.recent.begin() + static_cast<std::ptrdiff_t>(end), frame_.begin());
  // A NaN or an infinity would spread over the whole spectrum: it counts as 0 here, and
  // finish_tail adds its products directly.
  s.nonfinite[s.newest] = zero_nonfinite<T>(frame_) ? 0 : 1;
  fft_.forward(frame_, spectrum_);
  split_bins<T>(spectrum_, s.spectra.data() + s.newest * spectrum_size(), stride_);
}

namespace {

// sum += x * h over the bins of split spectra (`stride` apart: transform_taps). One function
// (never inlined) for every partition and path, so that a tail summed a call at a time and one
// summed at once are the same, bit for bit. Split, the products take whole vectors with no
// shuffles: interleaved complex numbers took three shuffles for every four products, and were
// the longest part of a short call. (Each sum is the one std::complex's operator* gives
// without its Annex G checks for infinities, which would not vectorize.)
// Wider vectors where the CPU has them (support/vector_clones.h).

template <class T>
void multiply_add_split(T* __restrict sum, const T* __restrict x, const T* __restrict h, std::size_t stride) noexcept {
  for (std::size_t b = 0; b < stride; ++b) {
    const T xr = x[b], xi = x[stride + b], hr = h[b], hi = h[stride + b];
    sum[b] += xr * hr - xi * hi;
    sum[stride + b] += xr * hi + xi * hr;
  }
}

FXC_VECTOR_CLONES void multiply_add(float* sum, const float* x, const float* h, std::size_t stride) noexcept {
  multiply_add_split(sum, x, h, stride);
}
FXC_VECTOR_CLONES void multiply_add(double* sum, const double* x, const double* h, std::size_t stride) noexcept {
  multiply_add_split(sum, x, h, stride);
}

// head[r] = sum over k < taps of taps[k] * newest[r - k], for r < count: partition 0,
// directly, in float64, each sum in the order of k. A tile of 16 outputs is summed in
// registers over every tap and stored once. Summed in memory a tap at a time, its loads waited
// on the stores before them wherever the buffers happened to lie 4 KiB apart, and its speed
// depended on where they were allocated. Written with vectors of four lanes (one AVX register
// or two SSE ones): as a plain loop over a tile, the compiler reused the overlapping inputs of
// neighbouring taps through scalar shuffles, at half the speed.
using Lanes = double __attribute__((vector_size(4 * sizeof(double))));

FXC_VECTOR_CLONES void sum_head(double* head, const double* taps, std::size_t count_taps, const double* newest,
                                std::size_t count) noexcept {
  std::size_t r0 = 0;
  for (; r0 + 16 <= count; r0 += 16) {
    Lanes a0{}, a1{}, a2{}, a3{};
    for (std::size_t k = 0; k < count_taps; ++k) {
      const double* in = newest + r0 - k;
      const double t = taps[k];
      const Lanes h = {t, t, t, t};
      Lanes x0, x1, x2, x3;
      std::memcpy(&x0, in, sizeof x0);
      std::memcpy(&x1, in + 4, sizeof x1);
      std::memcpy(&x2, in + 8, sizeof x2);
      std::memcpy(&x3, in + 12, sizeof x3);
      a0 += h * x0;
      a1 += h * x1;
      a2 += h * x2;
      a3 += h * x3;
    }
    std::memcpy(head + r0, &a0, sizeof a0);
    std::memcpy(head + r0 + 4, &a1, sizeof a1);
    std::memcpy(head + r0 + 8, &a2, sizeof a2);
    std::memcpy(head + r0 + 12, &a3, sizeof a3);
  }
  for (; r0 < count; ++r0) {
    const double* in = newest + r0;
    double acc = 0;
    for (std::size_t k = 0; k < count_taps; ++k) acc += taps[k] * *(in - k);
    head[r0] = acc;
  }
}

// The float64 inputs sum_head reads for `count` outputs ending at recent + end: float inputs
// are widened once into `window` (P - 1 + count of them), not once per tap.
const double* head_inputs(const double* recent, std::size_t end, std::size_t, std::vector<double>&) noexcept {
  return recent + end;
}
const double* head_inputs(const float* recent, std::size_t end, std::size_t span, std::vector<double>& window) noexcept {
  std::copy(recent + end - span, recent + end, window.begin());
  return window.data() + span;
}

}  // namespace

// Partition p (1 .. M) of block k reads inputs of blocks k - p - 1 and k - p. While block k - 1
// runs, the ring's newest frame is blocks k - 3 and k - 2's, so partition p >= 2 of block k
// reads the frame p - 2 slots before it; partition 1 waits for the frame block k - 1 ends.
// Partitions 2 .. M are summed first, in order, then partition 1: the same order whether the
// calls of block k - 1 summed them (sum_next) or a rebuild sums them at once (block_tail).
template <class T>
void PartitionedConvolver<T>::sum_next(std::span<const T> spectra, PartitionedStream<T>& s, std::size_t done,
                                       std::size_t second) noexcept {
  if (s.next_done >= done) return;
  const std::size_t size = spectrum_size();
  // Partition part + 1 (part 0-based, from 1) reads the frame part - 1 slots before `second`'s.
  std::size_t slot = second >= s.next_done ? second - s.next_done : second + m_ - s.next_done;
  for (; s.next_done < done; ++s.next_done) {
    const std::size_t part = s.next_done + 1;
    multiply_add(s.next.data(), s.spectra.data() + slot * size, spectra.data() + part * size, stride_);
    slot = slot == 0 ? m_ - 1 : slot - 1;
  }
}

// Partition 1 of the block whose newest frame was just pushed, and the block's tail.
template <class T>
void PartitionedConvolver<T>::end_block(std::span<const double> taps, std::span<const T> spectra,
                                        PartitionedStream<T>& s, std::size_t start) noexcept {
  multiply_add(s.next.data(), s.spectra.data() + s.newest * spectrum_size(), spectra.data(), stride_);
  finish_tail(taps, s, start);
  std::fill(s.next.begin(), s.next.end(), T(0));
  s.next_done = 0;
}

// Block k's tail when its first input is recent[start] and the ring's newest frame is blocks
// k - 2 and k - 1's: partitions 2 .. M, which read from the frame before it, then 1, as the
// calls of block k - 1 and the block's end would have.
template <class T>
void PartitionedConvolver<T>::block_tail(std::span<const double> taps, std::span<const T> spectra,
                                         PartitionedStream<T>& s, std::size_t start) noexcept {
  std::fill(s.next.begin(), s.next.end(), T(0));
  s.next_done = 0;
  sum_next(spectra, s, m_ - 1, s.newest == 0 ? m_ - 1 : s.newest - 1);
  end_block(taps, spectra, s, start);
}

template <class T>
void PartitionedConvolver<T>::finish_tail(std::span<const double> taps, PartitionedStream<T>& s,
                                          std::size_t start) noexcept {
  merge_bins<T>(s.next.data(), stride_, spectrum_);
  fft_.inverse(spectrum_, out_);
  std::copy(out_.begin() + static_cast<std::ptrdiff_t>(p_), out_.end(), s.tail.begin());
  if (std::none_of(s.nonfinite.begin(), s.nonfinite.end(), [](unsigned char f) { return f != 0; })) return;
  // The frames counted the non-finite inputs as 0: add their products, each to the outputs its
  // taps from P on reach (output r of the block is recent[start + r]'s). A few bad samples
  // cost P multiply-adds each, not the direct sum of the whole block.
  const std::size_t reach = std::min(start, taps_ - 1);
  for (std::size_t j = start - reach; j < start; ++j) {
    const T v = s.recent[j];
    if (std::isfinite(v)) continue;
    for (std::size_t r = 0; r < p_; ++r) {
      const std::size_t t = start + r - j;
      if (t >= p_ && t < taps_) s.tail[r] = static_cast<T>(static_cast<double>(s.tail[r]) + taps[t] * static_cast<double>(v));
    }
  }
}

// The current block began `phase` inputs ago: the history holds the frames of the M blocks
// before it (the oldest starts (M + 1) P + phase <= history_ inputs back), the same inputs an
// unbroken stream transformed, and the block's tail.
template <class T>
void PartitionedConvolver<T>::rebuild(std::span<const double> taps, std::span<const T> spectra,
                                      std::uint64_t serial, std::span<const T> history, std::size_t phase,
                                      PartitionedStream<T>& s) noexcept {
  std::copy(history.begin(), history.end(), s.recent.begin());
  s.filled = history.size();
  const std::size_t start = s.filled - phase;
  s.newest = m_ - 1;  // the oldest frame first, so that the newest slot holds the last block's
  for (std::size_t back = m_; back >= 1; --back) push_frame(s, start - (back - 1) * p_);
  block_tail(taps, spectra, s, start);
  s.serial = serial;
}

template <class T>
void PartitionedConvolver<T>::convolve(std::span<const double> taps, std::span<const T> spectra,
                                       std::uint64_t serial, std::span<const T> x, std::span<T> y,
                                       std::span<const T> history, std::int64_t& phase_slot,
                                       PartitionedStream<T>& s) noexcept {
  auto phase = static_cast<std::size_t>(phase_slot) % p_;  // a loaded state's is checked (stream_state_bytes)
  if (s.serial == 0) {
    rebuild(taps, spectra, serial, history, phase, s);
  } else if (s.serial != serial) {
    // New taps: the inputs' spectra stand; only the current block's tail is the taps'.
    block_tail(taps, spectra, s, s.filled - phase);
    s.serial = serial;
  }
  const std::size_t keep = history_;  // what the head, a frame and a direct tail read
  for (std::size_t i = 0; i < x.size();) {
    const std::size_t count = std::min(x.size() - i, p_ - phase);
    if (s.filled + count > s.recent.size()) {
      std::copy(s.recent.begin() + static_cast<std::ptrdiff_t>(s.filled - keep),
                s.recent.begin() + static_cast<std::ptrdiff_t>(s.filled), s.recent.begin());
      s.filled = keep;
    }
    // The inputs first: y may overwrite x.
    std::copy(x.begin() + static_cast<std::ptrdiff_t>(i), x.begin() + static_cast<std::ptrdiff_t>(i + count),
              s.recent.begin() + static_cast<std::ptrdiff_t>(s.filled));
    s.filled += count;
    // Partition 0 directly, in float64 (sum_head).
    const double* newest = head_inputs(s.recent.data(), s.filled, p_ - 1 + count, window_);
    sum_head(head_.data(), taps.data(), p_, newest - count, count);
    for (std::size_t r = 0; r < count; ++r) y[i + r] = static_cast<T>(head_[r] + static_cast<double>(s.tail[phase + r]));
    phase += count;
    i += count;
    // The next block's partitions 2 .. M, in step with this block's inputs.
    sum_next(spectra, s, (m_ - 1) * phase / p_, s.newest);
    if (phase == p_) {
      push_frame(s, s.filled);
      end_block(taps, spectra, s, s.filled);
      phase = 0;
    }
  }
  phase_slot = static_cast<std::int64_t>(phase);
}

template class PartitionedConvolver<float>;
template class PartitionedConvolver<double>;

}  // namespace fxc
