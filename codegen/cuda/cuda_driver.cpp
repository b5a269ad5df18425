// SPDX-License-Identifier: Apache-2.0
#include "codegen/cuda/cuda_driver.h"

#include <cstdio>
#include <dlfcn.h>
#include <type_traits>

namespace fxc::codegen {
namespace {

// Driver API entry points with their documented signatures (cuda.h). CUresult and
// CUdevice are ints; CUDA_SUCCESS = 0.
using CUresult = int;
using CUdevice = int;
constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
// What the cost model needs (passes::GpuProperties), cuda.h's CUdevice_attribute values.
constexpr int kMultiprocessorCount = 16;        // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kMemoryClockRate = 36;            // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE (kHz)
constexpr int kGlobalMemoryBusWidth = 37;       // CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH (bits)
constexpr int kMaxThreadsPerMultiprocessor = 39;  // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
constexpr int kSingleToDoubleRatio = 87;        // CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO

struct Driver {
  CUresult (*Init)(unsigned) = nullptr;
  CUresult (*DriverGetVersion)(int*) = nullptr;
  CUresult (*DeviceGetCount)(int*) = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*DeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*DeviceTotalMem)(std::size_t*, CUdevice) = nullptr;  // cuDeviceTotalMem_v2
  CUresult (*GetErrorName)(CUresult, const char**) = nullptr;
};

std::string error_name(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.GetErrorName && d.GetErrorName(r, &s) == 0 && s) return s;
  return "CUDA error " + std::to_string(r);
}

}  // namespace

CudaDriverInfo query_cuda_driver(const std::vector<std::string>& libraries) {
  CudaDriverInfo info;
  void* handle = nullptr;
  std::string tried;
  for (const std::string& name : libraries) {
    tried += (tried.empty() ? "" : ", ") + name;
    if ((handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
  }
  if (!handle) {
    info.error = "no CUDA driver (" + tried + " not found)";
    return info;
  }
  info.loaded = true;
  Driver d;
  auto bind = [&](const char* name, auto& f) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(handle, name));
    return f != nullptr;
  };
  bind("cuGetErrorName", d.GetErrorName);
  if (!bind("cuInit", d.Init) || !bind("cuDriverGetVersion", d.DriverGetVersion) ||
      !bind("cuDeviceGetCount", d.DeviceGetCount) || !bind("cuDeviceGet", d.DeviceGet) ||
      !bind("cuDeviceGetName", d.DeviceGetName) || !bind("cuDeviceGetAttribute", d.DeviceGetAttribute) ||
      !bind("cuDeviceTotalMem_v2", d.DeviceTotalMem)) {
    info.error = "the CUDA driver (" + tried + ") lacks a needed entry point";
    return info;
  }
  d.DriverGetVersion(&info.driver_version);
  if (CUresult r = d.Init(0); r != 0) {
    info.error = "the CUDA driver failed to initialize: " + error_name(d, r);
    return info;
  }
  int count = 0;
  if (CUresult r = d.DeviceGetCount(&count); r != 0) {
    info.error = "the CUDA driver cannot count devices: " + error_name(d, r);
    return info;
  }
  for (int i = 0; i < count; ++i) {
    CudaDevice dev;
    dev.ordinal = i;
    CUdevice h = 0;
    if (d.DeviceGet(&h, i) != 0) continue;
    char name[256] = {};
    if (d.DeviceGetName(name, sizeof name, h) == 0) dev.name = name;
    d.DeviceGetAttribute(&dev.major, kComputeCapabilityMajor, h);
    d.DeviceGetAttribute(&dev.minor, kComputeCapabilityMinor, h);
    d.DeviceGetAttribute(&dev.multiprocessors, kMultiprocessorCount, h);
    d.DeviceGetAttribute(&dev.threads_per_multiprocessor, kMaxThreadsPerMultiprocessor, h);
    d.DeviceGetAttribute(&dev.single_to_double_ratio, kSingleToDoubleRatio, h);
    d.DeviceGetAttribute(&dev.memory_clock_khz, kMemoryClockRate, h);
    d.DeviceGetAttribute(&dev.memory_bus_bits, kGlobalMemoryBusWidth, h);
    d.DeviceTotalMem(&dev.memory_bytes, h);
    info.devices.push_back(dev);
  }
  if (info.devices.empty()) info.error = "the CUDA driver sees no device";
  return info;
}

std::string cuda_status(const CudaDriverInfo& info) {
  if (!info.loaded) return info.error;
  std::string out = "CUDA driver " + cuda_version_text(info.driver_version);
  if (info.devices.empty()) return out + ": " + info.error;
  out += ", " + std::to_string(info.devices.size()) + (info.devices.size() == 1 ? " device" : " devices");
  for (std::size_t i = 0; i < info.devices.size(); ++i) {
    const CudaDevice& dev = info.devices[i];
    char memory[32];
    std::snprintf(memory, sizeof memory, "%.1f GiB", static_cast<double>(dev.memory_bytes) / (1024.0 * 1024 * 1024));
    out += std::string(i == 0 ? ": " : "; ") + std::to_string(dev.ordinal) + ": " + dev.name + " (" + dev.arch() +
           ", " + memory + ")";
  }
  return out;
}

std::string cuda_status() { return cuda_status(query_cuda_driver()); }

int cuda_driver_version(const std::vector<std::string>& libraries) {
  for (const std::string& name : libraries) {
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);  // stays loaded, as in query_cuda_driver
    if (!handle) continue;
    auto get = reinterpret_cast<CUresult (*)(int*)>(dlsym(handle, "cuDriverGetVersion"));
    int version = 0;
    if (get && get(&version) == 0) return version;
    return 0;
  }
  return 0;
}

std::string cuda_version_text(int driver_version) {
  return std::to_string(driver_version / 1000) + "." + std::to_string(driver_version % 1000 / 10);
}

namespace {
// The cuModuleLoadData results after which PTX may load where the cubin did not (cuda.h).
struct LoadResult {
  int code;
  const char* name;
};
constexpr LoadResult kRetriedWithPtx[] = {
    {200, "CUDA_ERROR_INVALID_IMAGE"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {300, "CUDA_ERROR_INVALID_SOURCE"},
};
}  // namespace

bool cuda_load_retries_with_ptx(int cu_result, std::string_view image) {
  if (image.substr(0, 4) != std::string_view("\x7f" "ELF", 4)) return false;  // PTX (or nothing): no retry
  for (const LoadResult& r : kRetriedWithPtx)
    if (r.code == cu_result) return true;
  return false;
}

std::string cuda_load_result_name(int cu_result) {
  for (const LoadResult& r : kRetriedWithPtx)
    if (r.code == cu_result) return r.name;
  return "CUDA error " + std::to_string(cu_result);
}

std::optional<std::string> cuda_device_arch(int ordinal) {
  CudaDriverInfo info = query_cuda_driver();
  for (const CudaDevice& dev : info.devices)
    if (dev.ordinal == ordinal) return dev.arch();
  return std::nullopt;
}

}  // namespace fxc::codegen
