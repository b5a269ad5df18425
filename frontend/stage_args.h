// SPDX-License-Identifier: Apache-2.0
// The bound arguments of one stage call, with the conversions of stage_table.h's ParamKinds.
// Internal to the frontend: the build functions of stage_table.cpp read their values here.
//
// Each reader returns the converted value, or `fallback` when the parameter was not given.
// A bad value is reported at its own location and marks the call as failed (ok() is false);
// the reader then returns the fallback so the build can go on and report the other arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "design/filter_types.h"
#include "frontend/ast.h"
#include "frontend/stage_table.h"
#include "ir/nodes.h"
#include "support/diagnostics.h"

namespace fxc::frontend {

class StageArgs {
 public:
  /// `values[i]` is the value given for `stage.params[i]`, or nullptr; `starts[i]` where that
  /// argument starts (its keyword, `f0=` of `f0=30 kHz`), where errors about the whole value
  /// point, as the language's contract asks (empty: at the values).
  StageArgs(const StageSpec& stage, std::vector<const Expr*> values, SourceLoc call_loc,
            DiagnosticEngine& diags, std::vector<SourceLoc> starts = {});

  bool ok() const { return ok_; }
  const StageSpec& stage() const { return stage_; }
  bool has(std::string_view param) const { return get(param) != nullptr; }
  /// The value given for `param`, or nullptr.
  const Expr* get(std::string_view param) const;
  /// Where `param`'s value was written, or the call's location when it was not given.
  const SourceLoc& loc(std::string_view param) const;

  /// Reports `message` at `loc` (code "fx-stage") and marks the call as failed, and the
  /// argument `loc` lies in, if any.
  Diagnostic& error(const SourceLoc& loc, std::string message);
  /// Whether an error was reported about `param`'s value: a check of the value its reader fell
  /// back to would report a second, wrong error (`cheby1(2, 1 Hz, ...)`: no unit error and then
  /// "'rp' must be above 0 dB, got 0 dB").
  bool failed(std::string_view param) const;

  double frequency_hz(std::string_view param, double fallback);
  std::vector<double> frequencies_hz(std::string_view param);
  double level_db(std::string_view param, double fallback);
  double linear_gain(std::string_view param, double fallback);
  ir::Delay delay(std::string_view param);
  /// A time in s or ms, in seconds, at least 0.
  double seconds(std::string_view param, double fallback);
  /// A whole number >= 1; `what` names it in messages ("order", "'numtaps'").
  int count(std::string_view param, std::string_view what, int fallback);
  double real(std::string_view param, double fallback);
  std::vector<double> reals(std::string_view param);
  std::vector<design::Section> sections(std::string_view param);
  /// Rows of numbers, all as long; empty after an error.
  std::vector<std::vector<double>> matrix(std::string_view param);
  bool boolean(std::string_view param, bool fallback);
  /// One of enum_names<E>(); `what` names the set in messages ("band type").
  template <class E>
  E word(std::string_view param, std::string_view what, E fallback);

 private:
  // Shared by the readers: the number in `e`, reporting what was expected otherwise.
  const NumberExpr* number(const Expr& e, std::string_view param, std::string_view expected);
  std::optional<double> to_hz(const Expr& e, std::string_view param);
  std::optional<std::string> word_text(std::string_view param, std::string_view expected);
  void unknown_word(std::string_view param, std::string_view what, const std::string& word,
                    const std::vector<std::string_view>& names);

  const StageSpec& stage_;
  std::vector<const Expr*> values_;
  std::vector<SourceLoc> starts_;
  std::vector<bool> failed_;  ///< by parameter: an error was reported about its value
  SourceLoc call_loc_;
  DiagnosticEngine& diags_;
  bool ok_ = true;
};

/// How a value reads in a message: "the number 3 kHz", "the word 'hann'", "a list".
std::string describe_value(const Expr& e);
/// A number as written, with its unit: "-3 dB".
std::string written(const NumberExpr& n);
/// "a, b or c"
std::string or_list(const std::vector<std::string_view>& words);

/// fxc's word for one SciPy or NumPy take for it (butter's btype "hp", NumPy's "hanning"
/// window), or nullopt: a suggestion the nearest spelling would get wrong ('hanning' is
/// nearer 'hamming'). The Python DSL gives the same hint.
std::optional<std::string_view> scipy_name_for(std::string_view word);

template <class E>
E StageArgs::word(std::string_view param, std::string_view what, E fallback) {
  std::vector<std::string_view> names = design::enum_names<E>();
  std::optional<std::string> text =
      word_text(param, "a " + std::string(what) + " (" + or_list(names) + ")");
  if (!text) return fallback;
  if (std::optional<E> value = design::parse_enum<E>(*text)) return *value;
  unknown_word(param, what, *text, names);
  return fallback;
}

}  // namespace fxc::frontend
