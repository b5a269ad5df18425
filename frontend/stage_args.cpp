// SPDX-License-Identifier: Apache-2.0
// Argument conversions for stage calls (units, counts, lists, words). See stage_args.h.
#include "frontend/stage_args.h"

#include <algorithm>
#include <cmath>

#include "support/float_format.h"
#include "support/strings.h"

namespace fxc::frontend {

std::string written(const NumberExpr& n) {
  std::string text = n.text.empty() ? format_double(n.value) : n.text;
  if (n.unit != Unit::none) text += " " + std::string(unit_text(n.unit));
  return text;
}

std::string describe_value(const Expr& e) {
  if (const auto* n = e.as<NumberExpr>()) return "the number " + written(*n);
  if (const auto* w = e.as<NameExpr>()) return "the word '" + w->name + "'";
  if (const auto* s = e.as<StringExpr>()) return "the string \"" + s->value + "\"";
  if (e.as<ListExpr>()) return "a list";
  if (const auto* c = e.as<CallExpr>()) return "a call of '" + c->callee + "'";
  return "an expression";
}

std::string or_list(const std::vector<std::string_view>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i) out += i + 1 == words.size() ? " or " : ", ";
    out += words[i];
  }
  return out;
}

namespace {

// "3 kHz (a frequency)": the value and what its unit measures.
std::string with_quantity(const NumberExpr& n) {
  std::string text = written(n);
  if (n.unit != Unit::none) text += " (" + std::string(unit_quantity(n.unit)) + ")";
  return text;
}

std::string quoted(std::string_view name) {
  return "'" + std::string(name) + "'";
}

}  // namespace

StageArgs::StageArgs(const StageSpec& stage, std::vector<const Expr*> values, SourceLoc call_loc,
                     DiagnosticEngine& diags, std::vector<SourceLoc> starts)
    : stage_(stage),
      values_(std::move(values)),
      starts_(std::move(starts)),
      failed_(values_.size(), false),
      call_loc_(std::move(call_loc)),
      diags_(diags) {}

const Expr* StageArgs::get(std::string_view param) const {
  for (std::size_t i = 0; i < stage_.params.size(); ++i)
    if (stage_.params[i].name == param) return values_[i];
  return nullptr;
}

const SourceLoc& StageArgs::loc(std::string_view param) const {
  const Expr* e = get(param);
  return e ? e->loc : call_loc_;
}

namespace {

// Whether `loc` is where `e` or one of its items (a list's, a matrix row's) was written.
bool written_at(const Expr& e, const SourceLoc& loc) {
  if (e.loc == loc) return true;
  if (const auto* list = e.as<ListExpr>())
    for (const Expr& item : list->items)
      if (written_at(item, loc)) return true;
  return false;
}

}  // namespace

bool StageArgs::failed(std::string_view param) const {
  for (std::size_t i = 0; i < stage_.params.size() && i < failed_.size(); ++i)
    if (stage_.params[i].name == param) return failed_[i];
  return false;
}

Diagnostic& StageArgs::error(const SourceLoc& loc, std::string message) {
  ok_ = false;
  for (std::size_t i = 0; i < values_.size(); ++i)
    if (values_[i] && written_at(*values_[i], loc)) failed_[i] = true;
  // An error about a whole value points where its argument starts (an item of a list keeps
  // its own place).
  for (std::size_t i = 0; i < values_.size() && i < starts_.size(); ++i)
    if (values_[i] && values_[i]->loc == loc && starts_[i].valid())
      return diags_.error(starts_[i], std::move(message), "fx-stage");
  return diags_.error(loc, std::move(message), "fx-stage");
}

const NumberExpr* StageArgs::number(const Expr& e, std::string_view param,
                                    std::string_view expected) {
  if (const auto* n = e.as<NumberExpr>()) return n;
  error(e.loc, "expected " + std::string(expected) + " for " + quoted(param) + ", found " +
                   describe_value(e));
  return nullptr;
}

std::optional<double> StageArgs::to_hz(const Expr& e, std::string_view param) {
  const NumberExpr* n = number(e, param, "a frequency");
  if (!n) return std::nullopt;
  double hz = n->value;
  switch (n->unit) {
    case Unit::none:
    case Unit::hz:
      break;
    case Unit::khz:
      hz *= 1000;
      break;
    default:
      error(e.loc, "expected a frequency (Hz or kHz) for " + quoted(param) + ", found " +
                       with_quantity(*n));
      return std::nullopt;
  }
  if (!(hz > 0)) {
    error(e.loc, quoted(param) + " must be a frequency above 0 Hz, got " + written(*n));
    return std::nullopt;
  }
  return hz;
}

