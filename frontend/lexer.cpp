// SPDX-License-Identifier: Apache-2.0
// The .fx lexer. See lexer.h for the statement rules it applies.
#include "frontend/lexer.h"

#include <array>
#include <cctype>
#include <cmath>

#include "support/float_format.h"
#include "support/strings.h"

namespace fxc::frontend {

std::string_view unit_text(Unit unit) {
  switch (unit) {
    case Unit::none:
      return "";
    case Unit::hz:
      return "Hz";
    case Unit::khz:
      return "kHz";
    case Unit::s:
      return "s";
    case Unit::ms:
      return "ms";
    case Unit::samples:
      return "samples";
    case Unit::db:
      return "dB";
  }
  return "";
}

namespace {
constexpr std::array<std::string_view, 6> kUnitWords = {"Hz", "kHz", "s", "ms", "samples", "dB"};
constexpr std::array<Unit, 6> kUnits = {Unit::hz, Unit::khz,     Unit::s,
                                        Unit::ms, Unit::samples, Unit::db};
}  // namespace

std::optional<Unit> parse_unit(std::string_view word) {
  for (std::size_t i = 0; i < kUnitWords.size(); ++i)
    if (word == kUnitWords[i]) return kUnits[i];
  return std::nullopt;
}

std::string_view unit_quantity(Unit unit) {
  switch (unit) {
    case Unit::none:
      return "";
    case Unit::hz:
    case Unit::khz:
      return "a frequency";
    case Unit::s:
    case Unit::ms:
    case Unit::samples:
      return "a time";
    case Unit::db:
      return "a level";
  }
  return "";
}

std::string_view token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::identifier:
      return "identifier";
    case TokenKind::number:
      return "number";
    case TokenKind::string:
      return "string";
    case TokenKind::pipe:
      return "'|'";
    case TokenKind::plus:
      return "'+'";
    case TokenKind::minus:
      return "'-'";
    case TokenKind::star:
      return "'*'";
    case TokenKind::comma:
      return "','";
    case TokenKind::lparen:
      return "'('";
    case TokenKind::rparen:
      return "')'";
    case TokenKind::lbracket:
      return "'['";
    case TokenKind::rbracket:
      return "']'";
    case TokenKind::lbrace:
      return "'{'";
    case TokenKind::rbrace:
      return "'}'";
    case TokenKind::equals:
      return "'='";
    case TokenKind::colon:
      return "':'";
    case TokenKind::semicolon:
      return "';'";
    case TokenKind::newline:
      return "end of line";
    case TokenKind::eof:
      return "end of file";
    case TokenKind::error:
      return "invalid text";
  }
  return "token";
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::identifier:
      return "identifier '" + token.text + "'";
    case TokenKind::number: {
      std::string text = token.text;
      if (token.unit != Unit::none) text += " " + std::string(unit_text(token.unit));
      return "number '" + text + "'";
    }
    case TokenKind::string:
      return "string \"" + token.text + "\"";
    default:
      return std::string(token_kind_name(token.kind));
  }
}

namespace {

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}

bool ends_value(TokenKind kind) {
  return kind == TokenKind::identifier || kind == TokenKind::number || kind == TokenKind::string ||
         kind == TokenKind::rparen || kind == TokenKind::rbracket;
}

// A trailing token after which the statement continues on the next line.
bool continues_line(TokenKind kind) {
  switch (kind) {
    case TokenKind::pipe:
    case TokenKind::plus:
    case TokenKind::minus:
    case TokenKind::star:
    case TokenKind::comma:
    case TokenKind::equals:
    case TokenKind::lparen:
    case TokenKind::lbracket:
      return true;
    default:
      return false;
  }
}

bool is_statement_keyword(std::string_view word) {
  return word == "graph" || word == "input" || word == "output";
}

std::string unit_list() {
  return "Hz, kHz, s, ms, samples or dB";
}

