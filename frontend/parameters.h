// SPDX-License-Identifier: Apache-2.0
// Live parameters as both frontends declare them: a .fx file's named constants and the DSL's
// fxc::param. The driver (driver/live_parameters.h) turns them into values that change without
// recompiling.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <fxc/dsl.h>

#include "support/source_location.h"

namespace fxc {

/// Live parameter values by name, in the parameters' units. A parameter not named keeps the
/// value it was declared with.
using ParamValues = std::map<std::string, double, std::less<>>;

/// The unit a parameter's values are in.
enum class ParamUnit { hz, db, seconds, samples, number };
std::string_view unit_text(ParamUnit unit);  ///< "Hz", "dB", "s", "samples", ""
/// "0.05 s", "20 Hz", "0.5": a value with its unit, for messages.
std::string value_text(double value, ParamUnit unit);
/// "[0.001 s, 0.05 s]": a declared range with its unit, for messages (a bare "[0.001, 0.05]"
/// read as milliseconds where the file wrote `in [1 ms, 50 ms]`).
std::string range_text(double min, double max, ParamUnit unit);

/// A live parameter: a named constant of a .fx file or an fxc::param of the DSL.
struct ParamDecl {
  std::string name;
  ParamUnit unit = ParamUnit::number;
  double value = 0;                 ///< the starting value
  std::optional<double> min, max;   ///< the declared range, if any
  SourceLoc loc;                    ///< where it was declared
};

/// `text` ("500Hz", "-3 dB", "20ms", "0.5") as a value of `param`, in its unit; nullopt and
/// `error` set when it is not a number, or its unit measures something else.
std::optional<double> parse_param_value(const ParamDecl& param, std::string_view text, std::string& error);

}  // namespace fxc
