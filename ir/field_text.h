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
std::string field_text(const design::Section& s);
std::string field_text(const std::vector<design::Section>& v);

/// The shape-only rendering: `?` for scalar values, `<N x ?>` for lists.
template <class T>
std::string shape_text(const T&) {
  return "?";
}
template <class T>
std::string shape_text(const std::vector<T>& v) {
  return "<" + std::to_string(v.size()) + " x ?>";
}

}  // namespace fxc::ir
