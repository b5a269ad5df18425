// SPDX-License-Identifier: Apache-2.0
#include "runtime/cpu_executor.h"

#include <algorithm>
#include <optional>

#include "ir/hash.h"
#include "passes/target.h"
#include "runtime/execution_plan.h"
#include "runtime/graph_values.h"
#include "runtime/run_graph.h"
#include "runtime/stream_state.h"
#include "runtime/stream_state_bytes.h"
#include "runtime/thread_pool.h"

namespace fxc {

// Memory fresh to a process costs a page fault and the system's zeroing per page, which was
// most of a long whole run's time with slots the signal's length (8 channels x 60 s of two
// chains summed: 787 -> 279 MB, and the whole command 800 -> 395 ms, in pieces).
constexpr std::size_t kSlotPieceFrames = std::size_t{1} << 16;

std::size_t slot_piece_frames(const ir::Graph& g, const ExecutionPlan& plan, DType signal, std::size_t frames,
                              int threads) {
  std::size_t piece = kSlotPieceFrames;
  for (const ExecutionPlan::Step& step : plan.steps) {
    const int whole = step_threads(g, plan, step, signal, frames, threads);
    while (piece < frames && step_threads(g, plan, step, signal, piece, threads) < whole) piece *= 2;
  }
  return piece;
}

namespace {

// Slot memory for one whole-signal run: only the slots the run uses, each sized for the run.
class SlotBuffers {
 public:
  template <class T>
  void provide(const ExecutionPlan& plan, std::size_t frames, RunMemory& memory) {
    memory.stride = frames;
    buffers_.resize(plan.slot_channels.size());
    for (std::size_t s = 0; s < plan.slot_channels.size(); ++s) {
      if (!slot_in_use(plan, memory, static_cast<int>(s))) {
        memory.slots[s] = nullptr;
        continue;
      }
      std::size_t bytes = static_cast<std::size_t>(plan.slot_channels[s]) * frames * sizeof(T);
      if (buffers_[s].size() < bytes) buffers_[s] = std::vector<std::byte, DefaultInitAllocator<std::byte>>(bytes);
      memory.slots[s] = buffers_[s].data();
    }
  }

