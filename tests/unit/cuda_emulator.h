// SPDX-License-Identifier: Apache-2.0
// A GpuDevice that runs fxc's generated CUDA C++ on the host: the source is compiled with
// the host C++ compiler (-ffp-contract=off, as NVRTC's --fmad=false) against
// cuda_emulation_shim.h into a shared library and loaded with dlopen; device memory is host
// memory; copies and launches run at once, or are recorded between begin_capture and
// end_capture and replayed by launch_graph, as CUDA graphs. It checks the kernels' logic and
// the runtime's launch shapes, arguments and buffers; not the GPU's timing, memory model or
// float32 math library. A buffer is followed by a page nobody may touch: a kernel or copy that
// runs past its end faults.
//
// Its calls may come from several threads at once, as a GPU's do (several Processors of one
// Program, each on its thread): each takes the device's lock, so kernels run one at a time;
// the stream work goes to is each thread's own choice (use_stream), as the driver's device
// keeps it, and a capture records what is ordered on the captured stream.
//
// With a deferred Order, work is not run when it is ordered but queued on its stream, as a
// GPU would, and runs only when the host must see it (synchronize, synchronize_event, a copy
// to pageable memory, freeing memory): then only what that needs runs, streams in the order's
// priority, each op as soon as its stream and its waits allow. Page-locked memory is read and
// written when a copy runs, pageable memory when it is ordered (as the driver stages it). So a
// missing wait_event shows as wrong data: with device_first a kernel runs before the copy it
// should have waited for; with copies_first a copy overwrites what a queued kernel has yet to
// read.
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/gpu_device.h"
#include "runtime/pinned_host_cache.h"

namespace fxc::test {

class EmulatedDevice final : public GpuDevice {
 public:
  /// immediate: everything runs when ordered. The deferred orders queue work per stream and,
  /// when the host must see it, run the oldest stream's ready work first (device_first: the
  /// device's own stream, then the streams created after it) or the newest's (copies_first).
  enum class Order { immediate, device_first, copies_first };
  explicit EmulatedDevice(Order order = Order::immediate) : order_(order) {}
  ~EmulatedDevice() override;
  std::string description() const override { return "host emulation"; }
  std::string arch() const override { return {}; }
  Expected<DevicePtr, std::string> allocate(std::size_t bytes) override;
  void release(DevicePtr pointer) noexcept override;
  Expected<void*, std::string> allocate_host(std::size_t bytes) override;
  void release_host(void* pointer) noexcept override;
  GpuStatus copy_to_device(DevicePtr to, const void* from, std::size_t bytes) override;
  GpuStatus copy_to_host(void* to, DevicePtr from, std::size_t bytes) override;
  GpuStatus fill_zero(DevicePtr to, std::size_t bytes) override;
  GpuStatus copy_on_device(DevicePtr to, DevicePtr from, std::size_t bytes) override;
  /// Selects the stream this thread's later work queues on (deferred orders), as the driver's
  /// device does per thread.
  GpuStatus use_stream(Handle stream) override {
    std::lock_guard lock(mutex_);
    if (stream) streams_in_use_[std::this_thread::get_id()] = stream;
    else streams_in_use_.erase(std::this_thread::get_id());
    return std::monostate{};
  }
  /// The stream this thread's work goes to (0: the device's own).
  Handle stream_in_use() const {
    std::lock_guard lock(mutex_);
    auto it = streams_in_use_.find(std::this_thread::get_id());
    return it == streams_in_use_.end() ? 0 : it->second;
  }
  Handle last_launch_stream = 0;  ///< the stream the last launch was ordered on
  Expected<Handle, std::string> load_module(const std::string& source, const std::string& cubin,
                                            const std::vector<codegen::CudaEntry>& entries) override;
  Expected<Handle, std::string> function(Handle module, const std::string& symbol) override;
  void unload_module(Handle module) noexcept override;
  /// Modules loaded so far, unloaded ones too.
  std::size_t module_loads() const {
    std::lock_guard lock(mutex_);
    return modules_.size();
  }
  /// Device and page-locked allocations made so far (allocate, allocate_host's new blocks).
  std::size_t allocations_made() const {
    std::lock_guard lock(mutex_);
    return allocations_made_;
  }
  /// Modules loaded and not unloaded.
  std::size_t modules_loaded() const {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(
        std::count_if(modules_.begin(), modules_.end(), [](const auto& m) { return !m.empty(); }));
  }
  GpuStatus launch(Handle function, const codegen::CudaLaunch& shape, const std::vector<std::uint64_t>& args) override;
  /// The current stream's work (deferred orders; at once, nothing is left to wait for).
  GpuStatus synchronize() override;
  // Immediately, everything runs at once, so any order holds: streams and events only count,
  // for tests that check which path a run took, and a wait must be on an event recorded before.
  Expected<Handle, std::string> create_stream() override {
    std::lock_guard lock(mutex_);
    return Handle{0x5000} + ++streams_created;
  }
  void destroy_stream(Handle stream) noexcept override;
  Expected<Handle, std::string> create_event() override {
    std::lock_guard lock(mutex_);
    return Handle{0xe000} + ++events_created;
  }
  void destroy_event(Handle) noexcept override {}
  GpuStatus record_event(Handle event) override;
  GpuStatus wait_event(Handle event) override;
  GpuStatus synchronize_event(Handle event) override;
  int streams_created = 0, streams_destroyed = 0, events_created = 0, events_recorded = 0, events_waited = 0;
  Handle last_copy_to_host_stream = 0;    ///< the stream the last copy to the host was ordered on
  Handle last_copy_to_device_stream = 0;  ///< the stream the last copy to the device was ordered on
  GpuStatus begin_capture() override;
  Expected<Handle, std::string> end_capture() override;
  GpuStatus launch_graph(Handle graph) override;
  void destroy_graph(Handle graph) noexcept override;

