// SPDX-License-Identifier: Apache-2.0
// GpuDevice through the CUDA driver API, loaded with dlopen: no CUDA header, no link to the
// toolkit. The entry points are declared here with their documented signatures (cuda.h);
// handles are pointers, CUdeviceptr is 64 bits, CUresult an int with 0 for success.
//
// Written against the documentation; first run on an H100 (driver 580, CUDA 13.0) on 2026-11-27,
// where the CUDA device tests passed through it (docs/cuda.md).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <type_traits>

#include "codegen/cuda/cuda_driver.h"
#include "runtime/gpu_device.h"
#include "runtime/pinned_host_cache.h"
#include "support/trace.h"

namespace fxc {
namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUstream = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUgraph = void*;
using CUgraphExec = void*;
using CUevent = void*;
using CUdeviceptr = unsigned long long;
constexpr unsigned kStreamNonBlocking = 1;     // CU_STREAM_NON_BLOCKING
constexpr int kCaptureModeThreadLocal = 1;     // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
constexpr unsigned kEventDisableTiming = 2;    // CU_EVENT_DISABLE_TIMING

struct DriverApi {
  CUresult (*Init)(unsigned) = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*DevicePrimaryCtxRelease)(CUdevice) = nullptr;  // _v2
  CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*StreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*StreamDestroy)(CUstream) = nullptr;  // _v2
  CUresult (*StreamSynchronize)(CUstream) = nullptr;
  CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned) = nullptr;
  CUresult (*EventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*EventDestroy)(CUevent) = nullptr;  // _v2
  CUresult (*EventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*EventSynchronize)(CUevent) = nullptr;
  CUresult (*MemAlloc)(CUdeviceptr*, std::size_t) = nullptr;      // _v2
  CUresult (*MemFree)(CUdeviceptr) = nullptr;                     // _v2
  CUresult (*MemAllocHost)(void**, std::size_t) = nullptr;        // _v2
  CUresult (*MemFreeHost)(void*) = nullptr;
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void*, std::size_t, CUstream) = nullptr;  // _v2
  CUresult (*MemcpyDtoHAsync)(void*, CUdeviceptr, std::size_t, CUstream) = nullptr;        // _v2
  CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, std::size_t, CUstream) = nullptr;
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream) = nullptr;  // _v2
  CUresult (*ModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*ModuleUnload)(CUmodule) = nullptr;
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*StreamBeginCapture)(CUstream, int) = nullptr;  // _v2
  CUresult (*StreamEndCapture)(CUstream, CUgraph*) = nullptr;
  CUresult (*GraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
  CUresult (*GraphLaunch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*GraphExecDestroy)(CUgraphExec) = nullptr;
  CUresult (*GraphDestroy)(CUgraph) = nullptr;
  CUresult (*GetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*GetErrorString)(CUresult, const char**) = nullptr;
};

class DriverDevice final : public GpuDevice {
 public:
  DriverDevice(DriverApi api, CUdevice device, CUcontext context, CUstream stream, std::string description,
               std::string arch, passes::GpuProperties properties)
      : d_(api), device_(device), context_(context), own_stream_(stream), description_(std::move(description)),
        arch_(std::move(arch)), properties_(properties) {}

  ~DriverDevice() override {
    host_cache_.trim();  // while the context lives
    d_.CtxSetCurrent(context_);
    d_.StreamSynchronize(own_stream_);
    for (auto& [handle, graph] : graphs_) {
      d_.GraphExecDestroy(graph.exec);
      d_.GraphDestroy(graph.graph);
    }
    for (CUmodule m : modules_) d_.ModuleUnload(m);
    d_.StreamDestroy(own_stream_);
    d_.DevicePrimaryCtxRelease(device_);
  }

  std::string description() const override { return description_; }
  std::string arch() const override { return arch_; }
  passes::GpuProperties properties() const override { return properties_; }

