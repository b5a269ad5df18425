// SPDX-License-Identifier: Apache-2.0
#include "runtime/block_executor.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <new>

#include <fmt/format.h>

#include "codegen/chain_layout.h"
#include "ir/hash.h"
#include "runtime/execution_plan.h"
#include "runtime/graph_values.h"
#include "runtime/run_graph.h"
#include "runtime/stream_state.h"
#include "runtime/stream_state_bytes.h"
#include "support/trace.h"

namespace fxc {
namespace {

// Block buffers start each channel on a cache line.
constexpr std::size_t kAlignment = 64;

struct AlignedFree {
  void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{kAlignment}); }
};

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Delay lines at their full length (`capacity`, per delay k), with the pages touched now
// rather than on the audio thread the first time a line grows into them.
template <class C>
void reserve_chain_state(ChainState<C>& s, const std::vector<std::int64_t>& capacity, std::size_t fft_taps,
                         int fft_block, const NodeValues* values) {
  std::size_t delays = capacity.size();
  for (std::size_t i = 0; i < s.lines.size(); ++i) {
    std::vector<C>& line = s.lines[i];
    auto full = static_cast<std::size_t>(capacity[i % delays]);
    std::size_t kept = line.size();
    if (full <= kept) continue;  // it holds more already (a loaded state, past max_frames)
    line.reserve(full);
    line.resize(full, C(0));
    line.resize(kept);
  }
  if (fft_taps > 0)
    for (auto& h : s.fft_history) h.resize(fft_history_length(fft_taps, fft_block), C(0));
  if (runs_partitioned(fft_taps, fft_block)) {
    PartitionedConvolver<C> convolver(fft_taps, fft_block);
    s.fft_partitions.resize(s.fft_history.size());
    const std::size_t channels = s.fft_history.size();
    const std::size_t positions = channels > 0 ? s.positions.size() / channels : 0;
    for (std::size_t c = 0; c < channels; ++c) {
      PartitionedStream<C>& p = s.fft_partitions[c];
      if (!convolver.reserved(p)) convolver.reserve(p);
      if (p.serial != 0 || !values || values->fft_serial == 0 || positions == 0) continue;
      // Built here, off the audio thread, by a call of no samples, which rebuilds it from its
      // history and phase (zeros for a fresh stream, a loaded state's otherwise), so that its
      // first call does not transform M frames.
      convolver.convolve(values->f64, values->template partition_spectra<C>(), values->fft_serial, {}, {},
                         s.fft_history[c], s.positions[(c + 1) * positions - 1], p);
    }
  }
}

}  // namespace

struct BlockExecutor::Impl {
  ir::Graph graph;  // the shape; values come from value_slots
  std::shared_ptr<const codegen::CpuKernels> kernels;
  ExecutionPlan plan;
  DType dtype = DType::f32;
  std::size_t sample_bytes = 4;
  std::size_t max_block = 0;
  std::size_t max_frames = 0;  // the stream's frames in all, when known (create())
  std::size_t memory_bytes = 0;
  std::string structural_hash;
  std::vector<std::vector<std::int64_t>> delay_capacity;  // by node, per delay: cells reserved

  // Audio side.
  StreamState state;
  RunMemory memory;
  std::unique_ptr<std::byte[], AlignedFree> buffers;

  // Values handover, a triple buffer: the audio thread reads value_slots[front], a control
  // thread writes value_slots[back], and `middle` holds the third index, with kStaged set when
  // it holds values newer than front's. Publishing and taking are each one atomic exchange,
  // so neither side ever waits for the other.
  static constexpr std::uint8_t kStaged = 4, kIndex = 3;
  std::array<GraphValues, 3> value_slots;
  std::uint8_t front = 0;
  std::uint8_t back = 2;
  std::atomic<std::uint8_t> middle{1};
  std::mutex control;  // stage_values callers among themselves; never taken by process()
  // Control side, under `control`: the slot of the values staged last. Nothing writes it until
  // a later stage_values, whether or not the audio thread has taken it.
  std::uint8_t newest = 0;

  template <class T>
  GraphState<T>& typed_state() {
    return std::get<GraphState<T>>(state.graph);
  }

  // At a block boundary (audio side): the newest staged values, if any.
  void take_staged_values() noexcept {
    if (!(middle.load(std::memory_order_relaxed) & kStaged)) return;
    front = middle.exchange(front, std::memory_order_acq_rel) & kIndex;
    restart_changed_delays_of(state, value_slots[front]);
  }

