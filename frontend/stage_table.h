// SPDX-License-Identifier: Apache-2.0
// Every stage of the .fx language (fx-language.md, "Stages"), listed once: its parameters,
// their kinds and defaults, and how a call becomes an ir::Op.
//
// Checks that need no sample rate happen here, each at the location of the argument at fault:
// argument binding (unknown keyword, given twice, positional after keyword, too many, missing),
// units, orders, band-edge counts, unknown words, empty lists, negative delays, clip bounds.
// Checks that need the sample rate (Nyquist, stability) are left to passes::design_filters.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/ast.h"
#include "ir/nodes.h"
#include "support/diagnostics.h"

namespace fxc::frontend {

/// What a parameter accepts and how its units convert.
enum class ParamKind {
  frequency,    ///< number, Hz (default) or kHz
  frequencies,  ///< a frequency, or a list of them (band edges, firwin cutoffs)
  level,        ///< number in dB, with or without the unit
  gain,         ///< number, linear, or dB with the unit (10^(g/20))
  time,         ///< delay: samples without a unit or with `samples`; seconds with `s`/`ms`
  duration,     ///< a time in `s` or `ms`, at least 0 (dynamics)
  count,        ///< whole number >= 1, no unit
  real,         ///< number, no unit
  reals,        ///< non-empty list of numbers, no units
  sections,     ///< non-empty list of [b0, b1, b2, a0, a1, a2] rows
  matrix,       ///< non-empty list of equally long rows of numbers
  word,         ///< a bare word or a string from a fixed set (btype, window, norm)
  boolean,      ///< true or false
  signal,       ///< a signal (a dynamics stage's side-chain key); read by the lowering
};

struct ParamSpec {
  std::string_view name;  ///< the keyword, as in the contract ("Wn", "f0", ...)
  ParamKind kind = ParamKind::real;
  bool required = true;
  std::string_view default_text;  ///< shown in signatures ("lowpass"); empty when required
  bool keyword_only = false;      ///< extensions that must be named (allow_unstable)
};

class StageArgs;

struct StageSpec {
  std::string_view name;
  std::string_view summary;  ///< one line, for help text and docs
  std::vector<ParamSpec> params;
  /// Converts the bound arguments to the payload; nullopt after reporting a bad value.
  std::optional<ir::Op> (*build)(StageArgs& args) = nullptr;
};

/// A stage call as IR: the payload, and where each given parameter's value was written
/// (keyed by the contract's parameter name), for ir::Node::arg_locs.
struct StageOp {
  ir::Op op;
  std::map<std::string, SourceLoc> arg_locs;
};

/// Every stage, in the contract's order.
const std::vector<StageSpec>& stage_table();

/// The stage called `name`, or nullptr.
const StageSpec* find_stage(std::string_view name);

/// Every stage name, in table order (for suggestions).
std::vector<std::string_view> stage_names();

/// The call form with defaults, e.g. "butter(N, Wn, btype=lowpass)".
std::string signature(const StageSpec& stage);

/// "frequency", "level (dB)", ... for docs and messages.
std::string_view param_kind_name(ParamKind kind);

/// Binds the arguments of `call` (written at `call_loc`, the stage name) to the stage's
/// parameters, checks and converts them, and builds the payload. Every problem is reported
/// to `diags` (code "fx-stage") at the argument's location; nullopt if there was any. An
/// unknown stage suggests the nearest stage or `functions` (the file's and its imports').
std::optional<StageOp> build_stage(const CallExpr& call, const SourceLoc& call_loc,
                                   DiagnosticEngine& diags, std::span<const std::string_view> functions = {});

}  // namespace fxc::frontend