  Expected<DevicePtr, std::string> allocate(std::size_t bytes) override {
    bind();
    CUdeviceptr p = 0;
    if (CUresult r = d_.MemAlloc(&p, bytes ? bytes : 1); r != 0)
      return Unexpected{"cannot allocate " + std::to_string(bytes) + " bytes on " + description_ + ": " + error(r)};
    return DevicePtr{p};
  }
  void release(DevicePtr p) noexcept override {
    bind();
    if (p) d_.MemFree(p);
  }
  Expected<void*, std::string> allocate_host(std::size_t bytes) override { return host_cache_.take(bytes); }
  void release_host(void* p) noexcept override { host_cache_.give_back(p); }
  GpuStatus copy_to_device(DevicePtr to, const void* from, std::size_t bytes) override {
    if (bytes == 0) return std::monostate{};
    bind();
    return check(d_.MemcpyHtoDAsync(to, from, bytes, stream()), "cuMemcpyHtoDAsync");
  }
  GpuStatus copy_to_host(void* to, DevicePtr from, std::size_t bytes) override {
    if (bytes == 0) return std::monostate{};
    bind();
    return check(d_.MemcpyDtoHAsync(to, from, bytes, stream()), "cuMemcpyDtoHAsync");
  }
  GpuStatus fill_zero(DevicePtr to, std::size_t bytes) override {
    if (bytes == 0) return std::monostate{};
    bind();
    return check(d_.MemsetD8Async(to, 0, bytes, stream()), "cuMemsetD8Async");
  }
  GpuStatus copy_on_device(DevicePtr to, DevicePtr from, std::size_t bytes) override {
    if (bytes == 0) return std::monostate{};
    bind();
    return check(d_.MemcpyDtoDAsync(to, from, bytes, stream()), "cuMemcpyDtoDAsync");
  }
  // Per thread: a Program may run on two callers' streams from two threads at once.
  GpuStatus use_stream(Handle stream) override {
    caller_device = stream ? this : nullptr;
    caller_stream = reinterpret_cast<CUstream>(stream);
    return std::monostate{};
  }
  Expected<Handle, std::string> load_module(const std::string&, const std::string& cubin,
                                            const std::vector<codegen::CudaEntry>&) override {
    bind();
    CUmodule m = nullptr;
    if (CUresult r = d_.ModuleLoadData(&m, cubin.data()); r != 0) {  // a cubin, or PTX ending in '\0'
      if (codegen::cuda_load_retries_with_ptx(r, cubin))
        return Unexpected{std::string(kCubinRejected) + " (" + std::to_string(cubin.size()) + " bytes, for " + arch_ +
                          "): " + error(r)};
      bool ptx = cubin.compare(0, 4, "\x7f" "ELF") != 0;
      return Unexpected{"cuModuleLoadData rejected the " + std::string(ptx ? "PTX" : "cubin") + " (" +
                        std::to_string(cubin.size()) + " bytes, for " + arch_ + "): " + error(r)};
    }
    std::lock_guard lock(tables_mutex_);
    modules_.push_back(m);
    return reinterpret_cast<Handle>(m);
  }
  void unload_module(Handle module) noexcept override {
    const auto m = reinterpret_cast<CUmodule>(module);
    {
      std::lock_guard lock(tables_mutex_);
      auto it = std::find(modules_.begin(), modules_.end(), m);
      if (it == modules_.end()) return;
      modules_.erase(it);
    }
    bind();
    d_.ModuleUnload(m);
  }
  Expected<Handle, std::string> function(Handle module, const std::string& symbol) override {
    bind();
    CUfunction f = nullptr;
    if (CUresult r = d_.ModuleGetFunction(&f, reinterpret_cast<CUmodule>(module), symbol.c_str()); r != 0)
      return Unexpected{"the module has no kernel " + symbol + ": " + error(r)};
    return reinterpret_cast<Handle>(f);
  }
  GpuStatus launch(Handle function, const codegen::CudaLaunch& shape,
                   const std::vector<std::uint64_t>& args) override {
    if (shape.grid <= 0) return std::monostate{};
    if (shape.grid > 0x7fffffffLL) return Unexpected{std::string("a launch needs more than 2^31 - 1 blocks")};
    bind();
    std::vector<std::uint64_t> values = args;  // cuLaunchKernel copies the values it is pointed at
    std::vector<void*> params(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) params[i] = &values[i];
    return check(d_.LaunchKernel(reinterpret_cast<CUfunction>(function), static_cast<unsigned>(shape.grid), 1, 1,
                                 static_cast<unsigned>(shape.block), 1, 1, 0, stream(), params.data(), nullptr),
                 "cuLaunchKernel");
  }
  GpuStatus synchronize() override {
    bind();
    return check(d_.StreamSynchronize(stream()), "cuStreamSynchronize");
  }
  Expected<Handle, std::string> create_stream() override {
    bind();
    CUstream s = nullptr;
    if (CUresult r = d_.StreamCreate(&s, kStreamNonBlocking); r != 0)
      return Unexpected{"cannot create a CUDA stream: " + error(r)};
    return reinterpret_cast<Handle>(s);
  }
  void destroy_stream(Handle stream) noexcept override {
    if (!stream) return;
    bind();
    d_.StreamSynchronize(reinterpret_cast<CUstream>(stream));
    d_.StreamDestroy(reinterpret_cast<CUstream>(stream));
  }
  Expected<Handle, std::string> create_event() override {
    bind();
    CUevent e = nullptr;
    if (CUresult r = d_.EventCreate(&e, kEventDisableTiming); r != 0)
      return Unexpected{"cannot create a CUDA event: " + error(r)};
    return reinterpret_cast<Handle>(e);
  }
  void destroy_event(Handle event) noexcept override {
    if (!event) return;
    bind();
    d_.EventDestroy(reinterpret_cast<CUevent>(event));
  }
  GpuStatus record_event(Handle event) override {
    bind();
    return check(d_.EventRecord(reinterpret_cast<CUevent>(event), stream()), "cuEventRecord");
  }
  GpuStatus wait_event(Handle event) override {
    bind();
    return check(d_.StreamWaitEvent(stream(), reinterpret_cast<CUevent>(event), 0), "cuStreamWaitEvent");
  }
  GpuStatus synchronize_event(Handle event) override {
    bind();
    return check(d_.EventSynchronize(reinterpret_cast<CUevent>(event)), "cuEventSynchronize");
  }
  GpuStatus begin_capture() override {
    bind();
    return check(d_.StreamBeginCapture(stream(), kCaptureModeThreadLocal), "cuStreamBeginCapture");
  }
  Expected<Handle, std::string> end_capture() override {
    bind();
    CUgraph graph = nullptr;
    if (CUresult r = d_.StreamEndCapture(stream(), &graph); r != 0) return Unexpected{"cuStreamEndCapture: " + error(r)};
    CUgraphExec exec = nullptr;
    if (CUresult r = d_.GraphInstantiateWithFlags(&exec, graph, 0); r != 0) {
      d_.GraphDestroy(graph);
      return Unexpected{"cuGraphInstantiateWithFlags: " + error(r)};
    }
    std::lock_guard lock(tables_mutex_);
    Handle h = ++last_graph_;
    graphs_[h] = {graph, exec};
    return h;
  }
  GpuStatus launch_graph(Handle graph) override {
    CUgraphExec exec = nullptr;
    {
      std::lock_guard lock(tables_mutex_);
      auto it = graphs_.find(graph);
      if (it == graphs_.end()) return Unexpected{std::string("internal error (a bug in fxc): unknown CUDA graph")};
      exec = it->second.exec;  // only the stream that recorded it destroys it, not meanwhile
    }
    bind();
    return check(d_.GraphLaunch(exec, stream()), "cuGraphLaunch");
  }
  void destroy_graph(Handle graph) noexcept override {
    Graph destroyed{};
    {
      std::lock_guard lock(tables_mutex_);
      auto it = graphs_.find(graph);
      if (it == graphs_.end()) return;
      destroyed = it->second;
      graphs_.erase(it);
    }
    bind();
    d_.GraphExecDestroy(destroyed.exec);
    d_.GraphDestroy(destroyed.graph);
  }