 private:
  std::vector<std::vector<std::byte, DefaultInitAllocator<std::byte>>> buffers_;
};

// A graph with loops runs its whole signal in pieces of this many frames, as a stream would:
// its loops run in blocks no longer than their delays anyway, and pieces keep every value of a
// piece in cache from the kernel that writes it to those that read it, and the slots this
// long instead of the signal's length. Measured on Freeverb, 8 channels x 60 s: 600 ms and 1.7 GB
// whole; 240-250 ms and 254 MB with pieces of 1024 or 2048 frames, 277 ms with 8192, 332 ms
// with 16384 (the echo: 21.5-22.5 ms for all, before its filter ran in time chunks).
constexpr std::size_t kLoopPieceFrames = 2048;
// A loop whose chains split its blocks into time chunks (passes::choose_loop_chunks) wants
// pieces as long as its block, its shortest delay, up to this many frames.
constexpr std::size_t kLongestLoopPiece = std::size_t{1} << 16;

template <class T>
std::size_t piece_frames(const ir::Graph& g, const ExecutionPlan& plan, const GraphState<T>& state) {
  std::size_t piece = kLoopPieceFrames;
  for (const ExecutionPlan::Loop& loop : plan.loops) {
    bool chunked = false;
    for (std::size_t s = loop.begin; s < loop.end; ++s)
      if (const auto* chain = std::get_if<ir::Chain>(&g.node(plan.steps[s].node).op))
        chunked = chunked || chain->strategy == ir::IirStrategy::chunked_scan;
    if (!chunked) continue;
    const std::size_t block = loop_block_length(kLongestLoopPiece, loop.feedback_steps.size(), [&](std::size_t i) {
      return state.chains[plan.steps[loop.feedback_steps[i]].node].delay_lengths[0];
    });
    piece = std::max(piece, block);
  }
  return piece;
}

// Whether a whole run goes in slot pieces: it keeps a value between kernels in a slot (rather
// than every kernel reading the caller's inputs and writing its outputs), and every step gives
// the same bits in pieces: not a chunked scan (its chunks start at each call) nor an FFT FIR (overlap-save
// steps from the start of each call, so pieces moved its frames and the rounding, and with
// the piece length, the thread count).
bool slot_pieces_apply(const ir::Graph& g, const ExecutionPlan& plan, const RunMemory& memory) {
  bool in_slots = false;
  for (const ExecutionPlan::Step& step : plan.steps) {
    if (const auto* chain = std::get_if<ir::Chain>(&g.node(step.node).op))
      if (chain->strategy == ir::IirStrategy::chunked_scan || !step.kernel) return false;
    in_slots = in_slots || slot_in_use(plan, memory, step.slot);
  }
  return in_slots;
}

template <class T>
void run_whole(const ir::Graph& g, const ExecutionPlan& plan, const GraphValues& values, GraphState<T>& state,
               const CallerSignals& io, RunMemory& memory, SlotBuffers& slots) {
  choose_direct_outputs(plan, io, sizeof(T), memory);
  const RunOptions options{true, ThreadPool::shared().threads()};
  // Loops in blocks always go in pieces (their slots would otherwise be the signal's length);
  // fused loops when several kernels pass values on through memory: Freeverb's 18 fused
  // kernels took 330 ms whole and 248 ms in pieces, a fused echo alone 9.4 ms whole and 18.8
  // ms in pieces (same run). The passes chose the chains' strategies by the same rule.
  const bool loop_pieces = plan.runs_in_pieces;
  // Graphs whose kernels pass values on through slots, so that the slots are not the signal's
  // length (slot_piece_frames).
  const bool slot_pieces = !loop_pieces && slot_pieces_apply(g, plan, memory);
  const DType signal = std::is_same_v<T, float> ? DType::f32 : DType::f64;
  const std::size_t piece_length = loop_pieces   ? piece_frames(g, plan, state)
                                   : slot_pieces ? slot_piece_frames(g, plan, signal, io.frames, options.threads)
                                                 : io.frames;
  if (io.frames <= piece_length) {
    slots.provide<T>(plan, io.frames, memory);
    run_graph(g, plan, values, state, io, memory, options);
    return;
  }
  slots.provide<T>(plan, piece_length, memory);
  for (std::size_t done = 0; done < io.frames; done += piece_length) {
    CallerSignals piece{io.inputs, io.outputs, io.offset + done, std::min(piece_length, io.frames - done)};
    run_graph(g, plan, values, state, piece, memory, options);
  }
}

// Runs on caller pointers; `state`'s chains are made ready first.
Expected<std::monostate, std::string> run_into(const ir::Graph& g, const ExecutionPlan& plan,
                                               const GraphValues& values, StreamState& state,
                                               const CallerSignals& io, RunMemory& memory, SlotBuffers& slots) {
  if (io.inputs.size() != plan.inputs.size())
    return Unexpected{"the graph has " + std::to_string(plan.inputs.size()) + " input(s), got " +
                      std::to_string(io.inputs.size())};
  if (io.outputs.size() != plan.outputs.size())
    return Unexpected{"the graph has " + std::to_string(plan.outputs.size()) + " output(s), got " +
                      std::to_string(io.outputs.size())};
  std::visit(
      [&](auto& graph_state) {
        ready_chain_states(g, values, graph_state);
        run_whole(g, plan, values, graph_state, io, memory, slots);
      },
      state.graph);
  return std::monostate{};
}

// Signals to pointer arrays: the inputs converted to the graph's dtype where they are not in
// it (`converted` keeps those), the outputs allocated, uninitialized.
struct SignalPointers {
  std::vector<Signal> converted;
  std::vector<std::vector<const void*>> inputs;
  std::vector<std::vector<void*>> outputs;
  std::vector<const void* const*> input_arrays;
  std::vector<void* const*> output_arrays;
};

const void* channel_data(const Signal& s, std::size_t c) {
  return s.dtype() == DType::f32 ? static_cast<const void*>(s.f32(c).data()) : s.f64(c).data();
}
void* channel_data(Signal& s, std::size_t c) {
  return s.dtype() == DType::f32 ? static_cast<void*>(s.f32(c).data()) : s.f64(c).data();
}

Expected<std::size_t, std::string> bind_signals(const ir::Graph& g, std::span<const Signal> inputs,
                                                std::vector<Signal>& outputs, SignalPointers& p) {
  std::vector<ir::NodeId> input_ids = g.inputs();
  if (inputs.size() != input_ids.size())
    return Unexpected{"the graph has " + std::to_string(input_ids.size()) + " input(s), got " +
                      std::to_string(inputs.size()) + " signal(s)"};
  DType dtype = dtype_of(g);
  std::size_t frames = inputs.empty() ? 0 : inputs[0].samples();
  p.converted.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    int declared = g.node(input_ids[i]).type.channels;
    if (declared != static_cast<int>(inputs[i].channels()) || inputs[i].samples() != frames)
      return Unexpected{"input " + std::to_string(i) + " does not match the bound graph (" +
                        std::to_string(declared) + " channels, " + std::to_string(frames) + " samples)"};
    const Signal* s = &inputs[i];
    if (s->dtype() != dtype) s = &p.converted.emplace_back(s->converted(dtype));
    auto& arr = p.inputs.emplace_back();
    for (std::size_t c = 0; c < s->channels(); ++c) arr.push_back(channel_data(*s, c));
  }
  for (ir::NodeId id : g.outputs()) {
    Signal& s = outputs.emplace_back(static_cast<std::size_t>(g.node(id).type.channels), frames, dtype,
                                     Signal::Uninitialized{});
    auto& arr = p.outputs.emplace_back();
    for (std::size_t c = 0; c < s.channels(); ++c) arr.push_back(channel_data(s, c));
  }
  for (auto& a : p.inputs) p.input_arrays.push_back(a.data());
  for (auto& a : p.outputs) p.output_arrays.push_back(a.data());
  return frames;
}


// A whole signal from zero state, with a plan, values and work memory made before.
Expected<std::monostate, std::string> run_from_zero(const ir::Graph& scheduled, const ExecutionPlan& plan,
                                                    const GraphValues& values, std::span<const void* const* const> inputs,
                                                    std::span<void* const* const> outputs, std::size_t frames,
                                                    RunMemory& memory) {
  StreamState state = fresh_stream_state(dtype_of(scheduled));
  SlotBuffers slots;
  return run_into(scheduled, plan, values, state, CallerSignals{inputs, outputs, 0, frames}, memory, slots);
}

}  // namespace

