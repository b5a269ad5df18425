// SPDX-License-Identifier: Apache-2.0
// The CUDA driver (libcuda), loaded at run time with dlopen, for `fxc info` and for choosing
// the architecture to compile for. No CUDA header is included. Running kernels on a device is
// runtime/cuda_device.cpp's work (docs/cuda.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace fxc::codegen {

struct CudaDevice {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;  ///< compute capability
  std::size_t memory_bytes = 0;
  std::string arch() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};

struct CudaDriverInfo {
  bool loaded = false;       ///< libcuda could be loaded
  std::string error;         ///< why there are no devices, when there are none
  int driver_version = 0;    ///< as cuDriverGetVersion: 1000 * major + 10 * minor
  std::vector<CudaDevice> devices;
};

/// Loads the first of `libraries` that loads (default: libcuda.so.1), initializes the driver
/// and lists the devices. Never throws; a failure is described in `error`.
CudaDriverInfo query_cuda_driver(const std::vector<std::string>& libraries = {"libcuda.so.1"});

/// One line for `fxc info`: "no CUDA driver (libcuda.so.1 not found)", the driver's error,
/// or "CUDA driver 13.0, 1 device: 0: NVIDIA H200 (sm_90, 139.8 GiB)".
std::string cuda_status(const CudaDriverInfo& info);
std::string cuda_status();

/// The architecture of device `ordinal` ("sm_90"), or nullopt without a driver or device.
std::optional<std::string> cuda_device_arch(int ordinal = 0);

}  // namespace fxc::codegen
