#include "runtime/signal.h"

#include "support/diagnostics.h"

namespace fxc {

Signal::Signal(std::size_t channels, std::size_t samples, DType dtype)
    : channels_(channels), samples_(samples), dtype_(dtype) {
  if (dtype == DType::f64)
    f64_.assign(channels * samples, 0.0);
  else
    f32_.assign(channels * samples, 0.0f);
}

Signal::Signal(std::size_t channels, std::size_t samples, DType dtype, Uninitialized)
    : channels_(channels), samples_(samples), dtype_(dtype) {
  if (dtype == DType::f64)
    f64_.resize(channels * samples);
  else
    f32_.resize(channels * samples);
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
  if (dtype == DType::f64)
    out.f64_.assign(f32_.begin(), f32_.end());
  else
    out.f32_.assign(f64_.begin(), f64_.end());  // rounds to nearest
  return out;
}

}  // namespace fxc
