// SPDX-License-Identifier: Apache-2.0
#include "runtime/chunked_scan.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <vector>

#include "codegen/chain_layout.h"
#include "passes/cost_model.h"
#include "runtime/flush_denormals.h"
#include "runtime/linear_chain.h"
#include "runtime/thread_pool.h"

namespace fxc {
namespace {

// Runs `work(begin, end)` over [0, count) split across `threads` threads of the shared pool
// (runtime/thread_pool.h), in multiples of `grain` so vector groups stay whole.
template <class F>
void parallel_for(std::int64_t count, std::int64_t grain, int threads, F work) {
  std::int64_t groups = (count + grain - 1) / grain;
  int parts = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, groups)));
  std::int64_t per_part = (groups + parts - 1) / parts * grain;
  ThreadPool::shared().run(parts, [&](int p) {
    FlushDenormals ftz;  // per thread, as on the caller's
    std::int64_t begin = std::min(count, p * per_part);
    std::int64_t end = p + 1 == parts ? count : std::min(count, begin + per_part);
    if (begin < end) work(begin, end);
  });
}

}  // namespace

template <class T>
void add_start_responses(const LinearChain& linear, const std::vector<double>& starts, T* const* out,
                         std::int64_t chunks, std::int64_t length, double tolerance, int threads) {
  // Chunks step side by side, 8 or 4 at a time (LinearChain::decay, vectors across them; one
  // at a time, a chunk's step was a chain of dependent operations, 29% of W5's chunked scan),
  // and each stops where it would alone, so the bits are a lone chunk's.
  const int d = linear.dimension();
  constexpr int kMaxWidth = LinearChain::kDecayLanes;
  constexpr std::int64_t kCheck = 32;
  std::vector<std::int64_t> decaying, endless;
  for (std::int64_t lane = 0; lane < chunks; ++lane) {
    const double* z = starts.data() + lane * d;
    // A NaN or infinite state (after a NaN or an infinity in the input) never decays: as in
    // a sequential run, it reaches every later sample of the chunk.
    if (!std::all_of(z, z + d, [](double v) { return std::isfinite(v); })) endless.push_back(lane);
    else if (std::any_of(z, z + d, [](double v) { return v != 0; })) decaying.push_back(lane);
  }
  // Groups of 8 give each step two independent vectors; groups of 4 leave fewer lanes idle
  // where there are few chunks (a channel of four chunks has three to fix up) and give every
  // thread a group where there are few groups.
  const auto count = static_cast<std::int64_t>(decaying.size());
  const int width = count <= LinearChain::kNarrowDecayLanes || (count + kMaxWidth - 1) / kMaxWidth < threads
                        ? LinearChain::kNarrowDecayLanes
                        : kMaxWidth;
  const std::int64_t groups = (count + width - 1) / width;
  parallel_for(groups, 1, threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> z(static_cast<std::size_t>(d) * width), response(kCheck * width);
    for (std::int64_t group = begin; group < end; ++group) {
      std::array<T*, kMaxWidth> y{};  // null: a lane without a chunk, or one that has decayed
      std::array<double, kMaxWidth> limit{};
      std::fill(z.begin(), z.end(), 0.0);
      int running = 0;
      for (int l = 0; l < width; ++l) {
        const std::int64_t chunk = group * width + l;
        if (chunk >= count) continue;
        const double* start = starts.data() + decaying[chunk] * d;
        double scale = 0;
        for (int r = 0; r < d; ++r) {
          z[r * width + l] = start[r];
          scale = std::max(scale, std::abs(start[r]));
        }
        limit[l] = tolerance * scale;
        y[l] = out[decaying[chunk]];
        ++running;
      }
      for (std::int64_t i = 0; i < length && running > 0; i += kCheck) {
        const int n = static_cast<int>(std::min(kCheck, length - i));
        linear.decay(z.data(), response.data(), n, width);
        for (int l = 0; l < width; ++l) {
          if (!y[l]) continue;
          T* samples = y[l] + i;
          for (int j = 0; j < n; ++j) samples[j] = static_cast<T>(samples[j] + response[j * width + l]);
          if (n < kCheck) continue;
          double left = 0;
          for (int r = 0; r < d; ++r) left = std::max(left, std::abs(z[r * width + l]));
          if (left <= limit[l]) {
            y[l] = nullptr;
            --running;
          }
        }
      }
    }
  });
  parallel_for(static_cast<std::int64_t>(endless.size()), 1, threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> z(static_cast<std::size_t>(d));
    for (std::int64_t e = begin; e < end; ++e) {
      const std::int64_t lane = endless[e];
      std::copy(starts.begin() + lane * d, starts.begin() + (lane + 1) * d, z.begin());
      T* y = out[lane];
      for (std::int64_t i = 0; i < length; ++i) y[i] = static_cast<T>(y[i] + linear.step(z.data(), 0.0));
    }
  });
}

template void add_start_responses<float>(const LinearChain&, const std::vector<double>&, float* const*, std::int64_t,
                                         std::int64_t, double, int);
template void add_start_responses<double>(const LinearChain&, const std::vector<double>&, double* const*,
                                          std::int64_t, std::int64_t, double, int);

