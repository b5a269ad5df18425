// SPDX-License-Identifier: Apache-2.0
// Sample types of signals and kernels.
#pragma once

#include <optional>
#include <string_view>

#include <fxc/types.h>

namespace fxc {

inline std::string_view name(DType t) { return t == DType::f32 ? "f32" : "f64"; }
inline std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "f32") return DType::f32;
  if (s == "f64") return DType::f64;
  return std::nullopt;
}
inline std::size_t size_of(DType t) { return t == DType::f32 ? 4 : 8; }

}  // namespace fxc
