// SPDX-License-Identifier: Apache-2.0
// Recursive-descent parser for .fx. See parser.h for the grammar and recovery.
#include "frontend/parser.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>

#include "frontend/stage_table.h"
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
      : tokens_(tokens), diags_(diags), closed_(tokens.size(), false) {
    ast_.file = file;
    // Which '{' has its '}' (the nearest unmatched one before it), once for the whole file:
    // a body's recovery asks at each function, which asked of the rest of the file each time.
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      if (tokens_[i].kind == TokenKind::lbrace) open.push_back(i);
      if (tokens_[i].kind == TokenKind::rbrace && !open.empty()) {
        closed_[open.back()] = true;
        open.pop_back();
      }
    }
  }

  Ast run() {
    statements();
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
    return at(TokenKind::newline) || at(TokenKind::semicolon) || at(TokenKind::eof) ||
           (function_ && at(TokenKind::rbrace));
  }
  void synchronize() {
    while (!at_statement_end()) next();
  }

  // Statements into `out_` until the end of the file, or of the function body being read.
  void statements() {
    for (;;) {
      while (at(TokenKind::newline) || at(TokenKind::semicolon)) next();
      if (at(TokenKind::eof) || (function_ && at(TokenKind::rbrace))) break;
      // A body never closed ends before the first statement only a file can hold.
      if (function_ && body_unclosed_ && starts_file_statement()) break;
      reported_depth_ = false;
      bool ok = statement();
      if (resume_here_) {  // an unclosed body ended before this token: a statement starts here
        resume_here_ = false;
        statement_failed_ = true;
        continue;
      }
      if (ok && !at_statement_end()) {
        expected("the end of the statement (a newline or ';')");
        ok = false;
      }
      if (!ok) {
        statement_failed_ = true;
        synchronize();
      }
    }
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
    // Version 2's words are keywords only where a version 1 file could not have them: a
    // statement `fn NAME(`, `import "..."`, or `return` inside a function.
    if (first.text == "fn" && peek(1).kind == TokenKind::identifier && peek(2).kind == TokenKind::lparen)
      return fn_statement();
    if (first.text == "import" && peek(1).kind == TokenKind::string) return import_statement();
    if (function_ && first.text == "return" && peek(1).kind != TokenKind::equals) return return_statement();
    if (peek(1).kind == TokenKind::comma && peek(2).kind == TokenKind::identifier) return split_statement();
    if (function_ && is_keyword(first.text) && peek(1).kind != TokenKind::equals) {
      add_note(error_at(first, "'" + first.text + "' cannot appear inside a function"), function_->name_loc,
               "in the function '" + function_->name + "'" +
                   (first.text == "output" ? "; return the signal instead: 'return EXPR'" : ""));
      return false;
    }
    if (is_keyword(first.text)) {
      // The contract's identifiers reserve no word: `output = x | tanh()` binds a name, as
      // `NAME = EXPR` does (no `output EXPR` starts with '=').
      if (peek(1).kind == TokenKind::equals) return binding_statement();
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

  bool fn_statement() {
    SourceLoc loc = next().loc;  // 'fn'
    const Token& name = next();
    FnStmt fn{name.text, name.loc, {}, {}, false, false};
    if (function_) {
      add_note(error_at(name, "functions cannot be defined inside a function"), function_->name_loc,
               "inside '" + function_->name + "'");
      // Past the nested body, so that its statements are not read as the outer one's.
      while (!at(TokenKind::eof) && !at(TokenKind::lbrace)) next();
      skip_body();
      return false;
    }
    next();  // '('
    while (!at(TokenKind::rparen)) {
      if (!at(TokenKind::identifier)) {
        expected("a parameter name");
        return damaged_header(std::move(fn), loc);
      }
      const Token& p = next();
      Param param{p.text, p.loc, std::nullopt};
      if (at(TokenKind::equals)) {
        next();
        std::optional<Expr> v = expression("a default value after '='");
        if (!v) return damaged_header(std::move(fn), loc);
        param.default_value = std::move(*v);
      }
      fn.params.push_back(std::move(param));
      if (at(TokenKind::comma)) {
        next();
        continue;
      }
      if (!at(TokenKind::rparen)) {
        expected("',' or ')' after a parameter of '" + fn.name + "'");
        return damaged_header(std::move(fn), loc);
      }
    }
    next();  // ')'
    if (!at(TokenKind::lbrace)) {
      expected("'{' to start the body of '" + fn.name + "'");
      return damaged_header(std::move(fn), loc);
    }
    const bool closes = closed_[pos_];
    const Token& open = next();
    std::vector<Stmt>* outer = out_;
    const bool outer_failed = statement_failed_;
    statement_failed_ = false;
    function_ = &fn;
    out_ = &fn.body;
    body_unclosed_ = !closes;
    statements();
    function_ = nullptr;
    out_ = outer;
    fn.damaged = statement_failed_;
    statement_failed_ = outer_failed;
    bool closed = at(TokenKind::rbrace);
    if (closed) {
      next();  // '}'
    } else {
      add_note(expected("'}' to end the body of '" + fn.name + "'"), open.loc, "the body starts here");
      fn.damaged = true;
      // Ended before a statement of the file (not at its end): that statement is read next.
      resume_here_ = body_unclosed_ && !at(TokenKind::eof);
    }
    body_unclosed_ = false;
    fn.uses_in = reads_in(fn.body);
    out_->push_back({std::move(fn), loc});
    return closed;
  }


  // `input`, `output`, `graph`, `fn NAME(` or `import "..."`: a statement of a file, not a body.
  bool starts_file_statement() const {
    const Token& first = peek();
    if (first.kind != TokenKind::identifier) return false;
    if (is_keyword(first.text)) return peek(1).kind != TokenKind::equals;
    if (first.text == "fn") return peek(1).kind == TokenKind::identifier && peek(2).kind == TokenKind::lparen;
    return first.text == "import" && peek(1).kind == TokenKind::string;
  }

  // After an error in a function's header: the rest of its line and, where the line opens
  // the body, the body up to its '}' belong to the function, not to the file's statements
  // (they would be reported again, as statements outside a function). The function is kept
  // by name, damaged, so that its calls are not reported as unknown stages.
  bool damaged_header(FnStmt fn, SourceLoc loc) {
    while (!at(TokenKind::newline) && !at(TokenKind::eof) && !at(TokenKind::lbrace)) next();
    if (at(TokenKind::lbrace) && closed_[pos_]) {
      skip_body();
    } else if (at(TokenKind::lbrace)) {
      // A body never closed ends, as a read one does, before the next statement only a file
      // holds; that statement is read next.
      next();
      while (!at(TokenKind::eof)) {
        if (!at(TokenKind::newline)) {
          next();
          continue;
        }
        while (at(TokenKind::newline) || at(TokenKind::semicolon)) next();
        if (starts_file_statement()) {
          resume_here_ = true;
          break;
        }
      }
    }
    fn.damaged = true;
    out_->push_back({std::move(fn), loc});
    return false;
  }

  // From a '{' past its matching '}' (or to the end of the file).
  void skip_body() {
    for (int depth = 0; !at(TokenKind::eof);) {
      TokenKind k = next().kind;
      depth += k == TokenKind::lbrace ? 1 : k == TokenKind::rbrace ? -1 : 0;
      if (depth == 0) break;
    }
  }

  // Whether any statement reads the name `in` (the signal piped into a call).
  static bool reads_in(const std::vector<Stmt>& body) {
    bool found = false;
    std::function<void(const Expr&)> walk = [&](const Expr& e) {
      if (const auto* n = e.as<NameExpr>()) found = found || n->name == "in";
      if (const auto* b = e.as<BinaryExpr>()) {
        walk(*b->lhs);
        walk(*b->rhs);
      }
      if (const auto* l = e.as<ListExpr>())
        for (const Expr& item : l->items) walk(item);
      if (const auto* i = e.as<IndexExpr>()) walk(*i->base);
      if (const auto* c = e.as<CallExpr>())
        for (const Arg& a : c->args) walk(*a.value);
    };
    for (const Stmt& s : body) {
      if (const auto* b = std::get_if<BindingStmt>(&s.node)) walk(b->value);
      if (const auto* b = std::get_if<SplitStmt>(&s.node)) walk(b->value);
      if (const auto* r = std::get_if<ReturnStmt>(&s.node))
        for (const Expr& e : r->values) walk(e);
    }
    return found;
  }

  bool import_statement() {
    SourceLoc loc = next().loc;  // 'import'
    const Token& path = next();
    if (function_) {
      error_at(path, "'import' belongs at the top of a file, not inside a function");
      return false;
    }
    out_->push_back({ImportStmt{path.text, path.loc}, loc});
    return true;
  }

  bool return_statement() {
    SourceLoc loc = next().loc;  // 'return'
    ReturnStmt r;
    do {
      if (!r.values.empty()) next();  // ','
      std::optional<Expr> v = expression("a value after 'return'");
      if (!v) return false;
      r.values.push_back(std::move(*v));
    } while (at(TokenKind::comma));
    out_->push_back({std::move(r), loc});
    return true;
  }

  bool split_statement() {
    SplitStmt split;
    SourceLoc loc = peek().loc;
    for (;;) {
      const Token& name = next();
      split.names.push_back(name.text);
      split.name_locs.push_back(name.loc);
      if (!at(TokenKind::comma)) break;
      next();
      if (!at(TokenKind::identifier)) {
        expected("a name after ','");
        return false;
      }
    }
    if (!at(TokenKind::equals)) {
      expected("'=' after the names");
      return false;
    }
    next();
    std::optional<Expr> value = expression("an expression after '='");
    if (!value) return false;
    split.value = std::move(*value);
    out_->push_back({std::move(split), loc});
    return true;
  }

  bool graph_statement() {
    SourceLoc loc = next().loc;
    if (!at(TokenKind::identifier)) {
      expected("a graph name after 'graph'");
      return false;
    }
    const Token& name = next();
    out_->push_back({GraphStmt{name.text, name.loc}, loc});
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
    out_->push_back({std::move(input), loc});
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
    out_->push_back(
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
    out_->push_back({std::move(out), loc});
    return ok;
  }

  // ---- expressions ----
  static Expr binary(BinaryOp op, SourceLoc op_loc, Expr lhs, Expr rhs) {
    SourceLoc loc = lhs.loc;
    int depth = std::max(lhs.depth, rhs.depth) + 1;
    return {BinaryExpr{op, std::move(op_loc), std::make_unique<Expr>(std::move(lhs)),
                       std::make_unique<Expr>(std::move(rhs))},
            std::move(loc), depth};
  }

  // ---- depth (kMaxExpressionDepth) ----
  // `e`, or nothing after an error when its tree is too deep.
  std::optional<Expr> within_depth(Expr e) {
    if (e.depth <= kMaxExpressionDepth) return e;
    too_deep(e.loc);
    return std::nullopt;
  }
  void too_deep(const SourceLoc& loc) {
    if (reported_depth_) return;  // once per statement: every enclosing level would say it again
    reported_depth_ = true;
    Diagnostic& d = diags_.error(loc, "this expression nests more than " + std::to_string(kMaxExpressionDepth) +
                                          " levels deep", kCode);
    d.notes.push_back({Severity::note, {}, "each '|', '+', '-', '*', call, list, channel selection and parenthesis "
                                           "is a level; split it into named steps ('a = x | ...', then 'a | ...')", {}, {}});
  }
  // Counts the parser's own recursion (a '(', '[' or call opened and not yet closed), which
  // reaches the limit before any tree is built from it: `((((...` 100000 deep.
  class Nesting {
   public:
    explicit Nesting(Parser& p) : p_(p) { ++p_.nesting_; }
    ~Nesting() { --p_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    bool too_deep() const {
      if (p_.nesting_ <= kMaxExpressionDepth) return false;
      p_.too_deep(p_.peek().loc);
      return true;
    }

   private:
    Parser& p_;
  };

  std::optional<Expr> expression(const std::string& what) {
    std::optional<Expr> lhs = term(what);
    while (lhs && (at(TokenKind::plus) || at(TokenKind::minus))) {
      const Token& op = next();
      BinaryOp kind = op.kind == TokenKind::plus ? BinaryOp::add : BinaryOp::subtract;
      std::optional<Expr> rhs = term("a signal after '" + op.text + "'");
      if (!rhs) return std::nullopt;
      lhs = within_depth(binary(kind, op.loc, std::move(*lhs), std::move(*rhs)));
    }
    return lhs;
  }

  std::optional<Expr> term(const std::string& what) {
    std::optional<Expr> lhs = pipe(what);
    while (lhs && at(TokenKind::star)) {
      SourceLoc op_loc = next().loc;
      std::optional<Expr> rhs = pipe("a signal or a number after '*'");
      if (!rhs) return std::nullopt;
      lhs = within_depth(binary(BinaryOp::multiply, op_loc, std::move(*lhs), std::move(*rhs)));
    }
    return lhs;
  }

  std::optional<Expr> pipe(const std::string& what) {
    std::optional<Expr> lhs = atom(what);
    while (lhs && at(TokenKind::pipe)) {
      SourceLoc op_loc = next().loc;
      std::optional<Expr> rhs = atom("a stage after '|'");
      if (!rhs) return std::nullopt;
      lhs = within_depth(binary(BinaryOp::pipe, op_loc, std::move(*lhs), std::move(*rhs)));
    }
    return lhs;
  }

  std::optional<Expr> atom(const std::string& what) {
    std::optional<Expr> e = primary(what);
    while (e && at(TokenKind::lbracket)) e = index(std::move(*e));
    return e;
  }

  // `base[i]`, `base[i:j]`, `base[i, j:k]`: channels, counted from 0.
  std::optional<Expr> index(Expr base) {
    const Token& open = next();  // '['
    IndexExpr ix{std::make_unique<Expr>(std::move(base)), {}};
    auto whole = [&](std::optional<int>& out) {
      const Token& t = peek();
      if (t.kind != TokenKind::number) return true;
      next();
      if (t.unit != Unit::none || t.number < 0 || t.number != std::floor(t.number) || t.number > 1e6) {
        error_at(t, "a channel index is a whole number from 0, found " + describe(t));
        return false;
      }
      out = static_cast<int>(t.number);
      return true;
    };
    do {
      if (!ix.items.empty()) next();  // ','
      IndexItem item;
      item.loc = peek().loc;
      std::optional<int> first, last;
      if (!whole(first)) return std::nullopt;
      if (at(TokenKind::colon)) {
        next();
        item.slice = true;
        if (!whole(last)) return std::nullopt;
      } else if (!first) {
        add_note(expected("a channel index (0 is the first channel) or a range i:j"), open.loc,
                 "in this channel selection");
        return std::nullopt;
      }
      item.first = first.value_or(0);
      item.last = last;
      ix.items.push_back(item);
    } while (at(TokenKind::comma));
    if (!at(TokenKind::rbracket)) {
      add_note(expected("',' or ']' in the channel selection"), open.loc, "it starts here");
      return std::nullopt;
    }
    next();
    SourceLoc loc = ix.base->loc;
    int depth = ix.base->depth + 1;
    return within_depth(Expr{std::move(ix), loc, depth});
  }

  std::optional<Expr> primary(const std::string& what) {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::string:
        next();
        return Expr{StringExpr{t.text}, t.loc};
      case TokenKind::lbracket:  // signals side by side as channels
        return list([&] { return expression("a signal in the list"); });
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
        Nesting nesting(*this);
        if (nesting.too_deep()) return std::nullopt;
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
    Nesting nesting(*this);
    if (nesting.too_deep()) return std::nullopt;
    const Token& name = next();
    next();  // '('
    CallExpr call{name.text, {}};
    int depth = 1;
    // A stage's arguments are values (numbers, words, strings, lists), as in version 1; any
    // other callee may be a user function, whose arguments are expressions (signals too).
    const bool stage = find_stage(name.text) != nullptr;
    while (!at(TokenKind::rparen)) {
      std::optional<Arg> a = argument(stage);
      if (!a) return std::nullopt;
      depth = std::max(depth, a->value->depth + 1);
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
    return within_depth(Expr{std::move(call), name.loc, depth});
  }

  std::optional<Arg> argument(bool stage) {
    Arg a;
    std::string what = "an argument";
    if (at(TokenKind::identifier) && peek(1).kind == TokenKind::equals) {
      a.keyword = peek().text;
      a.keyword_loc = peek().loc;
      next();
      next();
      what = "a value for '" + a.keyword + "'";
    }
    std::optional<Expr> v = stage ? value(what + " (a number, a word, a string or a list)") : expression(what);
    if (!v) return std::nullopt;
    a.value = std::make_unique<Expr>(std::move(*v));
    return a;
  }

  // `[item, item, ...]` with each item read by `item()` (a trailing comma allowed).
  template <class Item>
  std::optional<Expr> list(Item item) {
    Nesting nesting(*this);
    if (nesting.too_deep()) return std::nullopt;
    const Token& open = next();  // '['
    ListExpr out;
    int depth = 1;
    while (!at(TokenKind::rbracket)) {
      std::optional<Expr> one = item();
      if (!one) return std::nullopt;
      depth = std::max(depth, one->depth + 1);
      out.items.push_back(std::move(*one));
      if (at(TokenKind::comma)) {
        next();
        continue;
      }
      if (!at(TokenKind::rbracket)) {
        add_note(expected("',' or ']' in the list"), open.loc, "the list starts here");
        return std::nullopt;
      }
    }
    next();  // ']'
    return within_depth(Expr{std::move(out), open.loc, depth});
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
      case TokenKind::lbracket:
        return list([&] { return value("a list element (a number, a word, a string or a list)"); });
      default:
        expected(what);
        return std::nullopt;
    }
  }

  const std::vector<Token>& tokens_;
  DiagnosticEngine& diags_;
  std::size_t pos_ = 0;
  int nesting_ = 0;               // '(', '[' and calls open (Nesting)
  bool reported_depth_ = false;   // the statement's depth error is out
  bool statement_failed_ = false;  // a statement of the file or body being read did not parse
  bool body_unclosed_ = false;     // the body being read has no '}'
  bool resume_here_ = false;       // statements(): the statement that failed ended a body, not itself
  std::vector<bool> closed_;       // by token: a '{' whose '}' comes later
  Ast ast_;
  std::vector<Stmt>* out_ = &ast_.statements;  // where statements go: the file, or a body
  const FnStmt* function_ = nullptr;           // the function whose body is being read
};

}  // namespace

Ast parse(const std::vector<Token>& tokens, const std::string& file, DiagnosticEngine& diags) {
  if (tokens.empty()) return Ast{file, {}};
  return Parser(tokens, file, diags).run();
}

}  // namespace fxc::frontend
