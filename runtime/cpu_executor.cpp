#include "runtime/cpu_executor.h"

#include <algorithm>
#include <optional>

#include "codegen/chain_layout.h"
#include "ir/graph_algorithms.h"
#include "ir/hash.h"
#include "passes/target.h"
#include "runtime/chunked_scan.h"
#include "runtime/counters.h"
#include "runtime/fft_convolution.h"
#include "support/trace.h"

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

// A chain's values and memory, kept from one block to the next.
template <class T>
struct ChainState {
  using Sample = T;
  bool ready = false;
  std::vector<T> params;                     // coefficients in kernel layout, as T
  std::vector<std::int64_t> delay_lengths;
  std::vector<T> state;                      // [channel][state_per_channel]
  std::vector<std::int64_t> positions;       // [channel][delays + firs]
  std::vector<std::vector<T>> lines;         // [channel * delays + k]
  std::vector<void*> line_ptrs;
  std::vector<std::vector<float>> fft_history;  // [channel], FFT FIR chains only
};

template <class T>
struct GraphState {
  std::vector<ChainState<T>> chains;  // by node id
};

}  // namespace

struct StreamState {
  std::variant<GraphState<float>, GraphState<double>> graph;
};

namespace {

// Buffers: a node's value is either a caller's input (read in place when its dtype already
// matches) or a buffer the executor owns. A chain whose operand is an owned buffer that no
// one else reads runs in place on it, and an output takes its operand's buffer when it is the
// only reader: each run touches as little fresh memory as the graph allows.
template <class T>
class Executor {
 public:
  Executor(const ir::Graph& g, const codegen::CpuKernels& k, DType dtype, GraphState<T>& state)
      : g_(g), kernels_(k), dtype_(dtype), state_(state), owned_(g.size()), view_(g.size(), nullptr),
        readers_(g.size(), 0) {
    for (const ir::Node& node : g.nodes())
      for (ir::NodeId operand : node.operands) ++readers_[operand];
    state_.chains.resize(g.size());
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
        std::string error = run_sum(id, *sum);
        if (!error.empty()) return Unexpected{error};
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
  ChainState<T>& prepare(ir::NodeId id, const ir::Chain& chain, std::size_t channels) {
    ChainState<T>& s = state_.chains[id];
    if (s.ready) return s;
    codegen::ChainLayout layout = codegen::layout_of(chain);
    codegen::ChainValues values = codegen::values_of(chain);
    s.params.assign(values.params.begin(), values.params.end());
    s.delay_lengths = values.delay_lengths;
    s.state.assign(channels * layout.state_per_channel, T(0));
    s.positions.assign(channels * layout.positions_per_channel(), 0);
    s.lines.clear();
    for (std::size_t c = 0; c < channels; ++c)
      for (std::int64_t length : s.delay_lengths)
        s.lines.emplace_back(std::max<std::int64_t>(length, 1), T(0));  // a 0 delay has a cell
    s.line_ptrs.clear();
    for (auto& line : s.lines) s.line_ptrs.push_back(line.data());
    s.fft_history.assign(channels, {});
    s.ready = true;
    return s;
  }

  std::string run_chain(ir::NodeId id, const ir::Chain& chain) {
    ir::NodeId operand = g_.node(id).operands[0];
    const Signal& in = *view_[operand];
    std::size_t channels = in.channels(), samples = in.samples();
    std::optional<TraceSpan> span;
    if (Trace::global().enabled())
      span.emplace("kernel %" + std::to_string(id), "kernels",
                   Trace::Args{{"graph", g_.name},
                               {"channels", std::to_string(channels)},
                               {"samples", std::to_string(samples)},
                               {"strategy", std::string(ir::name(chain.strategy))},
                               {"stages", std::to_string(chain.stages.size())}});
    ChainState<T>& s = prepare(id, chain, channels);
    // In place when this chain is the operand's last reader and the buffer is ours.
    bool in_place = owned_[operand] && readers_[operand] == 1;
    Signal out = in_place ? std::move(*owned_[operand])
                          : Signal(channels, samples, dtype_, Signal::Uninitialized{});
    const Signal& source = in_place ? out : in;

    if (codegen::runs_in_runtime(chain)) {
      if constexpr (!std::is_same_v<T, float>) {
        return "internal error (a bug in fxc): FFT convolution scheduled for a float64 chain";
      } else {
        const auto& taps = std::get<ir::FirFilter>(chain.stages[0]).taps;
        for (std::size_t c = 0; c < channels; ++c)
          fft_convolve(taps, source.f32(c), out.f32(c), chain.fft_block, s.fft_history[c]);
      }
    } else {
      FxcChainKernel kernel = kernels_.kernel(id);
      if (!kernel) return "internal error (a bug in fxc): no kernel for chain %" + std::to_string(id);
      FlushDenormals ftz;
      if (chain.strategy == ir::IirStrategy::chunked_scan && chunked_scan_applies(chain)) {
        run_chunked_scan(chain, kernel, source, out, s.state.data(),
                         passes::host_target().lanes(dtype_), passes::host_target().cores);
      } else {
        in_ptrs_.resize(channels);
        out_ptrs_.resize(channels);
        for (std::size_t c = 0; c < channels; ++c) {
          in_ptrs_[c] = channel<T>(source, c).data();
          out_ptrs_[c] = channel<T>(out, c).data();
        }
        FxcChainArgs args{in_ptrs_.data(),         out_ptrs_.data(),
                          static_cast<std::int64_t>(channels), static_cast<std::int64_t>(samples),
                          s.params.data(),          s.delay_lengths.data(),
                          s.state.data(),           s.line_ptrs.data(),
                          s.positions.data()};
        kernel(&args);
      }
    }
    ++counters().dispatches;
    set(id, std::move(out));
    return {};
  }

  std::string run_sum(ir::NodeId id, const ir::Sum& sum) {
    FxcChainKernel kernel = kernels_.kernel(id);
    if (!kernel) return "internal error (a bug in fxc): no kernel for sum %" + std::to_string(id);
    const ir::Node& node = g_.node(id);
    const Signal& first = *view_[node.operands[0]];
    std::size_t channels = first.channels();
    // The result may take over the first operand's buffer when no one else reads it.
    ir::NodeId head = node.operands[0];
    bool in_place = owned_[head] && readers_[head] == 1;
    std::optional<Signal> reused;
    if (in_place) reused = std::move(*owned_[head]);
    Signal out = in_place ? std::move(*reused)
                          : Signal(channels, first.samples(), dtype_, Signal::Uninitialized{});
    in_ptrs_.assign(node.operands.size() * channels, nullptr);
    for (std::size_t i = 0; i < node.operands.size(); ++i) {
      const Signal& in = in_place && i == 0 ? out : *view_[node.operands[i]];
      for (std::size_t c = 0; c < channels; ++c) in_ptrs_[i * channels + c] = channel<T>(in, c).data();
    }
    out_ptrs_.resize(channels);
    for (std::size_t c = 0; c < channels; ++c) out_ptrs_[c] = channel<T>(out, c).data();
    std::vector<T> weights(sum.weights.begin(), sum.weights.end());
    FxcChainArgs args{in_ptrs_.data(), out_ptrs_.data(), static_cast<std::int64_t>(channels),
                      static_cast<std::int64_t>(first.samples()), weights.data(), nullptr, nullptr,
                      nullptr, nullptr};
    {
      FlushDenormals ftz;
      kernel(&args);
    }
    ++counters().dispatches;
    set(id, std::move(out));
    return {};
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
  GraphState<T>& state_;
  std::vector<std::optional<Signal>> owned_;
  std::vector<const Signal*> view_;
  std::vector<int> readers_;  // how many operand slots read each node
  std::vector<const void*> in_ptrs_;
  std::vector<void*> out_ptrs_;
};

DType dtype_of(const ir::Graph& g) {
  std::vector<ir::NodeId> ids = g.inputs();
  return ids.empty() ? DType::f64 : g.node(ids[0]).type.dtype;
}

StreamState fresh_state(DType dtype) {
  if (dtype == DType::f32) return {GraphState<float>{}};
  return {GraphState<double>{}};
}

Expected<std::vector<Signal>, std::string> run_with(const ir::Graph& g, const codegen::CpuKernels& k,
                                                    StreamState& state, std::span<const Signal> inputs) {
  return std::visit(
      [&](auto& graph_state) {
        using T = typename std::decay_t<decltype(graph_state.chains)>::value_type::Sample;
        return Executor<T>(g, k, dtype_of(g), graph_state).run(inputs);
      },
      state.graph);
}

}  // namespace

Expected<std::vector<Signal>, std::string> execute_cpu(const ir::Graph& scheduled,
                                                       const codegen::CpuKernels& kernels,
                                                       std::span<const Signal> inputs) {
  StreamState state = fresh_state(dtype_of(scheduled));
  return run_with(scheduled, kernels, state, inputs);
}

CpuStream::CpuStream(ir::Graph scheduled, std::shared_ptr<const codegen::CpuKernels> kernels)
    : scheduled_(std::move(scheduled)),
      kernels_(std::move(kernels)),
      state_(std::make_unique<StreamState>(fresh_state(dtype_of(scheduled_)))) {}
CpuStream::~CpuStream() = default;
CpuStream::CpuStream(CpuStream&&) noexcept = default;
CpuStream& CpuStream::operator=(CpuStream&&) noexcept = default;

Expected<std::vector<Signal>, std::string> CpuStream::process(std::span<const Signal> block) {
  return run_with(scheduled_, *kernels_, *state_, block);
}

void CpuStream::reset() { *state_ = fresh_state(dtype_of(scheduled_)); }

std::shared_ptr<const StreamState> CpuStream::snapshot() const {
  return std::make_shared<const StreamState>(*state_);
}

void CpuStream::restore(const StreamState& state) { *state_ = state; }

Expected<std::monostate, std::string> CpuStream::update_values(const ir::Graph& scheduled) {
  if (ir::structural_hash(scheduled) != ir::structural_hash(scheduled_))
    return Unexpected{std::string(
        "the new graph has another shape (stages, orders, channels or strategy): compile it as "
        "a new stream")};
  scheduled_ = scheduled;
  std::visit(
      [&](auto& graph_state) {
        for (ir::NodeId id = 0; id < graph_state.chains.size() && id < scheduled_.size(); ++id) {
          auto& chain_state = graph_state.chains[id];
          auto* chain = std::get_if<ir::Chain>(&scheduled_.node(id).op);
          if (!chain_state.ready || !chain) continue;
          codegen::ChainValues values = codegen::values_of(*chain);
          chain_state.params.assign(values.params.begin(), values.params.end());
          // A delay whose length changes restarts its line (zeros): the old samples no longer
          // fit. The sections keep their state, so filters do not click.
          if (values.delay_lengths != chain_state.delay_lengths) {
            std::size_t delays = values.delay_lengths.size();
            std::size_t channels = delays ? chain_state.lines.size() / delays : 0;
            std::size_t per_channel = chain_state.delay_lengths.size() +
                                      (channels ? chain_state.positions.size() / channels : 0) -
                                      chain_state.delay_lengths.size();
            chain_state.delay_lengths = values.delay_lengths;
            for (std::size_t c = 0; c < channels; ++c)
              for (std::size_t k = 0; k < delays; ++k) {
                auto& line = chain_state.lines[c * delays + k];
                line.assign(std::max<std::int64_t>(values.delay_lengths[k], 1), 0);
                chain_state.line_ptrs[c * delays + k] = line.data();
                chain_state.positions[c * per_channel + k] = 0;
              }
          }
        }
      },
      state_->graph);
  return std::monostate{};
}

}  // namespace fxc
