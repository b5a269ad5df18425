// SPDX-License-Identifier: Apache-2.0
// The abstract syntax tree of a .fx file, as parsed: statements and expressions, each with
// the location where it was written. Names are not resolved here; lower_to_ir does that.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "frontend/token.h"
#include "support/source_location.h"

namespace fxc::frontend {

struct Expr;

/// A bare identifier: a bound name in an expression, or a word (`highpass`) as an argument.
struct NameExpr {
  std::string name;
};

/// A number with its unit, e.g. `-3 dB`; `value` carries the sign and is not unit-converted.
struct NumberExpr {
  double value = 0;
  Unit unit = Unit::none;
  std::string text;    ///< as written, with its sign ("-3.5")
  SourceLoc unit_loc;  ///< where the unit was written; invalid without one
  /// A product with a level in dB (`1 * -20 dB`, `2 * 6 dB`): a linear gain (0.1, 3.99), which
  /// a level parameter, where a plain number means dB, must not take as one.
  bool gain_of_levels = false;
};

/// A string literal (an argument value only), decoded.
struct StringExpr {
  std::string value;
};

/// `[a, b, ...]` (an argument value only).
struct ListExpr {
  std::vector<Expr> items;
};

/// One argument of a call: positional (empty `keyword`) or `keyword=value`.
struct Arg {
  std::string keyword;
  SourceLoc keyword_loc;
  std::unique_ptr<Expr> value;
  /// Where the argument starts: its keyword, or its value for a positional one.
  const SourceLoc& loc() const;
};

/// A stage call `name(args)`.
struct CallExpr {
  std::string callee;
  std::vector<Arg> args;
};

enum class BinaryOp { pipe, add, subtract, multiply };

/// `lhs | rhs`, `lhs + rhs`, `lhs - rhs` or `lhs * rhs`.
struct BinaryExpr {
  BinaryOp op = BinaryOp::pipe;
  SourceLoc op_loc;
  std::unique_ptr<Expr> lhs, rhs;
};

/// One index of `x[...]`: channel `first`, or with `slice` the channels first..last-1
/// (`last` absent: to the end).
struct IndexItem {
  int first = 0;
  std::optional<int> last;
  bool slice = false;
  SourceLoc loc;
};

/// `x[0]`, `x[1:3]`, `x[0, 2]`: channels of a signal, counted from 0 (language version 2).
struct IndexExpr {
  std::unique_ptr<Expr> base;
  std::vector<IndexItem> items;
};

/// A part that failed to parse; its error has been reported, so later stages stay silent.
struct ErrorExpr {};

struct Expr {
  std::variant<NameExpr, NumberExpr, StringExpr, ListExpr, CallExpr, BinaryExpr, IndexExpr, ErrorExpr> node;
  SourceLoc loc;  ///< where the expression starts (for a binary one, its left operand)
  /// Nodes on the longest path from here to a leaf (1 for a leaf). The parser refuses trees
  /// deeper than kMaxExpressionDepth: everything after it walks them recursively.
  int depth = 1;

  template <class T>
  const T* as() const {
    return std::get_if<T>(&node);
  }
  template <class T>
  T* as() {
    return std::get_if<T>(&node);
  }
};

/// A deep copy (Expr owns its children, so it is move-only).
Expr clone(const Expr& expr);

/// The operator as written: "|", "+", "-", "*".
std::string_view op_text(BinaryOp op);

/// `graph NAME`
struct GraphStmt {
  std::string name;
  SourceLoc name_loc;
};

/// `input NAME` or `input NAME : C`. `channels` is 0 when not given.
struct InputStmt {
  std::string name;
  SourceLoc name_loc;
  int channels = 0;
  SourceLoc channels_loc;
};

/// `NAME = EXPR`, or `NAME = NUMBER in [MIN, MAX]` (a live parameter's declared range)
struct BindingStmt {
  std::string name;
  SourceLoc name_loc;
  Expr value;
  std::optional<Expr> range;  ///< the list after `in`, when given
};

/// `output EXPR` or `output NAME = EXPR`; `name` is empty for the first form.
struct OutputStmt {
  std::string name;
  SourceLoc name_loc;
  Expr value;
};

/// `a, b = EXPR`: the values of a function that returns several, or the channels of a signal
/// (language version 2).
struct SplitStmt {
  std::vector<std::string> names;
  std::vector<SourceLoc> name_locs;
  Expr value;
};

/// `return EXPR [, EXPR ...]`, in a function's body.
struct ReturnStmt {
  std::vector<Expr> values;
};

/// A function's parameter, with its default value when it has one.
struct Param {
  std::string name;
  SourceLoc loc;
  std::optional<Expr> default_value;
};

struct Stmt;

/// `fn NAME(PARAMS) { STATEMENTS }` (language version 2). `uses_in` says the body reads `in`,
/// the signal piped into a call (`x | NAME(...)`).
struct FnStmt {
  std::string name;
  SourceLoc name_loc;
  std::vector<Param> params;
  std::vector<Stmt> body;
  bool uses_in = false;
  /// Its header or a statement of its body did not parse (reported there): the function is
  /// known by name, and its calls add no report of their own.
  bool damaged = false;
};

/// `import "FILE"` (language version 2): the functions of another file.
struct ImportStmt {
  std::string path;
  SourceLoc path_loc;
};

struct Stmt {
  std::variant<GraphStmt, InputStmt, BindingStmt, OutputStmt, SplitStmt, ReturnStmt, FnStmt, ImportStmt> node;
  SourceLoc loc;  ///< the statement's first token
};

/// A parsed file. Statements that failed to parse are left out, or kept with an ErrorExpr
/// value when their name was read (so later errors do not call that name unknown).
struct Ast {
  Ast() = default;
  Ast(std::string file_name, std::vector<Stmt> body) : file(std::move(file_name)), statements(std::move(body)) {}
  Ast(Ast&&) noexcept = default;
  Ast& operator=(Ast&&) noexcept = default;
  /// Frees the statements on a stack sized for the deepest tree (support/deep_stack.h): freeing
  /// recurses once per level, which on a small caller's stack overflowed.
  ~Ast();

  std::string file;
  std::vector<Stmt> statements;
  /// The files its `import` statements read (and theirs), parsed, in the order first read:
  /// the frontend fills this (fx_file.h) before lowering.
  std::vector<std::shared_ptr<const Ast>> imported;
  /// An import (here or in an imported file) could not be read (reported there): a call of
  /// a name that is no stage may be one of its functions, and adds no report of its own.
  bool import_failed = false;
};

}  // namespace fxc::frontend