  int launches = 0;        ///< kernel launches run (replays included)
  int graph_launches = 0;  ///< graph replays
  /// Page-locked blocks given back and kept for the next allocate_host (they are live
  /// allocations too), and freeing them.
  std::size_t kept_host_blocks() const { return host_cache_.kept_blocks(); }
  /// Page-locked blocks pinned now, lent or kept.
  std::size_t host_blocks() const {
    std::lock_guard lock(mutex_);
    return host_allocations_.size();
  }
  void trim_host() { host_cache_.trim(); }
  std::size_t live_allocations() const {
    std::lock_guard lock(mutex_);
    return allocations_.size();
  }
  /// Live allocations of exactly `bytes`.
  std::size_t allocations_of(std::size_t bytes) const {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(
        std::count_if(allocations_.begin(), allocations_.end(), [&](const auto& a) { return a.second.bytes == bytes; }));
  }

 private:
  // Where an event was recorded: done once `stream` has run `count` ops.
  struct Mark {
    Handle stream = 0;
    std::size_t count = 0;
  };
  struct Op {
    std::function<GpuStatus()> run;  // empty for a wait
    std::optional<Mark> wait;
  };
  struct Queue {
    std::deque<Op> ops;
    std::size_t ordered = 0, done = 0;  // ops ever queued, ops run
  };
  Expected<Mark, std::string> recorded(Handle event) const {
    auto it = recorded_.find(event);
    if (it == recorded_.end())
      return Unexpected{std::string("emulation: a wait on an event never recorded (a bug in the runtime's order)")};
    return it->second;
  }
  bool deferred() const { return order_ != Order::immediate; }
  // Runs queued work, by the order's priority, until `m` is reached.
  GpuStatus drain(const Mark& m);
  GpuStatus drain_all();
  Mark now() { return {stream_in_use(), queues_[stream_in_use()].ordered}; }
  bool page_locked(const void* p, std::size_t bytes) const;

  Order order_;
  std::map<Handle, Mark> recorded_;
  std::map<Handle, Queue> queues_;  // by stream (deferred orders)
  GpuStatus run(std::function<GpuStatus()> op);
  GpuStatus check(DevicePtr p, std::size_t bytes) const;

  using Launcher = const char* (*)(const std::uint64_t*, long long, int);  ///< returns the launch's fault, or null
  struct Allocation {
    std::size_t bytes = 0;   // asked for
    void* base = nullptr;    // the mapping: the buffer's pages and its guard page (allocate)
    std::size_t mapped = 0;
  };
  std::map<DevicePtr, Allocation> allocations_;  // by address
  std::set<DevicePtr> host_allocations_;  // page-locked ones (allocate_host)
  std::size_t allocations_made_ = 0;
  std::vector<std::map<std::string, Launcher>> modules_;
  struct Function {
    Handle module = 0;
    Launcher launcher = nullptr;
  };
  std::vector<Function> functions_;
  std::map<std::thread::id, Handle> streams_in_use_;  // by thread, where not the device's own
  // Each captured stream's recording (a stream is captured while it has one).
  std::map<Handle, std::vector<std::function<GpuStatus()>>> recording_;
  bool capturing() const { return recording_.count(stream_in_use()) > 0; }
  mutable std::recursive_mutex mutex_;  // every call's: release drains, which may run work
  std::map<Handle, std::vector<std::function<GpuStatus()>>> graphs_;
  Handle last_graph_ = 0;
  // Page-locked memory as the driver's device keeps it (runtime/pinned_host_cache.h): blocks
  // given back are lent again. Last: its blocks go before the allocations they are.
  PinnedHostCache host_cache_{[this](std::size_t bytes) -> Expected<void*, std::string> {
                                std::lock_guard lock(mutex_);
                                auto p = allocate(bytes);
                                if (!p) return Unexpected{p.error()};
                                host_allocations_.insert(*p);
                                return reinterpret_cast<void*>(*p);
                              },
                              [this](void* p) { release(reinterpret_cast<DevicePtr>(p)); }, kKeptPinnedBytes};
};

}  // namespace fxc::test
