// SPDX-License-Identifier: Apache-2.0
#include "ir/routing_channels.h"

#include <algorithm>

namespace fxc::ir {

namespace {

std::string channels_text(int c) { return std::to_string(c) + (c == 1 ? " channel" : " channels"); }

}  // namespace

std::string routing_channel_mismatch(const Graph& g, NodeId id) {
  const Node& node = g.node(id);
  if (node.operands.empty()) return {};
  const int in = g.node(node.operands[0]).type.channels;
  if (in == 0) return {};
  if (const auto* select = std::get_if<Select>(&node.op)) {
    if (select->of != 0 && in != select->of)
      return "this takes a signal of " + channels_text(select->of) + ", found " + channels_text(in);
    for (int i : select->indices)
      if (i >= in)
        return "channel " + std::to_string(i) + " does not exist: the signal has " + channels_text(in) +
               " (channels count from 0)";
  } else if (const auto* matrix = std::get_if<Matrix>(&node.op)) {
    if (matrix->gains.empty()) return {};
    const std::size_t columns = matrix->gains.size() / static_cast<std::size_t>(std::max(matrix->rows, 1));
    if (columns != static_cast<std::size_t>(in))
      // Not "mix": pan, ms_encode and ms_decode are matrices too (the caret names the stage).
      return "this takes a signal of " + channels_text(static_cast<int>(columns)) + ", found " + channels_text(in);
  } else if (const auto* link = std::get_if<Link>(&node.op)) {
    if (link->groups > 0 && in % link->groups != 0)
      return "cannot link " + channels_text(in) + " in " + std::to_string(link->groups) + " groups";
  } else if (const auto* multiply = std::get_if<Multiply>(&node.op)) {
    const int by = node.operands.size() > 1 ? g.node(node.operands[1]).type.channels : 0;
    if (by != 0 && by != in && (by != multiply->groups || in % by != 0))
      return "a side-chain key must have as many channels as the signal, or one: the signal has " +
             channels_text(in) + ", the key " + channels_text(by);
  }
  return {};
}

}  // namespace fxc::ir
