// SPDX-License-Identifier: Apache-2.0
// Where fxc looks for NVRTC and in which order it tries what it finds (docs/cuda.md, "Which
// NVRTC"). Pure file-system work: nothing here loads a library. nvrtc.cpp loads the first
// candidate of nvrtc_load_order that loads and records why it was chosen (NvrtcChoice).
//
// The search, in this order (a file found in several places is listed once, under the first):
//   1. $FXC_NVRTC_LIBRARY (an explicit choice: always tried first, whatever its version)
//   2. the sonames libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so (the dynamic linker's path:
//      LD_LIBRARY_PATH, ld.so.cache; listed by name, as the file they resolve to is only known
//      once loaded)
//   3. $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64, /usr/local/cuda-X.Y/lib64
//      (newest X.Y first)
//   4. pip's NVRTC wheels (nvidia/cu13/lib, then nvidia/cuda_nvrtc/lib) under
//      $VIRTUAL_ENV/lib/python3*/site-packages, ~/.local/lib/python3*/site-packages,
//      /usr/local/lib/python3*/dist-packages, /usr/lib/python3/dist-packages (newest Python first)
// In a directory, the files named libnvrtc.so[.N[.N[.N]]] count (not libnvrtc-builtins or
// libnvrtc.alt); symlinks to one file are one candidate, shown under its shortest versioned name.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fxc::codegen {

/// An NVRTC library found by the search, before loading it.
struct NvrtcCandidate {
  std::string path;    ///< a file, or a soname left to the dynamic linker
  std::string origin;  ///< where it was found: "$FXC_NVRTC_LIBRARY", "soname", "/usr/local/cuda/lib64", ...
  int major = -1;      ///< the CUDA major version from the file name (or its symlink target); -1 unknown
  int minor = -1;      ///< the minor version where the name has one (libnvrtc.so.12.4.127); else -1
  bool explicit_choice = false;  ///< from $FXC_NVRTC_LIBRARY
};

/// What the search reads from the environment, and the root of the system directories (so
/// that a test can point it at a temporary tree).
struct NvrtcEnvironment {
  std::string explicit_library;  ///< $FXC_NVRTC_LIBRARY
  std::string cuda_home;         ///< $CUDA_HOME
  std::string cuda_path;         ///< $CUDA_PATH
  std::string virtual_env;       ///< $VIRTUAL_ENV
  std::string home;              ///< $HOME
  std::string root = "/";        ///< prefixed to /usr/local/cuda..., /usr/local/lib/python3*, /usr/lib/python3
  std::vector<std::string> sonames = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
};

/// The process's environment (getenv) with root "/".
NvrtcEnvironment nvrtc_environment();

/// The directories searched, in order, each with the origin shown for it (step 3 and 4 above):
/// only directories that exist, and each real directory once.
std::vector<std::pair<std::string, std::string>> nvrtc_search_directories(const NvrtcEnvironment& env);

/// Every candidate in search order (steps 1 to 4), listed once each.
std::vector<NvrtcCandidate> nvrtc_candidates(const NvrtcEnvironment& env);

/// The version in an NVRTC file name: "libnvrtc.so.12.4.127" -> {12, 4}, "libnvrtc.so.13" ->
/// {13, -1}, "libnvrtc.so" -> {-1, -1}; {-1, -1} too for a name that is not NVRTC's.
std::pair<int, int> nvrtc_name_version(const std::string& file_name);

/// The order to try `candidates` in, for a driver of version `driver_version` (as
/// cuDriverGetVersion: 1000 * major + 10 * minor; 0 when there is no driver):
///   - the explicit choice first;
///   - with a driver, those whose major version is at most the driver's (newest major first),
///     then those of unknown version, then those newer than the driver (the nearest first):
///     a newer NVRTC's code may not load on an older driver;
///   - without a driver (compiling only), the newest major first, then unknown versions.
/// Equal majors keep their search order (the user's $CUDA_HOME before /usr/local/cuda).
std::vector<NvrtcCandidate> nvrtc_load_order(std::vector<NvrtcCandidate> candidates, int driver_version);

}  // namespace fxc::codegen
