// SPDX-License-Identifier: Apache-2.0
// Planar multichannel audio on the host: [channels][samples], float32 or float64,
// each channel contiguous. The owning signal type of the public API.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fxc/types.h>

namespace fxc {

// Signal memory (runtime/signal_memory.h): long signals reuse mappings whose pages are already
// faulted in. Declared here because the allocator below is a template.
void* allocate_signal_memory(std::size_t bytes);
void free_signal_memory(void* block, std::size_t bytes) noexcept;

// Storage for samples from signal memory, left uninitialized when asked (default-init), so a
// buffer a kernel will overwrite is not first zero-filled: for long signals that pass costs as
// much as the filtering.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_signal_memory(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { free_signal_memory(p, n * sizeof(T)); }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

class Signal {
 public:
  struct Uninitialized {};

  Signal() = default;
  /// A zero-filled signal.
  Signal(std::size_t channels, std::size_t samples, DType dtype = DType::f64);
  /// A signal whose samples are left for the caller to write.
  Signal(std::size_t channels, std::size_t samples, DType dtype, Uninitialized);

  std::size_t channels() const { return channels_; }
  std::size_t samples() const { return samples_; }
  DType dtype() const { return dtype_; }

  /// One channel's samples; the dtype must match and the channel exist (else fxc::Error).
  std::span<double> f64(std::size_t channel);
  std::span<const double> f64(std::size_t channel) const;
  std::span<float> f32(std::size_t channel);
  std::span<const float> f32(std::size_t channel) const;

  /// Sample (channel, index) as a double, whatever the dtype; fxc::Error past the end.
  double at(std::size_t channel, std::size_t index) const;

  /// A copy converted to `dtype` (rounding to nearest when narrowing).
  Signal converted(DType dtype) const;

  /// Where the samples came from (a file name), for messages about this signal ("'in.wav' has
  /// 1 channel"); empty: the messages say "its signal".
  const std::string& source() const { return source_; }
  void set_source(std::string source) { source_ = std::move(source); }

 private:
  std::size_t channels_ = 0;
  std::size_t samples_ = 0;
  DType dtype_ = DType::f64;
  std::vector<double, DefaultInitAllocator<double>> f64_;
  std::vector<float, DefaultInitAllocator<float>> f32_;
  std::string source_;
};

}  // namespace fxc
