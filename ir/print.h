// SPDX-License-Identifier: Apache-2.0
// The canonical text form of the IR. It reads back with parse_graph (print, parse, print gives
// the same text; floats are printed so they read back exactly).
//
//   graph vocal
//   %0 = input {name="x"} : 2ch f64 loc("vocal.fx":3:1)
//   %1 = iir_design %0 {family=butter, order=4, btype=highpass, cutoff_hz=[80], ...} : 2ch f64
//   %2 = sum %1, %0 {weights=[0.7, 0.3]} : 2ch f64
//   %3 = output %2 {name="y"} : 2ch f64
#pragma once

#include <iosfwd>
#include <string>

#include "ir/graph.h"

namespace fxc::ir {

struct PrintOptions {
  bool locations = true;    ///< append loc(...) and origins(...) to each node
  bool shape_only = false;  ///< print values as `?` and lists as `<N x ?>`; omit labels
};

void print_graph(std::ostream& out, const Graph& graph, const PrintOptions& options = {});
std::string to_text(const Graph& graph, const PrintOptions& options = {});

/// One node's line, without the trailing newline.
std::string node_to_text(const Graph& graph, NodeId id, const PrintOptions& options = {});

/// A quoted string with \" \\ \n \t escapes.
std::string quote(const std::string& text);

}  // namespace fxc::ir