Expected<std::monostate, std::string> execute_cpu_into(const ir::Graph& scheduled, const codegen::CpuKernels& kernels,
                                                       std::span<const void* const* const> inputs,
                                                       std::span<void* const* const> outputs, std::size_t frames) {
  auto plan = plan_execution(scheduled, kernels);
  if (!plan) return Unexpected{plan.error()};
  GraphValues values = graph_values(scheduled);
  RunMemory memory;
  size_run_memory(scheduled, *plan, memory);
  return run_from_zero(scheduled, *plan, values, inputs, outputs, frames, memory);
}

Expected<std::vector<Signal>, std::string> execute_cpu(const ir::Graph& scheduled,
                                                       const codegen::CpuKernels& kernels,
                                                       std::span<const Signal> inputs) {
  std::vector<Signal> outputs;
  SignalPointers p;
  auto frames = bind_signals(scheduled, inputs, outputs, p);
  if (!frames) return Unexpected{frames.error()};
  auto done = execute_cpu_into(scheduled, kernels, p.input_arrays, p.output_arrays, *frames);
  if (!done) return Unexpected{done.error()};
  return outputs;
}

// ---- CpuRunner: whole-signal runs with their plan, values and work memory kept ----

// Work memory sets a CpuRunner keeps between runs.
constexpr std::size_t kMaxIdleMemory = 4;

struct CpuRunner::Prepared {
  Expected<ExecutionPlan, std::string> plan;
  GraphValues values;
};

