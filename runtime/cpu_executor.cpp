// SPDX-License-Identifier: Apache-2.0
#include "runtime/cpu_executor.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "codegen/chain_layout.h"
#include "ir/graph_algorithms.h"
#include "ir/hash.h"
#include "passes/target.h"
#include "runtime/chunked_scan.h"
#include "runtime/counters.h"
#include "runtime/fft_convolution.h"
#include "support/sha256.h"
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

// A chain's values and memory, kept from one block to the next, in the chain's compute type
// C (codegen::compute_dtype). Plain values only, so a copy is a snapshot.
template <class C>
struct ChainState {
  bool ready = false;
  std::vector<C> params;                     // coefficients in kernel layout, as C
  std::vector<std::int64_t> delay_lengths;
  std::vector<C> state;                      // [channel][state_per_channel]
  std::vector<std::int64_t> positions;       // [channel][delays + firs]
  std::vector<std::vector<C>> lines;         // [channel * delays + k]
  std::vector<std::vector<float>> fft_history;  // [channel], FFT FIR chains only
};

// T: the graph's signal type.
template <class T>
struct GraphState {
  using Sample = T;
  std::vector<ChainState<T>> chains;  // by node id
  // By node id: the chains of a float32 graph that compute in float64 (StatePrecision::f64).
  std::vector<ChainState<double>> wide_chains;

  template <class C>
  std::vector<ChainState<C>>& of() {
    if constexpr (std::is_same_v<C, T>) return chains;
    else return wide_chains;
  }
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
    if constexpr (std::is_same_v<T, float>) state_.wide_chains.resize(g.size());
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
  template <class C>
  ChainState<C>& prepare(ir::NodeId id, const ir::Chain& chain, std::size_t channels) {
    ChainState<C>& s = state_.template of<C>()[id];
    if (s.ready) return s;
    codegen::ChainLayout layout = codegen::layout_of(chain);
    codegen::ChainValues values = codegen::values_of(chain);
    s.params.assign(values.params.begin(), values.params.end());
    s.delay_lengths = values.delay_lengths;
    s.state.assign(channels * layout.state_per_channel, C(0));
    s.positions.assign(channels * layout.positions_per_channel(), 0);
    // One cell each to start with (a 0 delay has one): grow_delay_lines sizes them per call.
    s.lines.assign(channels * s.delay_lengths.size(), std::vector<C>(1, C(0)));
    s.fft_history.assign(channels, {});
    s.ready = true;
    return s;
  }

  // A delay line holds what it can have seen, not its whole length: before a call of
  // `samples` samples a ring that has not wrapped yet grows to min(length, position + samples
  // + 1) cells (new cells are zeros, as the line starts). The kernel wraps at the delay's
  // length, which such a ring never reaches, so a delay longer than the signal costs the
  // signal's length, not the delay's.
  template <class C>
  static void grow_delay_lines(ChainState<C>& s, std::size_t samples) {
    std::size_t delays = s.delay_lengths.size();
    if (delays == 0 || s.lines.empty()) return;
    std::size_t channels = s.lines.size() / delays;
    std::size_t per_channel = s.positions.size() / channels;
    for (std::size_t c = 0; c < channels; ++c)
      for (std::size_t k = 0; k < delays; ++k) {
        std::vector<C>& line = s.lines[c * delays + k];
        std::int64_t length = std::max<std::int64_t>(s.delay_lengths[k], 1);
        std::int64_t seen = s.positions[c * per_channel + k];
        std::int64_t needed = std::min<std::int64_t>(length, seen + static_cast<std::int64_t>(samples) + 1);
        if (needed > static_cast<std::int64_t>(line.size())) line.resize(static_cast<std::size_t>(needed), C(0));
      }
  }

  std::string run_chain(ir::NodeId id, const ir::Chain& chain) {
    if constexpr (std::is_same_v<T, float>)
      if (codegen::compute_dtype(chain, dtype_) == DType::f64) return run_chain_as<double>(id, chain);
    return run_chain_as<T>(id, chain);
  }