double StageArgs::frequency_hz(std::string_view param, double fallback) {
  const Expr* e = get(param);
  if (!e) return fallback;
  return to_hz(*e, param).value_or(fallback);
}

std::vector<double> StageArgs::frequencies_hz(std::string_view param) {
  const Expr* e = get(param);
  if (!e) return {};
  std::vector<double> out;
  if (const auto* list = e->as<ListExpr>()) {
    if (list->items.empty()) error(e->loc, quoted(param) + " must not be an empty list");
    for (const Expr& item : list->items)
      if (std::optional<double> hz = to_hz(item, param)) out.push_back(*hz);
    return out;
  }
  if (std::optional<double> hz = to_hz(*e, param)) out.push_back(*hz);
  return out;
}

double StageArgs::level_db(std::string_view param, double fallback) {
  const Expr* e = get(param);
  if (!e) return fallback;
  const NumberExpr* n = number(*e, param, "a level in dB");
  if (!n) return fallback;
  if (n->unit != Unit::none && n->unit != Unit::db) {
    error(e->loc, "expected a level in dB for " + quoted(param) + ", found " + with_quantity(*n));
    return fallback;
  }
  if (n->gain_of_levels) {
    // A plain number here means dB: the gain 0.1 of `1 * -20 dB` would be read as +0.1 dB.
    error(e->loc, "expected a level in dB for " + quoted(param) + ", found the gain " + written(*n) +
                      (n->value > 0 ? " (" + format_double(20 * std::log10(n->value)) + " dB as a level)" : std::string()) +
                      ": '*' on a level in dB multiplies gains; write the level in dB, and add levels with '+' "
                      "(-20 dB + 3 dB)");
    return fallback;
  }
  return n->value;
}

double StageArgs::linear_gain(std::string_view param, double fallback) {
  const Expr* e = get(param);
  if (!e) return fallback;
  const NumberExpr* n = number(*e, param, "a gain (a plain number, or a level in dB)");
  if (!n) return fallback;
  if (n->unit == Unit::db) {
    double g = std::pow(10.0, n->value / 20);
    if (std::isfinite(g)) return g;
    error(e->loc, "a gain of " + written(*n) + " is too large (10^(gain/20) overflows)");
    return fallback;
  }
  if (n->unit != Unit::none) {
    error(e->loc, "expected a gain (a plain number, or a level in dB) for " + quoted(param) +
                      ", found " + with_quantity(*n));
    return fallback;
  }
  return n->value;
}

double StageArgs::seconds(std::string_view param, double fallback) {
  const Expr* e = get(param);
  if (!e) return fallback;
  const NumberExpr* n = number(*e, param, "a time in s or ms");
  if (!n) return fallback;
  if (n->unit == Unit::samples) {  // a time, but one this stage takes in s or ms only
    error(e->loc, "expected a time in s or ms for " + quoted(param) + ", found " + written(*n) +
                      " (this stage takes no time in samples)");
    return fallback;
  }
  if (n->unit != Unit::s && n->unit != Unit::ms) {
    error(e->loc, "expected a time in s or ms for " + quoted(param) + ", found " + with_quantity(*n));
    return fallback;
  }
  if (!(n->value >= 0)) {
    error(e->loc, quoted(param) + " must be at least 0, got " + written(*n));
    return fallback;
  }
  return n->unit == Unit::ms ? n->value / 1000 : n->value;
}

