// SPDX-License-Identifier: Apache-2.0
#include "codegen/cuda/nvrtc.h"

#include <cctype>
#include <cstddef>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <system_error>

#include "codegen/cuda/cuda_driver.h"

namespace fxc::codegen {
namespace {

// The NVRTC entry points fxc uses, with their documented signatures (nvrtc.h). nvrtcResult
// is a C enum: an int, NVRTC_SUCCESS = 0.
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;

struct Nvrtc {
  const char* (*GetErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*Version)(int*, int*) = nullptr;
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                               const char* const*) = nullptr;
  nvrtcResult (*DestroyProgram)(nvrtcProgram*) = nullptr;
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*GetPTXSize)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*GetPTX)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*) = nullptr;
};

template <class F>
bool bind(void* handle, const char* name, F& f, std::string& missing) {
  f = reinterpret_cast<F>(dlsym(handle, name));
  if (!f) missing += std::string(missing.empty() ? "" : ", ") + name;
  return f != nullptr;
}

// dlopen and the entry points of one library. The handle stays open for the life of the
// process (NVRTC is not meant to be unloaded); dlopen of a library already loaded returns the
// same handle.
Expected<Nvrtc, std::string> load_one(const std::string& name) {
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    return Unexpected{e ? std::string(e) : "cannot be loaded"};
  }
  Nvrtc n;
  std::string missing;
  bind(handle, "nvrtcGetErrorString", n.GetErrorString, missing);
  bind(handle, "nvrtcVersion", n.Version, missing);
  bind(handle, "nvrtcCreateProgram", n.CreateProgram, missing);
  bind(handle, "nvrtcDestroyProgram", n.DestroyProgram, missing);
  bind(handle, "nvrtcCompileProgram", n.CompileProgram, missing);
  bind(handle, "nvrtcGetPTXSize", n.GetPTXSize, missing);
  bind(handle, "nvrtcGetPTX", n.GetPTX, missing);
  bind(handle, "nvrtcGetCUBINSize", n.GetCUBINSize, missing);
  bind(handle, "nvrtcGetCUBIN", n.GetCUBIN, missing);
  bind(handle, "nvrtcGetProgramLogSize", n.GetProgramLogSize, missing);
  bind(handle, "nvrtcGetProgramLog", n.GetProgramLog, missing);
  if (!missing.empty())
    return Unexpected{"the NVRTC library loaded from " + name + " lacks " + missing +
                      ": it is too old for fxc (CUDA 11.1 or later is needed)"};
  return n;
}

std::string not_found(const std::string& tried, const std::string& last_error) {
  return "NVRTC not found (" + tried + (last_error.empty() ? "" : "; last error: " + last_error) +
         "): install the CUDA toolkit or use --target cpu";
}

Expected<Nvrtc, std::string> load(const std::vector<std::string>& libraries) {
  std::string tried, last_error;
  for (const std::string& name : libraries) {
    tried += (tried.empty() ? "" : ", ") + name;
    auto n = load_one(name);
    if (n) return n;
    last_error = n.error();
    if (last_error.find(" lacks ") != std::string::npos) return Unexpected{last_error};
  }
  return Unexpected{not_found(tried, last_error)};
}

// The file a loaded library came from (dladdr on one of its functions).
std::string loaded_path(const Nvrtc& n, const std::string& fallback) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(n.Version), &info) && info.dli_fname && *info.dli_fname) return info.dli_fname;
  return fallback;
}

std::string candidate_text(const NvrtcCandidate& c) {
  return c.path + (c.major < 0 ? "" : " (" + std::to_string(c.major) + (c.minor < 0 ? "" : "." + std::to_string(c.minor)) + ")");
}