  // C: the chain's compute type (coefficients, state, rings); T stays the signal's.
  template <class C>
  std::string run_chain_as(ir::NodeId id, const ir::Chain& chain) {
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
    ChainState<C>& s = prepare<C>(id, chain, channels);
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
                         passes::host_target().lanes(codegen::compute_dtype(chain, dtype_)),
                         passes::host_target().cores);
      } else {
        in_ptrs_.resize(channels);
        out_ptrs_.resize(channels);
        for (std::size_t c = 0; c < channels; ++c) {
          in_ptrs_[c] = channel<T>(source, c).data();
          out_ptrs_[c] = channel<T>(out, c).data();
        }
        grow_delay_lines(s, samples);
        line_ptrs_.clear();
        for (auto& line : s.lines) line_ptrs_.push_back(line.data());
        FxcChainArgs args{in_ptrs_.data(),         out_ptrs_.data(),
                          static_cast<std::int64_t>(channels), static_cast<std::int64_t>(samples),
                          s.params.data(),          s.delay_lengths.data(),
                          s.state.data(),           line_ptrs_.data(),
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
  std::vector<void*> line_ptrs_;
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
        using T = typename std::decay_t<decltype(graph_state)>::Sample;
        return Executor<T>(g, k, dtype_of(g), graph_state).run(inputs);
      },
      state.graph);
}

// ---- the state as bytes (CpuStream::save_state) ----
//
// "fxc stream state 1\n", "graph <structural hash>\n", "sha256 <of the body>\n", then the body:
// u8 signal dtype (0 f32, 1 f64); for each list (chains, then wide chains) a u64 count and per
// chain a u8 `ready`, then, when ready, the state, positions, delay lengths, delay lines and
// FFT histories as u64-counted arrays in host byte order. Coefficients are not saved: they
// come from the stream's graph.
constexpr std::string_view kStateMagic = "fxc stream state 1\n";

// The graph's structural hash without the IIR strategies: every strategy keeps a section's
// state in the same layout, and the strategy follows the length of one call, so a state saved
// by a run over a whole file loads into a stream of short blocks. The FIR method stays: a
// direct FIR keeps a ring, an FFT one a history.
std::string state_key(const ir::Graph& scheduled) {
  ir::Graph g = scheduled;
  for (ir::NodeId id = 0; id < g.size(); ++id)
    if (auto* chain = std::get_if<ir::Chain>(&g.node(id).op)) {
      chain->strategy = ir::IirStrategy::none;
      chain->chunk_length = 0;
    }
  return ir::structural_hash(g);
}

class StateWriter {
 public:
  void u8(std::uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  template <class V>
  void array(const std::vector<V>& v) {
    u64(v.size());
    raw(v.data(), v.size() * sizeof(V));
  }
  std::string& bytes() { return bytes_; }

 private:
  void raw(const void* p, std::size_t n) {
    if (n > 0) bytes_.append(static_cast<const char*>(p), n);
  }
  std::string bytes_;
};

class StateReader {
 public:
  explicit StateReader(std::string_view bytes) : rest_(bytes) {}
  bool u8(std::uint8_t& v) { return raw(&v, 1); }
  bool u64(std::uint64_t& v) { return raw(&v, sizeof v); }
  // Never allocates more than the bytes left can fill.
  template <class V>
  bool array(std::vector<V>& v) {
    std::uint64_t n = 0;
    if (!u64(n) || n > rest_.size() / sizeof(V)) return false;
    v.resize(n);
    return raw(v.data(), n * sizeof(V));
  }
  bool done() const { return rest_.empty(); }

