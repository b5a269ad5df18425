// SPDX-License-Identifier: Apache-2.0
// Recursive-descent parser for .fx. See parser.h for the grammar and recovery.
#include "frontend/parser.h"

#include <array>
#include <cmath>
#include <optional>

#include "support/strings.h"

namespace fxc::frontend {
namespace {

constexpr std::array<std::string_view, 3> kKeywords = {"graph", "input", "output"};
constexpr const char* kCode = "fx-parse";

bool is_keyword(std::string_view word) {
  for (std::string_view k : kKeywords)
    if (word == k) return true;
  return false;
}

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const std::string& file, DiagnosticEngine& diags)
      : tokens_(tokens), diags_(diags) {
    ast_.file = file;
  }

  Ast run() {
    for (;;) {
      while (at(TokenKind::newline) || at(TokenKind::semicolon)) next();
      if (at(TokenKind::eof)) break;
      bool ok = statement();
      if (ok && !at_statement_end()) {
        expected("the end of the statement (a newline or ';')");
        ok = false;
      }
      if (!ok) synchronize();
    }
    return std::move(ast_);
  }

 private:
  // ---- tokens ----
  const Token& peek(std::size_t ahead = 0) const {
    std::size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool at(TokenKind kind) const { return peek().kind == kind; }
  bool at_statement_end() const {
    return at(TokenKind::newline) || at(TokenKind::semicolon) || at(TokenKind::eof);
  }
  void synchronize() {
    while (!at_statement_end()) next();
  }

  // Reports at `token` unless it is an error token, whose problem the lexer reported.
  Diagnostic* error_at(const Token& token, std::string message) {
    if (token.kind == TokenKind::error) return nullptr;
    return &diags_.error(token.loc, std::move(message), kCode);
  }
  Diagnostic* expected(const std::string& what) {
    return error_at(peek(), "expected " + what + ", found " + describe(peek()));
  }
  static void add_note(Diagnostic* d, SourceLoc loc, std::string message) {
    if (d) d->notes.push_back({Severity::note, std::move(loc), std::move(message), {}, {}});
  }

  // ---- statements ----
  bool statement() {
    const Token& first = peek();
    if (first.kind != TokenKind::identifier) {
      expected("a statement ('graph NAME', 'input NAME', 'NAME = EXPR' or 'output EXPR')");
      return false;
    }
    if (is_keyword(first.text)) {
      if (peek(1).kind == TokenKind::equals) {
        error_at(first, "'" + first.text + "' is a keyword and cannot be used as a name");
        return false;
      }
      if (first.text == "graph") return graph_statement();
      if (first.text == "input") return input_statement();
      return output_statement();
    }
    if (peek(1).kind == TokenKind::equals) return binding_statement();
    if (std::optional<std::string> keyword = nearest_name(first.text, kKeywords)) {
      add_note(expected("a statement ('graph NAME', 'input NAME', 'NAME = EXPR' or "
                        "'output EXPR')"),
               {}, "did you mean '" + *keyword + "'?");
      return false;
    }
    add_note(error_at(peek(1), "expected '=' after '" + first.text + "' to bind a name, found " +
                                   describe(peek(1))),
             {}, "a statement is 'graph NAME', 'input NAME', 'NAME = EXPR' or 'output EXPR'");
    return false;
  }

  bool graph_statement() {
    SourceLoc loc = next().loc;
    if (!at(TokenKind::identifier)) {
      expected("a graph name after 'graph'");
      return false;
    }
    const Token& name = next();
    ast_.statements.push_back({GraphStmt{name.text, name.loc}, loc});
    return true;
  }

  bool input_statement() {
    SourceLoc loc = next().loc;
    if (!at(TokenKind::identifier)) {
      expected("an input name after 'input'");
      return false;
    }
    const Token& name = next();
    InputStmt input{name.text, name.loc, 0, {}};
    bool ok = true;
    if (at(TokenKind::colon)) {
      next();
      if (!at(TokenKind::number)) {
        expected("a channel count after ':'");
        ok = false;
      } else {
        const Token& count = next();
        if (count.unit != Unit::none) {
          error_at(count, "a channel count takes no unit, found " + describe(count));
          ok = false;
        } else if (count.number < 1 || count.number != std::floor(count.number) ||
                   count.number > 1e6) {
          error_at(count, "channel count must be a whole number of at least 1, got " + count.text);
          ok = false;
        } else {
          input.channels = static_cast<int>(count.number);
          input.channels_loc = count.loc;
        }
      }
    }
    // Kept even when the count is bad, so later uses of the name are not reported as unknown.
    ast_.statements.push_back({std::move(input), loc});
    return ok;
  }

  bool binding_statement() {
    const Token& name = next();
    next();  // '='
    std::optional<Expr> value = expression("an expression after '='");
    bool ok = value.has_value();
    // `in [MIN, MAX]`: a constant's range as a live parameter (language version 2).
    std::optional<Expr> range;
    if (ok && at(TokenKind::identifier) && peek().text == "in") {
      next();
      if (!at(TokenKind::lbracket)) {
        expected("a range [MIN, MAX] after 'in'");
        ok = false;
      } else {
        range = this->value("a range [MIN, MAX]");
        ok = range.has_value();
      }
    }
    ast_.statements.push_back(
        {BindingStmt{name.text, name.loc, ok ? std::move(*value) : Expr{ErrorExpr{}, name.loc}, std::move(range)},
         name.loc});
    return ok;
  }

  bool output_statement() {
    SourceLoc loc = next().loc;
    OutputStmt out;
    if (at(TokenKind::identifier) && peek(1).kind == TokenKind::equals) {
      out.name = peek().text;
      out.name_loc = peek().loc;
      next();
      next();
    }
    std::optional<Expr> value =
        expression(out.name.empty() ? "an expression after 'output'" : "an expression after '='");
    bool ok = value.has_value();
    out.value = ok ? std::move(*value) : Expr{ErrorExpr{}, loc};
    ast_.statements.push_back({std::move(out), loc});
    return ok;
  }

  // ---- expressions ----
  static Expr binary(BinaryOp op, SourceLoc op_loc, Expr lhs, Expr rhs) {
    SourceLoc loc = lhs.loc;
    return {BinaryExpr{op, std::move(op_loc), std::make_unique<Expr>(std::move(lhs)),
                       std::make_unique<Expr>(std::move(rhs))},
            std::move(loc)};
  }

  std::optional<Expr> expression(const std::string& what) {
    std::optional<Expr> lhs = term(what);
    while (lhs && (at(TokenKind::plus) || at(TokenKind::minus))) {
      const Token& op = next();
      BinaryOp kind = op.kind == TokenKind::plus ? BinaryOp::add : BinaryOp::subtract;
      std::optional<Expr> rhs = term("a signal after '" + op.text + "'");
      if (!rhs) return std::nullopt;
      lhs = binary(kind, op.loc, std::move(*lhs), std::move(*rhs));
    }
    return lhs;
  }

  std::optional<Expr> term(const std::string& what) {
    std::optional<Expr> lhs = pipe(what);
    while (lhs && at(TokenKind::star)) {
      SourceLoc op_loc = next().loc;
      std::optional<Expr> rhs = pipe("a signal or a number after '*'");
      if (!rhs) return std::nullopt;
      lhs = binary(BinaryOp::multiply, op_loc, std::move(*lhs), std::move(*rhs));
    }
    return lhs;
  }

  std::optional<Expr> pipe(const std::string& what) {
    std::optional<Expr> lhs = atom(what);
    while (lhs && at(TokenKind::pipe)) {
      SourceLoc op_loc = next().loc;
      std::optional<Expr> rhs = atom("a stage after '|'");
      if (!rhs) return std::nullopt;
      lhs = binary(BinaryOp::pipe, op_loc, std::move(*lhs), std::move(*rhs));
    }
    return lhs;
  }

  std::optional<Expr> atom(const std::string& what) {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::minus:
        if (peek(1).kind == TokenKind::number) return number();
        next();
        if (Diagnostic* d = expected("a number after the sign '-'"))
          add_note(d, {}, "to negate a signal, multiply it: '-1 * x'");
        return std::nullopt;
      case TokenKind::number:
        return number();
      case TokenKind::identifier:
        if (peek(1).kind == TokenKind::lparen) return call();
        next();
        return Expr{NameExpr{t.text}, t.loc};
      case TokenKind::lparen: {
        const Token& open = next();
        std::optional<Expr> inner = expression("an expression after '('");
        if (!inner) return std::nullopt;
        if (!at(TokenKind::rparen)) {
          add_note(expected("')'"), open.loc, "to match this '('");
          return std::nullopt;
        }
        next();
        return inner;
      }
      default:
        expected(what);
        return std::nullopt;
    }
  }

