// SPDX-License-Identifier: Apache-2.0
// The fxc version, from the CMake project version.
#pragma once

#ifndef FXC_VERSION
#error "FXC_VERSION is defined by support/CMakeLists.txt"
#endif

namespace fxc {
inline constexpr const char* kVersion = FXC_VERSION;
}