// choose_nvrtc, keeping the loaded entry points.
NvrtcChoice choose(const std::vector<NvrtcCandidate>& ordered, int driver_version, std::optional<Nvrtc>* api) {
  NvrtcChoice choice;
  choice.driver_version = driver_version;
  std::string names, last_error, explicit_failed;
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    const NvrtcCandidate& c = ordered[i];
    names += (names.empty() ? "" : ", ") + c.path;
    auto n = load_one(c.path);
    int major = 0, minor = 0;
    if (n && n->Version(&major, &minor) != 0) n = Unexpected{std::string("nvrtcVersion failed")};
    if (!n) {
      last_error = n.error();
      choice.tried.push_back(c.path + ": " + n.error());
      if (c.explicit_choice) explicit_failed = c.path;
      continue;
    }
    choice.path = loaded_path(*n, c.path);
    choice.version = std::to_string(major) + "." + std::to_string(minor);
    if (c.explicit_choice)
      choice.reason = "set by $FXC_NVRTC_LIBRARY";
    else if (driver_version <= 0)
      choice.reason = std::string(choice.tried.empty() ? "newest found" : "newest that loads") + ", no driver to match";
    else if (major <= driver_version / 1000)
      choice.reason = "matches driver " + cuda_version_text(driver_version);
    else
      choice.reason = "newer than driver " + cuda_version_text(driver_version) + ", which may not load its code: no NVRTC of CUDA " +
                      std::to_string(driver_version / 1000) + " or older loads";
    if (!explicit_failed.empty()) choice.reason += "; $FXC_NVRTC_LIBRARY (" + explicit_failed + ") did not load";
    // The files found but not loaded (a soname not loaded was never resolved to one).
    std::error_code ec;
    std::filesystem::path chosen = std::filesystem::canonical(choice.path, ec);
    for (std::size_t j = i + 1; j < ordered.size(); ++j) {
      if (ordered[j].origin == "soname") continue;
      std::filesystem::path other = std::filesystem::canonical(ordered[j].path, ec);
      if (!ec && other == chosen) continue;
      choice.others.push_back(candidate_text(ordered[j]));
    }
    if (api) *api = *n;
    return choice;
  }
  choice.error = not_found(names.empty() ? "nothing found" : names, last_error);
  return choice;
}

struct DefaultNvrtc {
  NvrtcChoice choice;
  std::optional<Nvrtc> api;
};

const DefaultNvrtc& default_nvrtc() {
  static const DefaultNvrtc loaded = [] {
    DefaultNvrtc d;
    int driver = cuda_driver_version();
    d.choice = choose(nvrtc_load_order(nvrtc_candidates(nvrtc_environment()), driver), driver, &d.api);
    return d;
  }();
  return loaded;
}

// "sm_90" -> the digits, or empty if `arch` is not sm_<digits> (an optional letter suffix,
// as sm_90a, is kept).
std::string arch_number(const std::string& arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0) return {};
  std::string rest = arch.substr(3);
  std::size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits < 2) return {};
  if (digits < rest.size() && !(digits + 1 == rest.size() && std::isalpha(static_cast<unsigned char>(rest[digits]))))
    return {};
  return rest;
}

std::string describe(const Nvrtc& n, nvrtcResult r) {
  const char* s = n.GetErrorString ? n.GetErrorString(r) : nullptr;
  return s ? std::string(s) : "NVRTC error " + std::to_string(r);
}

}  // namespace

NvrtcChoice choose_nvrtc(const std::vector<NvrtcCandidate>& ordered, int driver_version) {
  return choose(ordered, driver_version, nullptr);
}

const NvrtcChoice& nvrtc_choice() { return default_nvrtc().choice; }

std::string nvrtc_status(const NvrtcChoice& choice) {
  if (!choice.found()) return "not found (install the CUDA toolkit to compile CUDA; --target cuda needs it)";
  return choice.version + " (" + choice.path + "; " + choice.reason + ")";
}

std::vector<std::string> default_nvrtc_libraries() {
  std::vector<std::string> names;
  for (const NvrtcCandidate& c : nvrtc_load_order(nvrtc_candidates(nvrtc_environment()), cuda_driver_version()))
    names.push_back(c.path);
  return names;
}