// Unexpected characters reported before the lexer gives up on a file.
constexpr int kMaxUnexpectedCharacters = 20;

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file, DiagnosticEngine& diags)
      : text_(text), file_(file), diags_(diags) {}

  std::vector<Token> run() {
    // A UTF-8 byte order mark, which some Windows editors write, is not part of the program;
    // the columns of line 1 count from after it.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    // Classic Mac OS line endings (CR alone, no LF anywhere) would read as one long line, or
    // one long comment: said once, at the first line's end, and nothing more is read.
    if (std::size_t cr = text_.find('\r'); cr != std::string_view::npos && text_.find('\n') == std::string_view::npos &&
                                            cr + 1 < text_.size()) {
      while (pos_ < cr) advance();
      diags_.error(here(), "this file's lines end in a carriage return alone (classic Mac OS line endings): save it "
                           "with LF or CRLF line endings", "fx-lex");
      Token end;
      end.loc = here();
      tokens_.push_back(std::move(end));
      return std::move(tokens_);
    }
    for (;;) {
      skip_blanks_and_comments();
      if (pos_ >= text_.size()) break;
      char c = text_[pos_];
      if (c == '\n') {
        newline();
        continue;
      }
      lex_token(c);
      if (gave_up_) break;
    }
    Token eof;
    eof.kind = TokenKind::eof;
    eof.loc = last_end_;
    eof.first_on_line = line_break_;
    tokens_.push_back(std::move(eof));
    return std::move(tokens_);
  }

 private:
  SourceLoc here() const { return {file_, line_, col_}; }
  char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void advance(std::size_t n = 1) {
    for (std::size_t i = 0; i < n && pos_ < text_.size(); ++i, ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        col_ = 1;
      } else if ((static_cast<unsigned char>(text_[pos_]) & 0xC0) != 0x80) {
        ++col_;  // columns count characters: a UTF-8 continuation byte is not one
      }
    }
  }

  void skip_blanks_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        advance();
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else {
        break;
      }
    }
  }

  TokenKind last_kind() const { return tokens_.empty() ? TokenKind::newline : tokens_.back().kind; }

  void push_newline(const SourceLoc& loc) {
    TokenKind last = last_kind();
    if (last == TokenKind::newline || last == TokenKind::semicolon) return;
    Token t;
    t.kind = TokenKind::newline;
    t.loc = loc;
    tokens_.push_back(std::move(t));
  }

  void newline() {
    // A statement end is shown right after the statement's last token, where a missing
    // token would go, rather than after a trailing comment or on an empty line.
    SourceLoc loc = last_end_;
    advance();
    line_break_ = true;
    if (depth_ > 0 || continues_line(last_kind())) {
      // Dropped for now; push_token may still turn it into a statement end (recovery).
      if (!dropped_newline_) dropped_newline_ = loc;
      return;
    }
    push_newline(loc);
  }

  void push_token(Token token) {
    if (line_break_ && dropped_newline_) {
      bool keyword = token.kind == TokenKind::identifier && is_statement_keyword(token.text);
      bool name_after_value =
          depth_ > 0 && token.kind == TokenKind::identifier && ends_value(last_kind());
      if (keyword || name_after_value) {
        depth_ = 0;
        push_newline(*dropped_newline_);
      }
    }
    token.first_on_line = line_break_;
    line_break_ = false;
    dropped_newline_.reset();
    switch (token.kind) {
      case TokenKind::lparen:
      case TokenKind::lbracket:
        ++depth_;
        break;
      case TokenKind::rparen:
      case TokenKind::rbracket:
        if (depth_ > 0) --depth_;
        break;
      case TokenKind::semicolon:
        depth_ = 0;
        break;
      default:
        break;
    }
    tokens_.push_back(std::move(token));
    last_end_ = here();
  }

  void push_simple(TokenKind kind, const SourceLoc& loc, std::size_t length) {
    Token t;
    t.kind = kind;
    t.loc = loc;
    t.text = std::string(text_.substr(pos_, length));
    advance(length);
    push_token(std::move(t));
  }

  void push_error(const SourceLoc& loc, std::string text) {
    Token t;
    t.kind = TokenKind::error;
    t.loc = loc;
    t.text = std::move(text);
    push_token(std::move(t));
  }

  void lex_token(char c) {
    SourceLoc loc = here();
    if (is_ident_start(c)) {
      std::size_t start = pos_;
      while (is_ident_char(peek())) advance();
      Token t;
      t.kind = TokenKind::identifier;
      t.loc = loc;
      t.text = std::string(text_.substr(start, pos_ - start));
      push_token(std::move(t));
      return;
    }
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return lex_number(loc);
    if (c == '"') return lex_string(loc);
    switch (c) {
      case '|':
        return push_simple(TokenKind::pipe, loc, 1);
      case '+':
        return push_simple(TokenKind::plus, loc, 1);
      case '-':
        return push_simple(TokenKind::minus, loc, 1);
      case '*':
        return push_simple(TokenKind::star, loc, 1);
      case ',':
        return push_simple(TokenKind::comma, loc, 1);
      case '(':
        return push_simple(TokenKind::lparen, loc, 1);
      case ')':
        return push_simple(TokenKind::rparen, loc, 1);
      case '[':
        return push_simple(TokenKind::lbracket, loc, 1);
      case ']':
        return push_simple(TokenKind::rbracket, loc, 1);
      case '{':
        return push_simple(TokenKind::lbrace, loc, 1);
      case '}':
        return push_simple(TokenKind::rbrace, loc, 1);
      case '=':
        return push_simple(TokenKind::equals, loc, 1);
      case ':':
        return push_simple(TokenKind::colon, loc, 1);
      case ';':
        return push_simple(TokenKind::semicolon, loc, 1);
      default:
        break;
    }
    // Report a multi-byte UTF-8 character once, as the character the user sees.
    std::size_t length = 1;
    if (static_cast<unsigned char>(c) >= 0xC0)
      while ((static_cast<unsigned char>(peek(length)) & 0xC0) == 0x80) ++length;
    std::string shown(text_.substr(pos_, length));
    advance(length);
    // A control character or a byte that is not UTF-8 (a binary file) is shown by its code.
    if (length == 1 && (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F)) {
      shown = "\\x" + hex_digits(static_cast<unsigned char>(c));
    }
    diags_.error(loc, "unexpected character '" + shown + "'", "fx-lex");
    push_error(loc, shown);
    // A binary file given as the program (an audio file in the graph's place) would make an
    // error of every byte: stop after a few.
    if (++unexpected_ == kMaxUnexpectedCharacters) {
      diags_.error(loc, std::to_string(kMaxUnexpectedCharacters) +
                            " unexpected characters: this does not look like a .fx program, so the rest of it "
                            "is not read", "fx-lex");
      gave_up_ = true;
    }
  }

  void lex_number(const SourceLoc& loc) {
    std::size_t start = pos_;
    while (is_digit(peek())) advance();
    if (peek() == '.') {
      advance();
      while (is_digit(peek())) advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      char after = peek(1);
      bool signed_exponent = (after == '+' || after == '-') && is_digit(peek(2));
      if (is_digit(after) || signed_exponent) {
        advance(signed_exponent ? 2 : 1);
        while (is_digit(peek())) advance();
      } else if (!is_ident_start(after)) {
        // "1e", "1e+": an exponent without digits. "1eV" is left to the unit check below.
        advance(after == '+' || after == '-' ? 2 : 1);
        std::string shown(text_.substr(start, pos_ - start));
        diags_.error(loc, "invalid number '" + shown + "': expected digits after the exponent",
                     "fx-lex");
        return push_error(loc, shown);
      }
    }
    if (peek() == '.' || is_digit(peek())) {
      // "1.2.3": report the whole run, not a number followed by a stray '.'.
      while (peek() == '.' || is_digit(peek())) advance();
      std::string shown(text_.substr(start, pos_ - start));
      diags_.error(loc, "invalid number '" + shown + "'", "fx-lex");
      return push_error(loc, shown);
    }
    Token t;
    t.kind = TokenKind::number;
    t.loc = loc;
    t.text = std::string(text_.substr(start, pos_ - start));
    std::optional<double> value = parse_double(t.text);
    if (!value || !std::isfinite(*value)) {
      diags_.error(loc, "number '" + t.text + "' is out of range", "fx-lex");
      return push_error(loc, t.text);
    }
    t.number = *value;
    if (!lex_unit(t)) return push_error(loc, t.text);
    push_token(std::move(t));
  }

  // A unit right after the number ("3kHz") or after spaces on the same line ("3 kHz").
  // Returns false when a unit was written wrongly (reported).
  bool lex_unit(Token& number) {
    bool adjacent = is_ident_start(peek());
    std::size_t look = pos_;
    while (!adjacent && look < text_.size() && (text_[look] == ' ' || text_[look] == '\t')) ++look;
    if (look >= text_.size() || !is_ident_start(text_[look])) return true;
    std::size_t end = look;
    while (end < text_.size() && is_ident_char(text_[end])) ++end;
    std::string_view word = text_.substr(look, end - look);
    std::optional<Unit> unit = parse_unit(word);
    // A one-letter word is as near to 's' as to anything; only longer ones get a guess.
    std::optional<std::string> suggestion;
    if (word.size() > 1) suggestion = nearest_name(word, kUnitWords);
    bool case_slip = false;
    for (std::string_view u : kUnitWords) {
      if (u.size() != word.size()) continue;
      bool same = true;
      for (std::size_t i = 0; i < u.size(); ++i)
        same = same && std::tolower(static_cast<unsigned char>(u[i])) ==
                           std::tolower(static_cast<unsigned char>(word[i]));
      if (same) {
        case_slip = true;
        suggestion = std::string(u);
      }
    }
    // After a space, a word that is not a unit is left to the parser, unless it is a unit with
    // the wrong capitals ("3 khz"), which deserves the unit message.
    if (!unit && !adjacent && !case_slip) return true;
    advance(look - pos_);
    SourceLoc unit_loc = here();
    advance(end - look);
    if (!unit) {
      Diagnostic& d = diags_.error(unit_loc,
                                   "unknown unit '" + std::string(word) + "' after number " +
                                       number.text + "; expected " + unit_list(),
                                   "fx-lex");
      if (suggestion) {
        d.notes.push_back({Severity::note, {}, "did you mean '" + *suggestion + "'?", {}, {}});
      } else if (word.size() == 1) {  // "2x": most likely a product with a one-letter name
        std::string hint =
            "to scale a signal, write '" + number.text + " * " + std::string(word) + "'";
        d.notes.push_back({Severity::note, {}, std::move(hint), {}, {}});
      }
      return false;
    }
    number.unit = *unit;
    number.unit_loc = unit_loc;
    return true;
  }

  void lex_string(const SourceLoc& loc) {
    advance();  // the opening quote
    std::string value;
    for (;;) {
      char c = peek();
      if (pos_ >= text_.size() || c == '\n') {
        diags_.error(loc, "unterminated string; expected a closing '\"' before the end of the line",
                     "fx-lex");
        return push_error(loc, value);
      }
      advance();
      if (c == '"') break;
      if (c == '\\' && pos_ < text_.size() && peek() != '\n') {
        char e = peek();
        advance();
        value += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        continue;
      }
      value += c;
    }
    Token t;
    t.kind = TokenKind::string;
    t.loc = loc;
    t.text = std::move(value);
    push_token(std::move(t));
  }

  std::string_view text_;
  const std::string& file_;
  DiagnosticEngine& diags_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  std::uint32_t line_ = 1, col_ = 1;
  int depth_ = 0;           // open brackets in the current statement
  int unexpected_ = 0;      // unexpected characters reported
  bool gave_up_ = false;    // too many of them: the rest is not read
  bool line_break_ = true;  // a newline was crossed since the last token (or file start)
  std::optional<SourceLoc> dropped_newline_;  // the first newline dropped since the last token
  SourceLoc last_end_{file_, 1, 1};           // just after the last token
};

}  // namespace

std::vector<Token> lex(std::string_view text, const std::string& file, DiagnosticEngine& diags) {
  return Lexer(text, file, diags).run();
}

}  // namespace fxc::frontend
