// SPDX-License-Identifier: Apache-2.0
// The CUDA driver (libcuda), loaded at run time with dlopen, for `fxc info` and for choosing
// the architecture to compile for. No CUDA header is included. Running kernels on a device is
// runtime/cuda_device.cpp's work (docs/cuda.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fxc::codegen {

struct CudaDevice {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;  ///< compute capability
  std::size_t memory_bytes = 0;
  int multiprocessors = 0;            ///< CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
  int threads_per_multiprocessor = 0; ///< ..._MAX_THREADS_PER_MULTIPROCESSOR
  int single_to_double_ratio = 0;     ///< ..._SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO (2 on an H100, 64 on consumer parts)
  int memory_clock_khz = 0;           ///< ..._MEMORY_CLOCK_RATE
  int memory_bus_bits = 0;            ///< ..._GLOBAL_MEMORY_BUS_WIDTH
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

/// The driver's version as cuDriverGetVersion gives it (1000 * major + 10 * minor), without
/// initializing the driver (no cuInit: cheap, and right for choosing NVRTC before compiling);
/// 0 when libcuda cannot be loaded.
int cuda_driver_version(const std::vector<std::string>& libraries = {"libcuda.so.1"});

/// "12.4" for 12040.
std::string cuda_version_text(int driver_version);

/// Whether a module image that cuModuleLoadData refused with `cu_result` should be replaced
/// by PTX for the device's compute_XX, which the driver compiles itself (docs/cuda.md, "PTX
/// fallback"): only for a cubin (`image` starts with ELF's magic; PTX is never retried), and
/// only for the results that say the driver cannot use that binary: CUDA_ERROR_INVALID_IMAGE
/// (200), CUDA_ERROR_NO_BINARY_FOR_GPU (209), CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222),
/// CUDA_ERROR_INVALID_SOURCE (300). Out of memory, a lost context and the like are not retried.
bool cuda_load_retries_with_ptx(int cu_result, std::string_view image);

/// The name of a CUresult that cuda_load_retries_with_ptx knows ("CUDA_ERROR_NO_BINARY_FOR_GPU"),
/// else "CUDA error N".
std::string cuda_load_result_name(int cu_result);

}  // namespace fxc::codegen
