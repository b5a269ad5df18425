// SPDX-License-Identifier: Apache-2.0
#include "runtime/stream_state_bytes.h"

#include <cstring>
#include <optional>

#include "ir/hash.h"
#include "support/sha256.h"

namespace fxc {
namespace {

// "fxc stream state 1\n", "graph <structural hash>\n", "sha256 <of the body>\n", then the body:
// u8 signal dtype (0 f32, 1 f64); for each list (chains, then wide chains) a u64 count and per
// chain a u8 `ready`, then, when ready, the state, positions, delay lengths, delay lines and
// FFT histories as u64-counted arrays in host byte order. Coefficients are not saved: they
// come from the stream's graph.
constexpr std::string_view kStateMagic = "fxc stream state 1\n";

class StateWriter {
 public:
  void u8(std::uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  template <class V>
  void array(std::span<const V> v) {
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
    w.array(std::span(c.state));
    w.array(std::span(c.positions));
    w.array(std::span(c.delay_lengths));
    w.u64(c.lines.size());
    for (const auto& line : c.lines) w.array(std::span(line));
    w.u64(c.fft_history.size());
    for (std::size_t k = 0; k < c.fft_history.size(); ++k) w.array(chain_fft_history(c, k));
  }
}

// Reads the chains of one list and checks each against the graph, so that a damaged or
// foreign file cannot make a kernel read or write out of bounds.
template <class T, class C>
std::string read_chains(StateReader& r, const ir::Graph& g, const GraphValues& values,
                        std::vector<ChainState<C>>& chains) {
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
    // A feedback node keeps a delay line per channel, in the layout of a chain of one delay.
    std::optional<ir::Chain> feedback_line;
    if (const auto* f = std::get_if<ir::Feedback>(&node.op))
      feedback_line = ir::Chain{{ir::Delay{f->amount, f->unit}}};
    const auto* chain = feedback_line ? &*feedback_line : std::get_if<ir::Chain>(&node.op);
    std::string where = "node %" + std::to_string(id) + "'s state ";
    bool wide = !std::is_same_v<C, T>;
    if (!chain || (codegen::compute_dtype(*chain, signal) == DType::f64 && !std::is_same_v<T, double>) != wide)
      return where + "belongs to no chain of this graph";
    codegen::ChainLayout layout = codegen::layout_of(*chain);
    const std::vector<std::int64_t>& delay_lengths = values.nodes[id].delay_lengths;
    auto channels = static_cast<std::size_t>(node.type.channels);
    if (c.state.size() != channels * layout.state_per_channel ||
        c.positions.size() != channels * layout.positions_per_channel())
      return where + "has the wrong size for " + std::to_string(channels) + " channel(s)";
    if (c.delay_lengths != delay_lengths) return where + "was saved with other delay lengths";
    if (c.lines.size() != channels * delay_lengths.size()) return where + "has the wrong delay lines";
    for (std::size_t ch = 0; ch < channels; ++ch) {
      for (std::size_t k = 0; k < delay_lengths.size(); ++k) {
        auto length = static_cast<std::int64_t>(c.lines[ch * delay_lengths.size() + k].size());
        std::int64_t pos = c.positions[ch * layout.positions_per_channel() + k];
        // A line holds at most its delay's length; less while it has not wrapped yet
        // (grow_delay_lines), so its position is inside it either way.
        if (length < 1 || length > std::max<std::int64_t>(delay_lengths[k], 1) || pos < 0 || pos >= length)
          return where + "has a damaged delay line";
      }
      for (const codegen::StageLayout& at : layout.stages)
        if (at.ring_index >= 0) {
          std::int64_t pos = c.positions[ch * layout.positions_per_channel() + layout.delay_count + at.ring_index];
          if (pos < 0 || pos >= at.ring_length) return where + "has a damaged ring (FIR or lookahead)";
        }
    }
    if (!c.fft_history.empty() && c.fft_history.size() != channels) return where + "has damaged FFT history";
    if (codegen::runs_in_runtime(*chain)) {
      const std::size_t taps = std::get<ir::FirFilter>(chain->stages[0]).taps.size();
      for (const auto& h : c.fft_history)
        if (!h.empty() && h.size() != fft_history_length(taps, chain->fft_block)) return where + "has damaged FFT history";
      // A partitioned convolution keeps its block's phase in the FIR's ring position.
      if (runs_partitioned(taps, chain->fft_block))
        for (std::int64_t phase : c.positions)
          if (phase < 0 || phase >= chain->fft_block / 2) return where + "has a damaged FFT block phase";
    }
    if (c.fft_history.empty()) c.fft_history.assign(channels, {});
    c.ready = true;
  }
  return {};
}

}  // namespace

std::string schedule_free_hash(const ir::Graph& scheduled, bool ignore_state_precision) {
  ir::Graph g = scheduled;
  for (ir::NodeId id = 0; id < g.size(); ++id)
    if (auto* chain = std::get_if<ir::Chain>(&g.node(id).op)) {
      chain->strategy = ir::IirStrategy::none;
      chain->chunk_length = 0;
      if (ignore_state_precision) chain->state_precision = ir::StatePrecision::signal;
    }
  return ir::structural_hash(g);
}

std::string save_stream_state(const StreamState& state, const ir::Graph& scheduled) {
  StateWriter body;
  std::visit(
      [&](const auto& graph_state) {
        using T = typename std::decay_t<decltype(graph_state)>::Sample;
        body.u8(std::is_same_v<T, float> ? 0 : 1);
        write_chains(body, graph_state.chains);
        write_chains(body, graph_state.wide_chains);
      },
      state.graph);
  return std::string(kStateMagic) + "graph " + schedule_free_hash(scheduled, false) + "\nsha256 " +
         sha256_hex(body.bytes()) + "\n" + body.bytes();
}

Expected<StreamState, std::string> load_stream_state(std::string_view bytes, const ir::Graph& scheduled,
                                                     const GraphValues& values) {
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
  if (*graph != schedule_free_hash(scheduled, false))
    return Unexpected{std::string(
        "the stream state was saved from a graph of another shape (stages, orders, channels, "
        "FIR method or dtype)")};
  if (*checksum != sha256_hex(bytes))
    return Unexpected{std::string("the stream state is damaged (its checksum does not match)")};
  StateReader r(bytes);
  std::uint8_t dtype = 0;
  if (!r.u8(dtype) || dtype != (dtype_of(scheduled) == DType::f32 ? 0 : 1))
    return Unexpected{std::string("the stream state holds another sample type")};
  StreamState loaded = fresh_stream_state(dtype_of(scheduled));
  std::string error = std::visit(
      [&](auto& graph_state) {
        using T = typename std::decay_t<decltype(graph_state)>::Sample;
        std::string e = read_chains<T>(r, scheduled, values, graph_state.chains);
        if (e.empty()) e = read_chains<T>(r, scheduled, values, graph_state.wide_chains);
        return e;
      },
      loaded.graph);
  if (error.empty() && !r.done()) error = "it has trailing bytes";
  if (!error.empty()) return Unexpected{"the stream state is damaged: " + error};
  return loaded;
}

}  // namespace fxc
