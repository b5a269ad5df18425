// SPDX-License-Identifier: Apache-2.0
// FIR filtering of a stream in short calls by a uniformly partitioned convolution, for long
// filters: the first partition's taps directly, sample by sample, the rest by FFT, one block
// of P inputs at a time. A call of any length costs about its own length, not the filter's:
// overlap-save (runtime/fft_convolution.h) transforms at least taps + 1 points per call.
#pragma once

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/fft_convolution.h"

namespace fxc {

/// Whether a FIR of `taps` taps scheduled with FFT block `fft_block` runs as a partitioned
/// convolution (a block not above the taps: passes::fft_block_for) rather than overlap-save.
inline bool runs_partitioned(std::size_t taps, int fft_block) {
  return fft_block > 0 && static_cast<std::size_t>(fft_block) <= taps;
}

/// The inputs a FIR run by FFT keeps between calls, its history: taps - 1 for overlap-save
/// (an FFT block above the taps); for a partitioned convolution (blocks of P = block / 2,
/// M FFT partitions) (M + 2) P - 1, in which every frame of the last M blocks lies whatever the
/// phase, so that a stream restored from its history and phase computes the same spectra, bit
/// for bit.
std::size_t fft_history_length(std::size_t taps, int fft_block);

/// The values of one spectrum of a partitioned convolution with blocks of P inputs as it keeps
/// them: split, the P + 1 bins' real parts then their imaginary parts, each padded with zeros
/// to a multiple of 8, so that the spectral products run in whole vectors with no shuffles.
inline std::size_t split_spectrum_size(std::size_t p) { return 2 * ((p + 1 + 7) / 8 * 8); }

/// One channel's memory of a partitioned convolution. The stream's state is its history
/// (fft_history_length) and its phase (the inputs of the current block seen, kept with the
/// chain's ring position); this is derived from them, and rebuilt from them when `serial` is 0
/// (reserved, reset or restored). Once built it holds the newest history itself, in `recent`:
/// the chain's copy is brought up to date only where it is read (current_history), since
/// copying the whole history on every call cost a short block a fifth of its time. Plain
/// values, so a copy is a snapshot.
template <class T>
struct PartitionedStream {
  /// The serial number of the taps' spectra the tail was made with (GraphValues); 0: not
  /// built. Another serial (new taps) recomputes the current block's tail alone.
  std::uint64_t serial = 0;
  std::size_t newest = 0;  ///< the ring's slot of the last complete block's spectrum
  std::size_t filled = 0;  ///< inputs in `recent`, the newest last
  std::vector<T> recent;   ///< the last inputs: at least the history's length once built
  /// [slot][spectrum_size()]: the spectra of the last M frames of 2P inputs (a block and the
  /// one before), split into real and imaginary parts (PartitionedConvolver::transform_taps),
  /// and whether each frame held a NaN or an infinity.
  std::vector<T> spectra;
  std::vector<unsigned char> nonfinite;
  std::vector<T> tail;  ///< the current block's outputs from every partition but the first
  /// The next block's spectrum summed over FFT partitions 2 .. M (their frames are in the
  /// ring already), `next_done` of them so far: each call adds its share, so that the call
  /// that ends a block adds only partition 1 and transforms, and calls cost alike. Split.
  std::vector<T> next;
  std::size_t next_done = 0;
};

/// The serial of a stream made silent before it knew its taps: even, where every taps'
/// spectra's serial is odd (GraphValues::fft_serial), so its first call recomputes the block's
/// tail, zero, from the zero spectra: one block's work, not M transforms.
inline constexpr std::uint64_t kSilentSpectraSerial = 2;

/// Silence, as an unbuilt stream rebuilds it from a zero history at phase 0 (zero spectra, a
/// zero tail), without the M transforms: a reset on the audio thread then costs no more than a
/// call. `history_length` is the chain's history's; a stream not sized for it (reserve) is
/// left unbuilt.
template <class T>
void clear_partitioned_stream(PartitionedStream<T>& stream, std::size_t history_length) {
  const std::size_t p = stream.tail.size();
  // reserve's sizes: recent holds two histories and 8 P (PartitionedConvolver::capacity).
  if (p == 0 || stream.nonfinite.empty() || stream.recent.size() != 2 * history_length + 8 * p) {
    stream.serial = 0;
    return;
  }
  if (stream.serial == 0) stream.serial = kSilentSpectraSerial;
  std::fill(stream.recent.begin(), stream.recent.begin() + static_cast<std::ptrdiff_t>(history_length), T(0));
  stream.filled = history_length;
  stream.newest = stream.nonfinite.size() - 1;  // where a rebuild's M frames leave it
  std::fill(stream.spectra.begin(), stream.spectra.end(), T(0));
  std::fill(stream.nonfinite.begin(), stream.nonfinite.end(), static_cast<unsigned char>(0));
  std::fill(stream.tail.begin(), stream.tail.end(), T(0));
  std::fill(stream.next.begin(), stream.next.end(), T(0));
  stream.next_done = 0;
}

/// The history a partitioned stream has now: `history` (the chain's copy) while `stream` is
/// unbuilt, else the last history.size() inputs it holds. What saves, converts or compares a
/// chain's state reads this, never the chain's copy alone.
template <class T>
std::span<const T> current_history(const PartitionedStream<T>& stream, std::span<const T> history) {
  if (stream.serial == 0 || stream.filled < history.size()) return history;
  return std::span<const T>(stream.recent).subspan(stream.filled - history.size(), history.size());
}

/// The plans and work memory of a uniformly partitioned convolution of `taps` taps with
/// blocks of P = block / 2 inputs (block a power of two, 2 <= block <= taps): partition 0
/// (taps [0, P)) is summed directly for every output, in float64; partitions 1 .. M (taps
/// [pP, pP + P), M = ceil((taps - P) / P)) by overlap-save with FFTs of 2P points, each
/// block's tail summed over the partitions in the spectrum and transformed back once. No
/// latency: every output is exact when its input arrives. One object serves one thread at a
/// time, for every channel of a node (their memory is each one's PartitionedStream).
template <class T>
class PartitionedConvolver {
 public:
  PartitionedConvolver(std::size_t taps, int block);
  PartitionedConvolver(const PartitionedConvolver&) = delete;
  PartitionedConvolver& operator=(const PartitionedConvolver&) = delete;

