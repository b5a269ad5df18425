#include "runtime/cpu_executor.h"

#include <algorithm>

#include "codegen/chain_layout.h"
#include "ir/graph_algorithms.h"
#include "runtime/counters.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace fxc {
namespace {

// Denormal operands make x86 FP units take microcode assists, 100x slower; in audio they are
// inaudible, so kernels run with FTZ and DAZ. The caller's mode is restored afterwards.
class FlushDenormals {
 public:
#if defined(__x86_64__) || defined(__i386__)
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040); }
  ~FlushDenormals() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

template <class T>
std::span<T> channel(Signal& s, std::size_t c) {
  if constexpr (std::is_same_v<T, float>) return s.f32(c);
  else return s.f64(c);
}
template <class T>
std::span<const T> channel(const Signal& s, std::size_t c) {
  if constexpr (std::is_same_v<T, float>) return s.f32(c);
  else return s.f64(c);
}

template <class T>
class Executor {
 public:
  Executor(const ir::Graph& g, const codegen::CpuKernels& k, DType dtype)
      : g_(g), kernels_(k), dtype_(dtype), values_(g.size()) {}

  Expected<std::vector<Signal>, std::string> run(std::span<const Signal> inputs) {
    std::vector<ir::NodeId> input_ids = g_.inputs();
    if (inputs.size() != input_ids.size())
      return Unexpected{"the graph has " + std::to_string(input_ids.size()) + " input(s), got " +
                        std::to_string(inputs.size()) + " signal(s)"};
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      int declared = g_.node(input_ids[i]).type.channels;
      if (declared != static_cast<int>(inputs[i].channels()) ||
          inputs[i].samples() != inputs[0].samples())
        return Unexpected{"input " + std::to_string(i) + " does not match the bound graph (" +
                          std::to_string(declared) + " channels, " +
                          std::to_string(inputs[0].samples()) + " samples)"};
      values_[input_ids[i]] = inputs[i].converted(dtype_);
    }
    auto order = ir::topological_order(g_);
    if (!order) return Unexpected{std::string("the graph has a cycle")};
    for (ir::NodeId id : *order) {
      const ir::Node& node = g_.node(id);
      if (ir::holds<ir::Input>(node)) continue;
      if (auto* chain = std::get_if<ir::Chain>(&node.op)) {
        std::string error = run_chain(id, *chain);
        if (!error.empty()) return Unexpected{error};
      } else if (auto* sum = std::get_if<ir::Sum>(&node.op)) {
        run_sum(id, *sum);
      } else if (ir::holds<ir::Output>(node)) {
        values_[id] = values_[node.operands[0]];
      } else {
        return Unexpected{"internal error (a bug in fxc): node %" + std::to_string(id) + " (" +
                          std::string(ir::kind_name(node.op)) + ") was not scheduled into a kernel"};
      }
    }
    std::vector<Signal> out;
    for (ir::NodeId id : g_.outputs()) out.push_back(std::move(values_[id]));
    return out;
  }

 private:
  std::string run_chain(ir::NodeId id, const ir::Chain& chain) {
    FxcChainKernel kernel = kernels_.kernel(id);
    if (!kernel) return "internal error (a bug in fxc): no kernel for chain %" + std::to_string(id);
    const Signal& in = values_[g_.node(id).operands[0]];
    std::size_t channels = in.channels(), samples = in.samples();
    Signal out(channels, samples, dtype_);

    codegen::ChainLayout layout = codegen::layout_of(chain);
    codegen::ChainValues values = codegen::values_of(chain);
    std::vector<T> params(values.params.begin(), values.params.end());
    std::vector<T> state(channels * layout.state_per_channel, T(0));
    std::vector<std::int64_t> positions(channels * layout.positions_per_channel(), 0);
    std::vector<std::vector<T>> lines;
    std::vector<void*> line_ptrs;
    for (std::size_t c = 0; c < channels; ++c)
      for (std::int64_t length : values.delay_lengths) {
        lines.emplace_back(std::max<std::int64_t>(length, 1), T(0));  // a 0 delay still has a cell
        line_ptrs.push_back(lines.back().data());
      }
    std::vector<const void*> in_ptrs(channels);
    std::vector<void*> out_ptrs(channels);
    for (std::size_t c = 0; c < channels; ++c) {
      in_ptrs[c] = channel<T>(in, c).data();
      out_ptrs[c] = channel<T>(out, c).data();
    }
    FxcChainArgs args{in_ptrs.data(),
                      out_ptrs.data(),
                      static_cast<std::int64_t>(channels),
                      static_cast<std::int64_t>(samples),
                      params.data(),
                      values.delay_lengths.data(),
                      state.data(),
                      line_ptrs.data(),
                      positions.data()};
    {
      FlushDenormals ftz;
      kernel(&args);
    }
    ++counters().dispatches;
    values_[id] = std::move(out);
    return {};
  }

  void run_sum(ir::NodeId id, const ir::Sum& sum) {
    const ir::Node& node = g_.node(id);
    const Signal& first = values_[node.operands[0]];
    Signal out(first.channels(), first.samples(), dtype_);
    for (std::size_t i = 0; i < node.operands.size(); ++i) {
      const Signal& in = values_[node.operands[i]];
      T w = static_cast<T>(sum.weights[i]);
      for (std::size_t c = 0; c < out.channels(); ++c) {
        std::span<T> o = channel<T>(out, c);
        std::span<const T> x = channel<T>(in, c);
        for (std::size_t n = 0; n < o.size(); ++n) o[n] += w * x[n];
      }
    }
    values_[id] = std::move(out);
  }

  const ir::Graph& g_;
  const codegen::CpuKernels& kernels_;
  DType dtype_;
  std::vector<Signal> values_;
};

}  // namespace

Expected<std::vector<Signal>, std::string> execute_cpu(const ir::Graph& scheduled,
                                                       const codegen::CpuKernels& kernels,
                                                       std::span<const Signal> inputs) {
  std::vector<ir::NodeId> ids = scheduled.inputs();
  DType dtype = ids.empty() ? DType::f64 : scheduled.node(ids[0]).type.dtype;
  if (dtype == DType::f32) return Executor<float>(scheduled, kernels, dtype).run(inputs);
  return Executor<double>(scheduled, kernels, dtype).run(inputs);
}

}  // namespace fxc