 private:
  void bind() { d_.CtxSetCurrent(context_); }
  std::string error(CUresult r) const {
    const char* name = nullptr;
    const char* text = nullptr;
    std::string out = d_.GetErrorName && d_.GetErrorName(r, &name) == 0 && name ? name : "CUDA error " + std::to_string(r);
    if (d_.GetErrorString && d_.GetErrorString(r, &text) == 0 && text) out += std::string(" (") + text + ")";
    return out;
  }
  GpuStatus check(CUresult r, const char* what) const {
    if (r == 0) return std::monostate{};
    return Unexpected{std::string(what) + " failed on " + description_ + ": " + error(r)};
  }

  struct Graph {
    CUgraph graph;
    CUgraphExec exec;
  };
  DriverApi d_;
  CUdevice device_;
  CUcontext context_;
  CUstream own_stream_;  // created with the device, destroyed with it
  // The stream work goes to on this thread: own_stream_, or the caller's (use_stream).
  static thread_local const DriverDevice* caller_device;
  static thread_local CUstream caller_stream;
  CUstream stream() const { return caller_device == this ? caller_stream : own_stream_; }
  std::string description_, arch_;
  passes::GpuProperties properties_;
  // One device serves every stream of its programs, and those run on callers' threads at once
  // (a corpus's jobs, a plugin's instances, Python threads): what follows changes under this
  // lock. The driver's own calls are thread-safe.
  std::mutex tables_mutex_;
  std::vector<CUmodule> modules_;
  std::map<Handle, Graph> graphs_;
  Handle last_graph_ = 0;
  // Page-locked memory, kept when given back for the next stream that needs about as much:
  // cuMemAllocHost pins and maps every page. Last: it frees through the members above.
  PinnedHostCache host_cache_{[this](std::size_t bytes) -> Expected<void*, std::string> {
                                bind();
                                void* p = nullptr;
                                if (CUresult r = d_.MemAllocHost(&p, bytes); r != 0)
                                  return Unexpected{"cannot allocate " + std::to_string(bytes) +
                                                    " bytes of page-locked host memory: " + error(r)};
                                return p;
                              },
                              [this](void* p) {
                                bind();
                                d_.MemFreeHost(p);
                              },
                              kKeptPinnedBytes};
};

}  // namespace

