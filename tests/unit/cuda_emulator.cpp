// SPDX-License-Identifier: Apache-2.0
#include "cuda_emulator.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>
#include <sys/mman.h>

#include "cuda_emulation_context.h"
#include "emulation_fibers.h"
#include "emulation_modules.h"
#include "support/sha256.h"

namespace fxc::test {
namespace {

// The generated source, then one launcher per entry point: it unpacks the 8-byte arguments
// by the entry's parameter types and runs the grid.
std::string emulation_source(const std::string& source, const std::vector<codegen::CudaEntry>& entries) {
  // Angle brackets: the shim is looked for (and its precompiled form) in the -I directories
  // alone, not beside the source in the module cache.
  std::string out = "#include <cuda_emulation_shim.h>\n" + source + "\n// Launchers for the host emulation.\n";
  for (const codegen::CudaEntry& e : entries) {
    out += "extern \"C\" const char* fxc_emu_" + e.symbol + "(const std::uint64_t* a, long long grid, int block) {\n";
    out += "  fxc_emulate(grid, block, " + std::string(e.synchronizes ? "true" : "false") + ", [&] { " + e.symbol + "(";
    for (std::size_t i = 0; i < e.parameters.size(); ++i)
      out += (i ? ", " : "") + std::string("fxc_arg<") + e.parameters[i] + ">(a[" + std::to_string(i) + "])";
    out += "); });\n  return fxc_fault.exchange(nullptr);  // the launch's first fault, if any\n}\n";
  }
  return out;
}

std::mutex library_mutex;
std::map<std::string, void*> libraries;  // by the source's SHA-256: one dlopen per source per process

}  // namespace

EmulatedDevice::~EmulatedDevice() {
  host_cache_.trim();
  (void)drain_all();
  for (auto& [p, a] : allocations_) munmap(a.base, a.mapped);
}

bool EmulatedDevice::page_locked(const void* p, std::size_t bytes) const {
  const auto at = reinterpret_cast<DevicePtr>(p);
  auto it = allocations_.upper_bound(at);
  if (it == allocations_.begin()) return false;
  --it;
  return host_allocations_.count(it->first) && at + bytes <= it->first + it->second.bytes;
}

GpuStatus EmulatedDevice::drain(const Mark& target) {
  auto reached_mark = [this](const Mark& m) {
    auto it = queues_.find(m.stream);
    return m.count == 0 || (it != queues_.end() && it->second.done >= m.count);
  };
  while (!reached_mark(target)) {
    // The first stream, in the order's priority, whose next op may run.
    auto first_ready = [&](auto begin, auto end) -> Queue* {
      auto it = std::find_if(begin, end, [&](auto& entry) {
        const Queue& q = entry.second;
        return !q.ops.empty() && (!q.ops.front().wait || reached_mark(*q.ops.front().wait));
      });
      return it == end ? nullptr : &it->second;
    };
    Queue* pick = order_ == Order::copies_first ? first_ready(queues_.rbegin(), queues_.rend())
                                                : first_ready(queues_.begin(), queues_.end());
    if (!pick)
      return Unexpected{std::string("emulation: queued work waits on an event that nothing queued reaches "
                                    "(a bug in the runtime's order)")};
    Op op = std::move(pick->ops.front());
    pick->ops.pop_front();
    ++pick->done;
    if (op.run)
      if (auto ok = op.run(); !ok) return ok;
  }
  return std::monostate{};
}

GpuStatus EmulatedDevice::drain_all() {
  std::vector<Mark> ends;
  for (auto& [stream, q] : queues_) ends.push_back({stream, q.ordered});
  for (const Mark& m : ends)
    if (auto ok = drain(m); !ok) return ok;
  return std::monostate{};
}

GpuStatus EmulatedDevice::synchronize() {
  std::lock_guard lock(mutex_);
  if (capturing()) return Unexpected{std::string("emulation: a synchronize during a capture (CUDA refuses it)")};
  if (!deferred()) return std::monostate{};
  return drain(now());
}

void EmulatedDevice::destroy_stream(Handle stream) noexcept {
  std::lock_guard lock(mutex_);
  ++streams_destroyed;
  if (deferred()) (void)drain({stream, queues_[stream].ordered});  // as cuStreamDestroy: its work completes
}

GpuStatus EmulatedDevice::record_event(Handle event) {
  std::lock_guard lock(mutex_);
  if (capturing()) return Unexpected{std::string("emulation: an event recorded during a capture (not modelled)")};
  recorded_[event] = deferred() ? now() : Mark{};
  ++events_recorded;
  return std::monostate{};
}

GpuStatus EmulatedDevice::wait_event(Handle event) {
  std::lock_guard lock(mutex_);
  auto mark = recorded(event);
  if (!mark) return Unexpected{mark.error()};
  ++events_waited;
  if (capturing()) return Unexpected{std::string("emulation: a wait on an event during a capture (not modelled)")};
  if (deferred()) {
    Queue& q = queues_[stream_in_use()];
    q.ops.push_back({{}, *mark});
    ++q.ordered;
  }
  return std::monostate{};
}

GpuStatus EmulatedDevice::synchronize_event(Handle event) {
  std::lock_guard lock(mutex_);
  if (capturing()) return Unexpected{std::string("emulation: a host wait during a capture (CUDA refuses it)")};
  auto mark = recorded(event);
  if (!mark) return Unexpected{mark.error()};
  ++events_waited;
  return deferred() ? drain(*mark) : GpuStatus(std::monostate{});
}

GpuStatus EmulatedDevice::check(DevicePtr p, std::size_t bytes) const {
  auto it = allocations_.upper_bound(p);
  if (it == allocations_.begin()) return Unexpected{std::string("emulation: a copy touches unallocated memory")};
  --it;
  if (p + bytes > it->first + it->second.bytes) return Unexpected{std::string("emulation: a copy overruns its buffer")};
  return std::monostate{};
}

// A buffer ends where a page nobody may touch begins, so that a kernel (or a copy) that reads
// or writes past its end faults (SIGSEGV, the test process stops there) instead of reading
// slack or a neighbour unseen, as a GPU would let it within cuMemAlloc's granules. Buffers
// start 16-byte aligned (the kernels' widest access; cuMemAlloc's are 256-byte aligned, so
// the kernels test alignment rather than assume it), leaving at most 15 bytes of slack.
Expected<DevicePtr, std::string> EmulatedDevice::allocate(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t body = (std::max<std::size_t>(bytes, 1) + 15) / 16 * 16;
  const std::size_t pages = (body + page - 1) / page * page;
  void* base = mmap(nullptr, pages + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return Unexpected{std::string("emulation: out of memory")};
  if (mprotect(static_cast<char*>(base) + pages, page, PROT_NONE) != 0) {
    munmap(base, pages + page);
    return Unexpected{std::string("emulation: cannot protect a guard page")};
  }
  char* p = static_cast<char*>(base) + pages - body;
  std::memset(p, 0xA5, body);  // uninitialized memory is garbage, as on a GPU
  const auto at = reinterpret_cast<DevicePtr>(p);
  allocations_[at] = {std::max<std::size_t>(bytes, 1), base, pages + page};
  ++allocations_made_;
  return at;
}

void EmulatedDevice::release(DevicePtr p) noexcept {
  std::lock_guard lock(mutex_);
  // As cuMemFree, which waits for the work that may still use it. Work that cannot run (a wait
  // nothing reaches, already reported by a sync) is dropped, not left to touch freed memory.
  if (!drain_all()) queues_.clear();
  host_allocations_.erase(p);
  if (auto it = allocations_.find(p); it != allocations_.end()) {
    munmap(it->second.base, it->second.mapped);
    allocations_.erase(it);
  }
}

// A block of the cache is lent for `bytes`: copies past them are refused (check), and the
// block's whole pages past them cannot be touched until it is given back, so that an overrun
// of a lent block faults as one of a new buffer does (within the last page's slack). While the
// cache keeps a block, none of it can be touched, and copies into it are refused: work queued
// on it that runs after the give-back (the driver no longer waits for it, as cuMemFreeHost
// did) faults instead of writing into the block lent next.
Expected<void*, std::string> EmulatedDevice::allocate_host(std::size_t bytes) {
  auto block = host_cache_.take(bytes);
  if (!block) return block;
  std::lock_guard lock(mutex_);
  Allocation& a = allocations_.at(reinterpret_cast<DevicePtr>(*block));
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  char* const guard = static_cast<char*>(a.base) + a.mapped - page;
  a.bytes = std::max<std::size_t>(bytes, 1);
  const std::uintptr_t used = reinterpret_cast<std::uintptr_t>(*block) + a.bytes;
  char* const slack = reinterpret_cast<char*>((used + page - 1) / page * page);
  if (mprotect(a.base, static_cast<std::size_t>(slack - static_cast<char*>(a.base)), PROT_READ | PROT_WRITE) != 0 ||
      (slack < guard && mprotect(slack, static_cast<std::size_t>(guard - slack), PROT_NONE) != 0)) {
    release_host(*block);
    return Unexpected{std::string("emulation: cannot protect a lent block")};
  }
  return block;
}

void EmulatedDevice::release_host(void* p) noexcept {
  std::lock_guard lock(mutex_);
  auto it = allocations_.find(reinterpret_cast<DevicePtr>(p));
  if (it != allocations_.end() && host_allocations_.count(it->first)) {
    // Untouchable while kept (the cache frees a block it does not keep: unmapped then).
    Allocation& a = it->second;
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    a.bytes = 0;
    (void)mprotect(a.base, a.mapped - page, PROT_NONE);
  }
  host_cache_.give_back(p);
}

GpuStatus EmulatedDevice::run(std::function<GpuStatus()> op) {
  if (auto it = recording_.find(stream_in_use()); it != recording_.end()) {
    it->second.push_back(std::move(op));
    return std::monostate{};
  }
  if (!deferred()) return op();
  Queue& q = queues_[stream_in_use()];
  q.ops.push_back({std::move(op), std::nullopt});
  ++q.ordered;
  return std::monostate{};
}

GpuStatus EmulatedDevice::copy_to_device(DevicePtr to, const void* from, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  if (auto ok = check(to, bytes); !ok) return ok;
  last_copy_to_device_stream = stream_in_use();
  if (deferred() && !capturing() && !page_locked(from, bytes)) {
    // The driver stages pageable memory before it returns: the caller may reuse it at once.
    auto staged = std::make_shared<std::vector<unsigned char>>(static_cast<const unsigned char*>(from),
                                                               static_cast<const unsigned char*>(from) + bytes);
    return run([=] {
      std::memcpy(reinterpret_cast<void*>(to), staged->data(), bytes);
      return GpuStatus(std::monostate{});
    });
  }
  return run([=] {
    std::memcpy(reinterpret_cast<void*>(to), from, bytes);
    return GpuStatus(std::monostate{});
  });
}

GpuStatus EmulatedDevice::copy_to_host(void* to, DevicePtr from, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  if (auto ok = check(from, bytes); !ok) return ok;
  if (capturing() && !page_locked(to, bytes))
    return Unexpected{std::string("emulation: a copy to pageable memory during a capture (CUDA refuses it)")};
  last_copy_to_host_stream = stream_in_use();
  auto ok = run([=] {
    std::memcpy(to, reinterpret_cast<const void*>(from), bytes);
    return GpuStatus(std::monostate{});
  });
  // The driver returns from a copy to pageable memory once it is done.
  if (ok && deferred() && !page_locked(to, bytes)) return drain(now());
  return ok;
}

GpuStatus EmulatedDevice::copy_on_device(DevicePtr to, DevicePtr from, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  if (auto ok = check(to, bytes); !ok) return ok;
  if (auto ok = check(from, bytes); !ok) return ok;
  return run([=] {
    std::memmove(reinterpret_cast<void*>(to), reinterpret_cast<const void*>(from), bytes);
    return GpuStatus(std::monostate{});
  });
}

GpuStatus EmulatedDevice::fill_zero(DevicePtr to, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  if (auto ok = check(to, bytes); !ok) return ok;
  return run([=] {
    std::memset(reinterpret_cast<void*>(to), 0, bytes);
    return GpuStatus(std::monostate{});
  });
}

Expected<GpuDevice::Handle, std::string> EmulatedDevice::load_module(
    const std::string& source, const std::string&, const std::vector<codegen::CudaEntry>& module_entries) {
  // Compiled and opened without the device's lock (seconds of the host compiler, where other
  // threads' work goes on), which only the module's table needs.
  std::string text = emulation_source(source, module_entries);
  const std::string key = sha256_hex(text);
  void* library = nullptr;
  {
    std::lock_guard lock(library_mutex);
    if (auto it = libraries.find(key); it != libraries.end()) library = it->second;
  }
  if (!library) {
    auto so = emulation_library(text);
    if (!so) return Unexpected{so.error()};
    library = dlopen(so->c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {  // a cached library that does not load (damaged, or removed meanwhile): once more, compiled now
      so = emulation_library(text, true);
      if (!so) return Unexpected{so.error()};
      library = dlopen(so->c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (!library) return Unexpected{std::string("emulation: dlopen: ") + dlerror()};
    // Bound once, by the thread that remembers it: another may be running its kernels.
    std::lock_guard lock(library_mutex);
    if (auto [it, first] = libraries.emplace(key, library); first) {
      auto bind = reinterpret_cast<void (*)(FxcThreadContextFn, FxcRunFn, FxcSyncFn, FxcSyncFn)>(dlsym(library, "fxc_emu_bind"));
      if (!bind) {
        libraries.erase(it);
        return Unexpected{std::string("emulation: the module lacks fxc_emu_bind")};
      }
      bind(&emulated_thread_context, &run_fibers, &sync_fibers, &sync_warp_fibers);
    }
  }
  std::lock_guard lock(mutex_);
  std::map<std::string, Launcher> entries;
  for (const codegen::CudaEntry& e : module_entries) {
    auto f = reinterpret_cast<Launcher>(dlsym(library, ("fxc_emu_" + e.symbol).c_str()));
    if (!f) return Unexpected{"emulation: no launcher for " + e.symbol};
    entries[e.symbol] = f;
  }
  modules_.push_back(std::move(entries));
  return static_cast<Handle>(modules_.size() - 1);
}

void EmulatedDevice::unload_module(Handle module) noexcept {
  std::lock_guard lock(mutex_);
  if (module < modules_.size()) modules_[module].clear();  // its launchers stay in the library
}

Expected<GpuDevice::Handle, std::string> EmulatedDevice::function(Handle module, const std::string& symbol) {
  std::lock_guard lock(mutex_);
  if (module >= modules_.size()) return Unexpected{std::string("emulation: unknown module")};
  auto it = modules_[module].find(symbol);
  if (it == modules_[module].end()) return Unexpected{"the module has no kernel " + symbol};
  functions_.push_back({module, it->second});
  return static_cast<Handle>(functions_.size() - 1);
}

GpuStatus EmulatedDevice::launch(Handle function, const codegen::CudaLaunch& shape,
                                 const std::vector<std::uint64_t>& args) {
  std::lock_guard lock(mutex_);
  if (function >= functions_.size()) return Unexpected{std::string("emulation: unknown function")};
  if (shape.grid <= 0 || shape.block < 1 || shape.block > 1024)
    return Unexpected{"emulation: bad launch shape " + std::to_string(shape.grid) + " x " + std::to_string(shape.block)};
  if (modules_[functions_[function].module].empty())
    return Unexpected{std::string("emulation: a launch of a function whose module was unloaded")};
  Launcher f = functions_[function].launcher;
  last_launch_stream = stream_in_use();
  return run([this, f, shape, args] {
    const char* fault = f(args.data(), shape.grid, shape.block);
    ++launches;
    if (fault) return GpuStatus(Unexpected{"emulation: the kernel faulted: " + std::string(fault)});
    return GpuStatus(std::monostate{});
  });
}

GpuStatus EmulatedDevice::begin_capture() {
  std::lock_guard lock(mutex_);
  if (capturing()) return Unexpected{std::string("emulation: already capturing")};
  recording_[stream_in_use()];
  return std::monostate{};
}

Expected<GpuDevice::Handle, std::string> EmulatedDevice::end_capture() {
  std::lock_guard lock(mutex_);
  auto it = recording_.find(stream_in_use());
  if (it == recording_.end()) return Unexpected{std::string("emulation: not capturing")};
  graphs_[++last_graph_] = std::move(it->second);
  recording_.erase(it);
  return last_graph_;
}

GpuStatus EmulatedDevice::launch_graph(Handle graph) {
  std::lock_guard lock(mutex_);
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return Unexpected{std::string("emulation: unknown graph")};
  ++graph_launches;
  return run([ops = it->second] {  // a copy: the graph may be destroyed while this is queued
    for (const auto& op : ops)
      if (auto ok = op(); !ok) return ok;
    return GpuStatus(std::monostate{});
  });
}

void EmulatedDevice::destroy_graph(Handle graph) noexcept {
  std::lock_guard lock(mutex_);
  graphs_.erase(graph);
}

}  // namespace fxc::test
