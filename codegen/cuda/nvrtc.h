// SPDX-License-Identifier: Apache-2.0
// NVRTC, loaded at run time with dlopen: fxc is built without the CUDA toolkit, and the same
// binary compiles CUDA source wherever libnvrtc is installed. No CUDA header is included;
// nvrtc.cpp declares the few entry points it uses.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "support/expected.h"

namespace fxc::codegen {

/// The library names tried, in order: $FXC_NVRTC_LIBRARY when set, then libnvrtc.so.13,
/// libnvrtc.so.12, libnvrtc.so.
std::vector<std::string> default_nvrtc_libraries();

/// The options every fxc CUDA source is compiled with, for `arch` ("sm_90"): the target
/// (sm_XX for a cubin, compute_XX for PTX), --fmad=false (the source writes each fused
/// multiply-add itself, as the CPU backend does), --ftz=true (float32 denormals flushed, as
/// the CPU backend's flush-to-zero), -default-device.
std::vector<std::string> cuda_compile_options(const std::string& arch, bool cubin);

/// Compiles CUDA C++ `source` for `arch` ("sm_80", "sm_90"; no device is needed): a cubin
/// (binary, in the string's bytes) when `cubin`, else PTX text. Any error carries NVRTC's
/// log. When NVRTC cannot be loaded the error says "NVRTC not found (...)".
Expected<std::string, std::string> compile_cuda(const std::string& source, const std::string& arch,
                                                bool cubin);

/// NVRTC's version ("13.0"), or nullopt when it cannot be loaded.
std::optional<std::string> nvrtc_version();

/// The same with an explicit list of libraries to try (tests; a path or a soname).
Expected<std::string, std::string> compile_cuda_with(const std::vector<std::string>& libraries,
                                                     const std::string& source, const std::string& arch,
                                                     bool cubin);
std::optional<std::string> nvrtc_version_with(const std::vector<std::string>& libraries);

}  // namespace fxc::codegen
