// SPDX-License-Identifier: Apache-2.0
// Field values as text: shared by the text printer and the exporters (dot, JSON).
#pragma once

#include <string>
#include <vector>

#include "design/filter_types.h"
#include "ir/nodes.h"
#include "support/float_format.h"

namespace fxc::ir {

inline std::string field_text(int v) { return std::to_string(v); }
inline std::string field_text(double v) { return format_double(v); }
inline std::string field_text(bool v) { return v ? "true" : "false"; }

std::string field_text(const std::string& v);  // quoted
template <class E>
  requires std::is_enum_v<E>
std::string field_text(E v) {
  using design::name;
  using ir::name;
  return std::string(name(v));
}
std::string field_text(const std::vector<double>& v);
std::string field_text(const std::vector<int>& v);
std::string field_text(const design::Section& s);
std::string field_text(const std::vector<design::Section>& v);
/// A chain's stages: `[sos{sections=[...], allow_unstable=false}, gain{gain=0.5}]`.
std::string field_text(const std::vector<Stage>& v, bool shape_only = false);

/// A payload's fields as `name=value, ...`; with `shape_only`, values print as `?` and
/// `<N x ?>` and labels are left out.
template <class P>
std::string fields_text(const P& payload, bool shape_only);

/// The shape-only rendering: `?` for scalar values, `<N x ?>` for lists.
template <class T>
std::string shape_text(const T&) {
  return "?";
}
template <class T>
std::string shape_text(const std::vector<T>& v) {
  return "<" + std::to_string(v.size()) + " x ?>";
}

template <class P>
std::string fields_text(const P& payload, bool shape_only) {
  std::string out;
  P::fields(payload, [&](FieldRole role, std::string_view name, const auto& value) {
    if (shape_only && role == FieldRole::label) return;
    out += out.empty() ? "" : ", ";
    out += std::string(name) + "=";
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, std::vector<Stage>>)
      out += field_text(value, shape_only);
    else
      out += shape_only && role == FieldRole::value ? shape_text(value) : field_text(value);
  });
  return out;
}

}  // namespace fxc::ir