  std::size_t taps() const { return taps_; }
  std::size_t partitions() const { return m_; }    ///< M, the FFT partitions
  /// The values of one spectrum as this convolver keeps it (split_spectrum_size).
  std::size_t spectrum_size() const { return 2 * stride_; }

  /// The spectra of partitions 1 .. M of `taps`, divided by 2P (the inverse is
  /// unnormalized), into `spectra` (partitions() x spectrum_size()): what convolve()
  /// multiplies by.
  void transform_taps(std::span<const double> taps, std::span<T> spectra);

  /// Sizes a channel's memory (allocates; convolve() then does not), unbuilt.
  void reserve(PartitionedStream<T>& stream) const;
  /// Whether `stream` is sized for this convolver (reserve).
  bool reserved(const PartitionedStream<T>& stream) const {
    return stream.recent.size() == capacity() && stream.spectra.size() == m_ * spectrum_size() &&
           stream.tail.size() == p_ && stream.next.size() == spectrum_size();
  }

  /// y = taps * x, as FftConvolver::convolve, except that `history` (history_length()
  /// inputs before x[0]) is read only to rebuild an unbuilt stream and is not written: the
  /// stream keeps the newest inputs (current_history). `y` may alias `x`; `phase` (0 <= phase < P) is the
  /// inputs of the current block seen, and is left so. `spectra` and `serial` are
  /// transform_taps' result and its serial number; an unbuilt stream (serial 0: reserved or
  /// restored) is rebuilt from `history` and `phase` first (M forward FFTs), one built for
  /// other taps (or cleared, kSilentSpectraSerial) recomputes its current block's tail (as
  /// one block does). A NaN or an infinity reaches only the outputs whose sums include it:
  /// the FFTs count it as 0 and its products are added directly. Allocates nothing once
  /// `stream` is reserved.
  void convolve(std::span<const double> taps, std::span<const T> spectra, std::uint64_t serial,
                std::span<const T> x, std::span<T> y, std::span<const T> history, std::int64_t& phase,
                PartitionedStream<T>& stream) noexcept;

  std::size_t history_length() const { return history_; }

 private:
  void rebuild(std::span<const double> taps, std::span<const T> spectra, std::uint64_t serial,
               std::span<const T> history, std::size_t phase, PartitionedStream<T>& stream) noexcept;
  /// The spectrum of the 2P inputs before recent[end] into the ring's next slot, split.
  void push_frame(PartitionedStream<T>& stream, std::size_t end) noexcept;
  /// The tail of the block whose first input is (or will be) recent[start], from the ring's
  /// spectra, with the products of non-finite inputs added directly; `stream.next` restarts.
  void block_tail(std::span<const double> taps, std::span<const T> spectra,
                  PartitionedStream<T>& stream, std::size_t start) noexcept;
  /// Adds FFT partitions to `stream.next` until `done` of partitions 2 .. M are in, partition
  /// 2 reading the ring's slot `second` and each next one the slot before.
  void sum_next(std::span<const T> spectra, PartitionedStream<T>& stream, std::size_t done,
                std::size_t second) noexcept;
  /// Adds partition 1 (the ring's newest frame) to `stream.next`, makes the tail of the block
  /// that starts at recent[start] from it, and restarts `stream.next`.
  void end_block(std::span<const double> taps, std::span<const T> spectra, PartitionedStream<T>& stream,
                 std::size_t start) noexcept;
  /// The tail from `stream.next` (the spectrum summed over every FFT partition): the inverse
  /// transform, then the non-finite inputs' products.
  void finish_tail(std::span<const double> taps, PartitionedStream<T>& stream, std::size_t start) noexcept;
  /// Room for a second history's worth of inputs after the history, so that moving the
  /// newest history back to the front costs about one copied input per input.
  std::size_t capacity() const { return 2 * history_ + 8 * p_; }

  std::size_t taps_, p_, m_, history_, stride_;
  RealFft<T> fft_;
  std::vector<T> frame_, out_;
  std::vector<std::complex<T>> spectrum_;  ///< an FFT's bins, before they are split or after merged
  std::vector<double> head_;
  std::vector<double> window_;  ///< a float stream's partition-0 inputs, widened (head_inputs)
};

extern template class PartitionedConvolver<float>;
extern template class PartitionedConvolver<double>;

}  // namespace fxc
