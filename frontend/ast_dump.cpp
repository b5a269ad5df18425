// SPDX-License-Identifier: Apache-2.0
// Text, JSON and dot renderings of the .fx syntax tree. See ast_dump.h.
#include "frontend/ast_dump.h"

#include <sstream>

#include "ir/print.h"
#include "support/deep_stack.h"
#include "support/float_format.h"

namespace fxc::frontend {
namespace {

std::string at(const SourceLoc& loc) {
  return "@" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

std::string number_text(const NumberExpr& n) {
  std::string text = n.text.empty() ? format_double(n.value) : n.text;
  if (n.unit != Unit::none) text += " " + std::string(unit_text(n.unit));
  return text;
}

std::string_view op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::pipe:
      return "pipe";
    case BinaryOp::add:
      return "add";
    case BinaryOp::subtract:
      return "subtract";
    case BinaryOp::multiply:
      return "multiply";
  }
  return "binary";
}

// ---- a generic walk: each node is a label, a location and children with edge labels ----

// A pair<string, DumpNode> inside DumpNode would instantiate pair with an incomplete type,
// which only GCC accepts; vector of an incomplete type is allowed.
struct DumpChild;

struct DumpNode {
  std::string label;
  SourceLoc loc;
  std::vector<DumpChild> children;
};

struct DumpChild {
  std::string edge;
  DumpNode node;
};

DumpNode expr_node(const Expr& e);

// `[0, 1:3]` as written.
std::string index_text(const IndexExpr& ix) {
  std::string out = "[";
  for (std::size_t i = 0; i < ix.items.size(); ++i) {
    const IndexItem& item = ix.items[i];
    out += (i ? ", " : "") + std::to_string(item.first);
    if (item.slice) out += ":" + (item.last ? std::to_string(*item.last) : std::string());
  }
  return out + "]";
}

DumpNode stmt_node(const Stmt& s);

DumpNode arg_node(const Arg& a, std::size_t index) {
  DumpNode n{
      a.keyword.empty() ? "arg #" + std::to_string(index) : "arg " + a.keyword + "=", a.loc(), {}};
  n.children.push_back({"value", expr_node(*a.value)});
  return n;
}

DumpNode expr_node(const Expr& e) {
  if (const auto* n = e.as<NameExpr>()) return {"name " + n->name, e.loc, {}};
  if (const auto* n = e.as<NumberExpr>()) return {"number " + number_text(*n), e.loc, {}};
  if (const auto* s = e.as<StringExpr>()) return {"string " + ir::quote(s->value), e.loc, {}};
  if (e.as<ErrorExpr>()) return {"error", e.loc, {}};
  if (const auto* l = e.as<ListExpr>()) {
    DumpNode n{"list", e.loc, {}};
    for (std::size_t i = 0; i < l->items.size(); ++i)
      n.children.push_back({std::to_string(i), expr_node(l->items[i])});
    return n;
  }
  if (const auto* c = e.as<CallExpr>()) {
    DumpNode n{"call " + c->callee, e.loc, {}};
    for (std::size_t i = 0; i < c->args.size(); ++i)
      n.children.push_back({c->args[i].keyword.empty() ? std::to_string(i) : c->args[i].keyword,
                            arg_node(c->args[i], i)});
    return n;
  }
  if (const auto* ix = e.as<IndexExpr>()) {
    DumpNode n{"channels " + index_text(*ix), e.loc, {}};
    n.children.push_back({"signal", expr_node(*ix->base)});
    return n;
  }
  const auto& b = std::get<BinaryExpr>(e.node);
  DumpNode n{std::string(op_name(b.op)), b.op_loc, {}};
  n.children.push_back({"lhs", expr_node(*b.lhs)});
  n.children.push_back({"rhs", expr_node(*b.rhs)});
  return n;
}

DumpNode stmt_node(const Stmt& s) {
  if (const auto* g = std::get_if<GraphStmt>(&s.node)) return {"graph " + g->name, s.loc, {}};
  if (const auto* in = std::get_if<InputStmt>(&s.node)) {
    std::string label = "input " + in->name;
    if (in->channels) label += " channels=" + std::to_string(in->channels);
    return {label, s.loc, {}};
  }
  if (const auto* b = std::get_if<BindingStmt>(&s.node)) {
    DumpNode n{"binding " + b->name, s.loc, {}};
    n.children.push_back({"value", expr_node(b->value)});
    return n;
  }
  if (const auto* split = std::get_if<SplitStmt>(&s.node)) {
    std::string names;
    for (const std::string& name : split->names) names += (names.empty() ? "" : ", ") + name;
    DumpNode n{"split " + names, s.loc, {}};
    n.children.push_back({"value", expr_node(split->value)});
    return n;
  }
  if (const auto* r = std::get_if<ReturnStmt>(&s.node)) {
    DumpNode n{"return", s.loc, {}};
    for (std::size_t i = 0; i < r->values.size(); ++i) n.children.push_back({std::to_string(i), expr_node(r->values[i])});
    return n;
  }
  if (const auto* fn = std::get_if<FnStmt>(&s.node)) {
    DumpNode n{"fn " + fn->name + (fn->uses_in ? " (reads in)" : ""), s.loc, {}};
    for (const Param& p : fn->params) {
      DumpNode param{"param " + p.name, p.loc, {}};
      if (p.default_value) param.children.push_back({"default", expr_node(*p.default_value)});
      n.children.push_back({"param", std::move(param)});
    }
    for (std::size_t i = 0; i < fn->body.size(); ++i) n.children.push_back({std::to_string(i), stmt_node(fn->body[i])});
    return n;
  }
  if (const auto* im = std::get_if<ImportStmt>(&s.node)) return {"import " + ir::quote(im->path), s.loc, {}};
  const auto& o = std::get<OutputStmt>(s.node);
  DumpNode n{o.name.empty() ? "output" : "output " + o.name, s.loc, {}};
  n.children.push_back({"value", expr_node(o.value)});
  return n;
}

void write_text(std::ostream& out, const DumpNode& n, int depth) {
  out << std::string(2 * depth, ' ') << n.label << ' ' << at(n.loc) << '\n';
  for (const auto& [edge, child] : n.children) write_text(out, child, depth + 1);
}

// ---- JSON ----

nlohmann::json loc_json(const SourceLoc& loc) {
  return {{"line", loc.line}, {"col", loc.col}};
}

nlohmann::json expr_json(const Expr& e) {
  nlohmann::json j;
  if (const auto* n = e.as<NameExpr>()) {
    j = {{"kind", "name"}, {"name", n->name}};
  } else if (const auto* n = e.as<NumberExpr>()) {
    j = {{"kind", "number"},
         {"value", n->value},
         {"text", n->text},
         {"unit", std::string(unit_text(n->unit))}};
  } else if (const auto* s = e.as<StringExpr>()) {
    j = {{"kind", "string"}, {"value", s->value}};
  } else if (e.as<ErrorExpr>()) {
    j = {{"kind", "error"}};
  } else if (const auto* l = e.as<ListExpr>()) {
    j = {{"kind", "list"}, {"items", nlohmann::json::array()}};
    for (const Expr& item : l->items) j["items"].push_back(expr_json(item));
  } else if (const auto* c = e.as<CallExpr>()) {
    j = {{"kind", "call"}, {"callee", c->callee}, {"args", nlohmann::json::array()}};
    for (const Arg& a : c->args) {
      nlohmann::json arg = {{"loc", loc_json(a.loc())}, {"value", expr_json(*a.value)}};
      if (!a.keyword.empty()) arg["keyword"] = a.keyword;
      j["args"].push_back(std::move(arg));
    }
  } else if (const auto* ix = e.as<IndexExpr>()) {
    j = {{"kind", "channels"}, {"signal", expr_json(*ix->base)}, {"items", nlohmann::json::array()}};
    for (const IndexItem& item : ix->items) {
      nlohmann::json one = {{"first", item.first}, {"slice", item.slice}};
      if (item.last) one["last"] = *item.last;
      j["items"].push_back(std::move(one));
    }
  } else {
    const auto& b = std::get<BinaryExpr>(e.node);
    j = {{"kind", "binary"},
         {"op", std::string(op_text(b.op))},
         {"op_loc", loc_json(b.op_loc)},
         {"lhs", expr_json(*b.lhs)},
         {"rhs", expr_json(*b.rhs)}};
  }
  j["loc"] = loc_json(e.loc);
  return j;
}

nlohmann::json stmt_json(const Stmt& s) {
  nlohmann::json j;
  if (const auto* g = std::get_if<GraphStmt>(&s.node)) {
    j = {{"kind", "graph"}, {"name", g->name}};
  } else if (const auto* in = std::get_if<InputStmt>(&s.node)) {
    j = {{"kind", "input"}, {"name", in->name}};
    if (in->channels) j["channels"] = in->channels;
  } else if (const auto* b = std::get_if<BindingStmt>(&s.node)) {
    j = {{"kind", "binding"}, {"name", b->name}, {"value", expr_json(b->value)}};
  } else if (const auto* split = std::get_if<SplitStmt>(&s.node)) {
    j = {{"kind", "split"}, {"names", split->names}, {"value", expr_json(split->value)}};
  } else if (const auto* r = std::get_if<ReturnStmt>(&s.node)) {
    j = {{"kind", "return"}, {"values", nlohmann::json::array()}};
    for (const Expr& e : r->values) j["values"].push_back(expr_json(e));
  } else if (const auto* fn = std::get_if<FnStmt>(&s.node)) {
    j = {{"kind", "fn"}, {"name", fn->name}, {"reads_in", fn->uses_in}, {"params", nlohmann::json::array()},
         {"body", nlohmann::json::array()}};
    for (const Param& p : fn->params) {
      nlohmann::json param = {{"name", p.name}, {"loc", loc_json(p.loc)}};
      if (p.default_value) param["default"] = expr_json(*p.default_value);
      j["params"].push_back(std::move(param));
    }
    for (const Stmt& b : fn->body) j["body"].push_back(stmt_json(b));
  } else if (const auto* im = std::get_if<ImportStmt>(&s.node)) {
    j = {{"kind", "import"}, {"path", im->path}};
  } else {
    const auto& o = std::get<OutputStmt>(s.node);
    j = {{"kind", "output"}, {"value", expr_json(o.value)}};
    if (!o.name.empty()) j["name"] = o.name;
  }
  j["loc"] = loc_json(s.loc);
  return j;
}

// ---- dot ----

std::string dot_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

int write_dot(std::ostream& out, const DumpNode& n, int& counter) {
  int id = counter++;
  out << "  n" << id << " [label=\"" << dot_escape(n.label) << "\\n"
      << at(n.loc).substr(1) << "\"];\n";
  for (const auto& [edge, child] : n.children) {
    int child_id = write_dot(out, child, counter);
    out << "  n" << id << " -> n" << child_id << " [label=\"" << dot_escape(edge) << "\"];\n";
  }
  return id;
}

}  // namespace

