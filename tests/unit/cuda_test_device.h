// SPDX-License-Identifier: Apache-2.0
// The device a CUDA test runs on: the real GPU for the "CUDA device" cases (or a skip), and
// a device given to the public API's Target::cuda for a scope (use_cuda_device_for_testing).
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "fxc/fxc.h"
#include "runtime/gpu_device.h"
#include "test_skip.h"

namespace fxc::test {

/// The GPU. Without one, only the exact no-driver message is a reason to skip (test::skip,
/// then null: the runner exits 77 and CTest shows cuda_device as "Skipped"); any other failure
/// to open a device fails, and FXC_REQUIRE_CUDA_DEVICE=1 (set where a GPU is expected; .ci/run
/// sets it when nvidia-smi lists one) makes the no-driver case fail too.
inline std::shared_ptr<GpuDevice> real_cuda_device() {
  static const std::string kNoDriver =
      "no CUDA driver (libcuda.so.1 not found): --target cuda needs an NVIDIA GPU and its driver; use --target cpu";
  auto opened = open_cuda_device();
  if (!opened) {
    const char* require = std::getenv("FXC_REQUIRE_CUDA_DEVICE");
    if (require && std::string(require) == "1")
      FAIL("no CUDA device: " << opened.error() << " (FXC_REQUIRE_CUDA_DEVICE=1 requires one)");
    if (opened.error() != kNoDriver) FAIL("a CUDA driver is present but no device opens: " << opened.error());
    skip("no CUDA device: " + opened.error());
    return nullptr;
  }
  MESSAGE("CUDA device: " << (*opened)->description());
  return *opened;
}

/// use_cuda_device_for_testing for a scope. Programs made earlier in the process are forgotten
/// on the way in and out: a Program made again from the same text copies the first one, whose
/// kernels were loaded on the device of its time.
struct UseCudaDevice {
  explicit UseCudaDevice(std::shared_ptr<GpuDevice> device) {
    clear_kernel_memory_cache();
    use_cuda_device_for_testing(std::move(device));
  }
  ~UseCudaDevice() {
    use_cuda_device_for_testing(nullptr);
    clear_kernel_memory_cache();
  }
  UseCudaDevice(const UseCudaDevice&) = delete;
  UseCudaDevice& operator=(const UseCudaDevice&) = delete;
};

}  // namespace fxc::test
