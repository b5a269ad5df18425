// SPDX-License-Identifier: Apache-2.0
#include "runtime/signal.h"

#include "ir/dtype.h"

#include <cstdint>
#include <new>
#include <string>

#include "support/api_error.h"

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

namespace {

// The caller's mistakes with a Signal (another sample type, a channel or sample past the end)
// are fxc::Errors, as every mistake with the API is.
void check_channel(const char* accessor, DType want, DType dtype, std::size_t channel, std::size_t channels) {
  if (dtype != want)
    throw_error(std::string("Signal::") + accessor + " on a " + (dtype == DType::f64 ? "float64" : "float32") +
           " signal: use " + (dtype == DType::f64 ? "f64()" : "f32()") + ", or at()");
  if (channel >= channels)
    throw_error(std::string("Signal::") + accessor + "(" + std::to_string(channel) + ") on a signal of " +
           std::to_string(channels) + " channel(s)");
}

}  // namespace

std::span<double> Signal::f64(std::size_t channel) {
  check_channel("f64", DType::f64, dtype_, channel, channels_);
  return {f64_.data() + channel * samples_, samples_};
}
std::span<const double> Signal::f64(std::size_t channel) const {
  check_channel("f64", DType::f64, dtype_, channel, channels_);
  return {f64_.data() + channel * samples_, samples_};
}
std::span<float> Signal::f32(std::size_t channel) {
  check_channel("f32", DType::f32, dtype_, channel, channels_);
  return {f32_.data() + channel * samples_, samples_};
}
std::span<const float> Signal::f32(std::size_t channel) const {
  check_channel("f32", DType::f32, dtype_, channel, channels_);
  return {f32_.data() + channel * samples_, samples_};
}

double Signal::at(std::size_t channel, std::size_t index) const {
  if (channel >= channels_ || index >= samples_)
    throw_error("Signal::at(" + std::to_string(channel) + ", " + std::to_string(index) + ") on a signal of " +
           std::to_string(channels_) + " channel(s) of " + std::to_string(samples_) + " sample(s)");
  return dtype_ == DType::f64 ? f64_[channel * samples_ + index] : f32_[channel * samples_ + index];
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
