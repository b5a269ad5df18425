// SPDX-License-Identifier: Apache-2.0
// The .fx lexer: tokens, units, locations, and where statements end.
#include <doctest/doctest.h>

#include "frontend/lexer.h"

namespace fxc::frontend {
namespace {

using TK = TokenKind;

std::vector<Token> lex_ok(std::string_view text) {
  DiagnosticEngine diags;
  std::vector<Token> tokens = lex(text, "t.fx", diags);
  CHECK_MESSAGE(!diags.has_errors(), diags.str());
  return tokens;
}

std::vector<TK> kinds(const std::vector<Token>& tokens) {
  std::vector<TK> out;
  for (const Token& t : tokens) out.push_back(t.kind);
  return out;
}

std::vector<TK> kinds_of(std::string_view text) {
  return kinds(lex_ok(text));
}

TEST_CASE("fx lexer: identifiers, punctuation and locations") {
  std::vector<Token> t = lex_ok("y_1 = x | tanh()\n");
  CHECK(kinds(t) == std::vector<TK>{TK::identifier, TK::equals, TK::identifier, TK::pipe,
                                    TK::identifier, TK::lparen, TK::rparen, TK::newline, TK::eof});
  CHECK(t[0].text == "y_1");
  CHECK(t[0].loc == SourceLoc{"t.fx", 1, 1});
  CHECK(t[2].loc == SourceLoc{"t.fx", 1, 7});
  CHECK(t[4].loc == SourceLoc{"t.fx", 1, 11});
  CHECK(t[0].first_on_line);
  CHECK_FALSE(t[2].first_on_line);
  CHECK(kinds_of("a + b - c * d : e , [ ] ;") ==
        std::vector<TK>{TK::identifier, TK::plus, TK::identifier, TK::minus, TK::identifier,
                        TK::star, TK::identifier, TK::colon, TK::identifier, TK::comma,
                        TK::lbracket, TK::rbracket, TK::semicolon, TK::eof});
}

TEST_CASE("fx lexer: a UTF-8 byte order mark at the start is skipped, anywhere else it is bad text") {
  std::vector<Token> t = lex_ok("\xEF\xBB\xBFy = x\n");
  CHECK(kinds(t) == std::vector<TK>{TK::identifier, TK::equals, TK::identifier, TK::newline, TK::eof});
  CHECK(t[0].loc == SourceLoc{"t.fx", 1, 1});
  CHECK(t[2].loc == SourceLoc{"t.fx", 1, 5});
  DiagnosticEngine diags;
  lex("y = x\n\xEF\xBB\xBFz = y\n", "t.fx", diags);
  CHECK(diags.has_errors());
}

TEST_CASE("fx lexer: columns count characters, and the caret stands under the character") {
  // "é" is two bytes in UTF-8 and one column.
  std::vector<Token> t = lex_ok("s = \"\xC3\xA9\xC3\xA9\" | f\n");
  REQUIRE(t.size() >= 5);
  CHECK(t[0].loc == SourceLoc{"t.fx", 1, 1});
  CHECK(t[2].loc == SourceLoc{"t.fx", 1, 5});   // the string
  CHECK(t[3].loc == SourceLoc{"t.fx", 1, 10});  // '|': 4 characters later, 6 bytes
  CHECK(t[4].loc == SourceLoc{"t.fx", 1, 12});
  DiagnosticEngine diags;
  diags.add_source("t.fx", "s = \"\xC3\xA9\xC3\xA9\" | f\n");
  diags.error(t[4].loc, "here");
  CHECK(diags.str() == "t.fx:1:12: error: here\ns = \"\xC3\xA9\xC3\xA9\" | f\n           ^\n");
}

TEST_CASE("fx lexer: lines ending in a carriage return alone are named, once") {
  for (const char* text : {"input x\routput x\r", "# a comment\rinput x\routput x\r"}) {
    CAPTURE(text);
    DiagnosticEngine diags;
    lex(text, "t.fx", diags);
    CHECK(diags.error_count() == 1);
    CHECK(diags.str().find("error: this file's lines end in a carriage return alone") != std::string::npos);
  }
  // CRLF, and CR CR LF (a doubled conversion), are line ends as before; a lone CR at the very
  // end of a one-line file too.
  for (const char* text : {"input x\r\noutput x\r\n", "input x\r\r\noutput x\r\n", "output x\r"}) {
    CAPTURE(text);
    DiagnosticEngine ok;
    lex(text, "t.fx", ok);
    CHECK_FALSE(ok.has_errors());
  }
}

TEST_CASE("fx lexer: numbers") {
  std::vector<Token> t = lex_ok("12 3.5 1e3 2.5e-1 1E+2 .5 7.");
  REQUIRE(t.size() == 8);
  CHECK(t[0].number == 12);
  CHECK(t[1].number == 3.5);
  CHECK(t[2].number == 1000);
  CHECK(t[3].number == 0.25);
  CHECK(t[4].number == 100);
  CHECK(t[5].number == 0.5);
  CHECK(t[6].number == 7);
  CHECK(t[3].text == "2.5e-1");
  // The sign is a separate token; the parser decides whether it is a sign.
  CHECK(kinds_of("-3.5") == std::vector<TK>{TK::minus, TK::number, TK::eof});
}

TEST_CASE("fx lexer: units with and without a space") {
  struct Case {
    const char* text;
    double value;
    Unit unit;
  };
  for (Case c :
       {Case{"3 kHz", 3, Unit::khz}, Case{"3kHz", 3, Unit::khz}, Case{"80 Hz", 80, Unit::hz},
        Case{"80Hz", 80, Unit::hz}, Case{"2 s", 2, Unit::s}, Case{"5ms", 5, Unit::ms},
        Case{"3 samples", 3, Unit::samples}, Case{"-6 dB", 6, Unit::db},
        Case{"1e3Hz", 1000, Unit::hz}, Case{"2.5e-1 kHz", 0.25, Unit::khz}}) {
    INFO(c.text);
    std::vector<Token> t = lex_ok(c.text);
    const Token& n = t[t[0].kind == TK::minus ? 1 : 0];
    CHECK(n.kind == TK::number);
    CHECK(n.number == c.value);
    CHECK(n.unit == c.unit);
  }
  std::vector<Token> t = lex_ok("f(3  kHz)");
  CHECK(t[2].unit_loc == SourceLoc{"t.fx", 1, 6});
  // A word after a space that is not a unit stays a word (the parser reports it).
  CHECK(kinds_of("3 x") == std::vector<TK>{TK::number, TK::identifier, TK::eof});
  CHECK(unit_text(Unit::khz) == "kHz");
  CHECK(parse_unit("dB") == Unit::db);
  CHECK_FALSE(parse_unit("db").has_value());
}

TEST_CASE("fx lexer: strings and comments") {
  std::vector<Token> t = lex_ok("w = \"a \\\"b\\\"\"  # comment\n# whole line\nz");
  CHECK(kinds(t) == std::vector<TK>{TK::identifier, TK::equals, TK::string, TK::newline,
                                    TK::identifier, TK::eof});
  CHECK(t[2].text == "a \"b\"");
  CHECK(t[4].loc.line == 3);
}

TEST_CASE("fx lexer: statements end at a newline or ';', blank lines collapse") {
  CHECK(kinds_of("a\n\n\nb;c;\n") == std::vector<TK>{TK::identifier, TK::newline, TK::identifier,
                                                     TK::semicolon, TK::identifier, TK::semicolon,
                                                     TK::eof});
  CHECK(kinds_of("\n\n  a") == std::vector<TK>{TK::identifier, TK::eof});
}

TEST_CASE("fx lexer: a line continues after | + - * , = and open brackets") {
  for (const char* op : {"|", "+", "-", "*", ","}) {
    INFO(op);
    std::string text = std::string("a ") + op + "\n  b\nc";
    std::vector<TK> k = kinds_of(text);
    CHECK(k[2] == TK::identifier);  // no newline between the operator and b
    CHECK(k[3] == TK::newline);
  }
  CHECK(kinds_of("f(\n1,\n2\n)\ng") == std::vector<TK>{TK::identifier, TK::lparen, TK::number,
                                                       TK::comma, TK::number, TK::rparen,
                                                       TK::newline, TK::identifier, TK::eof});
  CHECK(kinds_of("[1\n,2\n]") ==
        std::vector<TK>{TK::lbracket, TK::number, TK::comma, TK::number, TK::rbracket, TK::eof});
  // A comment may follow a continuation, and blank lines may too.
  CHECK(kinds_of("a |   # why\n\n   b\n") ==
        std::vector<TK>{TK::identifier, TK::pipe, TK::identifier, TK::newline, TK::eof});
}

TEST_CASE("fx lexer: a statement keyword inside an unclosed bracket starts a new statement") {
  DiagnosticEngine diags;
  std::vector<Token> t = lex("y = f(1\noutput y\n", "t.fx", diags);
  CHECK(kinds(t) == std::vector<TK>{TK::identifier, TK::equals, TK::identifier, TK::lparen,
                                    TK::number, TK::newline, TK::identifier, TK::identifier,
                                    TK::newline, TK::eof});
  // The statement end is placed right after the last token, where ')' is missing.
  CHECK(t[5].loc == SourceLoc{"t.fx", 1, 8});
  // So does a name right after a complete value, which no valid program has.
  t = lex("a = f(1\nb = g(2)", "t.fx", diags);
  CHECK(kinds(t)[5] == TK::newline);
  CHECK_FALSE(diags.has_errors());
}

TEST_CASE("fx lexer: bad text is reported and becomes an error token") {
  struct Case {
    const char* text;
    const char* message;
  };
  for (Case c : {Case{"a @ b", "t.fx:1:3: error: unexpected character '@' [fx-lex]"},
                 Case{"\"open", "t.fx:1:1: error: unterminated string"},
                 Case{"1.2.3", "t.fx:1:1: error: invalid number '1.2.3' [fx-lex]"},
                 Case{"1e", "t.fx:1:1: error: invalid number '1e': expected digits"},
                 Case{"1e999", "t.fx:1:1: error: number '1e999' is out of range"},
                 Case{"3kz", "t.fx:1:2: error: unknown unit 'kz' after number 3"},
                 Case{"3 khz", "t.fx:1:3: error: unknown unit 'khz' after number 3"}}) {
    INFO(c.text);
    DiagnosticEngine diags;
    std::vector<Token> t = lex(c.text, "t.fx", diags);
    CHECK(diags.error_count() == 1);
    CHECK(diags.str().find(c.message) == 0);
    bool has_error_token = false;
    for (const Token& tok : t) has_error_token |= tok.kind == TK::error;
    CHECK(has_error_token);
  }
  DiagnosticEngine diags;
  lex("3 khz", "t.fx", diags);
  REQUIRE(diags.diagnostics().size() == 1);
  REQUIRE(diags.diagnostics()[0].notes.size() == 1);
  CHECK(diags.diagnostics()[0].notes[0].message == "did you mean 'kHz'?");
}

TEST_CASE("fx lexer: describe names tokens for messages") {
  std::vector<Token> t = lex_ok("x 3 kHz | \"s\"");
  CHECK(describe(t[0]) == "identifier 'x'");
  CHECK(describe(t[1]) == "number '3 kHz'");
  CHECK(describe(t[2]) == "'|'");
  CHECK(describe(t[3]) == "string \"s\"");
  CHECK(describe(t.back()) == "end of file");
}

}  // namespace
}  // namespace fxc::frontend