thread_local const DriverDevice* DriverDevice::caller_device = nullptr;
thread_local CUstream DriverDevice::caller_stream = nullptr;

namespace {

using OpenedDevice = Expected<std::shared_ptr<GpuDevice>, std::string>;

OpenedDevice open_device_now(int ordinal) {
  // The driver's initialization and the context: in a fresh process the largest fixed cost of
  // a CUDA run, which --trace shows apart from the work.
  TraceSpan span("open CUDA device", "cuda", {{"ordinal", std::to_string(ordinal)}});
  codegen::CudaDriverInfo info = codegen::query_cuda_driver();
  if (!info.loaded || info.devices.empty())
    return Unexpected{codegen::cuda_status(info) + ": --target cuda needs an NVIDIA GPU and its driver; use --target cpu"};
  const codegen::CudaDevice* found = nullptr;
  for (const codegen::CudaDevice& dev : info.devices)
    if (dev.ordinal == ordinal) found = &dev;
  if (!found)
    return Unexpected{"there is no CUDA device " + std::to_string(ordinal) + " (" + codegen::cuda_status(info) + ")"};
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);  // loaded already by query_cuda_driver
  if (!handle) return Unexpected{std::string("no CUDA driver (libcuda.so.1 not found): use --target cpu")};
  DriverApi d;
  bool ok = true;
  auto bind = [&](const char* name, auto& f) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(handle, name));
    ok = ok && f != nullptr;
  };
  bind("cuInit", d.Init);
  bind("cuDeviceGet", d.DeviceGet);
  bind("cuDevicePrimaryCtxRetain", d.DevicePrimaryCtxRetain);
  bind("cuDevicePrimaryCtxRelease_v2", d.DevicePrimaryCtxRelease);
  bind("cuCtxSetCurrent", d.CtxSetCurrent);
  bind("cuStreamCreate", d.StreamCreate);
  bind("cuStreamDestroy_v2", d.StreamDestroy);
  bind("cuStreamSynchronize", d.StreamSynchronize);
  bind("cuStreamWaitEvent", d.StreamWaitEvent);
  bind("cuEventCreate", d.EventCreate);
  bind("cuEventDestroy_v2", d.EventDestroy);
  bind("cuEventRecord", d.EventRecord);
  bind("cuEventSynchronize", d.EventSynchronize);
  bind("cuMemAlloc_v2", d.MemAlloc);
  bind("cuMemFree_v2", d.MemFree);
  bind("cuMemAllocHost_v2", d.MemAllocHost);
  bind("cuMemFreeHost", d.MemFreeHost);
  bind("cuMemcpyHtoDAsync_v2", d.MemcpyHtoDAsync);
  bind("cuMemcpyDtoHAsync_v2", d.MemcpyDtoHAsync);
  bind("cuMemsetD8Async", d.MemsetD8Async);
  bind("cuMemcpyDtoDAsync_v2", d.MemcpyDtoDAsync);
  bind("cuModuleLoadData", d.ModuleLoadData);
  bind("cuModuleUnload", d.ModuleUnload);
  bind("cuModuleGetFunction", d.ModuleGetFunction);
  bind("cuLaunchKernel", d.LaunchKernel);
  bind("cuStreamBeginCapture_v2", d.StreamBeginCapture);
  bind("cuStreamEndCapture", d.StreamEndCapture);
  bind("cuGraphInstantiateWithFlags", d.GraphInstantiateWithFlags);
  bind("cuGraphLaunch", d.GraphLaunch);
  bind("cuGraphExecDestroy", d.GraphExecDestroy);
  bind("cuGraphDestroy", d.GraphDestroy);
  bind("cuGetErrorName", d.GetErrorName);
  bind("cuGetErrorString", d.GetErrorString);
  if (!ok) return Unexpected{std::string("the CUDA driver (libcuda.so.1) lacks an entry point fxc needs (CUDA 12 or newer is required)")};
  if (d.Init(0) != 0) return Unexpected{std::string("the CUDA driver failed to initialize")};
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  if (CUresult r = d.DeviceGet(&device, ordinal); r != 0)
    return Unexpected{"cuDeviceGet(" + std::to_string(ordinal) + ") failed: CUDA error " + std::to_string(r)};
  if (CUresult r = d.DevicePrimaryCtxRetain(&context, device); r != 0)
    return Unexpected{"cannot create a CUDA context on device " + std::to_string(ordinal) + ": CUDA error " + std::to_string(r)};
  d.CtxSetCurrent(context);
  if (CUresult r = d.StreamCreate(&stream, kStreamNonBlocking); r != 0) {
    d.DevicePrimaryCtxRelease(device);
    return Unexpected{"cannot create a CUDA stream: CUDA error " + std::to_string(r)};
  }
  std::string description = found->name + " (" + found->arch() + ")";
  return std::shared_ptr<GpuDevice>(
      std::make_shared<DriverDevice>(d, device, context, stream, description, found->arch(), gpu_properties_of(*found)));
}