namespace {

// T: the signal's type; C: the kernel's coefficients and state (compute_dtype).
template <class T, class C>
void run(const ir::Chain& chain, FxcChainKernel kernel, const void* const* in, void* const* out,
         std::int64_t channels, std::int64_t n, C* channel_state, int lanes, int threads) {
  LinearChain linear(chain);
  const int d = linear.dimension();

  // K chunks per channel, K x channels a multiple of the lanes (passes::cpu_time_chunks).
  const passes::TimeChunks chunks = passes::cpu_time_chunks(channels, n, lanes, chain.chunk_length);
  const std::int64_t k = chunks.per_channel;
  const std::int64_t length = chunks.length;
  const std::int64_t lane_count = channels * k;
  // Threads pay only on long work: a thread's start and join cost tens of microseconds, and a
  // busy core makes the join wait (W4, 1 M samples, went from 0.8 to 8 ms with the other
  // core loaded).
  if (lane_count * length < (std::int64_t{1} << 22)) threads = 1;

  std::vector<const void*> in_ptrs(lane_count);
  std::vector<void*> out_ptrs(lane_count);
  for (std::int64_t c = 0; c < channels; ++c)
    for (std::int64_t j = 0; j < k; ++j) {
      in_ptrs[c * k + j] = static_cast<const T*>(in[c]) + j * length;
      out_ptrs[c * k + j] = static_cast<T*>(out[c]) + j * length;
    }
  std::vector<C> state(lane_count * d, C(0));
  std::vector<C> params;
  for (double v : codegen::values_of(chain).params) params.push_back(static_cast<C>(v));
  parallel_for(lane_count, lanes, threads, [&](std::int64_t begin, std::int64_t end) {
    FxcChainArgs args{in_ptrs.data() + begin, out_ptrs.data() + begin, end - begin, length,
                      params.data(), nullptr, state.data() + begin * d, nullptr, nullptr};
    kernel(&args);
  });

  // The exact state at each chunk's start: s[j+1] = end_state_from_zero[j] + A^L s[j].
  std::vector<double> a_to_l = linear.transition_power(length);
  std::vector<double> starts(lane_count * d, 0.0), carry(d), next(d);
  std::vector<std::vector<double>> tail_state(channels, std::vector<double>(d, 0.0));
  for (std::int64_t c = 0; c < channels; ++c) {
    for (int r = 0; r < d; ++r) carry[r] = static_cast<double>(channel_state[c * d + r]);
    for (std::int64_t j = 0; j < k; ++j) {
      std::copy(carry.begin(), carry.end(), starts.begin() + (c * k + j) * d);
      for (int r = 0; r < d; ++r) {
        double sum = state[(c * k + j) * d + r];
        for (int q = 0; q < d; ++q) sum += a_to_l[r * d + q] * carry[q];
        next[r] = sum;
      }
      carry.swap(next);
    }
    tail_state[c] = carry;
  }

  // Each chunk's output plus its response to its true starting state.
  std::vector<T*> chunk_outputs(lane_count);
  for (std::int64_t lane = 0; lane < lane_count; ++lane) chunk_outputs[lane] = static_cast<T*>(out_ptrs[lane]);
  add_start_responses<T>(linear, starts, chunk_outputs.data(), lane_count, length,
                         passes::decay_tolerance(std::is_same_v<T, float> ? DType::f32 : DType::f64), threads);

  // The samples after the last whole chunk, one at a time from the carried state.
  for (std::int64_t c = 0; c < channels; ++c) {
    const T* x = static_cast<const T*>(in[c]);
    T* y = static_cast<T*>(out[c]);
    for (std::int64_t i = k * length; i < n; ++i)
      y[i] = static_cast<T>(linear.step(tail_state[c].data(), static_cast<double>(x[i])));
    for (int r = 0; r < d; ++r) channel_state[c * d + r] = static_cast<C>(tail_state[c][r]);
  }
}

}  // namespace

bool chunked_scan_applies(const ir::Chain& chain) {
  bool has_section = false;
  for (const ir::Stage& stage : chain.stages) {
    if (std::holds_alternative<ir::SosCascade>(stage)) has_section = true;
    else if (!std::holds_alternative<ir::Gain>(stage)) return false;
  }
  return has_section;
}

void run_chunked_scan(const ir::Chain& chain, FxcChainKernel kernel, const void* const* in,
                      void* const* out, std::size_t channels, std::size_t samples, DType signal,
                      void* state, int lanes, int threads) {
  DType compute = codegen::compute_dtype(chain, signal);
  auto c = static_cast<std::int64_t>(channels);
  auto n = static_cast<std::int64_t>(samples);
  if (signal == DType::f64)
    run<double, double>(chain, kernel, in, out, c, n, static_cast<double*>(state), lanes, threads);
  else if (compute == DType::f64)
    run<float, double>(chain, kernel, in, out, c, n, static_cast<double*>(state), lanes, threads);
  else
    run<float, float>(chain, kernel, in, out, c, n, static_cast<float*>(state), lanes, threads);
}

}  // namespace fxc
