// SPDX-License-Identifier: Apache-2.0
// The partitioned convolution (runtime/partitioned_convolution.h) against direct sums in long
// double: calls of every length, in place, NaN and infinite inputs, a stream restored from its
// history and phase, and new taps mid-stream.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "runtime/partitioned_convolution.h"
#include "uniform_noise.h"

namespace fxc {
namespace {

std::vector<double> noise(std::size_t n, std::uint64_t seed) { return test::uniform_noise(n, seed); }

// A reverb-like response: noise under a decaying envelope.
std::vector<double> decaying_taps(std::size_t n, std::uint64_t seed) {
  std::vector<double> taps = noise(n, seed);
  for (std::size_t k = 0; k < n; ++k) taps[k] *= std::exp(-3.0 * static_cast<double>(k) / static_cast<double>(n));
  return taps;
}

// y[n] = sum_k taps[k] x[n - k], zeros before the signal; a non-finite input poisons the sums it
// is in (as in the reference interpreter), so the result says which outputs they are.
template <class T>
std::vector<double> direct(const std::vector<double>& taps, const std::vector<T>& x) {
  std::vector<double> y(x.size());
  for (std::size_t n = 0; n < x.size(); ++n) {
    long double sum = 0;
    for (std::size_t k = 0; k < taps.size() && k <= n; ++k)
      sum += static_cast<long double>(taps[k]) * static_cast<long double>(x[n - k]);
    y[n] = static_cast<double>(sum);
  }
  return y;
}

double relative_rms(const std::vector<double>& want, const std::vector<double>& got) {
  double err = 0, power = 0;
  for (std::size_t n = 0; n < want.size(); ++n) {
    err += (got[n] - want[n]) * (got[n] - want[n]);
    power += want[n] * want[n];
  }
  return std::sqrt(err / power);
}

// One channel's convolver, taps' spectra, history and phase, run in calls.
template <class T>
struct Stream {
  PartitionedConvolver<T> convolver;
  std::vector<double> taps;
  std::vector<T> spectra;
  std::uint64_t serial;
  std::vector<T> history;
  std::int64_t phase = 0;
  PartitionedStream<T> memory;