CpuRunner::CpuRunner(ir::Graph scheduled, std::shared_ptr<const codegen::CpuKernels> kernels)
    : scheduled_(std::move(scheduled)), kernels_(std::move(kernels)) {}
CpuRunner::~CpuRunner() = default;

const CpuRunner::Prepared& CpuRunner::prepared() const {
  std::call_once(prepare_once_, [this] {
    prepared_ = std::make_unique<Prepared>(Prepared{plan_execution(scheduled_, *kernels_), graph_values(scheduled_)});
  });
  return *prepared_;
}

Expected<std::monostate, std::string> CpuRunner::run_into(std::span<const void* const* const> inputs,
                                                          std::span<void* const* const> outputs,
                                                          std::size_t frames) const {
  const Prepared& p = prepared();
  if (!p.plan) return Unexpected{p.plan.error()};
  std::unique_ptr<RunMemory> memory;
  {
    std::lock_guard lock(idle_mutex_);
    if (!idle_.empty()) {
      memory = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!memory) {
    memory = std::make_unique<RunMemory>();
    size_run_memory(scheduled_, *p.plan, *memory);
  }
  auto done = run_from_zero(scheduled_, *p.plan, p.values, inputs, outputs, frames, *memory);
  std::lock_guard lock(idle_mutex_);
  // Kept for the next run, up to a few sets: a burst of concurrent runs does not hold its
  // FFT buffers for the life of the values.
  if (idle_.size() < kMaxIdleMemory) idle_.push_back(std::move(memory));
  return done;
}

Expected<std::vector<Signal>, std::string> CpuRunner::run(std::span<const Signal> inputs) const {
  std::vector<Signal> outputs;
  SignalPointers p;
  auto frames = bind_signals(scheduled_, inputs, outputs, p);
  if (!frames) return Unexpected{frames.error()};
  auto done = run_into(p.input_arrays, p.output_arrays, *frames);
  if (!done) return Unexpected{done.error()};
  return outputs;
}

// ---- CpuStream: the whole-signal runner with state kept between calls ----

struct CpuStream::Run {
  Expected<ExecutionPlan, std::string> plan;
  GraphValues values;
  RunMemory memory;
  SlotBuffers slots;

  Run(const ir::Graph& g, const codegen::CpuKernels& kernels)
      : plan(plan_execution(g, kernels)), values(graph_values(g)) {
    if (plan) size_run_memory(g, *plan, memory);
  }
};

CpuStream::CpuStream(ir::Graph scheduled, std::shared_ptr<const codegen::CpuKernels> kernels)
    : scheduled_(std::move(scheduled)),
      kernels_(std::move(kernels)),
      state_(std::make_unique<StreamState>(fresh_stream_state(dtype_of(scheduled_)))),
      run_(std::make_unique<Run>(scheduled_, *kernels_)) {}
CpuStream::~CpuStream() = default;
CpuStream::CpuStream(CpuStream&&) noexcept = default;
CpuStream& CpuStream::operator=(CpuStream&&) noexcept = default;

Expected<std::vector<Signal>, std::string> CpuStream::process(std::span<const Signal> block) {
  std::vector<Signal> outputs;
  SignalPointers p;
  auto frames = bind_signals(scheduled_, block, outputs, p);
  if (!frames) return Unexpected{frames.error()};
  if (!run_->plan) return Unexpected{run_->plan.error()};
  auto done = run_into(scheduled_, *run_->plan, run_->values, *state_,
                       CallerSignals{p.input_arrays, p.output_arrays, 0, *frames}, run_->memory, run_->slots);
  if (!done) return Unexpected{done.error()};
  return outputs;
}

void CpuStream::reset() { *state_ = fresh_stream_state(dtype_of(scheduled_)); }

std::shared_ptr<const StreamState> CpuStream::snapshot() const {
  return std::make_shared<const StreamState>(*state_);
}

void CpuStream::restore(const StreamState& state) { *state_ = state; }

std::string CpuStream::save_state() const { return save_stream_state(*state_, scheduled_); }

Expected<std::monostate, std::string> CpuStream::load_state(std::string_view bytes) {
  auto loaded = load_stream_state(bytes, scheduled_, run_->values);
  if (!loaded) return Unexpected{loaded.error()};
  *state_ = std::move(*loaded);
  return std::monostate{};
}

namespace {

// A chain's state in another compute type (float32 <-> float64 state precision).
template <class To, class From>
ChainState<To> convert_state(const ChainState<From>& from) {
  ChainState<To> to;
  to.ready = from.ready;
  to.delay_lengths = from.delay_lengths;
  to.state.assign(from.state.begin(), from.state.end());
  to.positions = from.positions;
  for (const auto& line : from.lines) to.lines.emplace_back(line.begin(), line.end());
  for (std::size_t c = 0; c < from.fft_history.size(); ++c) {
    const auto h = chain_fft_history(from, c);
    to.fft_history.emplace_back(h.begin(), h.end());
  }
  return to;
}

}  // namespace

Expected<std::monostate, std::string> CpuStream::update_values(const ir::Graph& scheduled,
                                                               std::shared_ptr<const codegen::CpuKernels> kernels) {
  if (schedule_free_hash(scheduled, true) != schedule_free_hash(scheduled_, true))
    return Unexpected{std::string(
        "the new graph has another shape (stages, orders, channels or dtype): compile it as a new stream")};
  if (!kernels) return Unexpected{std::string("internal error (a bug in fxc): update_values without kernels")};
  // A float32 graph keeps a chain's state in `chains` (float32 state) or `wide_chains`
  // (float64 state): move each chain whose precision changed to the other list. A float64
  // graph has float64 state either way.
  if (auto* graph_state = std::get_if<GraphState<float>>(&state_->graph)) {
    for (ir::NodeId id = 0; id < scheduled.size() && id < scheduled_.size(); ++id) {
      const auto* before = std::get_if<ir::Chain>(&scheduled_.node(id).op);
      const auto* after = std::get_if<ir::Chain>(&scheduled.node(id).op);
      if (!before || !after || ir::float64_state(before->state_precision) == ir::float64_state(after->state_precision))
        continue;
      auto& narrow = graph_state->chains;
      auto& wide = graph_state->wide_chains;
      if (narrow.size() <= id || wide.size() <= id) continue;  // not run yet: nothing to carry
      if (ir::float64_state(after->state_precision)) {
        wide[id] = convert_state<double>(narrow[id]);
        narrow[id] = {};
      } else {
        narrow[id] = convert_state<float>(wide[id]);
        wide[id] = {};
      }
    }
  }
  // The new schedule runs the new kernels: a new plan, then the values as for one schedule.
  ir::Graph same_schedule = scheduled_;
  for (ir::NodeId id = 0; id < same_schedule.size(); ++id)
    if (auto* chain = std::get_if<ir::Chain>(&same_schedule.node(id).op)) {
      const auto& next = std::get<ir::Chain>(scheduled.node(id).op);
      chain->strategy = next.strategy;
      chain->chunk_length = next.chunk_length;
      chain->state_precision = next.state_precision;
    }
  scheduled_ = std::move(same_schedule);
  kernels_ = std::move(kernels);
  run_ = std::make_unique<Run>(scheduled_, *kernels_);
  return update_values(scheduled);
}

Expected<std::monostate, std::string> CpuStream::update_values(const ir::Graph& scheduled) {
  if (ir::structural_hash(scheduled) != ir::structural_hash(scheduled_))
    return Unexpected{std::string(
        "the new graph has another shape (stages, orders, channels or strategy): compile it as "
        "a new stream, or pass its kernels to update_values if only its schedule changed")};
  scheduled_ = scheduled;
  run_->values = graph_values(scheduled_);
  std::visit(
      [&](auto& graph_state) {
        auto restart = [&](auto& chains) {
          for (ir::NodeId id = 0; id < chains.size() && id < scheduled_.size(); ++id)
            restart_changed_delays(chains[id], run_->values.nodes[id].delay_lengths);
        };
        restart(graph_state.chains);
        restart(graph_state.wide_chains);
      },
      state_->graph);
  return std::monostate{};
}

}  // namespace fxc