ir::Delay StageArgs::delay(std::string_view param) {
  ir::Delay out{0, ir::DelayUnit::samples};
  const Expr* e = get(param);
  if (!e) return out;
  const NumberExpr* n = number(*e, param, "a delay (samples, or a time in s or ms)");
  if (!n) return out;
  switch (n->unit) {
    case Unit::none:
    case Unit::samples:
      out = {n->value, ir::DelayUnit::samples};
      break;
    case Unit::s:
      out = {n->value, ir::DelayUnit::seconds};
      break;
    case Unit::ms:
      out = {n->value / 1000, ir::DelayUnit::seconds};
      break;
    default:
      error(e->loc, "expected a delay (samples, or a time in s or ms) for " + quoted(param) +
                        ", found " + with_quantity(*n));
      return {0, ir::DelayUnit::samples};
  }
  if (n->value < 0) {
    error(e->loc, "delay must be at least 0, got " + written(*n));
    return {0, ir::DelayUnit::samples};
  }
  if (out.unit == ir::DelayUnit::samples && out.amount > ir::Delay::kMaxSamples) {
    error(e->loc, "delay must be at most " + format_double(ir::Delay::kMaxSamples) +
                      " samples, got " + written(*n));
    return {0, ir::DelayUnit::samples};
  }
  if (out.unit == ir::DelayUnit::samples && out.amount != std::floor(out.amount)) {
    error(e->loc, "a delay in samples must be a whole number, got " + written(*n))
        .notes.push_back(
            {Severity::note,
             {},
             "give a time instead (such as '" + n->text + " ms') to round it to the nearest sample",
             {},
             {}});
    return {0, ir::DelayUnit::samples};
  }
  return out;
}

int StageArgs::count(std::string_view param, std::string_view what, int fallback) {
  const Expr* e = get(param);
  if (!e) return fallback;
  const NumberExpr* n = number(*e, param, "a whole number");
  if (!n) return fallback;
  std::string name(what);
  if (n->unit != Unit::none) {
    error(e->loc, name + " takes no unit, found " + with_quantity(*n));
  } else if (n->value != std::floor(n->value)) {
    error(e->loc, name + " must be a whole number, got " + written(*n));
  } else if (n->value < 1) {
    error(e->loc, name + " must be at least 1, got " + written(*n));
  } else if (n->value > 1e6) {
    error(e->loc, name + " must be at most 1000000, got " + written(*n));
  } else {
    return static_cast<int>(n->value);
  }
  return fallback;
}

double StageArgs::real(std::string_view param, double fallback) {
  const Expr* e = get(param);
  if (!e) return fallback;
  const NumberExpr* n = number(*e, param, "a number");
  if (!n) return fallback;
  if (n->unit != Unit::none) {
    error(e->loc, "expected a plain number for " + quoted(param) + ", found " + with_quantity(*n));
    return fallback;
  }
  return n->value;
}

std::vector<double> StageArgs::reals(std::string_view param) {
  const Expr* e = get(param);
  if (!e) return {};
  const auto* list = e->as<ListExpr>();
  if (!list) {
    error(e->loc, "expected a list of numbers for " + quoted(param) +
                      " (such as [1, 0.5]), found " + describe_value(*e));
    return {};
  }
  if (list->items.empty()) error(e->loc, quoted(param) + " must not be an empty list");
  std::vector<double> out;
  for (const Expr& item : list->items) {
    const NumberExpr* n = number(item, param, "a number in the list");
    if (!n) continue;
    if (n->unit != Unit::none)
      error(item.loc,
            "expected a plain number in " + quoted(param) + ", found " + with_quantity(*n));
    out.push_back(n->value);
  }
  return out;
}

std::vector<std::vector<double>> StageArgs::matrix(std::string_view param) {
  const Expr* e = get(param);
  if (!e) return {};
  const auto* list = e->as<ListExpr>();
  if (!list || list->items.empty() || !list->items.front().as<ListExpr>()) {
    error(e->loc, "expected a matrix for " + quoted(param) +
                      ", a list of rows with a gain per input channel ([[0.5, 0.5]] sums a stereo signal to "
                      "mono), found " + describe_value(*e));
    return {};
  }
  std::vector<std::vector<double>> out;
  for (const Expr& row : list->items) {
    const auto* items = row.as<ListExpr>();
    if (!items || items->items.empty()) {
      error(row.loc, "expected a row of numbers in " + quoted(param) + ", found " + describe_value(row));
      return {};
    }
    std::vector<double>& r = out.emplace_back();
    for (const Expr& item : items->items) {
      const NumberExpr* n = number(item, param, "a number in the row");
      if (!n) return {};
      if (n->unit != Unit::none) {
        error(item.loc, "expected a plain number in " + quoted(param) + ", found " + with_quantity(*n));
        return {};
      }
      r.push_back(n->value);
    }
    if (r.size() != out.front().size()) {
      error(row.loc, "every row of " + quoted(param) + " needs " + std::to_string(out.front().size()) +
                         " gains, as the first has; this row has " + std::to_string(r.size()));
      return {};
    }
  }
  return out;
}