// The writers recurse once per level of an expression, to the depth the parser allows:
// they run on a stack sized for it (support/deep_stack.h), whatever the caller's.
std::string ast_to_text(const Ast& ast) {
  return on_deep_stack([&] {
    std::ostringstream out;
    out << "ast " << ir::quote(ast.file) << '\n';
    for (const Stmt& s : ast.statements) write_text(out, stmt_node(s), 1);
    return out.str();
  });
}

nlohmann::json ast_to_json(const Ast& ast) {
  return on_deep_stack([&] {
    nlohmann::json j = {{"file", ast.file}, {"statements", nlohmann::json::array()}};
    for (const Stmt& s : ast.statements) j["statements"].push_back(stmt_json(s));
    return j;
  });
}

std::string ast_to_json_text(const Ast& ast) {
  return on_deep_stack([&] { return ast_to_json(ast).dump(2, ' ', false, nlohmann::json::error_handler_t::replace); });
}

std::string ast_to_dot(const Ast& ast) {
  return on_deep_stack([&] {
    std::ostringstream out;
    out << "digraph ast {\n  node [shape=box, fontname=\"monospace\"];\n";
    out << "  root [label=\"" << dot_escape(ast.file) << "\"];\n";
    int counter = 0;
    for (const Stmt& s : ast.statements) {
      int id = write_dot(out, stmt_node(s), counter);
      out << "  root -> n" << id << ";\n";
    }
    out << "}\n";
    return out.str();
  });
}

}  // namespace fxc::frontend
