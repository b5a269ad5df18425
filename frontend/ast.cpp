// SPDX-License-Identifier: Apache-2.0
// Helpers for the .fx syntax tree.
#include "frontend/ast.h"

#include "support/deep_stack.h"

namespace fxc::frontend {

Ast::~Ast() {
  if (!statements.empty()) on_deep_stack([this] { statements.clear(); });
}

const SourceLoc& Arg::loc() const {
  return keyword.empty() ? value->loc : keyword_loc;
}

namespace {

struct Cloner {
  Expr operator()(const NameExpr& e) const { return {e, {}}; }
  Expr operator()(const NumberExpr& e) const { return {e, {}}; }
  Expr operator()(const StringExpr& e) const { return {e, {}}; }
  Expr operator()(const ErrorExpr& e) const { return {e, {}}; }
  Expr operator()(const ListExpr& e) const {
    ListExpr copy;
    for (const Expr& item : e.items) copy.items.push_back(clone(item));
    return {std::move(copy), {}};
  }
  Expr operator()(const CallExpr& e) const {
    CallExpr copy{e.callee, {}};
    for (const Arg& arg : e.args)
      copy.args.push_back(
          {arg.keyword, arg.keyword_loc, std::make_unique<Expr>(clone(*arg.value))});
    return {std::move(copy), {}};
  }
  Expr operator()(const IndexExpr& e) const {
    return {IndexExpr{std::make_unique<Expr>(clone(*e.base)), e.items}, {}};
  }
  Expr operator()(const BinaryExpr& e) const {
    return {BinaryExpr{e.op, e.op_loc, std::make_unique<Expr>(clone(*e.lhs)),
                       std::make_unique<Expr>(clone(*e.rhs))},
            {}};
  }
};

}  // namespace

Expr clone(const Expr& expr) {
  Expr copy = std::visit(Cloner{}, expr.node);
  copy.loc = expr.loc;
  return copy;
}

std::string_view op_text(BinaryOp op) {
  switch (op) {
    case BinaryOp::pipe:
      return "|";
    case BinaryOp::add:
      return "+";
    case BinaryOp::subtract:
      return "-";
    case BinaryOp::multiply:
      return "*";
  }
  return "?";
}

}  // namespace fxc::frontend
