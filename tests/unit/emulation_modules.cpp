// SPDX-License-Identifier: Apache-2.0
#include "emulation_modules.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>

#include "support/file_io.h"
#include "support/sha256.h"

namespace fxc::test {
namespace fs = std::filesystem;
namespace {

// A file the compiler wrote (a log, its output); empty where it wrote none.
std::string read_text(const fs::path& path) {
  auto text = read_whole_file(path.string());
  return text ? *text : std::string();
}

// A path as one word of a shell command, whatever characters it holds.
std::string quoted(const fs::path& path) {
  std::string out = "'";
  for (char c : path.string()) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool run_quietly(const std::string& command, const fs::path& log) {
  return std::system((command + " > " + quoted(log) + " 2>&1").c_str()) == 0;
}

// A name of this process's own, for what it writes before renaming it into place: another
// process (or thread) compiling the same source at once, or one killed midway, leaves no
// partial file under the final name.
std::string own_suffix() {
  static std::atomic<unsigned> count{0};
  return "." + std::to_string(getpid()) + "." + std::to_string(count++);
}

// Whether `dir` is this user's alone: a cache others can write into could hand this process a
// library of theirs to load.
bool private_directory(const fs::path& dir) {
  struct stat st {};
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0 && access(dir.c_str(), W_OK) == 0;
}

class ModuleCompiler {
 public:
  ModuleCompiler() : shim_dir_(FXC_CUDA_SHIM_DIR), flags_(flags()) {
    cache_ = cache_directory(fresh_);
    // The identity covers what decides a library besides its source: the compiler (its path
    // and version), the flags, and the shim as the compiler sees it, system headers and
    // predefined macros included (preprocessed).
    const std::string mine = own_suffix();
    const fs::path version = cache_ / ("version" + mine), shim = cache_ / ("shim" + mine + ".ii"),
                   log = cache_ / ("shim" + mine + ".log");
    run_quietly(std::string(FXC_HOST_CXX) + " --version", version);
    run_quietly(std::string(FXC_HOST_CXX) + " " + flags_ + " -E -P -dD " + quoted(shim_dir_ / "cuda_emulation_shim.h") +
                    " -o " + quoted(shim),
                log);
    identity_ = sha256_hex(std::string(FXC_HOST_CXX) + "\n" + read_text(version) + "\n" + flags_ + "\n" + read_text(shim));
    std::error_code ignored;
    for (const fs::path& made : {version, shim, log}) fs::remove(made, ignored);
    remove_stale();
    includes_ = precompiled_shim() + "-I" + quoted(shim_dir_);
  }

  ~ModuleCompiler() {
    std::error_code ignored;
    if (fresh_) fs::remove_all(cache_, ignored);  // a private directory of this process's
  }

  /// The library of `text`, compiled now or earlier (`rebuild`: now, whatever the cache holds);
  /// an error holds the compiler's output.
  Expected<fs::path, std::string> library(const std::string& text, bool rebuild) const {
    const std::string key = sha256_hex(identity_ + text).substr(0, 32);
    const fs::path so = cache_ / (key + ".so");
    std::error_code ignored;
    if (!rebuild && fs::exists(so)) {
      fs::last_write_time(so, fs::file_time_type::clock::now(), ignored);  // used: kept
      return so;
    }
    const std::string mine = own_suffix();
    const fs::path cpp = cache_ / (key + mine + ".cpp"), partial = cache_ / (key + mine + ".so"),
                   log = cache_ / (key + mine + ".log");
    std::ofstream(cpp) << text;
    if (!run_quietly(std::string(FXC_HOST_CXX) + " " + flags_ + " -shared " + includes_ + " " + quoted(cpp) + " -o " +
                         quoted(partial),
                     log)) {
      const std::string output = read_text(log);
      fs::remove(partial, ignored);
      fs::remove(log, ignored);
      return Unexpected{"emulation: the host compiler rejected the generated source (" + cpp.string() + "):\n" + output};
    }
    std::error_code kept;
    fs::rename(partial, so, kept);
    fs::remove(cpp, ignored);
    fs::remove(log, ignored);
    if (kept) return Unexpected{"emulation: cannot keep " + so.string() + ": " + kept.message()};
    return so;
  }

 private:
  // -O0: the suite's modules compiled in 3.0 minutes against 4.7 at -O1 and ran 54 s
  // against 50 (2 cores); the arithmetic is the same (no contraction either way).
  static constexpr const char* kFlags = "-std=c++20 -O0 -ffp-contract=off -fPIC -pthread";
  // FXC_EMULATION_NO_F64_MMA (nonempty): the generated kernels' paths for GPUs without float64
  // tensor cores, where the emulation otherwise takes those of sm_80 and sm_90 (the chunked
  // scan's table sums as matrix products; ctest's cuda_emulation_no_f64_mma).
  static std::string flags() {
    const char* scalar = std::getenv("FXC_EMULATION_NO_F64_MMA");
    return std::string(kFlags) + (scalar && *scalar ? " -DFXC_EMULATION_NO_F64_MMA" : "");
  }

  // FXC_CUDA_EMULATION_CACHE, else a directory per user under the system's temporary one;
  // where that is not this user's alone (or cannot be made), a fresh private one, and nothing
  // is kept across processes.
  static fs::path cache_directory(bool& fresh) {
    fs::path dir;
    if (const char* named = std::getenv("FXC_CUDA_EMULATION_CACHE"); named && *named) dir = named;
    else dir = fs::temp_directory_path() / ("fxc-cuda-emulation-cache-" + std::to_string(getuid()));
    std::error_code error;
    if (fs::create_directories(dir, error)) fs::permissions(dir, fs::perms::owner_all, error);
    if (private_directory(dir)) return dir;
    std::string made = (fs::temp_directory_path() / "fxc-cuda-emulation-XXXXXX").string();
    if (!mkdtemp(made.data())) throw std::runtime_error("emulation: cannot make a directory for its modules");
    std::cerr << "emulation: " << dir << " is not this user's alone; its modules go to " << made
              << " and are not kept\n";
    fresh = true;
    return made;
  }

  // The shim's headers, which the host compiler would parse again for each of the suite's
  // ~250 modules (about a second each), precompiled once per identity: "-I<its directory> ",
  // searched before the shim's own. Checked in use (-Winvalid-pch, -H), since GCC ignores a
  // precompiled header it cannot use without a word; one that is not used is made again once,
  // and then left out (each module then parses the headers).
  std::string precompiled_shim() const {
    const fs::path dir = cache_ / ("shim-" + identity_.substr(0, 32)), pch = dir / "cuda_emulation_shim.h.gch";
    std::error_code ignored;
    fs::create_directories(dir, ignored);
    const std::string include = "-I" + quoted(dir) + " ";
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (attempt > 0 || !fs::exists(pch)) {
        const fs::path partial = dir / ("gch" + own_suffix());
        if (run_quietly(std::string(FXC_HOST_CXX) + " " + flags_ + " -x c++-header " +
                            quoted(shim_dir_ / "cuda_emulation_shim.h") + " -o " + quoted(partial),
                        partial.string() + ".log"))
          fs::rename(partial, pch, ignored);
        fs::remove(partial, ignored);
        fs::remove(partial.string() + ".log", ignored);
      }
      const fs::path probe = dir / ("probe" + own_suffix() + ".cpp"), log = dir / ("probe" + own_suffix() + ".log");
      std::ofstream(probe) << "#include <cuda_emulation_shim.h>\n";
      run_quietly(std::string(FXC_HOST_CXX) + " " + flags_ + " -Winvalid-pch -H -fsyntax-only " + include + "-I" +
                      quoted(shim_dir_) + " " + quoted(probe),
                  log);
      const bool used = read_text(log).find("! " + pch.string()) != std::string::npos;
      fs::remove(probe, ignored);
      fs::remove(log, ignored);
      if (used) {
        fs::last_write_time(dir, fs::file_time_type::clock::now(), ignored);  // used: kept
        return include;
      }
    }
    return "";
  }

  // Removes what this cache made and nothing else (the directory may be one the user named):
  // libraries and precompiled shims unused for 30 days, what a process left half-written (a
  // name with its pid) after a day.
  void remove_stale() const {
    static const std::regex kept(R"([0-9a-f]{32}\.so|shim-[0-9a-f]{32})");
    static const std::regex partial(R"(([0-9a-f]{32}|version|shim)\.[0-9]+\.[0-9]+(\.cpp|\.so|\.log|\.ii)?)");
    const auto now = fs::file_time_type::clock::now();
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(cache_, ignored)) {
      const std::string name = entry.path().filename().string();
      const auto age = now - entry.last_write_time(ignored);
      if ((std::regex_match(name, kept) && age > std::chrono::hours(24 * 30)) ||
          (std::regex_match(name, partial) && age > std::chrono::hours(24)))
        fs::remove_all(entry.path(), ignored);
    }
  }

  fs::path shim_dir_;
  std::string flags_;  // kFlags, and what flags() adds
  fs::path cache_;
  bool fresh_ = false;  // cache_ is a private directory made for this process
  std::string identity_;  // the compiler, its flags and the shim as it sees it, hashed
  std::string includes_;
};

const ModuleCompiler& module_compiler() {
  static const ModuleCompiler compiler;
  return compiler;
}

}  // namespace

Expected<fs::path, std::string> emulation_library(const std::string& text, bool rebuild) {
  return module_compiler().library(text, rebuild);
}

}  // namespace fxc::test