  // ['-'] NUMBER [unit]; the caller has checked that a number is there.
  Expr number() {
    SourceLoc loc = peek().loc;
    bool negative = at(TokenKind::minus);
    if (negative) next();
    const Token& t = next();
    NumberExpr n{negative ? -t.number : t.number, t.unit, (negative ? "-" : "") + t.text,
                 t.unit_loc};
    return {std::move(n), loc};
  }

  std::optional<Expr> call() {
    const Token& name = next();
    next();  // '('
    CallExpr call{name.text, {}};
    while (!at(TokenKind::rparen)) {
      std::optional<Arg> a = argument();
      if (!a) return std::nullopt;
      call.args.push_back(std::move(*a));
      if (at(TokenKind::comma)) {
        next();
        continue;
      }
      if (!at(TokenKind::rparen)) {
        expected("',' or ')' after an argument of '" + name.text + "'");
        return std::nullopt;
      }
    }
    next();  // ')'
    return Expr{std::move(call), name.loc};
  }

  std::optional<Arg> argument() {
    Arg a;
    std::string what = "an argument";
    if (at(TokenKind::identifier) && peek(1).kind == TokenKind::equals) {
      a.keyword = peek().text;
      a.keyword_loc = peek().loc;
      next();
      next();
      what = "a value for '" + a.keyword + "'";
    }
    std::optional<Expr> v = value(what + " (a number, a word, a string or a list)");
    if (!v) return std::nullopt;
    a.value = std::make_unique<Expr>(std::move(*v));
    return a;
  }

