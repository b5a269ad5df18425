// SPDX-License-Identifier: Apache-2.0
// The kernel cache: compiled CPU kernels by a hash of the scheduled graph's shape, in memory
// (per process) and on disk (shared between processes).
//
// The key is the SHA-256 of: a format version, the fxc version, the backend and the version of
// its code generation, the CPU name and features, the LLVM version, and the canonical text of
// the scheduled graph's shape (no coefficient values). A new cutoff, gain or sample rate therefore finds the same kernels.
//
// CUDA cubins are entries too (KEY.cubin), keyed the same way with the backend "cuda", the
// GPU architecture, NVRTC's version and the NVRTC options.
//
// On disk, an entry is KEY.o (the object file) and KEY.meta (the text that produced the key,
// the object's size and SHA-256, the chain node ids). Both are written to temporary names and
// renamed, the object first, so a reader sees a whole entry or none, and two processes
// writing the same key leave one valid entry. A damaged entry (bad checksum, truncated) is
// reported once as a warning and rebuilt. The directory is pruned to a size limit, least
// recently used first.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu/cpu_compiler.h"
#include "ir/graph.h"
#include "support/diagnostics.h"
#include "support/expected.h"

namespace fxc {

struct CacheEntryInfo {
  std::string key;
  std::string graph_name;
  std::uint64_t bytes = 0;
};

class KernelCache {
 public:
  /// `directory` empty: memory only.
  explicit KernelCache(std::string directory, std::uint64_t max_bytes = 512ull << 20);

  /// The kernels for `scheduled`, from memory, from disk, or compiled (and stored).
  /// Warnings (a damaged entry, an unwritable directory) go to `diags`.
  Expected<std::shared_ptr<const codegen::CpuKernels>, std::string> cpu_kernels(
      const ir::Graph& scheduled, DiagnosticEngine& diags);

  /// The CUDA cubin of `scheduled` for `arch` ("sm_90"), from memory, from disk (KEY.cubin),
  /// or compiled by NVRTC (and stored). The key holds the backend (cuda), the CUDA code
  /// generation's version, the architecture, NVRTC's version and the compile options.
  Expected<std::shared_ptr<const std::string>, std::string> cuda_cubin(const ir::Graph& scheduled,
                                                                       const std::string& arch,
                                                                       DiagnosticEngine& diags);

  /// The key text and its hash for a scheduled graph.
  static std::string key_text(const ir::Graph& scheduled);
  static std::string key(const ir::Graph& scheduled);
  /// The same for its CUDA cubin (empty without NVRTC).
  static std::string cuda_key_text(const ir::Graph& scheduled, const std::string& arch);

  /// The directory to use: `override_dir` when not empty, else $FXC_CACHE_DIR, else
  /// $XDG_CACHE_HOME/fxc, else ~/.cache/fxc.
  static std::string default_directory(const std::string& override_dir = {});

  std::vector<CacheEntryInfo> list() const;
  /// Removes every entry; returns how many, or why one could not be removed.
  Expected<std::size_t, std::string> clear();
  const std::string& directory() const { return directory_; }

 private:
  std::optional<std::string> read_entry(const std::string& key, const std::string& key_text,
                                        DiagnosticEngine& diags, const std::string& extension = ".o");
  void write_entry(const std::string& key, const std::string& key_text, const std::string& graph_name,
                   const std::string& object, const std::vector<ir::NodeId>& ids,
                   DiagnosticEngine& diags, const std::string& extension = ".o");
  void prune();

  std::string directory_;
  std::uint64_t max_bytes_;
};

/// The process-wide in-memory level, shared by every KernelCache.
void clear_memory_cache();

}  // namespace fxc