std::vector<design::Section> StageArgs::sections(std::string_view param) {
  const char* layout = "[b0, b1, b2, a0, a1, a2]";
  const Expr* e = get(param);
  if (!e) return {};
  const auto* list = e->as<ListExpr>();
  if (!list) {
    error(e->loc, "expected a list of sections [" + std::string(layout) + ", ...] for " +
                      quoted(param) + ", found " + describe_value(*e));
    return {};
  }
  if (list->items.empty()) {
    error(e->loc, quoted(param) + " must not be an empty list");
    return {};
  }
  if (list->items.front().as<NumberExpr>()) {
    // The common slip: one section written without the outer brackets.
    error(e->loc, quoted(param) +
                      " takes a list of sections; write one section in double "
                      "brackets: [" +
                      layout + "]");
    return {};
  }
  std::vector<design::Section> out;
  for (std::size_t r = 0; r < list->items.size(); ++r) {
    const Expr& row = list->items[r];
    const auto* coeffs = row.as<ListExpr>();
    if (!coeffs) {
      error(row.loc,
            "expected a section " + std::string(layout) + ", found " + describe_value(row));
      continue;
    }
    if (coeffs->items.size() != 6) {
      error(row.loc, "a section has 6 coefficients " + std::string(layout) + ", this one has " +
                         std::to_string(coeffs->items.size()));
      continue;
    }
    double c[6] = {};
    bool row_ok = true;
    for (std::size_t i = 0; i < 6; ++i) {
      const NumberExpr* n = number(coeffs->items[i], param, "a number");
      if (n && n->unit != Unit::none) {
        error(coeffs->items[i].loc,
              "expected a plain number in " + quoted(param) + ", found " + with_quantity(*n));
        n = nullptr;
      }
      row_ok = row_ok && n;
      if (n) c[i] = n->value;
    }
    if (!row_ok) continue;
    if (c[3] == 0) {
      error(coeffs->items[3].loc,
            "a0 must not be 0 (section " + std::to_string(r + 1) + " is divided by its a0)");
      continue;
    }
    out.push_back({c[0] / c[3], c[1] / c[3], c[2] / c[3], c[4] / c[3], c[5] / c[3]});
  }
  return out;
}

std::optional<std::string> StageArgs::word_text(std::string_view param, std::string_view expected) {
  const Expr* e = get(param);
  if (!e) return std::nullopt;
  if (const auto* w = e->as<NameExpr>()) return w->name;
  if (const auto* s = e->as<StringExpr>()) return s->value;
  error(e->loc, "expected " + std::string(expected) + " for " + quoted(param) + ", found " +
                    describe_value(*e));
  return std::nullopt;
}

std::optional<std::string_view> scipy_name_for(std::string_view word) {
  static constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
      {"hanning", "hann"}, {"low", "lowpass"},   {"lp", "lowpass"},   {"high", "highpass"},
      {"hp", "highpass"},  {"band", "bandpass"}, {"bp", "bandpass"},  {"pass", "bandpass"},
      {"stop", "bandstop"}, {"bs", "bandstop"},  {"bandreject", "bandstop"}};
  for (const auto& [alias, name] : kAliases)
    if (word == alias) return name;
  return std::nullopt;
}

void StageArgs::unknown_word(std::string_view param, std::string_view what, const std::string& word,
                             const std::vector<std::string_view>& names) {
  Diagnostic& d = error(
      loc(param), "unknown " + std::string(what) + " '" + word + "'; expected " + or_list(names));
  std::optional<std::string_view> alias = scipy_name_for(word);
  if (alias && std::find(names.begin(), names.end(), *alias) != names.end())
    d.notes.push_back({Severity::note, {}, "'" + word + "' is SciPy's or NumPy's word for '" + std::string(*alias) +
                                               "': write " + std::string(*alias), {}, {}});
  else if (std::optional<std::string> near = nearest_name(word, names))
    d.notes.push_back({Severity::note, {}, "did you mean '" + *near + "'?", {}, {}});
}

bool StageArgs::boolean(std::string_view param, bool fallback) {
  std::optional<std::string> text = word_text(param, "true or false");
  if (!text) return fallback;
  if (*text == "true" || *text == "True") return true;
  if (*text == "false" || *text == "False") return false;
  error(loc(param),
        "expected true or false for " + quoted(param) + ", found the word '" + *text + "'");
  return fallback;
}

}  // namespace fxc::frontend