// The device open_cuda_device_early started, until open_cuda_device takes it.
class EarlyOpen {
 public:
  static EarlyOpen& global() {
    // The trace the opening thread records into must outlive this object, whose destructor
    // waits for that thread: constructed first, it is destroyed last.
    Trace::global();
    static EarlyOpen early;
    return early;
  }

  void start(int ordinal) {
    std::lock_guard lock(mutex_);
    if (pending_.valid()) return;
    ordinal_ = ordinal;
    pending_ = std::async(std::launch::async, open_device_now, ordinal);
  }

  std::optional<OpenedDevice> take(int ordinal) {
    std::future<OpenedDevice> pending;
    {
      std::lock_guard lock(mutex_);
      if (!pending_.valid() || ordinal_ != ordinal) return std::nullopt;
      pending = std::move(pending_);
    }
    TraceSpan span("wait for CUDA device", "cuda", {{"ordinal", std::to_string(ordinal)}});
    return pending.get();
  }

  ~EarlyOpen() {
    // Never taken (the command failed before it needed the device): the thread is waited for,
    // a few seconds at most (a driver that hangs must not hang the exit too: its future is then
    // left undestroyed, as a future of std::async waits in its destructor), and its device is
    // left to the process's exit instead of releasing a context while the driver may be
    // shutting down.
    if (!pending_.valid()) return;
    if (pending_.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      left_waiting_ = new std::future<OpenedDevice>(std::move(pending_));
      return;
    }
    if (OpenedDevice device = pending_.get(); device) left_open_ = new std::shared_ptr<GpuDevice>(std::move(*device));
  }

