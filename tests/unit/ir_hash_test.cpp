// SPDX-License-Identifier: Apache-2.0
// Structural hashes ignore values; value hashes do not.
#include <doctest/doctest.h>

#include "ir/hash.h"
#include "test_graphs.h"

namespace fxc {
namespace {

using namespace fxc::literals;

ir::Graph eq(Frequency cutoff, Level boost, int order, const std::string& name = "eq") {
  Flow x = input("x", 2);
  return make_graph(name, {output("y", x | butter(order, cutoff, highpass) |
                                           peaking(1_kHz, 1.0, boost) | gain(0.5))});
}

TEST_CASE("graphs that differ only in values share a structural hash") {
  ir::Graph a = eq(80_Hz, 3_dB, 4), b = eq(120_Hz, -6_dB, 4, "other_name");
  CHECK(ir::structural_hash(a) == ir::structural_hash(b));
  CHECK(ir::value_hash(a) != ir::value_hash(b));
  CHECK(ir::structural_hash(a).size() == 64);
}

TEST_CASE("shape changes change the structural hash") {
  std::string base = ir::structural_hash(eq(80_Hz, 3_dB, 4));
  CHECK(ir::structural_hash(eq(80_Hz, 3_dB, 5)) != base);  // order -> section count

  Flow x = input("x", 2);
  ir::Graph extra_stage =
      make_graph("eq", {output("y", x | butter(4, 80_Hz, highpass) | peaking(1_kHz, 1.0, 3_dB) |
                                        gain(0.5) | tanh())});
  CHECK(ir::structural_hash(extra_stage) != base);

  Flow mono = input("x", 1);
  ir::Graph fewer_channels = make_graph(
      "eq", {output("y", mono | butter(4, 80_Hz, highpass) | peaking(1_kHz, 1.0, 3_dB) | gain(0.5))});
  CHECK(ir::structural_hash(fewer_channels) != base);
}

TEST_CASE("the value hash ignores names and locations but not coefficients") {
  ir::Graph a = eq(80_Hz, 3_dB, 4, "one");
  ir::Graph b = eq(80_Hz, 3_dB, 4, "two");  // different graph name, other source lines
  CHECK(ir::value_hash(a) == ir::value_hash(b));
  ir::Graph c = a;
  std::get<ir::Gain>(c.node(3).op).gain = 0.25;
  CHECK(ir::value_hash(c) != ir::value_hash(a));
  CHECK(ir::structural_hash(c) == ir::structural_hash(a));
}

}  // namespace
}  // namespace fxc