  // Each delay whose length `values` changes starts its line again, as a block taking them does.
  void restart_changed_delays_of(StreamState& s, const GraphValues& values) noexcept {
    std::visit(
        [&](auto& graph_state) {
          for (const ExecutionPlan::Step& step : plan.steps) {
            const ir::NodeId id = step.node;
            if (step.kind == ExecutionPlan::Kind::sum || step.kind == ExecutionPlan::Kind::route) continue;
            if (step.kind == ExecutionPlan::Kind::feedback)
              restart_changed_delays(graph_state.chains[id], values.nodes[id].delay_lengths);
            else
              visit_chain_state(graph_state, std::get<ir::Chain>(graph.node(id).op), id,
                                [&](auto& c) { restart_changed_delays(c, values.nodes[id].delay_lengths); });
          }
        },
        s.graph);
  }

  template <class T>
  void run(std::span<const void* const* const> inputs, std::span<void* const* const> outputs,
           std::size_t frames) noexcept {
    GraphState<T>& graph_state = typed_state<T>();
    for (std::size_t start = 0; start < frames; start += max_block) {
      CallerSignals io{inputs, outputs, start, std::min(max_block, frames - start)};
      choose_direct_outputs(plan, io, sizeof(T), memory);
      // Kernel spans only while tracing (fxc run --trace), which allocates: never in a host.
      run_graph(graph, plan, value_slots[front], graph_state, io, memory,
                RunOptions{Trace::global().enabled(), 1});
    }
  }

  // Every chain ready, each line reserved at its full length, FFT histories sized.
  void make_real_time(StreamState& s, const GraphValues& values) {
    std::visit(
        [&](auto& graph_state) {
          ready_chain_states(graph, values, graph_state);
          for (const ExecutionPlan::Step& step : plan.steps) {
            if (step.kind == ExecutionPlan::Kind::feedback)
              reserve_chain_state(graph_state.chains[step.node], delay_capacity[step.node], 0, 0, nullptr);
            if (step.kind != ExecutionPlan::Kind::chain) continue;
            const auto& chain = std::get<ir::Chain>(graph.node(step.node).op);
            std::size_t fft_taps = codegen::runs_in_runtime(chain)
                                       ? std::get<ir::FirFilter>(chain.stages[0]).taps.size()
                                       : 0;
            visit_chain_state(graph_state, chain, step.node,
                              [&](auto& cs) {
                                reserve_chain_state(cs, delay_capacity[step.node], fft_taps, chain.fft_block,
                                                    &values.nodes[step.node]);
                              });
          }
        },
        s.graph);
  }
};

BlockExecutor::BlockExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BlockExecutor::BlockExecutor(BlockExecutor&&) noexcept = default;
BlockExecutor& BlockExecutor::operator=(BlockExecutor&&) noexcept = default;
BlockExecutor::~BlockExecutor() = default;

std::size_t BlockExecutor::max_block() const { return impl_->max_block; }
std::size_t BlockExecutor::memory_bytes() const { return impl_->memory_bytes; }

