// SPDX-License-Identifier: Apache-2.0
#include "runtime/run_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "codegen/chain_layout.h"
#include "passes/cost_model.h"
#include "passes/target.h"
#include "runtime/chunked_scan.h"
#include "runtime/counters.h"
#include "runtime/flush_denormals.h"
#include "runtime/thread_pool.h"
#include "support/trace.h"

namespace fxc {
namespace {

bool overlaps(const std::byte* a, const std::byte* a_end, const std::byte* b, const std::byte* b_end) {
  return a < b_end && b < a_end;
}

// The caller's output `o` may take its source's value directly (see choose_direct_outputs).
bool safe_to_write_directly(const ExecutionPlan& plan, const CallerSignals& io, std::size_t sample_bytes,
                            std::size_t o, const std::byte* inputs_begin, const std::byte* inputs_end) {
  const std::size_t bytes = io.frames * sample_bytes;
  const std::size_t skip = io.offset * sample_bytes;
  int channels = plan.channels[plan.outputs[o]];
  for (int c = 0; c < channels; ++c) {
    const std::byte* dest = static_cast<const std::byte*>(io.outputs[o][c]) + skip;
    if (!overlaps(dest, dest + bytes, inputs_begin, inputs_end)) continue;
    for (std::size_t i = 0; i < plan.inputs.size(); ++i)
      for (int k = 0; k < plan.channels[plan.inputs[i]]; ++k) {
        const std::byte* source = static_cast<const std::byte*>(io.inputs[i][k]) + skip;
        if (!overlaps(dest, dest + bytes, source, source + bytes)) continue;
        if (source != dest || k != c || plan.input_last_read[i] > plan.output_step[o]) return false;
        // The step that writes the output reads this input too: safe for a chain, whose
        // kernel reads each channel before it writes that channel alone; not for a route or
        // a sum, which writes output channel 0 before it reads input channel 1 (an in-place
        // swap() gave both channels the right one).
        if (plan.input_last_read[i] == plan.output_step[o] && plan.output_step[o] < plan.steps.size() &&
            plan.steps[plan.output_step[o]].kind != ExecutionPlan::Kind::chain)
          return false;
      }
  }
  return true;
}

// About a millisecond of work per part, so that waking a worker (microseconds) is noise.
constexpr double kMinWorkPerPart = 1 << 20;

// The FIR stages' warm-up (every FIR's taps - 1, added) and taps.
std::pair<std::size_t, std::size_t> fir_warm_up_and_taps(const ir::Chain& chain) {
  std::size_t warm_up = 0, taps = 0;
  for (const ir::Stage& stage : chain.stages)
    if (const auto* fir = std::get_if<ir::FirFilter>(&stage)) {
      warm_up += fir->taps.size() - 1;
      taps += fir->taps.size();
    }
  return {warm_up, taps};
}

// How a chain's call over `frames` frames splits across `threads`: the one decision that
// run_channel_parts acts on and whole runs cut into pieces keep (step_threads).
struct ThreadSplit {
  int time_parts = 1;     ///< a time-lanes FIR over fewer channels than threads: parts in time
  int channel_parts = 1;  ///< else (or where the time parts cannot run): ranges of channels
  int lanes = 1;          ///< channels of a vector group; a channel part is whole groups
};

ThreadSplit thread_split(const ir::Chain& chain, std::size_t channels, std::size_t frames, DType signal,
                         int threads) {
  ThreadSplit split;
  // Streams and Processors (threads 1) and short calls go straight to the kernel: nothing
  // below may cost a real-time block anything.
  if (threads <= 1) return split;
  if (channels < static_cast<std::size_t>(threads) &&
      passes::fir_time_lanes(chain, signal, static_cast<std::int64_t>(channels))) {
    const auto [warm_up, taps] = fir_warm_up_and_taps(chain);
    // A sample costs about a multiply-add per tap of a vector of 8 (float32 ones at least).
    const double work = static_cast<double>(channels) * static_cast<double>(frames) *
                        (1.0 + static_cast<double>(taps) / 8.0);
    const std::size_t min_part = std::max<std::size_t>(4 * warm_up, 4096);
    split.time_parts = std::max(1, static_cast<int>(std::min<double>(
                                       {static_cast<double>(threads), work / kMinWorkPerPart,
                                        static_cast<double>(frames / min_part)})));
  }
  const double work = static_cast<double>(channels) * static_cast<double>(frames) *
                      static_cast<double>(std::max<std::size_t>(1, chain.stages.size()));
  if (work < 2 * kMinWorkPerPart) return split;
  // A part is whole vector groups where the kernel has them (channel lanes with at least a
  // group's channels, or a vector remainder; the remainder goes with the last part), else
  // single channels (the kernel's per-channel loop: fewer channels than lanes, the wavefront,
  // sequential code).
  static const passes::Target host = passes::host_target();  // asking costs microseconds
  const int vector_lanes = host.lanes(codegen::compute_dtype(chain, signal));
  // A vector remainder (codegen::partial_group_vectorized) stays whole: with fewer channels
  // than lanes, one call.
  const auto count = static_cast<std::int64_t>(channels);
  split.lanes = codegen::lanes_across_channels(chain, signal, count) &&
                        (channels >= static_cast<std::size_t>(vector_lanes) ||
                         codegen::partial_group_vectorized(chain, signal, count))
                    ? vector_lanes
                    : 1;
  const std::size_t groups = channels / static_cast<std::size_t>(split.lanes);
  split.channel_parts = std::max(1, static_cast<int>(std::min<double>(
                                        {static_cast<double>(threads), static_cast<double>(groups),
                                         work / kMinWorkPerPart})));
  return split;
}

// A time-lanes FIR chain (passes::fir_time_lanes) over fewer channels than threads, split in
// time instead, in `parts`: part p > 0 starts `warm_up` samples early (every FIR's taps - 1,
// added) from a zeroed state of its own, its outputs there thrown away, after which its rings
// hold the true inputs of each FIR; each output then adds the same products in the same order
// as one call gives, bit for bit. Part 0 runs on the caller's state; the last part's state
// becomes the caller's. Returns false (nothing run) where the outputs overlap the inputs (a
// part's warm-up would read what the part before it writes).
template <class C>
bool run_time_parts(const ir::Chain& chain, FxcChainKernel kernel, const FxcChainArgs& args, std::size_t channels,
                    std::size_t frames, int parts) {
  const std::size_t warm_up = fir_warm_up_and_taps(chain).first;
  for (std::size_t a = 0; a < channels; ++a)
    for (std::size_t b = 0; b < channels; ++b) {
      const auto in = reinterpret_cast<std::uintptr_t>(args.in[a]);
      const auto out = reinterpret_cast<std::uintptr_t>(args.out[b]);
      const std::uintptr_t bytes = frames * sizeof(C);
      if (in < out + bytes && out < in + bytes) return false;
    }
  const codegen::ChainLayout layout = codegen::layout_of(chain);
  const std::size_t state_size = channels * static_cast<std::size_t>(layout.state_per_channel);
  const std::size_t position_count = channels * static_cast<std::size_t>(layout.positions_per_channel());
  const std::size_t step = (frames + static_cast<std::size_t>(parts) - 1) / static_cast<std::size_t>(parts);
  // Per part but the first: its state, positions and warm-up outputs.
  struct Scratch {
    std::vector<C> state, warm_out;
    std::vector<std::int64_t> positions;
    std::vector<const void*> in;
    std::vector<void*> out;
  };
  std::vector<Scratch> scratch(static_cast<std::size_t>(parts));
  ThreadPool::shared().run(parts, [&](int p) {
    FlushDenormals ftz;  // on the pool's threads too: every channel flushes alike
    const std::size_t t0 = static_cast<std::size_t>(p) * step;
    const std::size_t t1 = std::min(frames, t0 + step);
    if (t0 >= t1) return;
    FxcChainArgs part = args;
    Scratch& own = scratch[static_cast<std::size_t>(p)];
    own.in.resize(channels);
    own.out.resize(channels);
    if (p > 0) {
      own.state.assign(state_size, C(0));
      own.positions.assign(position_count, 0);
      own.warm_out.resize(channels * warm_up);
      part.state = own.state.data();
      part.positions = own.positions.data();
      for (std::size_t c = 0; c < channels; ++c) {
        own.in[c] = static_cast<const C*>(args.in[c]) + (t0 - warm_up);
        own.out[c] = own.warm_out.data() + c * warm_up;
      }
      part.in = own.in.data();
      part.out = own.out.data();
      part.samples = static_cast<std::int64_t>(warm_up);
      kernel(&part);
    }
    for (std::size_t c = 0; c < channels; ++c) {
      own.in[c] = static_cast<const C*>(args.in[c]) + t0;
      own.out[c] = static_cast<C*>(args.out[c]) + t0;
    }
    part.in = own.in.data();
    part.out = own.out.data();
    part.samples = static_cast<std::int64_t>(t1 - t0);
    kernel(&part);
  });
  // The last part that ran holds the state at the call's end.
  for (std::size_t p = scratch.size(); p-- > 1;)
    if (!scratch[p].state.empty()) {
      std::copy(scratch[p].state.begin(), scratch[p].state.end(), static_cast<C*>(args.state));
      std::copy(scratch[p].positions.begin(), scratch[p].positions.end(), args.positions);
      break;
    }
  return true;
}

// The kernel over its channels, split across the shared pool's threads as thread_split says:
// each part a range of channels (the kernel keeps everything per channel: state, delay lines
// and ring positions are channel-major, so a part is the same call on offset pointers), the
// same arithmetic per channel as one call.
template <class C>
void run_channel_parts(const ir::Chain& chain, FxcChainKernel kernel, const FxcChainArgs& args, std::size_t channels,
                       std::size_t frames, DType signal, int threads) {
  const ThreadSplit split = thread_split(chain, channels, frames, signal, threads);
  if (split.time_parts > 1 && run_time_parts<C>(chain, kernel, args, channels, frames, split.time_parts)) return;
  const int parts = split.channel_parts;
  const int lanes = split.lanes;
  if (parts <= 1) {
    kernel(&args);
    return;
  }
  const std::size_t groups = channels / static_cast<std::size_t>(lanes);
  const codegen::ChainLayout layout = codegen::layout_of(chain);
  const std::size_t groups_per_part = (groups + static_cast<std::size_t>(parts) - 1) / static_cast<std::size_t>(parts);
  ThreadPool::shared().run(parts, [&](int p) {
    FlushDenormals ftz;  // on the pool's threads too: every channel flushes alike
    std::size_t c0 = std::min(channels, static_cast<std::size_t>(p) * groups_per_part * lanes);
    std::size_t c1 = p + 1 == parts ? channels : std::min(channels, c0 + groups_per_part * lanes);
    if (c0 >= c1) return;
    FxcChainArgs part = args;
    part.in = args.in + c0;
    part.out = args.out + c0;
    part.channels = static_cast<std::int64_t>(c1 - c0);
    part.state = static_cast<C*>(args.state) + c0 * static_cast<std::size_t>(layout.state_per_channel);
    part.delay_lines = args.delay_lines + c0 * static_cast<std::size_t>(layout.delay_count);
    part.positions = args.positions + c0 * static_cast<std::size_t>(layout.positions_per_channel());
    kernel(&part);
  });
}

template <class T>
void run_chain(const ir::Graph& g, const ExecutionPlan& plan, const ExecutionPlan::Step& step,
               const GraphValues& values, GraphState<T>& state, std::size_t frames, RunMemory& memory,
               const RunOptions& options) {
  const ir::NodeId id = step.node;
  const ir::Node& node = g.node(id);
  const auto& chain = std::get<ir::Chain>(node.op);
  const auto channels = static_cast<std::size_t>(plan.channels[id]);
  void* const* in = memory.table.data() + plan.row[node.operands[0]];
  void* const* out = memory.table.data() + plan.row[id];
  const NodeValues& v = values.nodes[id];
  std::optional<TraceSpan> span;
  if (options.trace && Trace::global().enabled())
    span.emplace("kernel %" + std::to_string(id), "kernels",
                 Trace::Args{{"graph", g.name},
                             {"channels", std::to_string(channels)},
                             {"samples", std::to_string(frames)},
                             {"strategy", std::string(ir::name(chain.strategy))},
                             {"stages", std::to_string(chain.stages.size())}});
  visit_chain_state(state, chain, id, [&](auto& s) {
    using C = typename std::decay_t<decltype(s.state)>::value_type;
    if (!step.kernel) {
      // FFT overlap-save in the signal type (an FIR-only chain computes in it: C is T).
      if constexpr (std::is_same_v<C, T>) {
        if (PartitionedConvolver<T>* parts = memory.partitioned<T>()[id].get()) {
          // Sized once (a real-time runner reserves them before its first call). The block's
          // phase is kept where the FIR's ring position is (a lone FIR's only position).
          if (s.fft_partitions.size() != channels) s.fft_partitions.resize(channels);
          const std::size_t positions = channels > 0 ? s.positions.size() / channels : 0;
          for (std::size_t c = 0; c < channels; ++c) {
            std::vector<T>& history = s.fft_history[c];
            if (history.size() != parts->history_length()) history.resize(parts->history_length(), T(0));
            if (!parts->reserved(s.fft_partitions[c])) parts->reserve(s.fft_partitions[c]);
            parts->convolve(v.f64, v.template partition_spectra<T>(), v.fft_serial, {static_cast<const T*>(in[c]), frames},
                            {static_cast<T*>(out[c]), frames}, history, s.positions[(c + 1) * positions - 1],
                            s.fft_partitions[c]);
          }
        } else {
          FftConvolver<T>& fft = *memory.fft<T>()[id];
          for (std::size_t c = 0; c < channels; ++c) {
            std::vector<T>& history = s.fft_history[c];
            if (history.size() + 1 != fft.taps()) history.resize(fft.taps() - 1, T(0));
            fft.convolve(v.f64, v.template fft_response<T>(), {static_cast<const T*>(in[c]), frames},
                         {static_cast<T*>(out[c]), frames}, history);
          }
        }
      }
    } else if (chain.strategy == ir::IirStrategy::chunked_scan && chunked_scan_applies(chain)) {
      DType signal = std::is_same_v<T, float> ? DType::f32 : DType::f64;
      run_chunked_scan(chain, step.kernel, in, out, channels, frames, signal, s.state.data(),
                       passes::host_target().lanes(codegen::compute_dtype(chain, signal)), options.threads);
    } else {
      grow_delay_lines(s, frames);
      for (std::size_t k = 0; k < s.lines.size(); ++k) memory.delay_lines[k] = s.lines[k].data();
      FxcChainArgs args{in,
                        out,
                        static_cast<std::int64_t>(channels),
                        static_cast<std::int64_t>(frames),
                        v.template params<C>(),
                        s.delay_lengths.data(),
                        s.state.data(),
                        memory.delay_lines.data(),
                        s.positions.data()};
      run_channel_parts<C>(chain, step.kernel, args, channels, frames, std::is_same_v<T, float> ? DType::f32 : DType::f64,
                           options.threads);
    }
  });
  counters().dispatches.fetch_add(1, std::memory_order_relaxed);
}

template <class T>
void run_sum(const ir::Graph& g, const ExecutionPlan& plan, const ExecutionPlan::Step& step,
             const GraphValues& values, std::size_t frames, RunMemory& memory) {
  const ir::Node& node = g.node(step.node);
  const auto channels = static_cast<std::size_t>(plan.channels[step.node]);
  for (std::size_t i = 0; i < node.operands.size(); ++i)
    for (std::size_t c = 0; c < channels; ++c)
      memory.sum_inputs[i * channels + c] = memory.table[plan.row[node.operands[i]] + c];
  FxcChainArgs args{memory.sum_inputs.data(),
                    memory.table.data() + plan.row[step.node],
                    static_cast<std::int64_t>(channels),
                    static_cast<std::int64_t>(frames),
                    values.nodes[step.node].template params<T>(),
                    nullptr,
                    nullptr,
                    nullptr,
                    nullptr};
  step.kernel(&args);
  counters().dispatches.fetch_add(1, std::memory_order_relaxed);
}

void copy_output(const ExecutionPlan& plan, const CallerSignals& io, std::size_t sample_bytes, std::size_t o,
                 const RunMemory& memory) {
  ir::NodeId source = plan.output_source[o];
  for (int c = 0; c < plan.channels[plan.outputs[o]]; ++c) {
    std::byte* to = static_cast<std::byte*>(io.outputs[o][c]) + io.offset * sample_bytes;
    const void* from = memory.table[plan.row[source] + c];
    if (to != from && io.frames > 0) std::memmove(to, from, io.frames * sample_bytes);
  }
}

// The outputs that are an input as it is, channel by channel. In place, one such copy may
// write over an input that another reads (two inputs swapped: each was given the other's
// copy). A copy whose destination no other pending copy reads goes first, while every input
// it might overwrite is still as it came; what is left then are cycles (a destination is an
// input channel exactly, or overlaps none: the in-place rule), each turned by swapping its
// ranges along it, without memory of its own (a cycle through inputs that partly overlap one
// another has no such turn: the in-place rule excludes them).
void copy_passed_through(const ExecutionPlan& plan, const CallerSignals& io, std::size_t sample_bytes,
                         RunMemory& memory) {
  auto& copies = memory.passed_through;  // reserved by size_run_memory: nothing allocates
  copies.clear();
  for (std::size_t o = 0; o < plan.outputs.size(); ++o) {
    if (memory.direct[o] || plan.output_step[o] != plan.steps.size()) continue;
    for (int c = 0; c < plan.channels[plan.outputs[o]]; ++c) {
      auto* to = static_cast<std::byte*>(io.outputs[o][c]) + io.offset * sample_bytes;
      const auto* from = static_cast<const std::byte*>(memory.table[plan.row[plan.output_source[o]] + c]);
      if (to != from) copies.push_back({to, from});
    }
  }
  const std::size_t bytes = io.frames * sample_bytes;
  if (bytes == 0) return;
  auto take = [&](std::size_t k) {
    const auto copy = copies[k];
    copies[k] = copies.back();
    copies.pop_back();
    return copy;
  };
  // Ranges, not only pointers: inputs that share memory, one starting inside the other.
  auto read_elsewhere = [&](std::size_t k) {
    for (std::size_t j = 0; j < copies.size(); ++j)
      if (j != k && overlaps(copies[k].first, copies[k].first + bytes, copies[j].second, copies[j].second + bytes))
        return true;
    return false;
  };
  while (!copies.empty()) {
    bool copied = false;
    for (std::size_t k = 0; k < copies.size();) {
      if (read_elsewhere(k)) {
        ++k;
        continue;
      }
      const auto [to, from] = take(k);
      std::memmove(to, from, bytes);
      copied = true;
    }
    if (copied) continue;
    // A cycle A <- B <- C ... <- A: swapping A with B puts B's samples in A and A's in B, then
    // B with C, and so on; the last copy (... <- A) is then done.
    const std::byte* const start = copies[0].first;
    std::size_t k = 0;
    while (true) {
      const auto [to, from] = take(k);
      if (from == start) break;
      std::swap_ranges(to, to + bytes, const_cast<std::byte*>(from));
      auto next = std::find_if(copies.begin(), copies.end(), [&](const auto& c) { return c.first == from; });
      if (next == copies.end()) break;  // not a cycle: the in-place rule was broken
      k = static_cast<std::size_t>(next - copies.begin());
    }
  }
}

}  // namespace

int step_threads(const ir::Graph& scheduled, const ExecutionPlan& plan, const ExecutionPlan::Step& step,
                 DType signal, std::size_t frames, int threads) {
  if (step.kind != ExecutionPlan::Kind::chain || !step.kernel) return 1;
  const auto& chain = std::get<ir::Chain>(scheduled.node(step.node).op);
  if (chain.strategy == ir::IirStrategy::chunked_scan && chunked_scan_applies(chain)) return threads;
  const ThreadSplit split =
      thread_split(chain, static_cast<std::size_t>(plan.channels[step.node]), frames, signal, threads);
  return std::max(split.time_parts, split.channel_parts);
}

void size_run_memory(const ir::Graph& scheduled, const ExecutionPlan& plan, RunMemory& memory) {
  memory.slots.assign(plan.slot_channels.size(), nullptr);
  memory.table.assign(plan.table_size, nullptr);
  memory.sum_inputs.assign(plan.max_sum_pointers, nullptr);
  memory.delay_lines.assign(plan.max_delay_lines, nullptr);
  memory.direct.assign(plan.outputs.size(), 0);
  std::size_t output_channels = 0;
  for (ir::NodeId id : plan.outputs) output_channels += static_cast<std::size_t>(plan.channels[id]);
  memory.passed_through.clear();
  memory.passed_through.reserve(output_channels);
  const bool f32 = dtype_of(scheduled) == DType::f32;
  auto size = [&](auto& list, bool used) {
    list.clear();
    list.resize(used ? scheduled.size() : 0);
  };
  size(memory.fft_f32, f32);
  size(memory.fft_f64, !f32);
  size(memory.partitioned_f32, f32);
  size(memory.partitioned_f64, !f32);
  for (const ExecutionPlan::Step& step : plan.steps) {
    if (step.kernel || step.kind != ExecutionPlan::Kind::chain) continue;
    const auto& chain = std::get<ir::Chain>(scheduled.node(step.node).op);
    std::size_t taps = std::get<ir::FirFilter>(chain.stages[0]).taps.size();
    const bool overlap_save = !runs_partitioned(taps, chain.fft_block);
    if (f32 && overlap_save) memory.fft_f32[step.node] = std::make_unique<FftConvolver<float>>(taps, chain.fft_block);
    else if (overlap_save) memory.fft_f64[step.node] = std::make_unique<FftConvolver<double>>(taps, chain.fft_block);
    else if (f32) memory.partitioned_f32[step.node] = std::make_unique<PartitionedConvolver<float>>(taps, chain.fft_block);
    else memory.partitioned_f64[step.node] = std::make_unique<PartitionedConvolver<double>>(taps, chain.fft_block);
  }
}

void choose_direct_outputs(const ExecutionPlan& plan, const CallerSignals& io, std::size_t sample_bytes,
                           RunMemory& memory) noexcept {
  // One bounding range of every input channel, so that separate buffers (the usual case) are
  // told apart in one comparison per output channel.
  const std::size_t bytes = io.frames * sample_bytes;
  const std::size_t skip = io.offset * sample_bytes;
  const std::byte* begin = nullptr;
  const std::byte* end = nullptr;
  for (std::size_t i = 0; i < plan.inputs.size(); ++i)
    for (int k = 0; k < plan.channels[plan.inputs[i]]; ++k) {
      const std::byte* p = static_cast<const std::byte*>(io.inputs[i][k]) + skip;
      if (!begin || p < begin) begin = p;
      if (!end || p + bytes > end) end = p + bytes;
    }
  for (std::size_t o = 0; o < plan.outputs.size(); ++o)
    memory.direct[o] = plan.output_direct[o] &&
                       (bytes == 0 || !begin || safe_to_write_directly(plan, io, sample_bytes, o, begin, end));
}

bool slot_in_use(const ExecutionPlan& plan, const RunMemory& memory, int slot) {
  for (const ExecutionPlan::Step& step : plan.steps) {
    if (step.slot != slot) continue;
    bool direct = false;
    for (std::size_t o = 0; o < plan.outputs.size(); ++o)
      direct |= memory.direct[o] && plan.output_source[o] == step.node;
    if (!direct) return true;
  }
  return false;
}

namespace {

// A feedback node's value for the block: its line from the position on, the samples written
// `length` samples ago (within F <= length of them, none is overwritten before it is read).
// A line that has not wrapped holds fewer cells than `length`; those past it are zeros. At
// most two copies per channel: up to the end of the line, then from its start.
template <class T>
void read_feedback(ChainState<T>& s, void* const* out, std::size_t channels, std::size_t frames) {
  grow_delay_lines(s, frames);
  const auto length = static_cast<std::size_t>(std::max<std::int64_t>(s.delay_lengths[0], 1));
  for (std::size_t c = 0; c < channels; ++c) {
    const std::vector<T>& line = s.lines[c];
    const auto pos = static_cast<std::size_t>(s.positions[c]);
    T* y = static_cast<T*>(out[c]);
    std::size_t first = std::min(frames, length - pos);  // [pos, pos + first) then [0, frames - first)
    std::size_t held = line.size() > pos ? std::min(first, line.size() - pos) : 0;
    std::copy_n(line.data() + pos, held, y);
    std::fill(y + held, y + first, T(0));
    std::size_t rest = frames - first;
    std::size_t wrapped = std::min(rest, line.size());
    std::copy_n(line.data(), wrapped, y + first);
    std::fill(y + first + wrapped, y + frames, T(0));
  }
}

// After the block: its operand's samples go into the line where they were read from, and the
// position moves on, as a delay kernel's ring does one sample at a time.
template <class T>
void write_feedback(ChainState<T>& s, void* const* in, std::size_t channels, std::size_t frames) {
  const auto length = static_cast<std::size_t>(std::max<std::int64_t>(s.delay_lengths[0], 1));
  for (std::size_t c = 0; c < channels; ++c) {
    std::vector<T>& line = s.lines[c];
    const auto pos = static_cast<std::size_t>(s.positions[c]);
    const T* x = static_cast<const T*>(in[c]);
    std::size_t first = std::min(frames, length - pos);
    std::copy_n(x, std::min(first, line.size() > pos ? line.size() - pos : 0), line.data() + pos);
    std::copy_n(x + first, std::min(frames - first, line.size()), line.data());
    s.positions[c] = static_cast<std::int64_t>((pos + frames) % length);
  }
}

// A select, matrix or concat over the block, from its operands' channels into its own.
template <class T>
void run_route(const ir::Graph& g, const ExecutionPlan& plan, const ExecutionPlan::Step& step,
               const GraphValues& values, std::size_t frames, RunMemory& memory) {
  const ir::Node& node = g.node(step.node);
  void* const* out = memory.table.data() + plan.row[step.node];
  auto channel = [&](ir::NodeId operand, std::size_t c) {
    return static_cast<const T*>(memory.table[plan.row[operand] + c]);
  };
  auto copy = [&](T* to, const T* from) {
    if (to != from && frames > 0) std::memmove(to, from, frames * sizeof(T));
  };
  if (const auto* select = std::get_if<ir::Select>(&node.op)) {
    for (std::size_t c = 0; c < select->indices.size(); ++c)
      copy(static_cast<T*>(out[c]), channel(node.operands[0], static_cast<std::size_t>(select->indices[c])));
  } else if (const auto* matrix = std::get_if<ir::Matrix>(&node.op)) {
    const auto columns = static_cast<std::size_t>(plan.channels[node.operands[0]]);
    const T* gains = values.nodes[step.node].template params<T>();
    for (std::size_t r = 0; r < static_cast<std::size_t>(matrix->rows); ++r) {
      T* y = static_cast<T*>(out[r]);
      std::fill(y, y + frames, T(0));
      for (std::size_t k = 0; k < columns; ++k) {
        const T gain = gains[r * columns + k];
        const T* x = channel(node.operands[0], k);
        if (gain != T(0))
          for (std::size_t n = 0; n < frames; ++n) y[n] += gain * x[n];
      }
    }
  } else if (ir::holds<ir::Multiply>(node)) {
    const auto channels = static_cast<std::size_t>(plan.channels[step.node]);
    const auto by = static_cast<std::size_t>(plan.channels[node.operands[1]]);
    for (std::size_t c = 0; c < channels; ++c) {
      T* y = static_cast<T*>(out[c]);
      const T* a = channel(node.operands[0], c);
      const T* b = channel(node.operands[1], c * by / channels);
      for (std::size_t n = 0; n < frames; ++n) y[n] = a[n] * b[n];
    }
  } else if (const auto* link = std::get_if<ir::Link>(&node.op)) {
    const auto groups = static_cast<std::size_t>(link->groups);
    const auto size = static_cast<std::size_t>(plan.channels[node.operands[0]]) / groups;
    const bool max = link->mode == design::LinkMode::max;
    for (std::size_t g = 0; g < groups; ++g) {
      T* y = static_cast<T*>(out[g]);
      std::fill(y, y + frames, T(0));
      // The interpreter's order: level = max(level, |x_c|) (its std::max), or the sum, then / C.
      for (std::size_t c = g * size; c < (g + 1) * size; ++c) {
        const T* x = channel(node.operands[0], c);
        for (std::size_t n = 0; n < frames; ++n) {
          const T v = std::fabs(x[n]);
          y[n] = max ? (y[n] < v ? v : y[n]) : y[n] + v;
        }
      }
      if (!max)
        for (std::size_t n = 0; n < frames; ++n) y[n] = y[n] / T(size);
    }
  } else {
    std::size_t c = 0;
    for (ir::NodeId operand : node.operands)
      for (int k = 0; k < plan.channels[operand]; ++k)
        copy(static_cast<T*>(out[c++]), channel(operand, static_cast<std::size_t>(k)));
  }
  counters().dispatches.fetch_add(1, std::memory_order_relaxed);
}

// Points every channel of the run's table at sample `at` of its memory: the caller's inputs
// and direct outputs (from io.offset), and the slots.
template <class T>
void point_table(const ExecutionPlan& plan, const CallerSignals& io, RunMemory& memory, std::size_t at) {
  for (std::size_t i = 0; i < plan.inputs.size(); ++i) {
    std::size_t row = plan.row[plan.inputs[i]];
    for (int c = 0; c < plan.channels[plan.inputs[i]]; ++c)
      memory.table[row + c] = const_cast<T*>(static_cast<const T*>(io.inputs[i][c])) + io.offset + at;
  }
  for (const ExecutionPlan::Step& step : plan.steps) {
    T* slot = reinterpret_cast<T*>(memory.slots[step.slot]);
    std::size_t row = plan.row[step.node];
    for (int c = 0; c < plan.channels[step.node]; ++c)
      memory.table[row + c] = slot ? slot + c * memory.stride + at : nullptr;  // null: a slot this run does not use
  }
  for (std::size_t o = 0; o < plan.outputs.size(); ++o) {
    if (!memory.direct[o]) continue;
    std::size_t row = plan.row[plan.output_source[o]];
    for (int c = 0; c < plan.channels[plan.outputs[o]]; ++c)
      memory.table[row + c] = static_cast<T*>(io.outputs[o][c]) + io.offset + at;
  }
}

template <class T>
void run_step(const ir::Graph& g, const ExecutionPlan& plan, const ExecutionPlan::Step& step, const GraphValues& values,
              GraphState<T>& state, std::size_t frames, RunMemory& memory, const RunOptions& options) {
  switch (step.kind) {
    case ExecutionPlan::Kind::chain:
      run_chain(g, plan, step, values, state, frames, memory, options);
      break;
    case ExecutionPlan::Kind::sum:
      run_sum<T>(g, plan, step, values, frames, memory);
      break;
    case ExecutionPlan::Kind::route:
      run_route<T>(g, plan, step, values, frames, memory);
      break;
    case ExecutionPlan::Kind::feedback:
      read_feedback(state.chains[step.node], memory.table.data() + plan.row[step.node],
                    static_cast<std::size_t>(plan.channels[step.node]), frames);
      break;
  }
}

// A loop's steps over the whole call, in blocks of at most its shortest feedback delay (at
// the values of this run): every feedback value of a block was written before the block.
template <class T>
void run_loop(const ir::Graph& g, const ExecutionPlan& plan, const ExecutionPlan::Loop& loop,
              const GraphValues& values, GraphState<T>& state, const CallerSignals& io, RunMemory& memory,
              const RunOptions& options) {
  const std::size_t block = loop_block_length(io.frames, loop.feedback_steps.size(), [&](std::size_t i) {
    return state.chains[plan.steps[loop.feedback_steps[i]].node].delay_lengths[0];
  });
  for (std::size_t done = 0; done < io.frames; done += block) {
    const std::size_t frames = std::min(block, io.frames - done);
    if (done > 0) point_table<T>(plan, io, memory, done);
    for (std::size_t s = loop.begin; s < loop.end; ++s)
      run_step(g, plan, plan.steps[s], values, state, frames, memory, options);
    for (std::size_t s : loop.feedback_steps) {
      ir::NodeId id = plan.steps[s].node;
      write_feedback(state.chains[id], memory.table.data() + plan.row[g.node(id).operands[0]],
                     static_cast<std::size_t>(plan.channels[id]), frames);
    }
  }
  if (io.frames > block) point_table<T>(plan, io, memory, 0);
}

}  // namespace

template <class T>
void run_graph(const ir::Graph& g, const ExecutionPlan& plan, const GraphValues& values, GraphState<T>& state,
               const CallerSignals& io, RunMemory& memory, const RunOptions& options) {
  FlushDenormals ftz;
  point_table<T>(plan, io, memory, 0);
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    if (plan.step_loop[s] < 0) {
      run_step(g, plan, plan.steps[s], values, state, io.frames, memory, options);
      continue;
    }
    const ExecutionPlan::Loop& loop = plan.loops[static_cast<std::size_t>(plan.step_loop[s])];
    run_loop(g, plan, loop, values, state, io, memory, options);
    s = loop.end - 1;
  }
  // Outputs that are an input as it is first: their input may share memory with another
  // output's (in place), which the copies from slots would overwrite.
  copy_passed_through(plan, io, sizeof(T), memory);
  for (std::size_t o = 0; o < plan.outputs.size(); ++o)
    if (!memory.direct[o] && plan.output_step[o] != plan.steps.size()) copy_output(plan, io, sizeof(T), o, memory);
}

template void run_graph(const ir::Graph&, const ExecutionPlan&, const GraphValues&, GraphState<float>&,
                        const CallerSignals&, RunMemory&, const RunOptions&);
template void run_graph(const ir::Graph&, const ExecutionPlan&, const GraphValues&, GraphState<double>&,
                        const CallerSignals&, RunMemory&, const RunOptions&);

}  // namespace fxc
