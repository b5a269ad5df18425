// SPDX-License-Identifier: Apache-2.0
// The tokens of the .fx language (fx-language.md, "Lexical rules"), each with its location.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "support/source_location.h"

namespace fxc::frontend {

/// A unit written after a number. `none` when the number has no unit.
enum class Unit { none, hz, khz, s, ms, samples, db };

/// The unit as written in .fx text ("Hz", "kHz", "s", "ms", "samples", "dB"); "" for none.
std::string_view unit_text(Unit unit);
/// The unit spelled exactly `word` (units are case-sensitive); nullopt otherwise.
std::optional<Unit> parse_unit(std::string_view word);
/// What a unit measures, for messages: "a frequency", "a time", "a level"; "" for none.
std::string_view unit_quantity(Unit unit);

enum class TokenKind {
  identifier,
  number,
  string,
  pipe,       // |
  plus,       // +
  minus,      // -
  star,       // *
  comma,      // ,
  lparen,     // (
  rparen,     // )
  lbracket,   // [
  rbracket,   // ]
  lbrace,     // {
  rbrace,     // }
  equals,     // =
  colon,      // :
  semicolon,  // ;
  newline,    // the end of a statement (only where a newline ends one)
  eof,
  error,  // text the lexer rejected; it has already been reported
};

struct Token {
  TokenKind kind = TokenKind::eof;
  std::string text;   ///< identifier name, decoded string contents, or number as written
  double number = 0;  ///< a number's value, before its unit is applied
  Unit unit = Unit::none;
  SourceLoc loc;               ///< the first character of the token
  SourceLoc unit_loc;          ///< where the unit was written, for a number with a unit
  bool first_on_line = false;  ///< no other token precedes it on its line
};

/// The token as a message names it: "identifier 'x'", "number '3 kHz'", "'|'", "end of line".
std::string describe(const Token& token);

/// The kind's spelling for punctuation ("'|'"), or its name ("identifier").
std::string_view token_kind_name(TokenKind kind);

}  // namespace fxc::frontend