Expected<BlockExecutor, std::string> BlockExecutor::create(
    const ir::Graph& scheduled, std::shared_ptr<const codegen::CpuKernels> kernels, std::size_t max_block,
    const std::map<ir::NodeId, std::vector<std::int64_t>>& max_delay_lengths, std::size_t max_frames) {
  if (!kernels) return Unexpected{std::string("a BlockExecutor needs the graph's kernels")};
  if (max_block == 0) return Unexpected{std::string("a BlockExecutor's blocks must hold at least one frame")};
  auto impl = std::make_unique<Impl>();
  Impl& m = *impl;
  m.graph = scheduled;
  m.kernels = std::move(kernels);
  m.dtype = dtype_of(scheduled);
  m.sample_bytes = size_of(m.dtype);
  m.max_block = max_block;
  m.max_frames = max_frames;
  m.structural_hash = ir::structural_hash(scheduled);

  for (ir::NodeId id = 0; id < scheduled.size(); ++id)
    if (const auto* chain = std::get_if<ir::Chain>(&scheduled.node(id).op);
        chain && chain->strategy == ir::IirStrategy::chunked_scan)
      return Unexpected{"chain %" + std::to_string(id) +
                        " runs as a chunked scan, which needs the whole signal: schedule the graph for "
                        "blocks (length_samples = the block length) to run it block by block"};
  auto plan = plan_execution(scheduled, *m.kernels);
  if (!plan) return Unexpected{plan.error()};
  m.plan = std::move(*plan);
  GraphValues values = graph_values(scheduled);

  // Delay capacities: the longer of each delay's length now and its declared maximum.
  m.delay_capacity.resize(scheduled.size());
  for (const auto& [id, maxima] : max_delay_lengths) {
    const bool keeps_lines = id < scheduled.size() && (ir::holds<ir::Chain>(scheduled.node(id)) ||
                                                       ir::holds<ir::Feedback>(scheduled.node(id)));
    if (!keeps_lines || maxima.size() > values.nodes[id].delay_lengths.size())
      return Unexpected{"the maximum delay lengths given for node %" + std::to_string(id) +
                        " name no delay of a chain there (" + std::to_string(maxima.size()) + " given)"};
  }
  for (ir::NodeId id = 0; id < scheduled.size(); ++id) {
    const std::vector<std::int64_t>& lengths = values.nodes[id].delay_lengths;
    auto given = max_delay_lengths.find(id);
    for (std::size_t k = 0; k < lengths.size(); ++k) {
      std::int64_t cap = std::max<std::int64_t>(lengths[k], 1);
      if (given != max_delay_lengths.end() && k < given->second.size()) {
        std::int64_t maximum = given->second[k];
        if (maximum < 0 || static_cast<double>(maximum) > ir::Delay::kMaxSamples)
          return Unexpected{"the maximum length of delay " + std::to_string(k) + " of chain %" + std::to_string(id) +
                            " is out of range: " + std::to_string(maximum) + " samples"};
        cap = std::max(cap, maximum);
      }
      // A line never holds more than the stream's frames (+1: the kernel's write cell).
      if (max_frames > 0) cap = std::min<std::int64_t>(cap, static_cast<std::int64_t>(max_frames) + 1);
      m.delay_capacity[id].push_back(cap);
    }
  }

  // The memory it takes, counted in double so that no product overflows before the check.
  double bytes = 0, line_bytes = 0;
  std::size_t buffer_bytes = 0;
  const std::size_t stride = round_up(max_block, kAlignment / m.sample_bytes);
  for (int channels : m.plan.slot_channels)
    bytes += static_cast<double>(channels) * static_cast<double>(stride) * static_cast<double>(m.sample_bytes);
  for (const ExecutionPlan::Step& step : m.plan.steps) {
    if (step.kind != ExecutionPlan::Kind::chain) continue;
    const auto& chain = std::get<ir::Chain>(scheduled.node(step.node).op);
    double channels = m.plan.channels[step.node];
    double compute_bytes = static_cast<double>(size_of(codegen::compute_dtype(chain, m.dtype)));
    codegen::ChainLayout layout = codegen::layout_of(chain);
    bytes += channels * (layout.state_per_channel * compute_bytes + layout.positions_per_channel() * 8.0);
    for (std::int64_t cap : m.delay_capacity[step.node])
      line_bytes += channels * static_cast<double>(cap) * compute_bytes;
    if (codegen::runs_in_runtime(chain)) {
      const std::size_t taps = std::get<ir::FirFilter>(chain.stages[0]).taps.size();
      const double n = chain.fft_block, sample = compute_bytes;
      const double history = static_cast<double>(fft_history_length(taps, chain.fft_block));
      if (runs_partitioned(taps, chain.fft_block)) {
        // Partitioned: per channel its history, recent inputs (2 histories + 8 P), the last M
        // frames' spectra, a block's tail and the next block's partial spectrum; M partitions'
        // spectra in each of three value sets; the work memory (FFT buffers, partition 0's
        // sums and its inputs widened to float64).
        const std::size_t half = static_cast<std::size_t>(chain.fft_block) / 2;
        const double p = static_cast<double>(half);
        const double spectrum = static_cast<double>(split_spectrum_size(half)) * sample;
        const double spectra = static_cast<double>((taps - 1) / half) * spectrum;  // M spectra
        const double per_channel =
            history * sample + (2 * history + 8 * p) * sample + spectra + p * sample + spectrum;
        bytes += channels * per_channel + 3 * spectra + n * sample * 6 + 3 * p * 8;
      } else {
        bytes += channels * history * sample + n * sample * 6 + 3 * (n / 2 + 1) * 2 * sample;  // histories, work, responses
      }
    }
    bytes += 3.0 * (static_cast<double>(values.nodes[step.node].f32.size()) * 4 +
                    static_cast<double>(values.nodes[step.node].f64.size()) * 8);
  }
  bytes += line_bytes;
  if (bytes > static_cast<double>(kMaxMemoryBytes))
    return Unexpected{fmt::format(
        "streaming this graph in blocks of {} frames needs {:.0f} MiB ({:.0f} MiB of it delay lines at their "
        "longest), more than the {} MiB a BlockExecutor may take: lower the block length or the delays' "
        "maximum lengths",
        max_block, bytes / (1 << 20), line_bytes / (1 << 20), kMaxMemoryBytes >> 20)};
  m.memory_bytes = static_cast<std::size_t>(bytes);

  // Block buffers: one allocation, touched now so that no page faults on the audio thread.
  size_run_memory(scheduled, m.plan, m.memory);
  m.memory.stride = stride;
  for (int channels : m.plan.slot_channels) buffer_bytes += static_cast<std::size_t>(channels) * stride * m.sample_bytes;
  if (buffer_bytes > 0) {
    m.buffers.reset(new (std::align_val_t{kAlignment}) std::byte[buffer_bytes]);
    std::memset(m.buffers.get(), 0, buffer_bytes);
  }
  std::size_t at = 0;
  for (std::size_t s = 0; s < m.plan.slot_channels.size(); ++s) {
    m.memory.slots[s] = m.buffers.get() + at;
    at += static_cast<std::size_t>(m.plan.slot_channels[s]) * stride * m.sample_bytes;
  }

  m.state = fresh_stream_state(m.dtype);
  m.make_real_time(m.state, values);
  m.value_slots = {values, values, values};
  return BlockExecutor(std::move(impl));
}

