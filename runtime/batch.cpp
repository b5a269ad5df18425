// SPDX-License-Identifier: Apache-2.0
#include "runtime/batch.h"

#include <algorithm>
#include <optional>

#include "runtime/bind_inputs.h"
#include "runtime/cpu_executor.h"

namespace fxc {

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

std::optional<std::vector<std::vector<Signal>>> run_batch(const ir::Graph& graph,
                                                          const std::vector<BatchItem>& items,
                                                          CpuCompileRequest request,
                                                          DiagnosticEngine& diags) {
  if (items.empty()) return std::vector<std::vector<Signal>>{};
  std::optional<WideBatch> wide = widen_batch(graph, items, diags);
  if (!wide) return std::nullopt;
  request.length_samples = static_cast<std::int64_t>(wide->longest);
  request.batch = 1;  // the channels are already multiplied out
  std::optional<CompiledCpuGraph> compiled = compile_for_cpu(wide->graph, request, diags);
  if (!compiled) return std::nullopt;
  auto out = execute_cpu(compiled->scheduled, *compiled->kernels, lay_out_batch(items, wide->longest, request.dtype));
  if (!out) {
    diags.error({}, out.error(), "fxc-batch");
    return std::nullopt;
  }
  return split_batch(*out, items);
}

}  // namespace fxc
