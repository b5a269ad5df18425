// SPDX-License-Identifier: Apache-2.0
#include "emulation_modules.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "support/sha256.h"

namespace fxc::test {
namespace fs = std::filesystem;
namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool run_quietly(const std::string& command, const fs::path& log) {
  return std::system((command + " > " + log.string() + " 2>&1").c_str()) == 0;
}

class ModuleCompiler {
 public:
  ModuleCompiler() {
    const std::string shim_dir = FXC_CUDA_SHIM_DIR;
    if (const char* dir = std::getenv("FXC_CUDA_EMULATION_CACHE"); dir && *dir) cache_ = dir;
    else cache_ = fs::temp_directory_path() / ("fxc-cuda-emulation-cache-" + std::to_string(getuid()));
    fs::create_directories(cache_);
    const fs::path version_log = cache_ / ("version." + std::to_string(getpid()));
    run_quietly(std::string(FXC_HOST_CXX) + " --version", version_log);
    identity_ = sha256_hex(std::string(FXC_HOST_CXX) + "\n" + read_text(version_log) + "\n" + kFlags + "\n" +
                           read_text(fs::path(shim_dir) / "cuda_emulation_shim.h") + "\n" +
                           read_text(fs::path(shim_dir) / "cuda_emulation_context.h"));
    fs::remove(version_log);
    remove_stale();
    // The precompiled shim, found before the shim itself: a directory of its own, searched
    // first. A failure to build it only costs time (each module then parses the headers).
    const fs::path pch_dir = cache_ / ("shim-" + identity_.substr(0, 32));
    const fs::path pch = pch_dir / "cuda_emulation_shim.h.gch";
    if (!fs::exists(pch)) {
      fs::create_directories(pch_dir);
      const fs::path partial = pch_dir / ("gch.partial." + std::to_string(getpid()));
      if (run_quietly(std::string(FXC_HOST_CXX) + " " + kFlags + " -x c++-header " + shim_dir +
                          "/cuda_emulation_shim.h -o " + partial.string(),
                      partial.string() + ".log"))
        fs::rename(partial, pch);
      fs::remove(partial);
      fs::remove(partial.string() + ".log");
    }
    std::error_code ignored;
    if (fs::exists(pch)) {
      includes_ = "-I" + pch_dir.string() + " ";
      fs::last_write_time(pch_dir, fs::file_time_type::clock::now(), ignored);  // used: kept
    }
    includes_ += "-I" + shim_dir;
  }

  /// The library of `text`, compiled now or earlier; an error holds the compiler's output.
  Expected<fs::path, std::string> library(const std::string& text) const {
    const std::string key = sha256_hex(identity_ + text).substr(0, 32);
    const fs::path so = cache_ / (key + ".so");
    std::error_code ignored;
    if (fs::exists(so)) {
      fs::last_write_time(so, fs::file_time_type::clock::now(), ignored);  // used: kept
      return so;
    }
    // Written under names of this process's own, then renamed into place: another process
    // compiling the same source at once, or one killed midway, leaves no partial library.
    const std::string mine = "." + std::to_string(getpid());
    const fs::path cpp = cache_ / (key + mine + ".cpp"), partial = cache_ / (key + mine + ".so"),
                   log = cache_ / (key + mine + ".log");
    std::ofstream(cpp) << text;
    if (!run_quietly(std::string(FXC_HOST_CXX) + " " + kFlags + " -shared " + includes_ + " " + cpp.string() +
                         " -o " + partial.string(),
                     log)) {
      const std::string output = read_text(log);
      fs::remove(partial, ignored);
      fs::remove(log, ignored);
      return Unexpected{"emulation: the host compiler rejected the generated source (" + cpp.string() + "):\n" + output};
    }
    fs::rename(partial, so);
    fs::remove(cpp, ignored);
    fs::remove(log, ignored);
    return so;
  }

 private:
  // -O0: the suite's modules compiled in 3.0 minutes against 4.7 at -O1 and ran 54 s
  // against 50 (2 cores); the arithmetic is the same (no contraction either way).
  static constexpr const char* kFlags = "-std=c++20 -O0 -ffp-contract=off -fPIC -pthread";

  void remove_stale() const {
    const auto now = fs::file_time_type::clock::now();
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(cache_, ignored)) {
      const auto age = now - entry.last_write_time(ignored);
      // Libraries and precompiled shims are kept 30 days from their last use; what a process
      // left half-written (a name with its pid), a day.
      const bool kept = entry.is_directory(ignored) ||
                        (entry.path().extension() == ".so" && entry.path().stem().extension().empty());
      if (age > std::chrono::hours(24 * (kept ? 30 : 1))) fs::remove_all(entry.path(), ignored);
    }
  }

  fs::path cache_;
  std::string identity_;  // the compiler, its flags and the shim's headers, hashed
  std::string includes_;
};

const ModuleCompiler& module_compiler() {
  static const ModuleCompiler compiler;
  return compiler;
}

}  // namespace

Expected<fs::path, std::string> emulation_library(const std::string& text) { return module_compiler().library(text); }

}  // namespace fxc::test