void BlockExecutor::process(std::span<const void* const* const> inputs, std::span<void* const* const> outputs,
                            std::size_t frames) noexcept {
  Impl& m = *impl_;
  if (inputs.size() != m.plan.inputs.size() || outputs.size() != m.plan.outputs.size()) return;
  m.take_staged_values();
  if (m.dtype == DType::f32) m.run<float>(inputs, outputs, frames);
  else m.run<double>(inputs, outputs, frames);
}

void BlockExecutor::reset() noexcept {
  std::visit(
      [&](auto& graph_state) {
        for (auto& s : graph_state.chains)
          if (s.ready) clear_chain_state(s);
        for (auto& s : graph_state.wide_chains)
          if (s.ready) clear_chain_state(s);
      },
      impl_->state.graph);
}

Expected<std::monostate, std::string> BlockExecutor::stage_values(const ir::Graph& scheduled) {
  Impl& m = *impl_;
  std::lock_guard lock(m.control);
  if (ir::structural_hash(scheduled) != m.structural_hash)
    return Unexpected{std::string(
        "the new graph has another shape (stages, orders, channels or strategy): compile it as a new "
        "stream")};
  GraphValues values = graph_values(scheduled);
  for (ir::NodeId id = 0; id < scheduled.size(); ++id) {
    const std::vector<std::int64_t>& lengths = values.nodes[id].delay_lengths;
    for (std::size_t k = 0; k < lengths.size(); ++k)
      if (lengths[k] > m.delay_capacity[id][k] && !(m.max_frames > 0 && m.delay_capacity[id][k] > static_cast<std::int64_t>(m.max_frames)))
        return Unexpected{"delay " + std::to_string(k) + " of chain %" + std::to_string(id) + " would be " +
                          std::to_string(lengths[k]) + " samples, longer than the " +
                          std::to_string(m.delay_capacity[id][k]) +
                          " it was prepared for: give a larger maximum when the stream is made"};
  }
  m.value_slots[m.back] = std::move(values);
  m.newest = m.back;
  m.back = m.middle.exchange(static_cast<std::uint8_t>(m.back | Impl::kStaged), std::memory_order_acq_rel) &
           Impl::kIndex;
  return std::monostate{};
}

std::string BlockExecutor::save_state() const {
  // As the next block starts from it: saved with the lengths it ran at, a state set() had
  // changed since could not be loaded back (load_state compares with the newest values), not
  // even into this executor. A copy, with the newest values read where the control side keeps
  // them: the handover is the audio thread's to take (taking it here, a host saving during
  // playback could lose a slot of the triple buffer).
  Impl& m = *impl_;
  std::lock_guard lock(m.control);
  StreamState next = m.state;
  m.restart_changed_delays_of(next, m.value_slots[m.newest]);
  return save_stream_state(next, m.graph);
}

Expected<std::monostate, std::string> BlockExecutor::load_state(std::string_view bytes) {
  Impl& m = *impl_;
  m.take_staged_values();  // the delay lengths a state must match are the newest ones
  const GraphValues& values = m.value_slots[m.front];
  auto loaded = load_stream_state(bytes, m.graph, values);
  if (!loaded) return Unexpected{loaded.error()};
  m.make_real_time(*loaded, values);
  m.state = std::move(*loaded);
  return std::monostate{};
}

}  // namespace fxc
