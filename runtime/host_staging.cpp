// SPDX-License-Identifier: Apache-2.0
#include "runtime/host_staging.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "runtime/thread_pool.h"

namespace fxc {
namespace {

// Splits frames [0, n) of a staging copy over the shared pool's threads: a piece is up to
// 128 MB, and one core copies it at a fraction of the memory's bandwidth.
void split_frames(std::size_t n, std::size_t channels, const std::function<void(std::size_t, std::size_t)>& copy) {
  constexpr std::size_t kSamplesPerPart = std::size_t{1} << 18;  // 1 MB of float32: worth a thread
  ThreadPool& pool = ThreadPool::shared();
  const std::size_t wanted = std::max<std::size_t>(1, n * std::max<std::size_t>(channels, 1) / kSamplesPerPart);
  const int parts = static_cast<int>(std::min<std::size_t>(wanted, static_cast<std::size_t>(pool.threads())));
  if (parts <= 1) return copy(0, n);
  pool.run(parts, [&](int p) {
    std::size_t a = n * static_cast<std::size_t>(p) / static_cast<std::size_t>(parts);
    std::size_t b = n * static_cast<std::size_t>(p + 1) / static_cast<std::size_t>(parts);
    copy(a, b);
  });
}

}  // namespace

template <class T>
void stage_in(const void* const* channels, std::size_t ch, std::size_t start, std::size_t n, T* to) {
  split_frames(n, ch, [&](std::size_t a, std::size_t b) {
    for (std::size_t c = 0; c < ch; ++c) {
      const T* from = static_cast<const T*>(channels[c]) + start;
      std::copy(from + a, from + b, to + c * n + a);
    }
  });
}

template <class T>
void stage_out(const T* from, void* const* channels, std::size_t ch, std::size_t start, std::size_t n) {
  split_frames(n, ch, [&](std::size_t a, std::size_t b) {
    for (std::size_t c = 0; c < ch; ++c)
      std::copy(from + c * n + a, from + c * n + b, static_cast<T*>(channels[c]) + start + a);
  });
}

template void stage_in<float>(const void* const*, std::size_t, std::size_t, std::size_t, float*);
template void stage_in<double>(const void* const*, std::size_t, std::size_t, std::size_t, double*);
template void stage_out<float>(const float*, void* const*, std::size_t, std::size_t, std::size_t);
template void stage_out<double>(const double*, void* const*, std::size_t, std::size_t, std::size_t);

std::vector<std::vector<const void*>> channel_pointers(std::span<const Signal* const> signals) {
  std::vector<std::vector<const void*>> pointers;
  for (const Signal* s : signals) {
    std::vector<const void*> channels;
    for (std::size_t c = 0; c < s->channels(); ++c)
      channels.push_back(s->dtype() == DType::f32 ? static_cast<const void*>(s->f32(c).data()) : s->f64(c).data());
    pointers.push_back(std::move(channels));
  }
  return pointers;
}

std::vector<std::vector<void*>> channel_pointers(std::vector<Signal>& signals) {
  std::vector<std::vector<void*>> pointers;
  for (Signal& s : signals) {
    std::vector<void*> channels;
    for (std::size_t c = 0; c < s.channels(); ++c)
      channels.push_back(s.dtype() == DType::f32 ? static_cast<void*>(s.f32(c).data()) : s.f64(c).data());
    pointers.push_back(std::move(channels));
  }
  return pointers;
}

}  // namespace fxc