  std::optional<Expr> value(const std::string& what) {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::minus:
        if (peek(1).kind == TokenKind::number) return number();
        next();
        expected("a number after the sign '-'");
        return std::nullopt;
      case TokenKind::number:
        return number();
      case TokenKind::string:
        next();
        return Expr{StringExpr{t.text}, t.loc};
      case TokenKind::identifier:
        next();
        return Expr{NameExpr{t.text}, t.loc};
      case TokenKind::lbracket: {
        next();
        ListExpr list;
        while (!at(TokenKind::rbracket)) {
          std::optional<Expr> item = value("a list element (a number, a word, a string or a list)");
          if (!item) return std::nullopt;
          list.items.push_back(std::move(*item));
          if (at(TokenKind::comma)) {
            next();
            continue;
          }
          if (!at(TokenKind::rbracket)) {
            add_note(expected("',' or ']' in the list"), t.loc, "the list starts here");
            return std::nullopt;
          }
        }
        next();  // ']'
        return Expr{std::move(list), t.loc};
      }
      default:
        expected(what);
        return std::nullopt;
    }
  }

  const std::vector<Token>& tokens_;
  DiagnosticEngine& diags_;
  std::size_t pos_ = 0;
  Ast ast_;
};

}  // namespace

Ast parse(const std::vector<Token>& tokens, const std::string& file, DiagnosticEngine& diags) {
  if (tokens.empty()) return Ast{file, {}};
  return Parser(tokens, file, diags).run();
}

}  // namespace fxc::frontend
