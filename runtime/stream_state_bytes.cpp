// SPDX-License-Identifier: Apache-2.0
#include "runtime/stream_state_bytes.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "ir/hash.h"
#include "support/sha256.h"

namespace fxc {
namespace {

// "fxc stream state 1\n", "graph <structural hash>\n" (schedule_free_hash without the FFT
// blocks; files written before 2026-11-29 hold it with them), "fft_blocks <node>:<block> ...\n"
// (only for a graph with FFT FIR chains: the blocks it was saved with), "sha256 <of the
// body>\n", then the body:
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

std::string damaged(const std::string& what) { return "the stream state is damaged: " + what; }

// `history` (a channel's newest inputs, the newest last) to `length` inputs: the oldest are
// dropped, or zeros put before them.
template <class C>
void fit_history(std::vector<C>& history, std::size_t length) {
  if (history.size() > length)
    history.erase(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(history.size() - length));
  else
    history.insert(history.begin(), length - history.size(), C(0));
}

// Reads the chains of one list and checks each against the graph, so that a damaged or
// foreign file cannot make a kernel read or write out of bounds; the error is a whole message. `saved_blocks`: by node id,
// the FFT block each FFT FIR chain's state was saved with.
template <class T, class C>
std::string read_chains(StateReader& r, const ir::Graph& g, const GraphValues& values, std::span<const int> saved_blocks,
                        std::vector<ChainState<C>>& chains) {
  std::uint64_t count = 0;
  if (!r.u64(count) || count > g.size()) return damaged("the chain list is damaged");
  chains.assign(count, {});
  DType signal = std::is_same_v<T, float> ? DType::f32 : DType::f64;
  for (ir::NodeId id = 0; id < count; ++id) {
    ChainState<C>& c = chains[id];
    std::uint8_t ready = 0;
    if (!r.u8(ready) || ready > 1) return damaged("the chain list is damaged");
    if (!ready) continue;
    std::uint64_t lines = 0, histories = 0;
    bool ok = r.array(c.state) && r.array(c.positions) && r.array(c.delay_lengths) && r.u64(lines) &&
              lines <= (std::uint64_t{1} << 32);
    for (std::uint64_t k = 0; ok && k < lines; ++k) ok = r.array(c.lines.emplace_back());
    ok = ok && r.u64(histories) && histories <= (std::uint64_t{1} << 32);
    for (std::uint64_t k = 0; ok && k < histories; ++k) ok = r.array(c.fft_history.emplace_back());
    if (!ok) return damaged("node %" + std::to_string(id) + "'s state is truncated");
    const ir::Node& node = g.node(id);
    // A feedback node keeps a delay line per channel, in the layout of a chain of one delay.
    std::optional<ir::Chain> feedback_line;
    if (const auto* f = std::get_if<ir::Feedback>(&node.op))
      feedback_line = ir::Chain{{ir::Delay{f->amount, f->unit}}};
    const auto* chain = feedback_line ? &*feedback_line : std::get_if<ir::Chain>(&node.op);
    std::string where = "node %" + std::to_string(id) + "'s state ";
    bool wide = !std::is_same_v<C, T>;
    if (!chain || (codegen::compute_dtype(*chain, signal) == DType::f64 && !std::is_same_v<T, double>) != wide)
      return damaged(where + "belongs to no chain of this graph");
    codegen::ChainLayout layout = codegen::layout_of(*chain);
    const std::vector<std::int64_t>& delay_lengths = values.nodes[id].delay_lengths;
    auto channels = static_cast<std::size_t>(node.type.channels);
    if (c.state.size() != channels * layout.state_per_channel ||
        c.positions.size() != channels * layout.positions_per_channel()) {
      // Before 2026-11-29 a limiter's lookahead kept L + 1 values a channel fewer (no blocks of
      // its window): such a state is not damaged, only older.
      std::size_t older = layout.state_per_channel;
      for (std::size_t k = 0; k < layout.stages.size() && k < chain->stages.size(); ++k)
        if (std::holds_alternative<ir::Dynamics>(chain->stages[k]) && layout.stages[k].ring_index >= 0)
          older -= static_cast<std::size_t>(layout.stages[k].ring_length) + 1;
      if (older != static_cast<std::size_t>(layout.state_per_channel) && c.state.size() == channels * older)
        return "the stream state was saved by an fxc from before 2026-11-29, whose limiter lookahead kept less "
               "state (" + (node.loc.valid() ? "the chain at " + to_string(node.loc) : "node %" + std::to_string(id)) +
               "): run the stream again from its start, or finish it with the fxc that saved it";
      return damaged(where + "has the wrong size for " + std::to_string(channels) + " channel(s)");
    }
    if (c.delay_lengths != delay_lengths)
      return "the stream state was saved with other delay lengths (" +
             (node.loc.valid() ? "the delay at " + to_string(node.loc) : "node %" + std::to_string(id) + "'s") +
             "): a delay's length cannot change while a stream carries its state; load it where the delays' "
             "parameters have the values it was saved with";
    if (c.lines.size() != channels * delay_lengths.size()) return damaged(where + "has the wrong delay lines");
    for (std::size_t ch = 0; ch < channels; ++ch) {
      for (std::size_t k = 0; k < delay_lengths.size(); ++k) {
        auto length = static_cast<std::int64_t>(c.lines[ch * delay_lengths.size() + k].size());
        std::int64_t pos = c.positions[ch * layout.positions_per_channel() + k];
        // A line holds at most its delay's length; less while it has not wrapped yet
        // (grow_delay_lines), so its position is inside it either way.
        if (length < 1 || length > std::max<std::int64_t>(delay_lengths[k], 1) || pos < 0 || pos >= length)
          return damaged(where + "has a damaged delay line");
      }
      for (const codegen::StageLayout& at : layout.stages)
        if (at.ring_index >= 0) {
          std::int64_t pos = c.positions[ch * layout.positions_per_channel() + layout.delay_count + at.ring_index];
          if (pos < 0 || pos >= at.ring_length) return damaged(where + "has a damaged ring (FIR or lookahead)");
        }
    }
    if (!c.fft_history.empty() && c.fft_history.size() != channels) return damaged(where + "has damaged FFT history");
    if (codegen::runs_in_runtime(*chain)) {
      const std::size_t taps = std::get<ir::FirFilter>(chain->stages[0]).taps.size();
      const int saved = saved_blocks[id];
      for (const auto& h : c.fft_history)
        if (!h.empty() && h.size() != fft_history_length(taps, saved)) return damaged(where + "has damaged FFT history");
      // A partitioned convolution keeps its block's phase in the FIR's ring position.
      if (runs_partitioned(taps, saved))
        for (std::int64_t phase : c.positions)
          if (phase < 0 || phase >= saved / 2) return damaged(where + "has a damaged FFT block phase");
      if (saved != chain->fft_block) {
        // Saved by a stream whose calls had another length, and so another FFT block. The
        // outputs to come read the newest taps - 1 inputs, which every block's history ends
        // with; older inputs, which a partitioned convolution's frames hold but its taps do
        // not reach, are zeros, and a new block begins here (phase 0). The outputs then equal
        // an unbroken stream's within the FFTs' rounding, not bit for bit.
        for (auto& h : c.fft_history)
          if (!h.empty()) fit_history(h, fft_history_length(taps, chain->fft_block));
        std::fill(c.positions.begin(), c.positions.end(), std::int64_t{0});
      }
    }
    if (c.fft_history.empty()) c.fft_history.assign(channels, {});
    c.ready = true;
  }
  return {};
}

// The FFT blocks of `g`'s FFT FIR chains (codegen::runs_in_runtime), by node id; 0 elsewhere.
std::vector<int> fft_blocks_of(const ir::Graph& g) {
  std::vector<int> blocks(g.size(), 0);
  for (ir::NodeId id = 0; id < g.size(); ++id)
    if (const auto* chain = std::get_if<ir::Chain>(&g.node(id).op); chain && codegen::runs_in_runtime(*chain))
      blocks[id] = chain->fft_block;
  return blocks;
}

// What a state file's graph line holds: schedule_free_hash with the FFT blocks left out, since
// they follow the length of one call too (passes::fft_block_for) and a state converts between
// them (read_chains), and float pairs named as the float64 they stand for: a GPU with slow
// float64 computes in pairs of floats what the CPU computes in float64, in the same float64
// buffers (ir::StatePrecision), so their states are one. Equal to schedule_free_hash for a
// graph without FFT FIR chains or float pairs.
std::string state_shape_hash(const ir::Graph& scheduled) {
  ir::Graph g = scheduled;
  for (ir::NodeId id = 0; id < g.size(); ++id)
    if (auto* chain = std::get_if<ir::Chain>(&g.node(id).op)) {
      if (codegen::runs_in_runtime(*chain)) chain->fft_block = 0;
      if (chain->state_precision == ir::StatePrecision::pairs) chain->state_precision = ir::StatePrecision::f64;
      if (chain->state_precision == ir::StatePrecision::mixed_pairs) chain->state_precision = ir::StatePrecision::mixed;
    }
  return schedule_free_hash(g, false);
}

// "<node>:<block> ..." for the nonzero blocks.
std::string fft_blocks_text(const std::vector<int>& blocks) {
  std::string text;
  for (std::size_t id = 0; id < blocks.size(); ++id)
    if (blocks[id] != 0) text += (text.empty() ? "" : " ") + std::to_string(id) + ":" + std::to_string(blocks[id]);
  return text;
}

// The blocks a "fft_blocks" line names: exactly the FFT FIR chains of the graph (`now`), each
// with a power of two; nullopt if it does not.
std::optional<std::vector<int>> parse_fft_blocks(std::string_view text, const std::vector<int>& now) {
  std::vector<int> blocks(now.size(), 0);
  while (!text.empty()) {
    const std::size_t end = std::min(text.find(' '), text.size());
    const std::string_view item = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    std::uint64_t id = 0, block = 0;
    auto parse = [](std::string_view digits, std::uint64_t& v) {
      const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      return !digits.empty() && error == std::errc{} && end == digits.data() + digits.size();
    };
    if (!parse(item.substr(0, colon), id) || !parse(item.substr(colon + 1), block)) return std::nullopt;
    if (id >= now.size() || now[id] == 0 || blocks[id] != 0 || block < 2 || block > (std::uint64_t{1} << 30) ||
        (block & (block - 1)) != 0)
      return std::nullopt;
    blocks[id] = static_cast<int>(block);
  }
  for (std::size_t id = 0; id < now.size(); ++id)
    if ((now[id] != 0) != (blocks[id] != 0)) return std::nullopt;
  return blocks;
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
  const std::string blocks = fft_blocks_text(fft_blocks_of(scheduled));
  return std::string(kStateMagic) + "graph " + state_shape_hash(scheduled) + "\n" +
         (blocks.empty() ? "" : "fft_blocks " + blocks + "\n") + "sha256 " + sha256_hex(body.bytes()) + "\n" +
         body.bytes();
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
  auto blocks_line = line("fft_blocks ");
  auto checksum = line("sha256 ");
  if (!graph || !checksum) return Unexpected{std::string("the stream state's header is damaged")};
  const std::vector<int> blocks_now = fft_blocks_of(scheduled);
  std::vector<int> saved_blocks = blocks_now;
  if (*graph == state_shape_hash(scheduled)) {
    if (blocks_line || std::any_of(blocks_now.begin(), blocks_now.end(), [](int b) { return b != 0; })) {
      auto parsed = parse_fft_blocks(blocks_line.value_or(""), blocks_now);
      if (!parsed) return Unexpected{std::string("the stream state's header is damaged (its FFT blocks)")};
      saved_blocks = std::move(*parsed);
    }
  } else if (blocks_line || *graph != schedule_free_hash(scheduled, false)) {
    // (A file written before FFT blocks were left out of the hash holds the hash with them,
    // and so the blocks of this graph.)
    return Unexpected{std::string(
        "the stream state was saved from a graph of another shape (stages, orders, channels, "
        "FIR method or dtype)")};
  }
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
        std::string e = read_chains<T>(r, scheduled, values, saved_blocks, graph_state.chains);
        if (e.empty()) e = read_chains<T>(r, scheduled, values, saved_blocks, graph_state.wide_chains);
        return e;
      },
      loaded.graph);
  if (error.empty() && !r.done()) error = damaged("it has trailing bytes");
  if (!error.empty()) return Unexpected{error};
  return loaded;
}

}  // namespace fxc
