// SPDX-License-Identifier: Apache-2.0
#include "runtime/batch.h"

#include <algorithm>
#include <map>
#include <optional>

#include "ir/rewrite.h"
#include "passes/infer_types.h"
#include "runtime/bind_inputs.h"
#include "runtime/cpu_executor.h"

namespace fxc {

namespace {

// Channel routing for `items` items side by side (item b's channel c at b x C + c): each
// routing node of the graph bound to one item routes every item's channels alike. A select
// picks each item's channels in turn, a matrix becomes block-diagonal, and a concat, whose
// operands are each the items side by side, is followed by a select that regroups them item
// by item.
bool widen_routing(ir::Graph& g, int items, DiagnosticEngine& diags) {
  if (items == 1 || std::none_of(g.nodes().begin(), g.nodes().end(), [](const ir::Node& n) { return ir::is_routing(n.op); }))
    return true;
  // The channel counts of one item.
  passes::PassContext context{diags, {48000.0, 0, g.node(g.inputs()[0]).type.dtype}};
  std::size_t errors = diags.error_count();
  ir::Graph one = passes::infer_types(g, context);
  if (diags.error_count() > errors) return false;
  const std::size_t count = g.size();
  std::map<ir::NodeId, ir::NodeId> regrouped;  // an added select -> the concat it follows
  for (ir::NodeId id = 0; id < count; ++id) {
    ir::Node& node = g.node(id);
    auto per_item = [&](std::size_t i) {
      ir::NodeId operand = node.operands[i];
      return one.node(operand < count ? operand : regrouped.at(operand)).type.channels;
    };
    if (auto* select = std::get_if<ir::Select>(&node.op)) {
      std::vector<int> wide;
      for (int b = 0; b < items; ++b)
        for (int i : select->indices) wide.push_back(b * per_item(0) + i);
      select->indices = std::move(wide);
      select->of *= items;
    } else if (auto* matrix = std::get_if<ir::Matrix>(&node.op)) {
      const auto columns = static_cast<std::size_t>(per_item(0));
      const auto rows = static_cast<std::size_t>(matrix->rows);
      if (matrix->gains.empty()) matrix->gains.assign(rows * columns, 1.0);  // a sum of channels
      std::vector<double> wide(rows * columns * static_cast<std::size_t>(items * items), 0.0);
      const std::size_t wide_columns = columns * static_cast<std::size_t>(items);
      for (std::size_t b = 0; b < static_cast<std::size_t>(items); ++b)
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t c = 0; c < columns; ++c)
            wide[(b * rows + r) * wide_columns + b * columns + c] = matrix->gains[r * columns + c];
      matrix->rows *= items;
      matrix->gains = std::move(wide);
    } else if (auto* link = std::get_if<ir::Link>(&node.op)) {
      link->groups *= items;  // one level per item
    } else if (auto* multiply = std::get_if<ir::Multiply>(&node.op)) {
      multiply->groups *= items;  // a gain per item, or per channel as before
    } else if (ir::holds<ir::Concat>(node)) {
      std::vector<int> regroup;
      for (int b = 0; b < items; ++b) {
        int start = 0;  // where operand i's items begin in the concatenation
        for (std::size_t i = 0; i < node.operands.size(); ++i) {
          for (int c = 0; c < per_item(i); ++c) regroup.push_back(start + b * per_item(i) + c);
          start += items * per_item(i);
        }
      }
      ir::Node select;
      select.op = ir::Select{std::move(regroup), 0};
      select.operands = {id};
      select.loc = node.loc;
      ir::NodeId added = g.add(std::move(select));
      ir::replace_uses(g, id, added);
      g.node(added).operands = {id};  // replace_uses pointed it at itself
      regrouped[added] = id;
    }
  }
  return true;
}

}  // namespace

std::optional<WideBatch> widen_batch(const ir::Graph& graph, const std::vector<BatchItem>& items,
                                     DiagnosticEngine& diags) {
  if (items.empty()) {
    diags.error({}, "a batch needs at least one item", "fxc-batch");
    return std::nullopt;
  }
  const std::size_t inputs = graph.inputs().size();
  std::size_t longest = 0;
  for (std::size_t b = 0; b < items.size(); ++b) {
    if (items[b].size() != inputs) {
      diags.error({}, "batch item " + std::to_string(b) + " (counting from 0) has " + std::to_string(items[b].size()) +
                          " signal(s) for a graph of " + std::to_string(inputs) + " input(s)", "fxc-batch");
      return std::nullopt;
    }
    for (std::size_t i = 0; i < inputs; ++i) {
      if (items[b][i].channels() != items[0][i].channels() || items[b][i].samples() != items[b][0].samples()) {
        diags.error({}, "batch item " + std::to_string(b) + " does not match the first (item 0): every item needs the same channel counts, and one length for all its inputs", "fxc-batch");
        return std::nullopt;
      }
    }
    longest = std::max(longest, items[b][0].samples());
  }

  // The graph bound to one item's channel counts (declared counts are checked here), then
  // widened to the whole batch's.
  std::optional<ir::Graph> bound = bind_inputs(graph, items[0], diags);
  if (!bound) return std::nullopt;
  if (!widen_routing(*bound, static_cast<int>(items.size()), diags)) return std::nullopt;
  std::vector<ir::NodeId> input_ids = bound->inputs();
  for (std::size_t i = 0; i < inputs; ++i)
    bound->node(input_ids[i]).type.channels *= static_cast<int>(items.size());
  return WideBatch{std::move(*bound), longest};
}

