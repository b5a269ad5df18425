// SPDX-License-Identifier: Apache-2.0
#include "driver/program_cache.h"

#include <cstring>
#include <list>
#include <mutex>
#include <unordered_map>

#include "driver/kernel_cache.h"
#include "frontend/fx_library.h"

namespace fxc::driver {
namespace {

// At most this many Programs are remembered; past it the cache starts again (a host that
// makes thousands of distinct graphs keeps only its recent ones).
constexpr std::size_t kMaxEntries = 256;

// A Program on the GPU keeps its streams between runs, with their device buffers and
// page-locked staging (runtime/cuda_executor.h, CudaRunPool), and so does its copy here, after
// the Program is gone: at most this many of them are remembered, the least recently made goes.
// Without the bound a corpus of many lengths (a Program each) held every file's GPU memory
// (the vocal example: 27 buffers a file on the emulation, 46 MB of them page-locked for 60 s).
constexpr std::size_t kMaxGpuEntries = 4;

struct Cache {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const Program::Impl>> programs;
  std::list<std::string> gpu_keys;  // the GPU entries' keys, least recently made or found first
};

// `key`, a GPU entry, becomes the most recently used.
void touch_gpu(Cache& c, const std::string& key) {
  c.gpu_keys.remove(key);
  c.gpu_keys.push_back(key);
}

Cache& cache() {
  static Cache instance;
  return instance;
}

void put(std::string& key, std::string_view field) {
  std::uint64_t size = field.size();
  key.append(reinterpret_cast<const char*>(&size), sizeof size);  // lengths first: no field can fake another
  key.append(field);
}

void put(std::string& key, double value) { key.append(reinterpret_cast<const char*>(&value), sizeof value); }

// Every field of `options` that changes what is compiled, and the source.
std::string key_of(std::string_view text, const std::string& name, const Options& o) {
  std::string key;
  put(key, text);
  put(key, name);
  // The files it imports, as they are now: the same text may import other texts.
  put(key, frontend::imported_texts(text, name));
  put(key, o.sample_rate_hz);
  put(key, static_cast<double>(o.dtype));
  put(key, static_cast<double>(o.target));
  put(key, static_cast<double>(o.channels));
  put(key, static_cast<double>(o.max_block));
  // The directory the kernels come from, as resolved now ($FXC_CACHE_DIR may change).
  put(key, o.cache_directory == "none" ? std::string("none") : KernelCache::default_directory(o.cache_directory));
  put(key, static_cast<double>(o.thresholds.size()));
  for (const auto& [name, value] : o.thresholds) put(key, name), put(key, value);
  put(key, static_cast<double>(o.params.size()));
  for (const auto& [name, value] : o.params) put(key, name), put(key, value);
  put(key, static_cast<double>(o.settings.size()));
  for (const std::string& s : o.settings) put(key, s);
  put(key, static_cast<double>(o.signal_length));
  put(key, o.live_unranged_params ? 1.0 : 0.0);
  put(key, o.compile_kernels ? 1.0 : 0.0);
  put(key, o.fuse ? 1.0 : 0.0);
  put(key, o.cuda_architecture);
  return key;
}

}  // namespace

std::shared_ptr<Program::Impl> cached_program(std::string_view text, const std::string& name, const Options& options,
                                              const std::function<std::shared_ptr<Program::Impl>()>& make) {
  if (options.time_passes && options.log) return make();
  std::string key = key_of(text, name, options);
  Cache& c = cache();
  const bool gpu = options.target == Target::cuda;
  {
    std::lock_guard lock(c.mutex);
    if (auto it = c.programs.find(key); it != c.programs.end()) {
      if (gpu) touch_gpu(c, key);
      return std::make_shared<Program::Impl>(*it->second);
    }
  }
  std::shared_ptr<Program::Impl> made = make();
  // make() read the imported files again: one saved in between would file its graph under
  // the texts read before. Remembered only where they are still the texts of the key.
  if (text.find("import") != std::string_view::npos && key_of(text, name, options) != key) return made;
  auto kept = std::make_shared<const Program::Impl>(*made);  // as made: before any set() on it
  std::shared_ptr<const Program::Impl> dropped;  // released after the lock: it may free GPU memory
  std::lock_guard lock(c.mutex);
  if (c.programs.size() >= kMaxEntries) {
    c.programs.clear();
    c.gpu_keys.clear();
  }
  if (!c.programs.emplace(key, std::move(kept)).second) return made;  // another thread made it meanwhile
  if (gpu) {
    c.gpu_keys.push_back(std::move(key));
    if (c.gpu_keys.size() > kMaxGpuEntries) {
      auto oldest = c.programs.find(c.gpu_keys.front());
      dropped = std::move(oldest->second);
      c.programs.erase(oldest);
      c.gpu_keys.pop_front();
    }
  }
  return made;
}

void clear_program_cache() {
  std::lock_guard lock(cache().mutex);
  cache().programs.clear();
  cache().gpu_keys.clear();
}

}  // namespace fxc::driver
