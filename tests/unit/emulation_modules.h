// SPDX-License-Identifier: Apache-2.0
// The host compiler's libraries of the emulation's sources (cuda_emulator.cpp), kept across
// processes. A module is a function of its source, the shim's headers, the compiler and its
// flags, and nothing else, so its library is kept under a hash of all of them: the suite's
// second run (CI runs it again under AddressSanitizer, with the same host compiler) and a
// rerun of a case compile nothing. The shim's headers, which the host compiler would parse
// again for each of the suite's ~250 modules (about a second each), are precompiled once per
// shim and compiler. FXC_CUDA_EMULATION_CACHE names the directory (default: one per user under
// the system's temporary directory; one that is not the user's alone is not used); libraries
// unused for 30 days are removed.
#pragma once

#include <filesystem>
#include <string>

#include "support/expected.h"

namespace fxc::test {

/// The shared library of `text` (a generated source with its launchers, which includes
/// <cuda_emulation_shim.h>), compiled now or by an earlier process (`rebuild`: now, as after
/// a cached one failed to load); an error holds the compiler's output and where the source
/// was left.
Expected<std::filesystem::path, std::string> emulation_library(const std::string& text, bool rebuild = false);

}  // namespace fxc::test
