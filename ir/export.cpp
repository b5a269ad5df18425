// SPDX-License-Identifier: Apache-2.0
#include "ir/export.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "ir/field_text.h"
#include "ir/print.h"

namespace fxc::ir {
namespace {

using nlohmann::json;

json number(double v) { return std::isfinite(v) ? json(v) : json(format_double(v)); }
json field_json(int v) { return v; }
json field_json(bool v) { return v; }
json field_json(double v) { return number(v); }
json field_json(const std::string& v) { return v; }
template <class E>
  requires std::is_enum_v<E>
json field_json(E v) {
  return field_text(v);
}
json field_json(const std::vector<double>& v) {
  json out = json::array();
  for (double x : v) out.push_back(number(x));
  return out;
}
json field_json(const std::vector<int>& v) { return v; }
json field_json(const std::vector<design::Section>& v) {
  json out = json::array();
  for (const auto& s : v)
    out.push_back({number(s.b0), number(s.b1), number(s.b2), number(s.a1), number(s.a2)});
  return out;
}

json field_json(const std::vector<Stage>& v) {
  json out = json::array();
  for (const Stage& stage : v)
    std::visit(
        [&](const auto& p) {
          json attrs = json::object();
          std::decay_t<decltype(p)>::fields(p, [&](FieldRole, std::string_view name, const auto& value) {
            attrs[std::string(name)] = field_json(value);
          });
          out.push_back({{"kind", p.kKind}, {"attrs", attrs}});
        },
        stage);
  return out;
}

json loc_json(const SourceLoc& loc) {
  return {{"file", loc.file}, {"line", loc.line}, {"col", loc.col}};
}

std::string dot_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Long coefficient lists would make unreadable boxes; the dot view abbreviates them.
std::string short_field_text(const auto& value) {
  std::string text = field_text(value);
  return text.size() > 48 ? shape_text(value) : text;
}
std::string short_field_text(const std::string& value) {
  return value.size() > 60 ? quote(value.substr(0, 57) + "...") : quote(value);
}
std::string short_field_text(const std::vector<Stage>& stages) {
  std::string out;
  for (const Stage& s : stages)
    out += (out.empty() ? "" : " | ") +
           std::string(std::visit([](const auto& p) { return p.kKind; }, s));
  return out;
}

}  // namespace

nlohmann::json to_json(const Graph& graph) {
  json nodes = json::array();
  for (NodeId id = 0; id < graph.size(); ++id) {
    const Node& node = graph.node(id);
    json attrs = json::object();
    std::visit(
        [&](const auto& payload) {
          using P = std::decay_t<decltype(payload)>;
          P::fields(payload, [&](FieldRole, std::string_view name, const auto& value) {
            attrs[std::string(name)] = field_json(value);
          });
        },
        node.op);
    json entry = {{"id", id},
                  {"kind", kind_name(node.op)},
                  {"operands", node.operands},
                  {"attrs", attrs},
                  {"type", {{"channels", node.type.channels}, {"dtype", name(node.type.dtype)}}}};
    if (node.loc.valid()) entry["loc"] = loc_json(node.loc);
    if (!node.origins.empty()) {
      entry["origins"] = json::array();
      for (const SourceLoc& o : node.origins) entry["origins"].push_back(loc_json(o));
    }
    nodes.push_back(std::move(entry));
  }
  return {{"name", graph.name}, {"nodes", nodes}};
}

std::string to_dot(const Graph& graph) {
  std::string out = "digraph \"" + dot_escape(graph.name) + "\" {\n  rankdir=LR;\n" +
                    "  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n";
  for (NodeId id = 0; id < graph.size(); ++id) {
    const Node& node = graph.node(id);
    std::string label = "%" + std::to_string(id) + " " + std::string(kind_name(node.op));
    std::visit(
        [&](const auto& payload) {
          using P = std::decay_t<decltype(payload)>;
          P::fields(payload, [&](FieldRole, std::string_view name, const auto& value) {
            label += "\\n" + std::string(name) + "=" + dot_escape(short_field_text(value));
          });
        },
        node.op);
    label += "\\n" + (node.type.channels ? std::to_string(node.type.channels) : "?") + "ch " +
             std::string(name(node.type.dtype));
    bool io = holds<Input>(node) || holds<Output>(node);
    out += "  n" + std::to_string(id) + " [label=\"" + label + "\"" +
           (io ? ", shape=ellipse" : "") + "];\n";
  }
  // A feedback edge is drawn dashed and against the flow, so the loop reads as one.
  for (NodeId id = 0; id < graph.size(); ++id)
    for (NodeId operand : graph.node(id).operands)
      out += "  n" + std::to_string(operand) + " -> n" + std::to_string(id) +
             (has_forward_operands(graph.node(id).op) ? "" : " [style=dashed, constraint=false, label=\"feedback\"]") +
             ";\n";
  return out + "}\n";
}

}  // namespace fxc::ir
