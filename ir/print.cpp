// SPDX-License-Identifier: Apache-2.0
#include "ir/print.h"

#include <ostream>
#include <sstream>

#include "ir/field_text.h"

namespace fxc::ir {

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + '"';
}

std::string field_text(const std::string& v) { return quote(v); }

std::string field_text(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + format_double(v[i]);
  return out + "]";
}

std::string field_text(const std::vector<int>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

std::string field_text(const design::Section& s) {
  return "[" + format_double(s.b0) + ", " + format_double(s.b1) + ", " + format_double(s.b2) +
         ", " + format_double(s.a1) + ", " + format_double(s.a2) + "]";
}

std::string field_text(const std::vector<design::Section>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + field_text(v[i]);
  return out + "]";
}

std::string field_text(const std::vector<Stage>& v, bool shape_only) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + std::visit(
                                 [&](const auto& stage) {
                                   return std::string(stage.kKind) + "{" +
                                          fields_text(stage, shape_only) + "}";
                                 },
                                 v[i]);
  return out + "]";
}

namespace {

std::string loc_text(const SourceLoc& loc) {
  return quote(loc.file) + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

}  // namespace

std::string node_to_text(const Graph& graph, NodeId id, const PrintOptions& options) {
  const Node& node = graph.node(id);
  std::string out = "%" + std::to_string(id) + " = " + std::string(kind_name(node.op));
  for (std::size_t i = 0; i < node.operands.size(); ++i)
    out += (i ? ", %" : " %") + std::to_string(node.operands[i]);

  std::string attrs =
      std::visit([&](const auto& payload) { return fields_text(payload, options.shape_only); },
                 node.op);
  if (!attrs.empty()) out += " {" + attrs + "}";

  out += " : " + (node.type.channels > 0 ? std::to_string(node.type.channels) : "?") + "ch " +
         std::string(name(node.type.dtype));
  if (options.locations && !options.shape_only) {
    if (node.loc.valid()) out += " loc(" + loc_text(node.loc) + ")";
    if (!node.origins.empty()) {
      out += " origins(";
      for (std::size_t i = 0; i < node.origins.size(); ++i)
        out += (i ? ", " : "") + loc_text(node.origins[i]);
      out += ")";
    }
  }
  return out;
}

void print_graph(std::ostream& out, const Graph& graph, const PrintOptions& options) {
  // The shape leaves out the name: renaming a graph must not change its kernels.
  out << "graph " << (options.shape_only ? "?" : graph.name.empty() ? "main" : graph.name) << '\n';
  for (NodeId id = 0; id < graph.size(); ++id) out << node_to_text(graph, id, options) << '\n';
}

std::string to_text(const Graph& graph, const PrintOptions& options) {
  std::ostringstream out;
  print_graph(out, graph, options);
  return out.str();
}

}  // namespace fxc::ir
