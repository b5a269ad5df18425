// SPDX-License-Identifier: Apache-2.0
// The library's version, and a way to check the headers match the library linked.
#pragma once

namespace fxc {

/// The version of the library linked, "MAJOR.MINOR.PATCH".
const char* version();

}  // namespace fxc
