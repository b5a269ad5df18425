// SPDX-License-Identifier: Apache-2.0
// fxc._core.Program: an fxc::Program for Python, run on NumPy arrays without copies.
#pragma once

#include <nanobind/nanobind.h>

#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fxc/fxc.h>

namespace fxc::python {

namespace nb = nanobind;

/// A compiled graph and its source. An input declared without a channel count and compiled
/// without Options::channels takes each call's count: the Program for each count is made
/// once (the kernel cache makes the second shape's compile cheap) and gets every value set().
class PyProgram {
 public:
  PyProgram(std::string source, std::string name, Options options);

  const Program& base() const { return base_; }
  const std::string& source() const { return source_; }
  const std::string& source_name() const { return name_; }
  const Options& options() const { return base_.options(); }

  /// The Program that runs inputs with these channel counts (one per graph input).
  Program for_channels(const std::vector<std::size_t>& channels) const;
  /// The Program a dump shows: the base, or where its inputs' channel counts were left open,
  /// the first count run.
  Program for_dump() const;
  /// Sets the value on every Program it keeps, or on none: a value one of them refuses
  /// (outside the range, above Nyquist, one that shapes the graph) leaves all at the old one.
  void set(const std::string& name, double value);
  void set(const std::string& name, const std::string& value_with_unit);
  void set(const std::vector<ParamValue>& values);
  /// Warnings from compiling: the compiled Program's (base_ compiles nothing while an input's
  /// channel count is open).
  std::string warnings() const;

 private:
  std::string source_, name_;
  Program base_;
  /// For inputs without a channel count, before a call says it: the graph compiled for one
  /// channel without kernels, where set() checks what the stages and the live analysis
  /// refuse. Empty where one channel does not fit the graph.
  std::optional<Program> probe_;
  mutable std::mutex mutex_;
  mutable std::map<int, Program> by_channels_;
};

/// Ports as Python sees them: (name, channels) pairs, channels 0 where a call says it.
std::vector<std::pair<std::string, int>> port_pairs(const std::vector<PortInfo>& ports);

void bind_program(nb::module_& m);

}  // namespace fxc::python
