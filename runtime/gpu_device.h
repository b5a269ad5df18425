// SPDX-License-Identifier: Apache-2.0
// What the CUDA runtime needs of a GPU: device memory, page-locked host memory, copies and
// launches on a stream (never the default stream; a second one and events between them for a
// whole run's copies out), modules, and CUDA graphs. Two
// implementations: the CUDA driver (open_cuda_device, libcuda loaded with dlopen, so the same
// binary runs without CUDA) and, in the tests, a host emulation that compiles the generated
// CUDA C++ with the host compiler and runs each block's threads on the CPU
// (tests/unit/cuda_emulator.h). Work is ordered on its stream; call synchronize() (or
// synchronize_event, for work on another stream) before reading host memory a copy writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/emit_cuda.h"
#include "passes/target.h"
#include "support/expected.h"

namespace fxc {

/// The start of a load_module error after which PTX for the device may load (docs/cuda.md,
/// "PTX fallback").
inline constexpr const char* kCubinRejected = "the CUDA driver cannot load this cubin";

using DevicePtr = std::uint64_t;  ///< CUdeviceptr
using GpuStatus = Expected<std::monostate, std::string>;

class GpuDevice {
 public:
  using Handle = std::uint64_t;  ///< a module, a function or an instantiated graph

  virtual ~GpuDevice() = default;

  /// "NVIDIA H200 (sm_90)", for messages.
  virtual std::string description() const = 0;
  /// The architecture to compile for ("sm_90"); empty when the device runs CUDA source
  /// itself (the host emulation), and load_module's cubin is then ignored.
  virtual std::string arch() const = 0;
  /// What the cost model knows of the device (passes::cuda_target): an H100's by default (the
  /// emulation).
  virtual passes::GpuProperties properties() const { return {}; }

  virtual Expected<DevicePtr, std::string> allocate(std::size_t bytes) = 0;
  virtual void release(DevicePtr pointer) noexcept = 0;
  /// Page-locked host memory: copies from and to it can be captured in a CUDA graph. Both
  /// devices lend it from the blocks given back earlier (runtime/pinned_host_cache.h), so
  /// release_host does not wait for the device: no queued copy may still use the memory.
  virtual Expected<void*, std::string> allocate_host(std::size_t bytes) = 0;
  virtual void release_host(void* pointer) noexcept = 0;

  virtual GpuStatus copy_to_device(DevicePtr to, const void* from, std::size_t bytes) = 0;
  virtual GpuStatus copy_to_host(void* to, DevicePtr from, std::size_t bytes) = 0;
  virtual GpuStatus fill_zero(DevicePtr to, std::size_t bytes) = 0;
  /// A copy between two device buffers.
  virtual GpuStatus copy_on_device(DevicePtr to, DevicePtr from, std::size_t bytes) = 0;
  /// Orders the copies, launches and synchronize() that follow on `stream`, a CUstream the
  /// caller owns (0: the device's own stream again). The caller's stream must belong to this
  /// device's primary context, as PyTorch's and CuPy's do.
  virtual GpuStatus use_stream(Handle stream) = 0;

  /// Loads a module: `cubin` on a real device (a cubin, or PTX text, which the driver
  /// compiles), `source` (with `entries` naming its kernels) on the emulation. Where the driver
  /// refuses a cubin in a way that PTX may avoid (codegen::cuda_load_retries_with_ptx), the
  /// error starts with kCubinRejected and compile_for_cuda loads PTX instead.
  virtual Expected<Handle, std::string> load_module(const std::string& source, const std::string& cubin,
                                                    const std::vector<codegen::CudaEntry>& entries) = 0;
  virtual Expected<Handle, std::string> function(Handle module, const std::string& symbol) = 0;
  /// Unloads a module load_module gave, with its functions: its program is gone, and with it
  /// every stream that could still launch them (runtime/cuda_executor.h, CudaProgram).
  virtual void unload_module(Handle module) noexcept = 0;
  /// Launches `function` with `args`: every argument is 8 bytes (a device pointer or a long long).
  virtual GpuStatus launch(Handle function, const codegen::CudaLaunch& shape,
                           const std::vector<std::uint64_t>& args) = 0;
  virtual GpuStatus synchronize() = 0;

  /// A stream of its own in the device's context, for work beside the current stream's (a
  /// whole run's copies out); use_stream(it) sends work there. The emulation, where
  /// everything runs at once, returns handles that only count.
  virtual Expected<Handle, std::string> create_stream() = 0;
  virtual void destroy_stream(Handle stream) noexcept = 0;
  /// Marks between streams: record_event marks the current stream's work so far, wait_event
  /// makes the current stream's later work wait for the last mark recorded, and
  /// synchronize_event waits on the host for it.
  virtual Expected<Handle, std::string> create_event() = 0;
  virtual void destroy_event(Handle event) noexcept = 0;
  virtual GpuStatus record_event(Handle event) = 0;
  virtual GpuStatus wait_event(Handle event) = 0;
  virtual GpuStatus synchronize_event(Handle event) = 0;

  /// Records the stream's work until end_capture instead of running it; the graph then
  /// replays the same copies and launches, with the same arguments, on launch_graph.
  virtual GpuStatus begin_capture() = 0;
  virtual Expected<Handle, std::string> end_capture() = 0;
  virtual GpuStatus launch_graph(Handle graph) = 0;
  virtual void destroy_graph(Handle graph) noexcept = 0;
};

/// The cost model's view of a device the driver lists; a field the driver leaves at 0 keeps
/// the default (an H100's). Bandwidth: 2 transfers per memory clock x the bus width.
passes::GpuProperties gpu_properties_of(const codegen::CudaDevice& device);

/// Device `ordinal` through the CUDA driver: its primary context and a created non-blocking
/// stream. The same device every time for an ordinal: opened at the first call and kept until
/// the process exits, as the CUDA runtime keeps its primary context (a context made again when
/// the last program on it goes costs what opening it did, a large part of a second). Fails
/// with a clear message without a driver ("no CUDA driver (libcuda.so.1 not found): use
/// --target cpu") or a device; a failed open is tried again at the next call.
Expected<std::shared_ptr<GpuDevice>, std::string> open_cuda_device(int ordinal = 0);

/// Starts open_cuda_device(ordinal) on a thread of its own, so that the driver's
/// initialization and the context's creation overlap what the caller does before it needs the
/// device (fxc run reads its inputs and runs the passes meanwhile). The next
/// open_cuda_device(ordinal) takes that device or its error, waiting for it where it is not
/// ready; later calls open as before. Does nothing while an earlier start is not taken.
void open_cuda_device_early(int ordinal = 0);

/// For tests: open_cuda_device returns `device` from now on (nullptr: the driver's again), so
/// that the public API's CUDA paths (fxc::Program, fxc::Processor on Target::cuda) run on the
/// host emulation (tests/unit/cuda_emulator.h) where no GPU is.
void use_cuda_device_for_testing(std::shared_ptr<GpuDevice> device);

}  // namespace fxc