 private:
  bool raw(void* p, std::size_t n) {
    if (rest_.size() < n) return false;
    if (n > 0) std::memcpy(p, rest_.data(), n);  // an empty vector's data() may be null
    rest_.remove_prefix(n);
    return true;
  }
  std::string_view rest_;
};

template <class C>
void write_chains(StateWriter& w, const std::vector<ChainState<C>>& chains) {
  w.u64(chains.size());
  for (const ChainState<C>& c : chains) {
    w.u8(c.ready ? 1 : 0);
    if (!c.ready) continue;
    w.array(c.state);
    w.array(c.positions);
    w.array(c.delay_lengths);
    w.u64(c.lines.size());
    for (const auto& line : c.lines) w.array(line);
    w.u64(c.fft_history.size());
    for (const auto& h : c.fft_history) w.array(h);
  }
}

// Reads the chains of one list and checks each against the graph, so that a damaged or
// foreign file cannot make a kernel read or write out of bounds.
template <class T, class C>
std::string read_chains(StateReader& r, const ir::Graph& g, std::vector<ChainState<C>>& chains) {
  std::uint64_t count = 0;
  if (!r.u64(count) || count > g.size()) return "the chain list is damaged";
  chains.assign(count, {});
  DType signal = std::is_same_v<T, float> ? DType::f32 : DType::f64;
  for (ir::NodeId id = 0; id < count; ++id) {
    ChainState<C>& c = chains[id];
    std::uint8_t ready = 0;
    if (!r.u8(ready) || ready > 1) return "the chain list is damaged";
    if (!ready) continue;
    std::uint64_t lines = 0, histories = 0;
    bool ok = r.array(c.state) && r.array(c.positions) && r.array(c.delay_lengths) && r.u64(lines) &&
              lines <= (std::uint64_t{1} << 32);
    for (std::uint64_t k = 0; ok && k < lines; ++k) ok = r.array(c.lines.emplace_back());
    ok = ok && r.u64(histories) && histories <= (std::uint64_t{1} << 32);
    for (std::uint64_t k = 0; ok && k < histories; ++k) ok = r.array(c.fft_history.emplace_back());
    if (!ok) return "node %" + std::to_string(id) + "'s state is truncated";
    const ir::Node& node = g.node(id);
    const auto* chain = std::get_if<ir::Chain>(&node.op);
    std::string where = "node %" + std::to_string(id) + "'s state ";
    bool wide = !std::is_same_v<C, T>;
    if (!chain || (codegen::compute_dtype(*chain, signal) == DType::f64 && !std::is_same_v<T, double>) != wide)
      return where + "belongs to no chain of this graph";
    codegen::ChainLayout layout = codegen::layout_of(*chain);
    codegen::ChainValues values = codegen::values_of(*chain);
    auto channels = static_cast<std::size_t>(node.type.channels);
    if (c.state.size() != channels * layout.state_per_channel ||
        c.positions.size() != channels * layout.positions_per_channel())
      return where + "has the wrong size for " + std::to_string(channels) + " channel(s)";
    if (c.delay_lengths != values.delay_lengths)
      return where + "was saved with other delay lengths";
    if (c.lines.size() != channels * values.delay_lengths.size()) return where + "has the wrong delay lines";
    for (std::size_t ch = 0; ch < channels; ++ch) {
      for (std::size_t k = 0; k < values.delay_lengths.size(); ++k) {
        auto length = static_cast<std::int64_t>(c.lines[ch * values.delay_lengths.size() + k].size());
        std::int64_t pos = c.positions[ch * layout.positions_per_channel() + k];
        // A line holds at most its delay's length; less while it has not wrapped yet
        // (grow_delay_lines), so its position is inside it either way.
        if (length < 1 || length > std::max<std::int64_t>(values.delay_lengths[k], 1) || pos < 0 || pos >= length)
          return where + "has a damaged delay line";
      }
      for (std::size_t s = 0; s < chain->stages.size(); ++s)
        if (const auto* fir = std::get_if<ir::FirFilter>(&chain->stages[s])) {
          std::int64_t pos = c.positions[ch * layout.positions_per_channel() + layout.delay_count +
                                         layout.stages[s].fir_index];
          if (pos < 0 || pos >= static_cast<std::int64_t>(fir->taps.size()))
            return where + "has a damaged FIR ring";
        }
    }
    if (!c.fft_history.empty() && c.fft_history.size() != channels) return where + "has damaged FFT history";
    if (codegen::runs_in_runtime(*chain))
      for (const auto& h : c.fft_history)
        if (!h.empty() && h.size() + 1 != std::get<ir::FirFilter>(chain->stages[0]).taps.size())
          return where + "has damaged FFT history";
    c.params.assign(values.params.begin(), values.params.end());
    if (c.fft_history.empty()) c.fft_history.assign(channels, {});
    c.ready = true;
  }
  return {};
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

std::string CpuStream::save_state() const {
  StateWriter body;
  std::visit(
      [&](const auto& graph_state) {
        using T = typename std::decay_t<decltype(graph_state)>::Sample;
        body.u8(std::is_same_v<T, float> ? 0 : 1);
        write_chains(body, graph_state.chains);
        write_chains(body, graph_state.wide_chains);
      },
      state_->graph);
  return std::string(kStateMagic) + "graph " + state_key(scheduled_) + "\nsha256 " +
         sha256_hex(body.bytes()) + "\n" + body.bytes();
}

Expected<std::monostate, std::string> CpuStream::load_state(std::string_view bytes) {
  auto line = [&](std::string_view prefix) -> std::optional<std::string_view> {
    if (!bytes.starts_with(prefix)) return std::nullopt;
    std::size_t end = bytes.find('\n');
    if (end == std::string_view::npos) return std::nullopt;
    std::string_view value = bytes.substr(prefix.size(), end - prefix.size());
    bytes.remove_prefix(end + 1);
    return value;
  };
  if (!line(kStateMagic)) return Unexpected{std::string("not an fxc stream state")};
  auto graph = line("graph ");
  auto checksum = line("sha256 ");
  if (!graph || !checksum) return Unexpected{std::string("the stream state's header is damaged")};
  if (*graph != state_key(scheduled_))
    return Unexpected{std::string(
        "the stream state was saved from a graph of another shape (stages, orders, channels, "
        "FIR method or dtype)")};
  if (*checksum != sha256_hex(bytes))
    return Unexpected{std::string("the stream state is damaged (its checksum does not match)")};
  StateReader r(bytes);
  std::uint8_t dtype = 0;
  if (!r.u8(dtype) || dtype != (dtype_of(scheduled_) == DType::f32 ? 0 : 1))
    return Unexpected{std::string("the stream state holds another sample type")};
  StreamState loaded = fresh_state(dtype_of(scheduled_));
  std::string error = std::visit(
      [&](auto& graph_state) {
        using T = typename std::decay_t<decltype(graph_state)>::Sample;
        std::string e = read_chains<T>(r, scheduled_, graph_state.chains);
        if (e.empty()) e = read_chains<T>(r, scheduled_, graph_state.wide_chains);
        return e;
      },
      loaded.graph);
  if (error.empty() && !r.done()) error = "it has trailing bytes";
  if (!error.empty()) return Unexpected{"the stream state is damaged: " + error};
  *state_ = std::move(loaded);
  return std::monostate{};
}

Expected<std::monostate, std::string> CpuStream::update_values(const ir::Graph& scheduled) {
  if (ir::structural_hash(scheduled) != ir::structural_hash(scheduled_))
    return Unexpected{std::string(
        "the new graph has another shape (stages, orders, channels or strategy): compile it as "
        "a new stream")};
  scheduled_ = scheduled;
  // A delay whose length changes restarts its line (zeros): the old samples no longer fit.
  // The sections keep their state, so filters do not click.
  auto update = [&](auto& chains) {
    for (ir::NodeId id = 0; id < chains.size() && id < scheduled_.size(); ++id) {
      auto& chain_state = chains[id];
      auto* chain = std::get_if<ir::Chain>(&scheduled_.node(id).op);
      if (!chain_state.ready || !chain) continue;
      codegen::ChainValues values = codegen::values_of(*chain);
      chain_state.params.assign(values.params.begin(), values.params.end());
      if (values.delay_lengths == chain_state.delay_lengths) continue;
      std::size_t delays = values.delay_lengths.size();
      std::size_t channels = delays ? chain_state.lines.size() / delays : 0;
      std::size_t per_channel = channels ? chain_state.positions.size() / channels : 0;
      chain_state.delay_lengths = values.delay_lengths;
      for (std::size_t c = 0; c < channels; ++c)
        for (std::size_t k = 0; k < delays; ++k) {
          chain_state.lines[c * delays + k].assign(1, 0);  // grown again as samples come
          chain_state.positions[c * per_channel + k] = 0;
        }
    }
  };
  std::visit(
      [&](auto& graph_state) {
        update(graph_state.chains);
        update(graph_state.wide_chains);
      },
      state_->graph);
  return std::monostate{};
}

}  // namespace fxc
