#include "runtime/cpu_executor.h"

#include <algorithm>
#include <optional>

#include "codegen/chain_layout.h"
#include "ir/graph_algorithms.h"
#include "passes/target.h"
#include "runtime/chunked_scan.h"
#include "runtime/counters.h"
#include "runtime/fft_convolution.h"

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

// Buffers: a node's value is either a caller's input (read in place when its dtype already
// matches) or a buffer the executor owns. A chain whose operand is an owned buffer that no
// one else reads runs in place on it, and an output takes its operand's buffer when it is the
// only reader: each run touches as little fresh memory as the graph allows.
template <class T>
class Executor {
 public:
  Executor(const ir::Graph& g, const codegen::CpuKernels& k, DType dtype)
      : g_(g), kernels_(k), dtype_(dtype), owned_(g.size()), view_(g.size(), nullptr),
        readers_(g.size(), 0) {
    for (const ir::Node& node : g.nodes())
      for (ir::NodeId operand : node.operands) ++readers_[operand];
  }

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
      if (inputs[i].dtype() == dtype_) {
        view_[input_ids[i]] = &inputs[i];
      } else {
        owned_[input_ids[i]] = inputs[i].converted(dtype_);
        view_[input_ids[i]] = &*owned_[input_ids[i]];
      }
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
        set(id, take_or_copy(node.operands[0]));
      } else {
        return Unexpected{"internal error (a bug in fxc): node %" + std::to_string(id) + " (" +
                          std::string(ir::kind_name(node.op)) + ") was not scheduled into a kernel"};
      }
    }
    std::vector<Signal> out;
    for (ir::NodeId id : g_.outputs()) out.push_back(std::move(*owned_[id]));
    return out;
  }

 private:
  std::string run_chain(ir::NodeId id, const ir::Chain& chain) {
    if (codegen::runs_in_runtime(chain)) return run_fft_fir(id, chain);
    FxcChainKernel kernel = kernels_.kernel(id);
    if (!kernel) return "internal error (a bug in fxc): no kernel for chain %" + std::to_string(id);
    ir::NodeId operand = g_.node(id).operands[0];
    const Signal& in = *view_[operand];
    std::size_t channels = in.channels(), samples = in.samples();
    // In place when this chain is the operand's last reader and the buffer is ours.
    bool in_place = owned_[operand] && readers_[operand] == 1;
    Signal out = in_place ? std::move(*owned_[operand])
                          : Signal(channels, samples, dtype_, Signal::Uninitialized{});
    const Signal& source = in_place ? out : in;

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
      in_ptrs[c] = channel<T>(source, c).data();
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
      if (chain.strategy == ir::IirStrategy::chunked_scan && chunked_scan_applies(chain))
        run_chunked_scan(chain, kernel, source, out, passes::host_target().lanes(dtype_),
                         passes::host_target().cores);
      else
        kernel(&args);
    }
    ++counters().dispatches;
    set(id, std::move(out));
    return {};
  }

  // A lone long FIR, by FFT overlap-save (float32; select_strategy picks it only then).
  std::string run_fft_fir(ir::NodeId id, const ir::Chain& chain) {
    if constexpr (!std::is_same_v<T, float>) {
      return "internal error (a bug in fxc): FFT convolution scheduled for a float64 chain";
    } else {
      ir::NodeId operand = g_.node(id).operands[0];
      const Signal& in = *view_[operand];
      bool in_place = owned_[operand] && readers_[operand] == 1;
      Signal out = in_place ? std::move(*owned_[operand])
                            : Signal(in.channels(), in.samples(), dtype_, Signal::Uninitialized{});
      const Signal& source = in_place ? out : in;
      const auto& taps = std::get<ir::FirFilter>(chain.stages[0]).taps;
      for (std::size_t c = 0; c < out.channels(); ++c)
        fft_convolve(taps, source.f32(c), out.f32(c), chain.fft_block);
      ++counters().dispatches;
      set(id, std::move(out));
      return {};
    }
  }

  void run_sum(ir::NodeId id, const ir::Sum& sum) {
    const ir::Node& node = g_.node(id);
    const Signal& first = *view_[node.operands[0]];
    Signal out(first.channels(), first.samples(), dtype_);
    for (std::size_t i = 0; i < node.operands.size(); ++i) {
      const Signal& in = *view_[node.operands[i]];
      T w = static_cast<T>(sum.weights[i]);
      for (std::size_t c = 0; c < out.channels(); ++c) {
        std::span<T> o = channel<T>(out, c);
        std::span<const T> x = channel<T>(in, c);
        for (std::size_t n = 0; n < o.size(); ++n) o[n] += w * x[n];
      }
    }
    set(id, std::move(out));
  }

  void set(ir::NodeId id, Signal value) {
    owned_[id] = std::move(value);
    view_[id] = &*owned_[id];
  }

  // The operand's buffer, moved when this is its only reader and it is ours, else a copy.
  Signal take_or_copy(ir::NodeId operand) {
    if (owned_[operand] && readers_[operand] == 1) return std::move(*owned_[operand]);
    return *view_[operand];
  }

  const ir::Graph& g_;
  const codegen::CpuKernels& kernels_;
  DType dtype_;
  std::vector<std::optional<Signal>> owned_;
  std::vector<const Signal*> view_;
  std::vector<int> readers_;  // how many operand slots read each node
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
