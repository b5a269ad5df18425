// SPDX-License-Identifier: Apache-2.0
#include "frontend/fx_parameters.h"

#include <cmath>

#include "frontend/lexer.h"
#include "frontend/parser.h"
#include "support/deep_stack.h"
#include "support/float_format.h"

namespace fxc::frontend {

ParamValue param_value_of(const NumberExpr& n) {
  switch (n.unit) {
    case Unit::hz: return {ParamUnit::hz, n.value};
    case Unit::khz: return {ParamUnit::hz, n.value * 1e3};
    case Unit::s: return {ParamUnit::seconds, n.value};
    case Unit::ms: return {ParamUnit::seconds, n.value / 1e3};
    case Unit::samples: return {ParamUnit::samples, n.value};
    case Unit::db: return {ParamUnit::db, n.value};
    case Unit::none: return {ParamUnit::number, n.value};
  }
  return {ParamUnit::number, n.value};
}

std::vector<ParamDecl> fx_parameters(const Ast& ast, DiagnosticEngine& diags) {
  std::vector<ParamDecl> out;
  for (const Stmt& stmt : ast.statements) {
    const auto* b = std::get_if<BindingStmt>(&stmt.node);
    if (!b) continue;
    const auto* number = b->value.as<NumberExpr>();
    if (!number) {
      if (b->range)
        diags.error(b->range->loc, "only a constant (NAME = NUMBER) can have a range; '" + b->name +
                                       "' is bound to a signal or chain", "fx-range");
      continue;
    }
    ParamValue v = param_value_of(*number);
    ParamDecl decl{b->name, v.unit, v.value, std::nullopt, std::nullopt, b->name_loc};
    if (b->range) {
      const auto* list = b->range->as<ListExpr>();
      const NumberExpr* lo = list && list->items.size() == 2 ? list->items[0].as<NumberExpr>() : nullptr;
      const NumberExpr* hi = list && list->items.size() == 2 ? list->items[1].as<NumberExpr>() : nullptr;
      if (!lo || !hi) {
        diags.error(b->range->loc, "a range is two numbers: [MIN, MAX]", "fx-range");
        continue;
      }
      ParamValue min = param_value_of(*lo), max = param_value_of(*hi);
      // A bare number in the range takes the value's unit, as `[20, 2 kHz]` reads.
      if (lo->unit == Unit::none) min.unit = v.unit;
      if (hi->unit == Unit::none) max.unit = v.unit;
      if (min.unit != v.unit || max.unit != v.unit) {
        diags.error(b->range->loc, "the range of '" + b->name + "' must be in the unit of its value (" +
                                       std::string(unit_quantity(number->unit).empty() ? "a plain number"
                                                                                       : unit_quantity(number->unit)) +
                                       ")", "fx-range");
        continue;
      }
      if (!(min.value <= max.value) || !std::isfinite(min.value) || !std::isfinite(max.value)) {
        diags.error(b->range->loc, "the range of '" + b->name + "' is empty: its minimum " + format_double(min.value) +
                                       " is above its maximum " + format_double(max.value), "fx-range");
        continue;
      }
      if (v.value < min.value || v.value > max.value) {
        diags.error(b->value.loc, "'" + b->name + "' = " + value_text(v.value, v.unit) + " is outside its range " +
                                      range_text(min.value, max.value, v.unit), "fx-range");
        continue;
      }
      decl.min = min.value;
      decl.max = max.value;
    }
    out.push_back(std::move(decl));
  }
  return out;
}

void set_parameter_values(Ast& ast, const ParamValues& values) {
  for (Stmt& stmt : ast.statements) {
    auto* b = std::get_if<BindingStmt>(&stmt.node);
    if (!b) continue;
    auto* number = b->value.as<NumberExpr>();
    auto it = values.find(b->name);
    if (!number || it == values.end()) continue;
    switch (param_value_of(*number).unit) {
      case ParamUnit::hz: number->unit = Unit::hz; break;
      case ParamUnit::seconds: number->unit = Unit::s; break;
      case ParamUnit::samples: number->unit = Unit::samples; break;
      case ParamUnit::db: number->unit = Unit::db; break;
      case ParamUnit::number: number->unit = Unit::none; break;
    }
    number->value = it->second;
    number->text = format_double(it->second);
  }
}

}  // namespace fxc::frontend

namespace fxc {

std::string_view unit_text(ParamUnit unit) {
  switch (unit) {
    case ParamUnit::hz: return "Hz";
    case ParamUnit::db: return "dB";
    case ParamUnit::seconds: return "s";
    case ParamUnit::samples: return "samples";
    case ParamUnit::number: return "";
  }
  return "";
}

std::string value_text(double value, ParamUnit unit) {
  const std::string_view u = unit_text(unit);
  return format_double(value) + (u.empty() ? "" : " " + std::string(u));
}

std::string range_text(double min, double max, ParamUnit unit) {
  return "[" + value_text(min, unit) + ", " + value_text(max, unit) + "]";
}

std::optional<double> parse_param_value(const ParamDecl& param, std::string_view text, std::string& error) {
  // The value is parsed as an expression, which nests as deep as the text (to the parser's
  // limit): on the frontend's stack, not the caller's (support/deep_stack.h).
  return on_deep_stack([&]() -> std::optional<double> {
    DiagnosticEngine scratch;
    frontend::Ast ast = frontend::parse(frontend::lex("v = " + std::string(text) + "\n", "--set", scratch), "--set", scratch);
    const auto* b = ast.statements.size() == 1 ? std::get_if<frontend::BindingStmt>(&ast.statements[0].node) : nullptr;
    const auto* number = b && !b->range ? b->value.as<frontend::NumberExpr>() : nullptr;
    if (scratch.has_errors() || !number) {
      error = "expected a number with an optional unit, such as 500Hz or -3dB, got '" + std::string(text) + "'";
      return std::nullopt;
    }
    frontend::ParamValue v = frontend::param_value_of(*number);
    if (number->unit != frontend::Unit::none && v.unit != param.unit) {
      const std::string given =
          number->unit == frontend::Unit::samples
              ? std::string("a number of samples (which needs the sample rate)")
              : std::string(frontend::unit_quantity(number->unit)) + " in " + std::string(frontend::unit_text(number->unit));
      const std::string takes = param.unit == ParamUnit::number    ? std::string("a plain number")
                                : param.unit == ParamUnit::hz      ? std::string("a frequency in Hz or kHz")
                                : param.unit == ParamUnit::seconds ? std::string("a time in s or ms")
                                : param.unit == ParamUnit::db      ? std::string("a level in dB")
                                                                   : std::string("a number of samples");
      error = "'" + param.name + "' takes " + takes + ", not " + given;
      return std::nullopt;
    }
    return v.value;
  });
}

}  // namespace fxc
