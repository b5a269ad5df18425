// SPDX-License-Identifier: Apache-2.0
// A new value for several live parameters at once (Program::set, Processor::set).
#pragma once

#include <string>
#include <variant>

namespace fxc {

/// One parameter's new value: a number in the parameter's unit, or text with a unit ("500Hz",
/// "-3 dB", "20ms"), as `fxc run --set` takes it.
struct ParamValue {
  std::string name{};
  std::variant<double, std::string> value{};
};

}  // namespace fxc
