#include "runtime/batch.h"

#include <algorithm>
#include <optional>

#include "runtime/bind_inputs.h"
#include "runtime/cpu_executor.h"

namespace fxc {

std::optional<std::vector<std::vector<Signal>>> run_batch(const ir::Graph& graph,
                                                          const std::vector<BatchItem>& items,
                                                          CpuCompileRequest request,
                                                          DiagnosticEngine& diags) {
  std::vector<std::vector<Signal>> results;
  if (items.empty()) return results;
  const std::size_t inputs = graph.inputs().size();
  std::size_t longest = 0;
  for (std::size_t b = 0; b < items.size(); ++b) {
    if (items[b].size() != inputs) {
      diags.error({}, "batch item " + std::to_string(b) + " has " + std::to_string(items[b].size()) +
                          " signal(s) for a graph of " + std::to_string(inputs) + " input(s)", "fxc-batch");
      return std::nullopt;
    }
    for (std::size_t i = 0; i < inputs; ++i) {
      if (items[b][i].channels() != items[0][i].channels() || items[b][i].samples() != items[b][0].samples()) {
        diags.error({}, "batch item " + std::to_string(b) + " does not match the first: every item needs the same channel counts, and one length for all its inputs", "fxc-batch");
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
  request.length_samples = static_cast<std::int64_t>(longest);
  request.batch = 1;  // the channels are already multiplied out
  std::optional<CompiledCpuGraph> compiled = compile_for_cpu(*bound, request, diags);
  if (!compiled) return std::nullopt;

  std::vector<Signal> wide;
  for (std::size_t i = 0; i < inputs; ++i) {
    std::size_t channels = items[0][i].channels();
    Signal s(channels * items.size(), longest, request.dtype, Signal::Uninitialized{});
    for (std::size_t b = 0; b < items.size(); ++b) {
      std::optional<Signal> converted;
      if (items[b][i].dtype() != request.dtype) converted = items[b][i].converted(request.dtype);
      const Signal& item = converted ? *converted : items[b][i];
      for (std::size_t c = 0; c < channels; ++c) {
        if (request.dtype == DType::f32) {
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
  auto out = execute_cpu(compiled->scheduled, *compiled->kernels, wide);
  if (!out) {
    diags.error({}, out.error(), "fxc-batch");
    return std::nullopt;
  }
  for (std::size_t b = 0; b < items.size(); ++b) {
    std::vector<Signal> mine;
    std::size_t length = items[b][0].samples();
    for (const Signal& o : *out) {
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

}  // namespace fxc