std::vector<Signal> lay_out_batch(const std::vector<BatchItem>& items, std::size_t longest, DType dtype) {
  std::vector<Signal> wide;
  if (items.empty()) return wide;
  for (std::size_t i = 0; i < items[0].size(); ++i) {
    std::size_t channels = items[0][i].channels();
    Signal s(channels * items.size(), longest, dtype, Signal::Uninitialized{});
    for (std::size_t b = 0; b < items.size(); ++b) {
      std::optional<Signal> converted;
      if (items[b][i].dtype() != dtype) converted = items[b][i].converted(dtype);
      const Signal& item = converted ? *converted : items[b][i];
      for (std::size_t c = 0; c < channels; ++c) {
        if (dtype == DType::f32) {
          auto to = s.f32(b * channels + c);
          std::fill(std::ranges::copy(item.f32(c), to.begin()).out, to.end(), 0.0f);  // padding
        } else {
          auto to = s.f64(b * channels + c);
          std::fill(std::ranges::copy(item.f64(c), to.begin()).out, to.end(), 0.0);
        }
      }
    }
    wide.push_back(std::move(s));
  }
  return wide;
}

std::vector<std::vector<Signal>> split_batch(const std::vector<Signal>& wide, const std::vector<BatchItem>& items) {
  std::vector<std::vector<Signal>> results;
  for (std::size_t b = 0; b < items.size(); ++b) {
    std::vector<Signal> mine;
    std::size_t length = items[b].empty() ? 0 : items[b][0].samples();
    for (const Signal& o : wide) {
      std::size_t channels = o.channels() / items.size();
      Signal s(channels, length, o.dtype(), Signal::Uninitialized{});
      for (std::size_t c = 0; c < channels; ++c) {
        if (o.dtype() == DType::f32) std::copy_n(o.f32(b * channels + c).begin(), length, s.f32(c).begin());
        else std::copy_n(o.f64(b * channels + c).begin(), length, s.f64(c).begin());
      }
      mine.push_back(std::move(s));
    }
    results.push_back(std::move(mine));
  }
  return results;
}

Expected<std::vector<std::vector<Signal>>, std::string> execute_cpu_batch(const ir::Graph& scheduled,
                                                                          const codegen::CpuKernels& kernels,
                                                                          const std::vector<BatchItem>& items,
                                                                          std::size_t longest) {
  if (items.empty()) return std::vector<std::vector<Signal>>{};
  // The wide graph's channel pointers point straight into the items' signals: no lay-out or
  // split copies. Only an item shorter than the longest, or of another dtype, goes through a
  // padded copy (its output through a scratch signal cut back to its length).
  std::vector<ir::NodeId> output_ids = scheduled.outputs();
  const DType dtype = output_ids.empty() ? DType::f32 : scheduled.node(output_ids[0]).type.dtype;
  const std::size_t inputs = items[0].size();
  std::vector<std::vector<Signal>> results(items.size());
  std::vector<Signal> padded_in, scratch_out;  // stable addresses: reserved below
  padded_in.reserve(items.size() * inputs);
  scratch_out.reserve(items.size() * output_ids.size());
  std::vector<std::vector<const void*>> in_channels(inputs);
  std::vector<std::vector<void*>> out_channels(output_ids.size());
  struct Cut {
    std::size_t item, output, scratch;
  };
  std::vector<Cut> cuts;
  for (std::size_t b = 0; b < items.size(); ++b) {
    std::size_t length = items[b][0].samples();
    bool direct = length == longest;
    for (std::size_t i = 0; i < inputs; ++i) {
      const Signal* in = &items[b][i];
      if (!direct || in->dtype() != dtype) {
        Signal& p = padded_in.emplace_back(in->channels(), longest, dtype);  // zeros: the padding
        Signal converted = in->dtype() == dtype ? Signal() : in->converted(dtype);
        const Signal& from = in->dtype() == dtype ? *in : converted;
        for (std::size_t c = 0; c < from.channels(); ++c) {
          if (dtype == DType::f32) std::ranges::copy(from.f32(c), p.f32(c).begin());
          else std::ranges::copy(from.f64(c), p.f64(c).begin());
        }
        in = &p;
      }
      for (std::size_t c = 0; c < in->channels(); ++c)
        in_channels[i].push_back(dtype == DType::f32 ? static_cast<const void*>(in->f32(c).data())
                                                     : static_cast<const void*>(in->f64(c).data()));
    }
    for (std::size_t k = 0; k < output_ids.size(); ++k) {
      auto channels = static_cast<std::size_t>(scheduled.node(output_ids[k]).type.channels) / items.size();
      Signal& out = results[b].emplace_back(channels, length, dtype, Signal::Uninitialized{});
      Signal* target = &out;
      if (!direct) {
        cuts.push_back({b, k, scratch_out.size()});
        target = &scratch_out.emplace_back(channels, longest, dtype, Signal::Uninitialized{});
      }
      for (std::size_t c = 0; c < channels; ++c)
        out_channels[k].push_back(dtype == DType::f32 ? static_cast<void*>(target->f32(c).data())
                                                      : static_cast<void*>(target->f64(c).data()));
    }
  }
  std::vector<const void* const*> in_arrays;
  for (auto& a : in_channels) in_arrays.push_back(a.data());
  std::vector<void* const*> out_arrays;
  for (auto& a : out_channels) out_arrays.push_back(a.data());
  auto done = execute_cpu_into(scheduled, kernels, in_arrays, out_arrays, longest);
  if (!done) return Unexpected{done.error()};
  for (const Cut& cut : cuts) {
    Signal& out = results[cut.item][cut.output];
    const Signal& full = scratch_out[cut.scratch];
    for (std::size_t c = 0; c < out.channels(); ++c) {
      if (dtype == DType::f32) std::copy_n(full.f32(c).begin(), out.samples(), out.f32(c).begin());
      else std::copy_n(full.f64(c).begin(), out.samples(), out.f64(c).begin());
    }
  }
  return results;
}

}  // namespace fxc
