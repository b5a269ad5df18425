// SPDX-License-Identifier: Apache-2.0
#include "ir/parse.h"

#include <cctype>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>

#include "support/float_format.h"
#include "support/strings.h"

namespace fxc::ir {
namespace {

enum class Tok { end, newline, ident, number, string, value_ref, punct };

struct Token {
  Tok kind = Tok::end;
  std::string text;  // identifier, number text, unescaped string, %N digits, or punctuation
  SourceLoc loc;
};

class Lexer {
 public:
  Lexer(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  Token next() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\r' || text_[pos_] == '#')) {
      if (text_[pos_] == '#')
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      else
        advance();
    }
    Token t;
    t.loc = {file_, line_, col_};
    if (pos_ >= text_.size()) return t;
    char c = text_[pos_];
    if (c == '\n') {
      advance();
      t.kind = Tok::newline;
      return t;
    }
    if (c == '%') {
      advance();
      t.kind = Tok::value_ref;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
        t.text += advance();
      return t;
    }
    if (c == '"') {
      advance();
      t.kind = Tok::string;
      while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
        char ch = advance();
        if (ch == '\\' && pos_ < text_.size()) {
          char e = advance();
          ch = e == 'n' ? '\n' : e == 't' ? '\t' : e;
        }
        t.text += ch;
      }
      if (pos_ < text_.size() && text_[pos_] == '"') advance();
      else t.kind = Tok::punct, t.text = "unterminated string";
      return t;
    }
    bool sign = (c == '-' || c == '+') && pos_ + 1 < text_.size() &&
                (std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])) ||
                 text_[pos_ + 1] == '.' || text_[pos_ + 1] == 'i');
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.' || sign) {
      t.kind = Tok::number;
      if (sign) t.text += advance();
      if (text_.substr(pos_, 3) == "inf") {
        t.text += "inf";
        advance(), advance(), advance();
        return t;
      }
      while (pos_ < text_.size()) {
        char d = text_[pos_];
        bool exponent_sign = (d == '-' || d == '+') && !t.text.empty() &&
                             (t.text.back() == 'e' || t.text.back() == 'E');
        if (!std::isalnum(static_cast<unsigned char>(d)) && d != '.' && !exponent_sign) break;
        // "2ch": the type's channel count is followed directly by a word.
        if (std::isalpha(static_cast<unsigned char>(d)) && d != 'e' && d != 'E') break;
        t.text += advance();
      }
      return t;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = Tok::ident;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        t.text += advance();
      return t;
    }
    t.kind = Tok::punct;
    t.text = std::string(1, advance());
    return t;
  }

 private:
  char advance() {
    char c = text_[pos_++];
    if (c == '\n') ++line_, col_ = 1;
    else ++col_;
    return c;
  }

  std::string_view text_;
  std::string file_;
  std::size_t pos_ = 0;
  std::uint32_t line_ = 1, col_ = 1;
};

// True when `v` is a whole number in [lo, hi]: checked before any cast, since converting an
// out-of-range double to an integer is undefined behaviour (found by fuzzing).
bool whole_in(double v, double lo, double hi) { return v >= lo && v <= hi && v == std::floor(v); }

