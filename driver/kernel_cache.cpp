// SPDX-License-Identifier: Apache-2.0
#include "driver/kernel_cache.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include "codegen/chain_layout.h"
#include "codegen/vector_math.h"
#include "codegen/cuda/emit_cuda.h"
#include "codegen/cuda/nvrtc.h"
#include "ir/print.h"
#include "runtime/counters.h"
#include "runtime/thread_pool.h"
#include "support/file_io.h"
#include "support/sha256.h"
#include "support/trace.h"
#include "support/version.h"

namespace fxc {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "fxc-kernel-cache 1";

std::mutex memory_mutex;
std::map<std::string, std::shared_ptr<const codegen::CpuKernels>>& memory() {
  static std::map<std::string, std::shared_ptr<const codegen::CpuKernels>> cache;
  return cache;
}

// Bumped when the CUDA source the emitter writes for a shape changes meaning, or when its
// kernels change so that a cache should not keep the older ones (10: the planar halves' two
// loops and the table's matrix products; 9 was the state table's float32 rows, built and taken
// out on 2026-12-03, whose cubins may be in caches and do not fit this layout).
constexpr int kCudaCodegenVersion = 10;

std::mutex cubin_mutex;
std::map<std::string, std::shared_ptr<const std::string>>& cubins() {
  static std::map<std::string, std::shared_ptr<const std::string>> cache;
  return cache;
}

bool is_object(const fs::path& path) { return path.extension() == ".o" || path.extension() == ".cubin"; }

// Whether `path` is a file of a cache entry: a key (64 lowercase hex digits, a SHA-256) and
// .meta, .o or .cubin. Listing, pruning and clearing touch no other file: a cache directory
// given by mistake (--cache-dir .) must not lose a user's main.o or notes.meta.
bool is_entry_file(const fs::path& path) {
  const std::string stem = path.stem().string();
  return (path.extension() == ".meta" || is_object(path)) && stem.size() == 64 &&
         std::all_of(stem.begin(), stem.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::vector<ir::NodeId> chain_ids(const ir::Graph& graph) {
  return codegen::kernel_node_ids(graph);
}

// Any failure to read is a miss (or a damaged entry) to the cache, not an error. Only regular
// files: a FIFO there would block the run, /dev/zero fill its memory.
std::optional<std::string> read_whole(const fs::path& path) {
  auto bytes = read_whole_file(path.string(), AlsoRead::nothing);
  if (!bytes) return std::nullopt;
  return std::move(*bytes);
}

// A regular file's size, else 0: what listing and pruning count.
std::uint64_t regular_size(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return 0;
  const std::uintmax_t size = fs::file_size(path, error);
  return error ? 0 : size;
}

Expected<std::monostate, std::string> write_text(const fs::path& path, const std::string& bytes) {
  // A link at an entry's name is replaced, not followed: the cache writes only in its
  // directory (a link there to a user's file had that file overwritten by a kernel). An empty
  // directory in an entry's place goes; one with files in it is kept, and reported.
  std::error_code error;
  if (fs::is_directory(fs::symlink_status(path, error))) fs::remove(path, error);
  return write_file_atomically(
      path.string(), [&](int fd, const std::string&) { return write_all(fd, bytes.data(), bytes.size()); },
      AtLink::replace);
}

}  // namespace

void clear_memory_cache() {
  {
    std::lock_guard lock(memory_mutex);
    memory().clear();
  }
  std::lock_guard lock(cubin_mutex);
  cubins().clear();
}

KernelCache::KernelCache(std::string directory, std::uint64_t max_bytes)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {}

namespace {

// Each chain's kernel state as the runtime will lay it out: a kernel of another layout (a
// code generator changed without its version raised) misses instead of reading and writing
// past the state it is given (an old binary loading kernels of a grown dynamics state
// corrupted its heap, 2026-11-29).
std::string layout_text(const ir::Graph& scheduled) {
  std::string text = "layouts";
  for (ir::NodeId id = 0; id < scheduled.size(); ++id)
    if (auto* chain = std::get_if<ir::Chain>(&scheduled.node(id).op)) {
      const codegen::ChainLayout layout = codegen::layout_of(*chain);
      text += " %" + std::to_string(id) + ":" + std::to_string(layout.param_count) + "," +
              std::to_string(layout.state_per_channel) + "," + std::to_string(layout.delay_count) + "," +
              std::to_string(layout.ring_count);
    }
  return text + "\n";
}

}  // namespace

std::string KernelCache::key_text(const ir::Graph& scheduled) {
  return std::string(kFormat) + "\nfxc " + kVersion + "\nbackend cpu, code generation " +
         std::to_string(codegen::kCpuCodegenVersion) + "\ntarget " +
         codegen::cpu_target_id() + "\ntoolchain " + codegen::llvm_version_string() + "\nvector math " +
         codegen::vector_math_id() + "\noptions O1\n" + layout_text(scheduled) + ir::to_text(scheduled, {.locations = false, .shape_only = true});
}

std::string KernelCache::key(const ir::Graph& scheduled) { return sha256_hex(key_text(scheduled)); }

std::string KernelCache::cuda_key_text(const ir::Graph& scheduled, const std::string& arch) {
  std::optional<std::string> nvrtc = codegen::nvrtc_version();
  if (!nvrtc) return {};
  std::string options;
  for (const std::string& o : codegen::cuda_compile_options(arch, true)) options += " " + o;
  return std::string(kFormat) + "\nfxc " + kVersion + "\nbackend cuda, code generation " +
         std::to_string(kCudaCodegenVersion) + "\ntarget " + arch + "\ntoolchain NVRTC " + *nvrtc +
         "\noptions" + options + "\n" + layout_text(scheduled) +
         ir::to_text(scheduled, {.locations = false, .shape_only = true});
}

Expected<std::shared_ptr<const std::string>, std::string> KernelCache::cuda_cubin(const ir::Graph& scheduled,
                                                                                  const std::string& arch,
                                                                                  DiagnosticEngine& diags) {
  TraceSpan span("kernel cache (cuda)", "compile", {{"graph", scheduled.name}, {"arch", arch}});
  std::string text = cuda_key_text(scheduled, arch);
  if (text.empty()) return Unexpected{codegen::compile_cuda("", arch, true).error()};  // says NVRTC is missing
  std::string k = sha256_hex(text);
  {
    std::lock_guard lock(cubin_mutex);
    if (auto it = cubins().find(k); it != cubins().end()) {
      ++counters().memory_hits;
      span.arg("result", "memory hit");
      return it->second;
    }
  }
  std::shared_ptr<const std::string> cubin;
  if (!directory_.empty())
    if (std::optional<std::string> bytes = read_entry(k, text, diags, ".cubin")) {
      ++counters().disk_hits;
      span.arg("result", "disk hit");
      cubin = std::make_shared<const std::string>(std::move(*bytes));
    }
  if (!cubin) {
    auto source = codegen::emit_cuda_source(scheduled);
    if (!source) return Unexpected{source.error()};
    auto compiled = codegen::compile_cuda(*source, arch, true);
    if (!compiled) return Unexpected{compiled.error()};
    ++counters().compiles;
    span.arg("result", "compiled");
    cubin = std::make_shared<const std::string>(std::move(*compiled));
    if (!directory_.empty()) write_entry(k, text, scheduled.name, *cubin, {}, diags, ".cubin");
  }
  // Another thread may have stored the same key meanwhile: every caller gets the one stored.
  std::lock_guard lock(cubin_mutex);
  return cubins().emplace(k, cubin).first->second;
}

Expected<std::shared_ptr<const codegen::CpuKernels>, std::string> KernelCache::cpu_kernels(
    const ir::Graph& scheduled, DiagnosticEngine& diags) {
  TraceSpan span("kernel cache", "compile", {{"graph", scheduled.name}});
  std::string text = key_text(scheduled);
  std::string k = sha256_hex(text);
  span.arg("key", k.substr(0, 16));
  {
    std::lock_guard lock(memory_mutex);
    if (auto it = memory().find(k); it != memory().end()) {
      ++counters().memory_hits;
      span.arg("result", "memory hit");
      return it->second;
    }
  }
  std::vector<ir::NodeId> ids = chain_ids(scheduled);
  std::shared_ptr<const codegen::CpuKernels> kernels;
  if (!directory_.empty())
    if (std::optional<std::string> object = read_entry(k, text, diags)) {
      auto loaded = codegen::load_cpu_kernels(*object, ids);
      if (loaded) {
        ++counters().disk_hits;
        span.arg("result", "disk hit");
        kernels = *loaded;
      } else {
        diags.warning({}, "kernel cache entry " + k.substr(0, 12) + " could not be loaded (" +
                              loaded.error() + "); recompiling", "fxc-cache");
        ++counters().damaged_entries;
      }
    }
  if (!kernels) {
    span.arg("result", "compiled");
    TraceSpan compile_span("codegen and LLVM compile", "compile", {{"graph", scheduled.name}});
    // Modules compile side by side on the worker pool (a caller whose pool is busy compiles
    // them all itself: the pool never waits for itself).
    ThreadPool& pool = ThreadPool::shared();
    auto compiled = codegen::compile_cpu_kernels(
        scheduled, static_cast<std::size_t>(pool.threads()),
        [&pool](std::size_t count, const std::function<void(std::size_t)>& body) {
          pool.run(static_cast<int>(count), [&body](int part) { body(static_cast<std::size_t>(part)); });
        });
    if (!compiled) return Unexpected{compiled.error()};
    ++counters().compiles;
    kernels = *compiled;
    if (!directory_.empty()) write_entry(k, text, scheduled.name, kernels->object_code(), ids, diags);
  }
  // Another thread may have compiled the same key meanwhile: every caller gets the one stored,
  // so the process keeps one copy of the machine code (the others are released here).
  std::lock_guard lock(memory_mutex);
  return memory().emplace(k, kernels).first->second;
}

std::optional<std::string> KernelCache::read_entry(const std::string& key,
                                                   const std::string& key_text,
                                                   DiagnosticEngine& diags, const std::string& extension) {
  fs::path meta_path = fs::path(directory_) / (key + ".meta");
  std::optional<std::string> meta = read_whole(meta_path);
  if (!meta) return std::nullopt;  // an ordinary miss
  auto damaged = [&](const std::string& why) -> std::optional<std::string> {
    diags.warning({}, "kernel cache entry " + key.substr(0, 12) + " in " + directory_ +
                          " is damaged (" + why + "); recompiling", "fxc-cache");
    ++counters().damaged_entries;
    return std::nullopt;
  };
  std::istringstream in(*meta);
  std::string format, word, sum, separator;
  std::uint64_t bytes = 0;
  std::getline(in, format);
  if (format != kFormat) return damaged("unknown format");
  in >> word >> bytes;
  if (word != "object_bytes") return damaged("bad metadata");
  in >> word >> sum;
  if (word != "object_sha256") return damaged("bad metadata");
  while (std::getline(in, separator) && separator != "--- key text ---") {
  }
  std::string rest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (separator != "--- key text ---" || rest != key_text) return damaged("key text does not match");
  const fs::path object_path = fs::path(directory_) / (key + extension);
  std::error_code error;
  if (!fs::exists(fs::symlink_status(object_path, error))) return damaged("object file missing");
  if (!fs::is_regular_file(object_path, error)) return damaged("object file is not a regular file");
  std::optional<std::string> object = read_whole(object_path);
  if (!object) return damaged("object file unreadable");
  if (object->size() != bytes) return damaged("object file truncated");
  if (sha256_hex(*object) != sum) return damaged("checksum mismatch");
  std::error_code ignored;
  fs::last_write_time(meta_path, fs::file_time_type::clock::now(), ignored);  // for LRU pruning
  return object;
}

void KernelCache::write_entry(const std::string& key, const std::string& key_text,
                              const std::string& graph_name, const std::string& object,
                              const std::vector<ir::NodeId>&, DiagnosticEngine& diags,
                              const std::string& extension) {
  std::error_code error;
  fs::create_directories(directory_, error);
  if (error) {
    diags.warning({}, "cannot create the kernel cache directory " + directory_ + ": " +
                          error.message() + "; kernels are not cached on disk", "fxc-cache");
    ++counters().cache_write_failures;
    return;
  }
  std::string meta = std::string(kFormat) + "\nobject_bytes " + std::to_string(object.size()) +
                     "\nobject_sha256 " + sha256_hex(object) + "\ngraph " + graph_name +
                     "\n--- key text ---\n" + key_text;
  // The object goes first: a .meta file always names a complete object.
  auto ok = write_text(fs::path(directory_) / (key + extension), object);
  if (ok) {
    ok = write_text(fs::path(directory_) / (key + ".meta"), meta);
    // An object without its .meta is no entry, and pruning (which goes by .meta) would never
    // remove it.
    if (!ok) fs::remove(fs::path(directory_) / (key + extension), error);
  }
  if (!ok) {
    diags.warning({}, ok.error() + "; kernels are not cached on disk", "fxc-cache");
    ++counters().cache_write_failures;
    return;
  }
  prune();
}

std::vector<CacheEntryInfo> KernelCache::list() const {
  std::vector<CacheEntryInfo> out;
  std::error_code error;
  for (const auto& file : fs::directory_iterator(directory_, error)) {
    if (file.path().extension() != ".meta" || !is_entry_file(file.path())) continue;
    CacheEntryInfo info;
    info.key = file.path().stem().string();
    info.bytes = regular_size(file.path());
    for (const char* ext : {".o", ".cubin"}) info.bytes += regular_size(fs::path(directory_) / (info.key + ext));
    if (auto meta = read_whole(file.path())) {
      std::istringstream in(*meta);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("graph ", 0) == 0) {
          info.graph_name = line.substr(6);
          break;
        }
    }
    out.push_back(info);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

Expected<std::size_t, std::string> KernelCache::clear() {
  std::size_t removed = 0;
  std::string failed;
  std::error_code error;
  for (const auto& file : fs::directory_iterator(directory_, error)) {
    if (!is_entry_file(file.path())) continue;
    std::error_code not_removed;
    fs::remove(file.path(), not_removed);
    if (not_removed) {
      // A read-only cache said it removed what it kept.
      if (failed.empty()) failed = "cannot remove '" + file.path().string() + "': " + not_removed.message();
    } else {
      removed += file.path().extension() == ".meta";
    }
  }
  clear_memory_cache();
  if (!failed.empty())
    return Unexpected{failed + " (" + std::to_string(removed) + " entr" + (removed == 1 ? "y" : "ies") +
                      " removed)"};
  return removed;
}

void KernelCache::prune() {
  struct Entry {
    fs::file_time_type used;
    std::string key;
    std::uint64_t bytes;
  };
  std::vector<Entry> entries;
  std::uint64_t total = 0;
  std::error_code error;
  for (const auto& file : fs::directory_iterator(directory_, error)) {
    if (file.path().extension() != ".meta" || !is_entry_file(file.path())) continue;
    std::string key = file.path().stem().string();
    std::error_code e;
    std::uint64_t bytes = regular_size(file.path());
    for (const char* ext : {".o", ".cubin"}) bytes += regular_size(fs::path(directory_) / (key + ext));
    entries.push_back({fs::last_write_time(file.path(), e), key, bytes});
    total += bytes;
  }
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.used < b.used; });
  for (const Entry& entry : entries) {
    if (total <= max_bytes_) break;
    fs::remove(fs::path(directory_) / (entry.key + ".meta"), error);
    fs::remove(fs::path(directory_) / (entry.key + ".o"), error);
    fs::remove(fs::path(directory_) / (entry.key + ".cubin"), error);
    total -= entry.bytes;
  }
}

std::string KernelCache::default_directory(const std::string& override_dir) {
  if (!override_dir.empty()) return override_dir;
  if (const char* dir = std::getenv("FXC_CACHE_DIR"); dir && *dir) return dir;
  // As the XDG specification says, a relative XDG_CACHE_HOME is ignored; so is a relative HOME,
  // and one that does not exist (fxc makes .cache/fxc in a home, never the home itself): each
  // put the cache under the working directory, or made a whole missing path.
  auto absolute = [](const char* path) { return path && path[0] == '/'; };
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); absolute(xdg)) return std::string(xdg) + "/fxc";
  std::error_code error;
  if (const char* home = std::getenv("HOME"); absolute(home) && fs::is_directory(home, error))
    return std::string(home) + "/.cache/fxc";
  // No HOME (a service, a stripped environment): the user's home from the password database,
  // else no disk cache at all ("none": memory only). Never the working directory, which it was
  // (a hidden .fxc-cache appeared wherever a run started), nor a name under /tmp that
  // another user could make first and fill with objects this process would load and run.
  std::vector<char> buffer(16384);
  passwd entry{}, *found = nullptr;
  if (::getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found && found->pw_dir &&
      absolute(found->pw_dir) && std::string(found->pw_dir) != "/" && fs::is_directory(found->pw_dir, error))
    return std::string(found->pw_dir) + "/.cache/fxc";
  return "none";
}

}  // namespace fxc