  Stream(const std::vector<double>& h, int block, std::uint64_t serial_number)
      : convolver(h.size(), block), serial(serial_number), history(convolver.history_length(), T(0)) {
    set_taps(h, serial_number);
    convolver.reserve(memory);
  }
  void set_taps(const std::vector<double>& h, std::uint64_t serial_number) {
    taps = h;
    spectra.assign(convolver.partitions() * convolver.spectrum_size(), T(0));
    convolver.transform_taps(taps, spectra);
    serial = serial_number;
  }
  // Runs x[from, from + count) into y (in place when `in_place`).
  void run(const std::vector<T>& x, std::vector<T>& y, std::size_t from, std::size_t count, bool in_place) {
    std::span<T> out = std::span(y).subspan(from, count);
    if (in_place) {
      std::copy(x.begin() + static_cast<std::ptrdiff_t>(from), x.begin() + static_cast<std::ptrdiff_t>(from + count),
                out.begin());
      convolver.convolve(taps, spectra, serial, out, out, history, phase, memory);
    } else {
      convolver.convolve(taps, spectra, serial, std::span<const T>(x).subspan(from, count), out, history, phase,
                         memory);
    }
  }
};

template <class T>
std::vector<double> widened(const std::vector<T>& y) {
  return std::vector<double>(y.begin(), y.end());
}

template <class T>
void check_calls_of_every_length(double tolerance) {
  const std::vector<double> taps = decaying_taps(1500, 3);
  std::vector<T> x(12000);
  std::vector<double> source = noise(x.size(), 4);
  for (std::size_t n = 0; n < x.size(); ++n) x[n] = static_cast<T>(source[n]);
  const std::vector<double> want = direct(taps, x);
  for (int block : {64, 256, 1024}) {  // P = 32, 128, 512: 46, 11 and 2 FFT partitions
    CAPTURE(block);
    Stream<T> s(taps, block, 1);
    std::vector<T> y(x.size());
    std::mt19937 rng(static_cast<unsigned>(block));
    const std::size_t p = static_cast<std::size_t>(block / 2);
    // Block-edge lengths first, then random ones, some far longer than a block.
    std::vector<std::size_t> lengths = {1, p - 1, p, p + 1, 2 * p, 3, 0, 5 * p + 7};
    std::size_t at = 0;
    for (std::size_t k = 0; at < x.size(); ++k) {
      std::size_t count = k < lengths.size() ? lengths[k] : std::uniform_int_distribution<std::size_t>(0, 900)(rng);
      count = std::min(count, x.size() - at);
      s.run(x, y, at, count, k % 2 == 1);
      at += count;
    }
    const double e = relative_rms(want, widened(y));
    MESSAGE("P = " << p << ", " << (std::is_same_v<T, float> ? "float32" : "float64")
                   << ": relative RMS error against direct sums " << e);
    CHECK(e <= tolerance);
  }
}

TEST_CASE("a partitioned convolution equals direct sums in calls of every length, in place or not") {
  // Float64: FFTs of 64 to 1024 points (measured: see the MESSAGE, ~1e-16). Float32: the FFT
  // partitions' spectra in float32 (RealFft<float>) and partition 0 summed in float64, about the
  // float32 overlap-save's 1e-7 (measured 0.8e-7 to 2.2e-7 over the three partition sizes).
  check_calls_of_every_length<double>(1e-14);
  check_calls_of_every_length<float>(5e-7);
}

TEST_CASE("a partitioned convolution restored from its history and phase goes on bit for bit") {
  const std::vector<double> taps = decaying_taps(700, 5);
  std::vector<float> x(6000);
  std::vector<double> source = noise(x.size(), 6);
  for (std::size_t n = 0; n < x.size(); ++n) x[n] = static_cast<float>(source[n]);
  Stream<float> a(taps, 128, 1);
  std::vector<float> ya(x.size()), yb(x.size());
  a.run(x, ya, 0, 1000, false);  // 1000 = 15 blocks of 64 and 40: mid-block
  CHECK(a.phase == 1000 % 64);
  // The stream's history is the last inputs; the chain's copy is not written once built.
  const std::span<const float> now = current_history(a.memory, std::span<const float>(a.history));
  REQUIRE(now.size() == a.convolver.history_length());
  CHECK(std::equal(now.begin(), now.end(), x.begin() + static_cast<std::ptrdiff_t>(1000 - now.size())));
  CHECK(std::all_of(a.history.begin(), a.history.end(), [](float v) { return v == 0.0f; }));
  // A second stream with the first's state alone (history and phase), built from nothing.
  Stream<float> b(taps, 128, 1);
  b.history.assign(now.begin(), now.end());
  b.phase = a.phase;
  for (std::size_t at = 1000; at < x.size(); at += 333) {
    const std::size_t count = std::min<std::size_t>(333, x.size() - at);
    a.run(x, ya, at, count, false);
    b.run(x, yb, at, count, false);
  }
  bool same = true;
  for (std::size_t n = 1000; n < x.size(); ++n) same = same && ya[n] == yb[n];
  CHECK(same);

  // New taps mid-stream (a new serial): from there on the direct sums of the new taps over
  // every input, the earlier ones included. At 2500 the block has seen 4 of its 64 inputs and
  // the next block's partial sum holds none of its partitions; at 2550, 54 and 7 of 9 (summed
  // with the old taps, which must not reach the outputs).
  const std::vector<double> other = decaying_taps(700, 9);
  const std::vector<double> want = direct(other, x);
  for (std::size_t at : {std::size_t{2500}, std::size_t{2550}}) {
    CAPTURE(at);
    Stream<float> c(taps, 128, 1);
    std::vector<float> yc(x.size());
    c.run(x, yc, 0, at, false);
    if (at == 2550) CHECK(c.memory.next_done == 7);
    c.set_taps(other, 2);
    c.run(x, yc, at, x.size() - at, false);
    std::vector<double> tail_want(want.begin() + static_cast<std::ptrdiff_t>(at), want.end());
    std::vector<double> tail_got(yc.begin() + static_cast<std::ptrdiff_t>(at), yc.end());
    CHECK(relative_rms(tail_want, tail_got) <= 5e-7);
  }
}

TEST_CASE("a partitioned convolution gives the same bits in calls of one sample as in one call") {
  // The next block's FFT partitions are summed a share per call (sum_next), the last share and
  // partition 1 when the block ends: whatever the calls, the same sums in the same order.
  const std::vector<double> taps = decaying_taps(1500, 31);
  std::vector<float> x(4000);
  std::vector<double> source = noise(x.size(), 32);
  for (std::size_t n = 0; n < x.size(); ++n) x[n] = static_cast<float>(source[n]);
  x[2100] = std::numeric_limits<float>::quiet_NaN();  // the direct additions too
  x[2900] = -std::numeric_limits<float>::infinity();
  Stream<float> whole(taps, 128, 1), single(taps, 128, 1), mixed(taps, 128, 1);
  std::vector<float> yw(x.size()), ys(x.size()), ym(x.size());
  whole.run(x, yw, 0, x.size(), false);
  for (std::size_t n = 0; n < x.size(); ++n) single.run(x, ys, n, 1, false);
  for (std::size_t at = 0, k = 0; at < x.size(); ++k) {
    const std::size_t count = std::min<std::size_t>(x.size() - at, 1 + (k * 37) % 150);
    mixed.run(x, ym, at, count, true);
    at += count;
  }
  // Bit for bit, NaN where NaN: compared as bytes.
  CHECK(std::memcmp(yw.data(), ys.data(), yw.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(yw.data(), ym.data(), yw.size() * sizeof(float)) == 0);
}

TEST_CASE("a partitioned stream cleared to silence goes on as one rebuilt from a zero history") {
  // clear_partitioned_stream (a reset) keeps the stream built, with zero spectra and tail,
  // instead of M transforms at the next call; the outputs after it are the rebuilt ones.
  const std::vector<double> taps = decaying_taps(900, 21);
  std::vector<float> x(5000);
  std::vector<double> source = noise(x.size(), 22);
  for (std::size_t n = 0; n < x.size(); ++n) x[n] = static_cast<float>(source[n]);
  x[1400] = std::numeric_limits<float>::quiet_NaN();  // a non-finite frame must not outlive the clear
  Stream<float> a(taps, 256, 1);
  std::vector<float> ya(x.size()), yb(x.size());
  a.run(x, ya, 0, 1500, false);
  clear_partitioned_stream(a.memory, a.history.size());
  a.phase = 0;
  CHECK(a.memory.serial == 1);
  Stream<float> b(taps, 256, 1);
  // Cleared before it was ever built (a reset after a state was loaded): silent spectra under
  // a serial no taps have, so that its first call recomputes only the block's tail.
  Stream<float> unbuilt(taps, 256, 1);
  clear_partitioned_stream(unbuilt.memory, unbuilt.history.size());
  CHECK(unbuilt.memory.serial == kSilentSpectraSerial);
  std::vector<float> yu(x.size());
  a.run(x, ya, 1500, x.size() - 1500, false);
  b.run(x, yb, 1500, x.size() - 1500, false);
  unbuilt.run(x, yu, 1500, x.size() - 1500, false);
  bool same = true, same_unbuilt = true;
  for (std::size_t n = 1500; n < x.size(); ++n) {
    same = same && ya[n] == yb[n];
    same_unbuilt = same_unbuilt && yu[n] == yb[n];
  }
  CHECK(same);
  CHECK(same_unbuilt);
  // A history length the stream was not sized for leaves it to be rebuilt, never half-built.
  clear_partitioned_stream(a.memory, 5);
  CHECK(a.memory.serial == 0);
}

TEST_CASE("a partitioned convolution's non-finite outputs are the direct sums' own: NaN, +inf or -inf") {
  // +inf and -inf both in reach make NaN, a zero tap times an infinity makes NaN, in the
  // direct partition and the FFT partitions alike.
  std::vector<double> taps = decaying_taps(700, 41);
  taps[5] = 0.0;    // partition 0 (P = 64)
  taps[300] = 0.0;  // an FFT partition
  std::vector<float> x(3000);
  std::vector<double> source = noise(x.size(), 42);
  for (std::size_t n = 0; n < x.size(); ++n) x[n] = static_cast<float>(source[n]);
  const float inf = std::numeric_limits<float>::infinity();
  x[400] = inf;
  x[600] = -inf;
  x[1500] = inf;
  x[2200] = std::numeric_limits<float>::quiet_NaN();
  Stream<float> s(taps, 128, 1);
  std::vector<float> y(x.size());
  for (std::size_t at = 0; at < x.size(); at += 77) s.run(x, y, at, std::min<std::size_t>(77, x.size() - at), false);
  const std::vector<double> want = direct(taps, x);
  auto kind = [](double v) { return std::isnan(v) ? 0 : std::isinf(v) ? (v > 0 ? 1 : 2) : 3; };
  std::size_t wrong = 0;
  for (std::size_t n = 0; n < x.size(); ++n) wrong += kind(y[n]) != kind(want[n]);
  CHECK(wrong == 0);
  CHECK(kind(want[1505]) == 0);  // the zero tap's NaN is there to be matched
  CHECK(kind(want[700]) == 0);   // and +inf meeting -inf
}

TEST_CASE("a NaN or an infinity reaches only the outputs a partitioned convolution's taps touch") {
  const std::vector<double> taps = decaying_taps(900, 11);
  std::vector<float> x(8000);
  std::vector<double> source = noise(x.size(), 12);
  for (std::size_t n = 0; n < x.size(); ++n) x[n] = static_cast<float>(source[n]);
  x[1000] = std::numeric_limits<float>::infinity();
  x[5000] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<double> want = direct(taps, x);
  Stream<float> s(taps, 256, 1);
  std::vector<float> y(x.size());
  for (std::size_t at = 0; at < x.size(); at += 100) s.run(x, y, at, std::min<std::size_t>(100, x.size() - at), false);
  std::size_t differ = 0, far = 0;
  for (std::size_t n = 0; n < x.size(); ++n) {
    const bool reached = !std::isfinite(want[n]);
    CHECK_MESSAGE(reached == ((n >= 1000 && n < 1900) || (n >= 5000 && n < 5900)), n);
    differ += std::isfinite(y[n]) != !reached;
    if (!reached && std::abs(y[n] - want[n]) > 1e-4) ++far;
  }
  CHECK(differ == 0);
  CHECK(far == 0);  // the blocks summed directly are right too
}

}  // namespace
}  // namespace fxc