// An attribute value as written, before it is converted to a field's type.
struct AttrValue {
  enum Kind { number, string, word, list, object } kind = number;
  std::string text;              // an object's kind name
  std::vector<AttrValue> items;  // a list's items, or an object's attributes
  std::string key;               // for an object's attribute: its name
  SourceLoc loc;
  SourceLoc key_loc;  // for an attribute: where its name is
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& file, DiagnosticEngine& diags)
      : lexer_(text, file), diags_(diags) {
    tok_ = lexer_.next();
  }

  std::optional<Graph> parse() {
    skip_newlines();
    if (!(tok_.kind == Tok::ident && tok_.text == "graph")) {
      error(tok_.loc, "expected 'graph NAME' as the first line");
      return std::nullopt;
    }
    bump();
    if (tok_.kind != Tok::ident) {
      error(tok_.loc, "expected a graph name after 'graph'");
      return std::nullopt;
    }
    graph_.name = tok_.text;
    bump();
    expect_end_of_line();
    while (true) {
      skip_newlines();
      if (tok_.kind == Tok::end) break;
      if (!parse_node()) recover();
    }
    resolve_operands();
    if (diags_.error_count() > errors_before_) return std::nullopt;
    return std::move(graph_);
  }

 private:
  void bump() { tok_ = lexer_.next(); }
  void skip_newlines() {
    while (tok_.kind == Tok::newline) bump();
  }
  void recover() {
    while (tok_.kind != Tok::newline && tok_.kind != Tok::end) bump();
  }
  void error(const SourceLoc& loc, std::string message) {
    diags_.error(loc, std::move(message), "ir-parse");
  }
  bool is_punct(std::string_view p) const { return tok_.kind == Tok::punct && tok_.text == p; }
  bool expect_punct(std::string_view p, std::string_view what) {
    if (is_punct(p)) {
      bump();
      return true;
    }
    error(tok_.loc, "expected '" + std::string(p) + "' " + std::string(what) + ", found " +
                        describe(tok_));
    return false;
  }
  void expect_end_of_line() {
    if (tok_.kind != Tok::newline && tok_.kind != Tok::end) {
      error(tok_.loc, "expected the end of the line, found " + describe(tok_));
      recover();
    }
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::end: return "the end of the input";
      case Tok::newline: return "the end of the line";
      case Tok::value_ref: return "'%" + t.text + "'";
      case Tok::string: return "a string";
      default: return "'" + t.text + "'";
    }
  }

  bool parse_node() {
    if (tok_.kind != Tok::value_ref || tok_.text.empty()) {
      error(tok_.loc, "expected a node definition '%N = kind ...', found " + describe(tok_));
      return false;
    }
    std::string label = tok_.text;
    SourceLoc label_loc = tok_.loc;
    bump();
    if (!expect_punct("=", "after the node's name")) return false;
    if (tok_.kind != Tok::ident) {
      error(tok_.loc, "expected a node kind, found " + describe(tok_));
      return false;
    }
    Node node;
    if (!make_op(tok_.text, node.op)) {
      std::vector<std::string_view> kinds = kind_names();
      Diagnostic& d = diags_.error(tok_.loc, "unknown node kind '" + tok_.text + "'", "ir-parse");
      if (auto near = nearest_name(tok_.text, kinds))
        d.notes.push_back({Severity::note, {}, "did you mean '" + *near + "'?", "", {}});
      return false;
    }
    bump();

    std::vector<std::pair<std::string, SourceLoc>> operands;
    while (tok_.kind == Tok::value_ref) {
      operands.emplace_back(tok_.text, tok_.loc);
      bump();
      if (!is_punct(",")) break;
      bump();
    }

    std::map<std::string, AttrValue> attrs;
    if (is_punct("{") && !parse_attrs(attrs)) return false;

    if (!expect_punct(":", "before the node's type")) return false;
    if (tok_.kind == Tok::number) {
      auto channels = parse_double(tok_.text);
      if (!channels || !whole_in(*channels, 1, 1 << 20)) {
        error(tok_.loc, "expected a channel count, found " + describe(tok_));
        return false;
      }
      node.type.channels = static_cast<int>(*channels);
      bump();
    } else if (!expect_punct("?", "or a channel count in the type")) {
      return false;
    }
    if (!(tok_.kind == Tok::ident && tok_.text == "ch")) {
      error(tok_.loc, "expected 'ch' after the channel count, found " + describe(tok_));
      return false;
    }
    bump();
    std::optional<DType> dtype =
        tok_.kind == Tok::ident ? parse_dtype(tok_.text) : std::optional<DType>();
    if (!dtype) {
      error(tok_.loc, "expected a sample type 'f32' or 'f64', found " + describe(tok_));
      return false;
    }
    node.type.dtype = *dtype;
    bump();

    while (tok_.kind == Tok::ident && (tok_.text == "loc" || tok_.text == "origins")) {
      bool is_loc = tok_.text == "loc";
      bump();
      if (!expect_punct("(", "after loc/origins")) return false;
      while (!is_punct(")")) {
        std::optional<SourceLoc> loc = parse_loc();
        if (!loc) return false;
        if (is_loc) node.loc = *loc;
        else node.origins.push_back(*loc);
        if (is_punct(",")) bump();
        else if (!is_punct(")")) {
          error(tok_.loc, "expected ',' or ')' in a location list, found " + describe(tok_));
          return false;
        }
      }
      bump();
    }
    expect_end_of_line();

    if (!convert_fields(node.op, attrs, label_loc)) return false;
    if (!labels_.emplace(label, static_cast<NodeId>(graph_.size())).second) {
      error(label_loc, "node %" + label + " is defined twice");
      return false;
    }
    pending_operands_.push_back(std::move(operands));
    graph_.add(std::move(node));
    return true;
  }

  // `{name=value, ...}`, the current token being the '{'.
  bool parse_attrs(std::map<std::string, AttrValue>& attrs) {
    bump();
    while (!is_punct("}")) {
      if (tok_.kind != Tok::ident) {
        error(tok_.loc, "expected an attribute name, found " + describe(tok_));
        return false;
      }
      std::string key = tok_.text;
      SourceLoc key_loc = tok_.loc;
      bump();
      if (!expect_punct("=", "after an attribute name")) return false;
      std::optional<AttrValue> value = parse_value();
      if (!value) return false;
      value->key_loc = key_loc;
      if (!attrs.emplace(key, std::move(*value)).second) {
        error(key_loc, "attribute '" + key + "' given twice");
        return false;
      }
      if (is_punct(",")) bump();
      else if (!is_punct("}")) {
        error(tok_.loc, "expected ',' or '}' in the attribute list, found " + describe(tok_));
        return false;
      }
    }
    bump();
    return true;
  }

  std::optional<SourceLoc> parse_loc() {
    SourceLoc loc;
    if (tok_.kind != Tok::string) {
      error(tok_.loc, "expected a quoted file name in a location, found " + describe(tok_));
      return std::nullopt;
    }
    loc.file = tok_.text;
    bump();
    for (std::uint32_t* part : {&loc.line, &loc.col}) {
      if (!expect_punct(":", "in a location")) return std::nullopt;
      auto v = tok_.kind == Tok::number ? parse_double(tok_.text) : std::nullopt;
      if (!v || !whole_in(*v, 0, UINT32_MAX)) {
        error(tok_.loc, "expected a line or column number, found " + describe(tok_));
        return std::nullopt;
      }
      *part = static_cast<std::uint32_t>(*v);
      bump();
    }
    return loc;
  }

  std::optional<AttrValue> parse_value() {
    AttrValue v;
    v.loc = tok_.loc;
    if (tok_.kind == Tok::ident) {
      v.text = tok_.text;
      bump();
      if (!is_punct("{")) {
        v.kind = AttrValue::word;
        return v;
      }
      // KIND{attr=value, ...}: a chain's stage.
      v.kind = AttrValue::object;
      std::map<std::string, AttrValue> attrs;
      if (!parse_attrs(attrs)) return std::nullopt;
      for (auto& [key, item] : attrs) {
        item.key = key;
        v.items.push_back(std::move(item));
      }
      return v;
    }
    if (tok_.kind == Tok::number || tok_.kind == Tok::string) {
      v.kind = tok_.kind == Tok::number   ? AttrValue::number
               : tok_.kind == Tok::string ? AttrValue::string
                                          : AttrValue::word;
      v.text = tok_.text;
      bump();
      return v;
    }
    if (is_punct("[")) {
      bump();
      v.kind = AttrValue::list;
      while (!is_punct("]")) {
        std::optional<AttrValue> item = parse_value();
        if (!item) return std::nullopt;
        v.items.push_back(std::move(*item));
        if (is_punct(",")) bump();
        else if (!is_punct("]")) {
          error(tok_.loc, "expected ',' or ']' in a list, found " + describe(tok_));
          return std::nullopt;
        }
      }
      bump();
      return v;
    }
    error(tok_.loc, "expected a value, found " + describe(tok_));
    return std::nullopt;
  }

  // Field conversion: one overload per field type used by the payloads in nodes.h.
  bool read(const AttrValue& v, double& out) {
    std::optional<double> d;
    if (v.kind == AttrValue::number || (v.kind == AttrValue::word && (v.text == "nan" || v.text == "inf")))
      d = parse_double(v.text);
    if (!d) return fail(v, "a number");
    out = *d;
    return true;
  }
  bool read(const AttrValue& v, int& out) {
    double d = 0;
    if (!read(v, d) || !whole_in(d, INT_MIN, INT_MAX)) return fail(v, "an integer");
    out = static_cast<int>(d);
    return true;
  }
  bool read(const AttrValue& v, bool& out) {
    if (v.kind != AttrValue::word || (v.text != "true" && v.text != "false"))
      return fail(v, "true or false");
    out = v.text == "true";
    return true;
  }
  bool read(const AttrValue& v, std::string& out) {
    if (v.kind != AttrValue::string) return fail(v, "a quoted string");
    out = v.text;
    return true;
  }
  template <class E>
    requires std::is_enum_v<E>
  bool read(const AttrValue& v, E& out) {
    constexpr bool kIrEnum = std::is_same_v<E, DelayUnit> || std::is_same_v<E, IirStrategy> ||
                             std::is_same_v<E, FirMethod> || std::is_same_v<E, StatePrecision>;
    std::optional<E> e;
    if (v.kind == AttrValue::word) {
      if constexpr (kIrEnum) e = parse_ir_enum<E>(v.text);
      else e = design::parse_enum<E>(v.text);
    }
    if (!e) {
      std::vector<std::string_view> all;
      if constexpr (kIrEnum) all = ir_enum_names<E>();
      else all = design::enum_names<E>();
      std::string names;
      for (std::string_view n : all) names += (names.empty() ? "" : ", ") + std::string(n);
      return fail(v, "one of " + names);
    }
    out = *e;
    return true;
  }
  bool read(const AttrValue& v, std::vector<Stage>& out) {
    if (v.kind != AttrValue::list) return fail(v, "a list of stages");
    out.resize(v.items.size());
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      const AttrValue& item = v.items[i];
      if (item.kind != AttrValue::object || !make_op(item.text, out[i]))
        return fail(item, "a stage: sos{...}, fir{...}, gain{...}, delay{...}, tanh{} or clip{...}");
      std::map<std::string, AttrValue> attrs;
      for (const AttrValue& a : item.items) attrs.emplace(a.key, a);
      if (!convert_fields(out[i], attrs, item.loc)) return false;
    }
    return true;
  }
  bool read(const AttrValue& v, std::vector<double>& out) {
    if (v.kind != AttrValue::list) return fail(v, "a list of numbers");
    out.resize(v.items.size());
    for (std::size_t i = 0; i < v.items.size(); ++i)
      if (!read(v.items[i], out[i])) return false;
    return true;
  }
  bool read(const AttrValue& v, std::vector<int>& out) {
    if (v.kind != AttrValue::list) return fail(v, "a list of integers");
    out.resize(v.items.size());
    for (std::size_t i = 0; i < v.items.size(); ++i)
      if (!read(v.items[i], out[i])) return false;
    return true;
  }
  bool read(const AttrValue& v, std::vector<design::Section>& out) {
    if (v.kind != AttrValue::list) return fail(v, "a list of sections");
    out.resize(v.items.size());
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      std::vector<double> c;
      if (!read(v.items[i], c)) return false;
      if (c.size() != 5) return fail(v.items[i], "a section [b0, b1, b2, a1, a2]");
      out[i] = {c[0], c[1], c[2], c[3], c[4]};
    }
    return true;
  }
  bool fail(const AttrValue& v, const std::string& expected) {
    error(v.loc, "expected " + expected);
    return false;
  }

  template <class Variant>
  bool convert_fields(Variant& op, std::map<std::string, AttrValue>& attrs,
                      const SourceLoc& loc) {
    bool ok = true;
    std::visit(
        [&](auto& payload) {
          using P = std::decay_t<decltype(payload)>;
          P::fields(payload, [&](FieldRole, std::string_view name, auto& field) {
            auto it = attrs.find(std::string(name));
            if (it == attrs.end()) {
              error(loc, "node of kind '" + std::string(P::kKind) + "' lacks attribute '" +
                             std::string(name) + "'");
              ok = false;
              return;
            }
            ok = read(it->second, field) && ok;
            attrs.erase(it);
          });
          for (const auto& [key, value] : attrs) {
            error(value.key_loc, "unknown attribute '" + key + "' for a node of kind '" +
                                 std::string(P::kKind) + "'");
            ok = false;
          }
        },
        op);
    return ok;
  }

  void resolve_operands() {
    for (NodeId id = 0; id < graph_.size(); ++id)
      for (const auto& [label, loc] : pending_operands_[id]) {
        auto it = labels_.find(label);
        if (it == labels_.end()) {
          error(loc, "operand %" + label + " is not defined");
          continue;
        }
        graph_.node(id).operands.push_back(it->second);
      }
  }

  Lexer lexer_;
  DiagnosticEngine& diags_;
  std::size_t errors_before_ = diags_.error_count();
  Token tok_;
  Graph graph_;
  std::map<std::string, NodeId> labels_;
  std::vector<std::vector<std::pair<std::string, SourceLoc>>> pending_operands_;
};

}  // namespace

std::optional<Graph> parse_graph(std::string_view text, const std::string& file,
                                 DiagnosticEngine& diags) {
  return Parser(text, file, diags).parse();
}

}  // namespace fxc::ir
