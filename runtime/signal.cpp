// SPDX-License-Identifier: Apache-2.0
#include "runtime/signal.h"

#include "ir/dtype.h"

#include <cstdint>
#include <new>

#include "support/diagnostics.h"

namespace fxc {
namespace {

// channels x samples; std::bad_alloc when that many samples cannot exist in memory, so that a
// huge size is reported as out of memory and never wraps around to a small buffer.
std::size_t sample_count(std::size_t channels, std::size_t samples, DType dtype) {
  std::size_t count = 0, bytes = 0;
  if (__builtin_mul_overflow(channels, samples, &count) ||
      __builtin_mul_overflow(count, size_of(dtype), &bytes) ||
      bytes > static_cast<std::size_t>(PTRDIFF_MAX))
    throw std::bad_alloc();
  return count;
}

}  // namespace

Signal::Signal(std::size_t channels, std::size_t samples, DType dtype)
    : channels_(channels), samples_(samples), dtype_(dtype) {
  if (dtype == DType::f64)
    f64_.assign(sample_count(channels, samples, dtype), 0.0);
  else
    f32_.assign(sample_count(channels, samples, dtype), 0.0f);
}

Signal::Signal(std::size_t channels, std::size_t samples, DType dtype, Uninitialized)
    : channels_(channels), samples_(samples), dtype_(dtype) {
  if (dtype == DType::f64)
    f64_.resize(sample_count(channels, samples, dtype));
  else
    f32_.resize(sample_count(channels, samples, dtype));
}

std::span<double> Signal::f64(std::size_t channel) {
  FXC_INTERNAL_ASSERT(dtype_ == DType::f64 && channel < channels_, "bad f64 channel access");
  return {f64_.data() + channel * samples_, samples_};
}
std::span<const double> Signal::f64(std::size_t channel) const {
  FXC_INTERNAL_ASSERT(dtype_ == DType::f64 && channel < channels_, "bad f64 channel access");
  return {f64_.data() + channel * samples_, samples_};
}
std::span<float> Signal::f32(std::size_t channel) {
  FXC_INTERNAL_ASSERT(dtype_ == DType::f32 && channel < channels_, "bad f32 channel access");
  return {f32_.data() + channel * samples_, samples_};
}
std::span<const float> Signal::f32(std::size_t channel) const {
  FXC_INTERNAL_ASSERT(dtype_ == DType::f32 && channel < channels_, "bad f32 channel access");
  return {f32_.data() + channel * samples_, samples_};
}

double Signal::at(std::size_t channel, std::size_t index) const {
  return dtype_ == DType::f64 ? f64(channel)[index] : f32(channel)[index];
}

Signal Signal::converted(DType dtype) const {
  if (dtype == dtype_) return *this;
  Signal out;
  out.channels_ = channels_;
  out.samples_ = samples_;
  out.dtype_ = dtype;
  out.source_ = source_;
  if (dtype == DType::f64)
    out.f64_.assign(f32_.begin(), f32_.end());
  else
    out.f32_.assign(f64_.begin(), f64_.end());  // rounds to nearest
  return out;
}

}  // namespace fxc