std::vector<std::string> cuda_compile_options(const std::string& arch, bool cubin) {
  std::string number = arch_number(arch);
  return {"--gpu-architecture=" + std::string(cubin ? "sm_" : "compute_") + number, "--fmad=false",
          "--ftz=true", "-default-device"};
}

namespace {

Expected<std::string, std::string> compile_with(const Nvrtc& n, const std::string& source, const std::string& arch,
                                                bool cubin) {
  nvrtcProgram program = nullptr;
  if (nvrtcResult r = n.CreateProgram(&program, source.c_str(), "fxc_kernels.cu", 0, nullptr, nullptr); r != 0)
    return Unexpected{"NVRTC could not create the program: " + describe(n, r)};
  auto destroy = [&] { n.DestroyProgram(&program); };

  std::vector<std::string> options = cuda_compile_options(arch, cubin);
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  nvrtcResult compiled = n.CompileProgram(program, static_cast<int>(argv.size()), argv.data());

  std::string log;
  std::size_t log_size = 0;
  if (n.GetProgramLogSize(program, &log_size) == 0 && log_size > 1) {
    log.resize(log_size);
    if (n.GetProgramLog(program, log.data()) != 0) log.clear();
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  }
  std::string options_text;
  for (const std::string& o : options) options_text += " " + o;
  if (compiled != 0) {
    destroy();
    return Unexpected{"NVRTC failed to compile the CUDA source for " + arch + " (" + describe(n, compiled) +
                      ", options:" + options_text + ")" + (log.empty() ? "" : ":\n" + log)};
  }

  std::size_t size = 0;
  nvrtcResult r = cubin ? n.GetCUBINSize(program, &size) : n.GetPTXSize(program, &size);
  std::string out;
  if (r == 0) {
    out.resize(size);
    r = cubin ? n.GetCUBIN(program, out.data()) : n.GetPTX(program, out.data());
  }
  destroy();
  if (r != 0)
    return Unexpected{std::string("NVRTC compiled the source but returned no ") + (cubin ? "cubin" : "PTX") +
                      " for " + arch + ": " + describe(n, r) + (log.empty() ? "" : "\n" + log)};
  if (!cubin)  // PTX is text with a terminating NUL
    while (!out.empty() && out.back() == '\0') out.pop_back();
  return out;
}

}  // namespace

Expected<std::string, std::string> compile_cuda_with(const std::vector<std::string>& libraries,
                                                     const std::string& source, const std::string& arch,
                                                     bool cubin) {
  if (arch_number(arch).empty())
    return Unexpected{"invalid CUDA architecture '" + arch + "': expected sm_<major><minor>, as sm_90"};
  auto loaded = load(libraries);
  if (!loaded) return Unexpected{loaded.error()};
  return compile_with(*loaded, source, arch, cubin);
}

Expected<std::string, std::string> compile_cuda(const std::string& source, const std::string& arch, bool cubin) {
  if (arch_number(arch).empty())
    return Unexpected{"invalid CUDA architecture '" + arch + "': expected sm_<major><minor>, as sm_90"};
  const DefaultNvrtc& d = default_nvrtc();
  if (!d.api) return Unexpected{d.choice.error};
  return compile_with(*d.api, source, arch, cubin);
}

std::optional<std::string> nvrtc_version_with(const std::vector<std::string>& libraries) {
  auto loaded = load(libraries);
  if (!loaded) return std::nullopt;
  int major = 0, minor = 0;
  if (loaded->Version(&major, &minor) != 0) return std::nullopt;
  return std::to_string(major) + "." + std::to_string(minor);
}

std::optional<std::string> nvrtc_version() {
  const NvrtcChoice& c = nvrtc_choice();
  if (!c.found()) return std::nullopt;
  return c.version;
}

}  // namespace fxc::codegen
