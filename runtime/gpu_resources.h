// SPDX-License-Identifier: Apache-2.0
// Owners of a GpuDevice's resources: device memory, page-locked host memory, and the stream
// a thread's device work goes to. Each gives back what it holds when it goes.
#pragma once

#include <cstddef>
#include <utility>

#include "runtime/gpu_device.h"

namespace fxc {

// A device allocation, released with its owner.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(GpuDevice* device, DevicePtr p, std::size_t bytes) : device_(device), p_(p), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      std::swap(device_, o.device_);
      std::swap(p_, o.p_);
      std::swap(bytes_, o.bytes_);
    }
    return *this;
  }
  ~DeviceBuffer() { reset(); }
  void reset() {
    if (device_ && p_) device_->release(p_);
    device_ = nullptr, p_ = 0, bytes_ = 0;
  }
  DevicePtr get() const { return p_; }
  std::size_t bytes() const { return bytes_; }

 private:
  GpuDevice* device_ = nullptr;
  DevicePtr p_ = 0;
  std::size_t bytes_ = 0;
};

// Page-locked host memory, released with its owner.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(GpuDevice* device, void* p, std::size_t bytes) : device_(device), p_(p), bytes_(bytes) {}
  HostBuffer(HostBuffer&& o) noexcept { *this = std::move(o); }
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    if (this != &o) {
      if (device_ && p_) device_->release_host(p_);
      device_ = std::exchange(o.device_, nullptr);
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  ~HostBuffer() {
    if (device_ && p_) device_->release_host(p_);
  }
  void* get() const { return p_; }
  std::size_t bytes() const { return bytes_; }

 private:
  GpuDevice* device_ = nullptr;
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Sends this thread's device work to `stream` while it lives, then back to the device's own
// (use_stream only selects: it cannot fail).
class StreamScope {
 public:
  /// `back`: the stream to return to (a CudaStream's own, when it sends some work elsewhere).
  StreamScope(GpuDevice* device, GpuDevice::Handle stream, GpuDevice::Handle back = 0) : device_(device), back_(back) {
    (void)device_->use_stream(stream);
  }
  ~StreamScope() { (void)device_->use_stream(back_); }
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  GpuDevice* device_;
  GpuDevice::Handle back_;
};

}  // namespace fxc