 private:
  std::mutex mutex_;
  int ordinal_ = 0;
  std::future<OpenedDevice> pending_;
  // What the destructor leaves to the process's exit (reachable, so not a leak to a checker).
  static inline std::future<OpenedDevice>* left_waiting_ = nullptr;
  static inline std::shared_ptr<GpuDevice>* left_open_ = nullptr;
};

// The devices opened, by ordinal: each once per process (a corpus makes a Program per file,
// and a Program that went took its device with it: when the last went, the primary context
// went too, and the next file made it again). Never destroyed: the driver may be shutting down
// when static objects are, so the devices are left to the process's exit, as the CUDA runtime
// leaves its context.
struct OpenedDevices {
  std::mutex mutex;
  std::map<int, std::shared_ptr<GpuDevice>> by_ordinal;
  static OpenedDevices& global() {
    static auto* opened = new OpenedDevices;
    return *opened;
  }
  bool has(int ordinal) {
    std::lock_guard lock(mutex);
    return by_ordinal.count(ordinal) > 0;
  }
};

// use_cuda_device_for_testing's device, for every ordinal.
struct DeviceOverride {
  std::mutex mutex;
  std::shared_ptr<GpuDevice> device;
  static DeviceOverride& global() {
    static DeviceOverride override;
    return override;
  }
};

}  // namespace

void open_cuda_device_early(int ordinal) {
  if (!OpenedDevices::global().has(ordinal)) EarlyOpen::global().start(ordinal);
}

void use_cuda_device_for_testing(std::shared_ptr<GpuDevice> device) {
  DeviceOverride& o = DeviceOverride::global();
  std::lock_guard lock(o.mutex);
  o.device = std::move(device);
}

Expected<std::shared_ptr<GpuDevice>, std::string> open_cuda_device(int ordinal) {
  {
    DeviceOverride& o = DeviceOverride::global();
    std::lock_guard lock(o.mutex);
    if (o.device) return o.device;
  }
  OpenedDevices& opened = OpenedDevices::global();
  std::lock_guard lock(opened.mutex);
  if (auto it = opened.by_ordinal.find(ordinal); it != opened.by_ordinal.end()) return it->second;
  OpenedDevice device = Unexpected{std::string()};
  if (auto early = EarlyOpen::global().take(ordinal)) device = std::move(*early);
  else device = open_device_now(ordinal);
  if (device) opened.by_ordinal.emplace(ordinal, *device);
  return device;
}

passes::GpuProperties gpu_properties_of(const codegen::CudaDevice& device) {
  passes::GpuProperties p;
  if (device.multiprocessors > 0) p.sms = device.multiprocessors;
  if (device.threads_per_multiprocessor > 0) p.threads_per_sm = device.threads_per_multiprocessor;
  if (device.single_to_double_ratio > 0) p.f64_rate = 1.0 / device.single_to_double_ratio;
  if (device.memory_clock_khz > 0 && device.memory_bus_bits > 0)
    p.bandwidth_gbs = 2.0 * device.memory_clock_khz * 1e3 * device.memory_bus_bits / 8 / 1e9;
  return p;
}

}  // namespace fxc
