// SPDX-License-Identifier: Apache-2.0
// NVRTC, loaded at run time with dlopen: fxc is built without the CUDA toolkit, and the same
// binary compiles CUDA source wherever libnvrtc is installed. No CUDA header is included;
// nvrtc.cpp declares the few entry points it uses. Which library is loaded is chosen once per
// process (nvrtc_choice; the search is in nvrtc_search.h, the rule in docs/cuda.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/cuda/nvrtc_search.h"
#include "support/expected.h"

namespace fxc::codegen {

/// The NVRTC fxc uses, and why (`fxc info` prints it).
struct NvrtcChoice {
  std::string path;     ///< the file loaded (as the dynamic linker resolved it); empty when none loads
  std::string version;  ///< nvrtcVersion: "13.0"; empty when none loads
  std::string reason;   ///< "newest found, no driver to match", "matches driver 12.4", ...
  int driver_version = 0;           ///< the driver's (cuDriverGetVersion), 0 without one
  std::vector<std::string> tried;   ///< each candidate tried before it, "PATH: why it did not load"
  std::vector<std::string> others;  ///< the candidates after it, not loaded ("PATH (12)")
  std::string error;                ///< when none loads: "NVRTC not found (...): ..."
  bool found() const { return !path.empty(); }
};

/// Tries `ordered` (nvrtc_load_order's result) in order and keeps the first that loads with
/// every entry point fxc needs; `driver_version` only words the reason.
NvrtcChoice choose_nvrtc(const std::vector<NvrtcCandidate>& ordered, int driver_version);

/// The process's choice, made on first use: nvrtc_candidates(nvrtc_environment()) in
/// nvrtc_load_order for cuda_driver_version(). Thread-safe; later calls return the same.
const NvrtcChoice& nvrtc_choice();

/// The `fxc info` text after "NVRTC: ": "13.0 (/usr/local/cuda/lib64/libnvrtc.so.13; newest
/// found, no driver to match)", or "not found (...)".
std::string nvrtc_status(const NvrtcChoice& choice);

/// The default candidates' paths in the order they are tried (nvrtc_load_order for this
/// process's driver): $FXC_NVRTC_LIBRARY first when set.
std::vector<std::string> default_nvrtc_libraries();

/// The options every fxc CUDA source is compiled with, for `arch` ("sm_90"): the target
/// (sm_XX for a cubin, compute_XX for PTX), --fmad=false (the source writes each fused
/// multiply-add itself, as the CPU backend does), --ftz=true (float32 denormals flushed, as
/// the CPU backend's flush-to-zero), -default-device.
std::vector<std::string> cuda_compile_options(const std::string& arch, bool cubin);

/// Compiles CUDA C++ `source` for `arch` ("sm_80", "sm_90"; no device is needed) with
/// nvrtc_choice()'s library: a cubin (binary, in the string's bytes) when `cubin`, else PTX
/// text for compute_XX. Any error carries NVRTC's log. When NVRTC cannot be loaded the error
/// says "NVRTC not found (...)".
Expected<std::string, std::string> compile_cuda(const std::string& source, const std::string& arch,
                                                bool cubin);

/// The chosen NVRTC's version ("13.0"), or nullopt when none can be loaded.
std::optional<std::string> nvrtc_version();

/// The same with an explicit list of libraries to try in that order (tests; a path or a
/// soname), without the search.
Expected<std::string, std::string> compile_cuda_with(const std::vector<std::string>& libraries,
                                                     const std::string& source, const std::string& arch,
                                                     bool cubin);
std::optional<std::string> nvrtc_version_with(const std::vector<std::string>& libraries);

}  // namespace fxc::codegen
