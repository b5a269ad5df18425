// SPDX-License-Identifier: Apache-2.0
// fxc::Processor: a Program's graph run block by block through a BlockExecutor
// (runtime/block_executor.h), which prepare() makes with every buffer, state and delay line
// allocated, so that process() allocates nothing and takes no lock. set() compiles the new
// values on the calling thread and stages them; the executor takes the newest at the start
// of its next block. On Target::cuda the blocks run through a CudaStream instead
// (runtime/cuda_executor.h): staged through page-locked memory, a CUDA graph per block length.
#include <fxc/processor.h>
#include <fxc/program.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <type_traits>

#include "support/api_error.h"
#include "support/float_format.h"
#include "driver/compiled_program.h"
#include "ir/hash.h"
#include "runtime/bind_inputs.h"
#include "runtime/block_executor.h"
#include "runtime/cuda_stream_state.h"

namespace fxc {


namespace {

// A Processor's blocks are at most this long (a delay of the block length, 2^24 frames, is the
// longest a stream's buffers serve).
constexpr std::size_t kMaxBlock = std::size_t{1} << 24;

// Every input's channel count, as a Processor's ports take them: declared, or Options::channels.
std::vector<int> declared_input_channels(const Program& program) {
  std::vector<int> channels;
  for (const PortInfo& p : program.inputs()) {
    if (p.channels == 0)
      throw_error("the input '" + p.name + "' declares no channel count: give Options::channels for a Processor");
    channels.push_back(p.channels);
  }
  return channels;
}

void check_block_length(std::size_t block) {
  if (block > kMaxBlock)
    throw_error("a Processor's blocks are at most 16777216 frames; got " + std::to_string(block));
}

// Planar pointer arrays for the executor, one per port, filled per call without allocating.
template <class P>
struct PortPointers {
  std::vector<std::vector<P>> channels;  // [port][channel]
  std::vector<const P*> ports;           // ports[k] == channels[k].data()

  void size(const std::vector<int>& counts) {
    channels.assign(counts.size(), {});
    ports.clear();
    for (std::size_t k = 0; k < counts.size(); ++k) {
      channels[k].assign(static_cast<std::size_t>(counts[k]), nullptr);
      ports.push_back(channels[k].data());
    }
  }
};

// The compilation a stream of blocks of up to `max_block` frames runs, with its kernels. The
// Program's own schedule serves unless it was made for other calls than the stream's and
// that matters: a chain on the chunked scan (which needs the whole signal; a stream runs block
// by block), or a FIR run by FFT, whose FFT block follows the length of one call
// (passes::fft_block_for: for a long signal, overlap-save in 4x the taps, which every short
// block would pay in full). Then the graph is scheduled again for the stream's blocks.
std::shared_ptr<const Specialization> stream_specialization(const Program::Impl& program, int channels,
                                                            std::size_t max_block) {
  std::shared_ptr<const Specialization> whole = program.specialization(channels);
  const bool for_these_blocks = whole->request.length_samples == static_cast<std::int64_t>(max_block);
  bool chunked = false, fft_fir = false;
  for (const ir::Node& node : whole->now->scheduled.nodes())
    if (const auto* chain = std::get_if<ir::Chain>(&node.op)) {
      chunked = chunked || chain->strategy == ir::IirStrategy::chunked_scan;
      fft_fir = fft_fir || chain->fir_method == ir::FirMethod::fft_overlap_save;
    }
  if (!chunked && (!fft_fir || for_these_blocks)) {
    program.current(channels);  // its kernels, if Options::compile_kernels left them for now
    return program.specialization(channels);
  }
  auto spec = std::make_shared<Specialization>(*whole);
  spec->first_kernels = std::make_shared<FirstKernels>();  // another schedule: not the whole's kernels
  spec->request.length_samples = static_cast<std::int64_t>(max_block);
  spec->request.thresholds.chunked_min_samples = std::numeric_limits<std::int64_t>::max();
  spec->now.reset();
  DiagnosticEngine diags = program.source().diagnostics();
  ParamValues values;
  for (const ParamInfo& p : program.param_infos()) values[p.name] = p.value;
  auto compiled = program.compile_values(*spec, values, diags);
  if (!compiled || !program.compile_kernels(*spec, *compiled, diags)) throw_diagnostics(diags);
  spec->now = std::make_shared<const CompiledValues>(std::move(*compiled));
  return spec;
}

}  // namespace

struct Processor::Impl {
  Program program;  // a copy: its parameter values are this processor's
  std::shared_ptr<const Specialization> spec;
  std::size_t max_block = 0;
  std::optional<BlockExecutor> executor;
  // Target::cuda: the stream the blocks run on; the values set() compiled last, for the next
  // block to take (under `staged_mutex`, held only to hand them over); and the first device
  // error a block met (process() cannot throw), under `error_mutex`.
  std::optional<CudaStream> cuda;
  std::optional<ir::Graph> staged;
  std::mutex staged_mutex;
  std::string device_error;
  mutable std::mutex error_mutex;
  std::vector<int> input_channels, output_channels;
  DType dtype = DType::f32;
  PortPointers<const void*> in_ptrs;
  PortPointers<void*> out_ptrs;
  // Block buffers in the Program's dtype for samples of the other type: [port] channels x
  // max_block, converted on the way in and out.
  std::vector<std::vector<std::byte>> in_convert, out_convert;
  // The control calls among themselves (set() from any thread, prepare(), the state's save and
  // load); process() never takes it.
  std::mutex control;

  // The ports' counts as the Program knows them (0 for an undeclared input's), so that an
  // unprepared process() has outputs to write zeros to.
  explicit Impl(const Program& p) : program(p) {
    for (const PortInfo& port : program.inputs()) input_channels.push_back(port.channels);
    for (const PortInfo& port : program.outputs()) output_channels.push_back(port.channels);
  }

  // Zeros into every output channel the caller gave (null pointers skipped).
  template <class T>
  static void zero(std::span<T* const* const> outputs, const std::vector<int>& channels, std::size_t frames) {
    for (std::size_t k = 0; k < outputs.size() && k < channels.size(); ++k)
      for (int c = 0; outputs[k] && c < channels[k]; ++c)
        if (outputs[k][c]) std::fill_n(outputs[k][c], frames, T(0));
  }

  // Whether every port's pointer array, and with frames every channel's pointer, is there.
  template <class P>
  static bool present(std::span<P* const* const> ports, const std::vector<int>& channels, std::size_t frames) {
    for (std::size_t k = 0; k < ports.size(); ++k) {
      if (!ports[k]) return false;
      for (int c = 0; frames > 0 && c < channels[k]; ++c)
        if (!ports[k][c]) return false;
    }
    return true;
  }

  bool prepared() const { return executor || cuda; }

  // The pointer arrays for the ports, and conversion buffers for the other sample type, made
  // by prepare() so that process() never allocates.
  void size_buffers() {
    in_ptrs.size(input_channels);
    out_ptrs.size(output_channels);
    in_convert.assign(input_channels.size(), {});
    out_convert.assign(output_channels.size(), {});
    // On the GPU a block may be a whole run's piece (up to 128 MiB of samples), and the
    // conversions are seldom used (fxc run never does): they are made by the first call that
    // needs them, as a GPU call may allocate anyway. On the CPU, here, zero-filled, so that no
    // call allocates or faults their pages in.
    if (!cuda) make_convert_buffers();
  }

  // The buffers of samples in the Program's type (G) for callers of the other type.
  void make_convert_buffers() {
    const std::size_t g_bytes = dtype == DType::f32 ? sizeof(float) : sizeof(double);
    for (std::size_t k = 0; k < in_convert.size(); ++k)
      in_convert[k].resize(static_cast<std::size_t>(input_channels[k]) * max_block * g_bytes);
    for (std::size_t k = 0; k < out_convert.size(); ++k)
      out_convert[k].resize(static_cast<std::size_t>(output_channels[k]) * max_block * g_bytes);
  }

  // One call's blocks between in_ptrs and out_ptrs, in the Program's sample type. false: the
  // device failed (CUDA), and the outputs are to be zeros.
  bool run_blocks(std::size_t frames) noexcept {
    if (executor) {
      executor->process(in_ptrs.ports, out_ptrs.ports, frames);
      return true;
    }
    return run_cuda_blocks(frames);
  }

  // CUDA: staged values first, then the call in blocks of at most max_block frames.
  bool run_cuda_blocks(std::size_t frames) noexcept {
    try {
      if (failed()) return false;
      if (auto ok = apply_staged_values(); !ok) return fail(ok.error());
      if (auto ok = cuda->process_into(in_ptrs.ports, out_ptrs.ports, frames, max_block); !ok) return fail(ok.error());
      return true;
    } catch (const std::exception& e) {  // an allocation for a new block length
      return fail(e.what());
    }
  }

  // CUDA: the values set() staged into the device's buffers (the lock held only to take them).
  Expected<std::monostate, std::string> apply_staged_values() {
    std::optional<ir::Graph> values;
    {
      std::lock_guard lock(staged_mutex);
      values.swap(staged);
    }
    if (!values) return std::monostate{};
    return cuda->update_values(*values);
  }

  // The values set() staged, now rather than at the next block (save_state and load_state,
  // which the audio thread does not run beside). A device error is thrown.
  void take_staged_values() {
    if (std::string error = current_error(); !error.empty()) throw_error("the GPU failed: " + error, "fxc-cuda");
    if (auto ok = apply_staged_values(); !ok) {
      fail(ok.error());
      throw_error("the GPU failed: " + ok.error(), "fxc-cuda");
    }
  }

  std::string current_error() const {
    std::lock_guard lock(error_mutex);
    return device_error;
  }

  bool failed() const { return !current_error().empty(); }
  bool fail(const std::string& error) noexcept {
    std::lock_guard lock(error_mutex);
    if (device_error.empty()) device_error = error.empty() ? "a CUDA call failed" : error;
    return false;
  }

  template <class T>
  void run(std::span<const T* const* const> inputs, std::span<T* const* const> outputs, std::size_t frames) noexcept {
    if (!prepared() || inputs.size() != input_channels.size() || outputs.size() != output_channels.size()) {
      zero(outputs, output_channels, frames);
      return;
    }
    if (frames == 0) {  // no samples: staged values are still taken, and no pointer is read
      run_blocks(0);
      return;
    }
    if (!present(inputs, input_channels, frames) || !present(outputs, output_channels, frames)) {
      zero(outputs, output_channels, frames);
      return;
    }
    bool same = (dtype == DType::f32) == std::is_same_v<T, float>;
    if (same) {
      for (std::size_t k = 0; k < inputs.size(); ++k)
        for (int c = 0; c < input_channels[k]; ++c) in_ptrs.channels[k][c] = inputs[k][c];
      for (std::size_t k = 0; k < outputs.size(); ++k)
        for (int c = 0; c < output_channels[k]; ++c) out_ptrs.channels[k][c] = outputs[k][c];
      if (!run_blocks(frames)) zero(outputs, output_channels, frames);
      return;
    }
    if (dtype == DType::f32) convert_run<T, float>(inputs, outputs, frames);
    else convert_run<T, double>(inputs, outputs, frames);
  }

  // Samples of type T through a graph of type G, a block of at most max_block at a time.
  template <class T, class G>
  void convert_run(std::span<const T* const* const> inputs, std::span<T* const* const> outputs,
                   std::size_t frames) noexcept {
    if (cuda) {
      try {
        make_convert_buffers();
      } catch (const std::exception& e) {
        fail(std::string("cannot allocate the sample type's conversion buffers: ") + e.what());
        zero(outputs, output_channels, frames);
        return;
      }
    }
    for (std::size_t start = 0; start < frames; start += max_block) {
      std::size_t count = std::min(max_block, frames - start);
      for (std::size_t k = 0; k < inputs.size(); ++k)
        for (int c = 0; c < input_channels[k]; ++c) {
          G* to = reinterpret_cast<G*>(in_convert[k].data()) + static_cast<std::size_t>(c) * max_block;
          for (std::size_t n = 0; n < count; ++n) to[n] = static_cast<G>(inputs[k][c][start + n]);
          in_ptrs.channels[k][c] = to;
        }
      for (std::size_t k = 0; k < outputs.size(); ++k)
        for (int c = 0; c < output_channels[k]; ++c)
          out_ptrs.channels[k][c] = reinterpret_cast<G*>(out_convert[k].data()) + static_cast<std::size_t>(c) * max_block;
      if (!run_blocks(count)) {
        zero(outputs, output_channels, frames);
        return;
      }
      for (std::size_t k = 0; k < outputs.size(); ++k)
        for (int c = 0; c < output_channels[k]; ++c) {
          const G* from = reinterpret_cast<const G*>(out_convert[k].data()) + static_cast<std::size_t>(c) * max_block;
          for (std::size_t n = 0; n < count; ++n) outputs[k][c][start + n] = static_cast<T>(from[n]);
        }
    }
  }
};

Processor::Processor(const Program& program) : impl_(std::make_unique<Impl>(program)) {
  if (program.options().target == Target::reference)
    throw_error("a Processor runs compiled kernels: compile the Program with Target::cpu or Target::cuda", "fxc-api");
}
Processor::Impl& Processor::impl() const {
  if (!impl_) throw_error("this fxc::Processor was moved from: assign a Processor to it before using it", "fxc-api");
  return *impl_;
}

void Processor::check_inputs(const std::vector<Signal>& inputs) const {
  const Impl& s = impl();
  const std::vector<PortInfo> ports = s.program.inputs();
  if (inputs.size() != ports.size())
    throw_error("the graph has " + std::to_string(ports.size()) + " input(s), got " + std::to_string(inputs.size()) +
                    " signal(s)",
                "fxc-run");  // as Program::run says it
  DiagnosticEngine diags = s.program.impl().source().diagnostics();
  if (!bind_inputs(s.program.impl().declared(), inputs, diags)) throw_diagnostics(diags);
  // An input declared without a count takes the one this Processor was prepared for.
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const int want = i < s.input_channels.size() ? s.input_channels[i] : 0;
    if (want > 0 && static_cast<int>(inputs[i].channels()) != want)
      throw_error("input '" + ports[i].name + "' takes " + std::to_string(want) + " channel(s) in this Processor, but " +
                      (inputs[i].source().empty() ? "its signal" : "'" + inputs[i].source() + "'") + " has " +
                      std::to_string(inputs[i].channels()),
                  "fxc-channels");
  }
}

Processor::Processor(Processor&&) noexcept = default;
Processor& Processor::operator=(Processor&&) noexcept = default;
Processor::~Processor() = default;

std::vector<Signal> Program::run_in_blocks(const std::vector<Signal>& inputs, std::size_t block) const {
  if (block == 0) throw_error("run_in_blocks: a block holds at least one frame");
  if (options().target == Target::cuda) return impl().run_cuda_in_blocks(inputs, block);
  if (options().target == Target::reference)
    throw_error("run_in_blocks runs compiled kernels: use Target::cpu or Target::cuda");
  int channels = impl().channels_for(inputs);
  auto spec = stream_specialization(impl(), channels, block);
  if (inputs.size() != spec->now->lowered.inputs().size())
    throw_error("the graph has " + std::to_string(spec->now->lowered.inputs().size()) + " input(s), got " +
                std::to_string(inputs.size()));
  DiagnosticEngine diags = impl().source().diagnostics();
  if (!bind_inputs(spec->now->lowered, inputs, diags)) throw_diagnostics(diags);
  std::size_t frames = inputs.empty() ? 0 : inputs[0].samples();
  auto executor = BlockExecutor::create(spec->now->scheduled, spec->now->kernels, block, spec->live.max_delay_lengths,
                                        std::max<std::size_t>(frames, 1));
  if (!executor) throw_error("cannot run in blocks: " + executor.error(), "fxc-api");
  PlanarRun run = planar_run(inputs, spec->now->scheduled, options().dtype, frames);
  // The executor splits the whole into blocks of `block` frames itself.
  executor->process(run.in_ports, run.out_ports, frames);
  return std::move(run.outputs);
}

namespace {
void prepare_cuda(Processor::Impl& s, const Program::Impl& program, std::size_t max_block, std::size_t max_frames);
}

Processor Program::processor() const {
  Processor p(*this);
  p.prepare();
  return p;
}

void Processor::prepare(std::size_t max_block, std::size_t max_frames) {
  Impl& s = impl();
  // Held throughout: a set() meanwhile staged its values into the executor this replaces (a
  // crash where they raced, on freed memory), or its values missed the new one.
  std::lock_guard lock(s.control);
  const Options& o = s.program.options();
  if (o.target == Target::cuda) {
    prepare_cuda(s, s.program.impl(), max_block, max_frames);
    return;
  }
  // Everything is made first and kept only once all of it was: a prepare() that throws
  // leaves the Processor as it was (max_block() included), still processing as before.
  const std::size_t block = max_block ? max_block : (o.max_block ? o.max_block : 4096);
  check_block_length(block);
  std::vector<int> input_channels = declared_input_channels(s.program), output_channels;
  auto spec = stream_specialization(s.program.impl(), o.channels, block);
  for (ir::NodeId id : spec->now->scheduled.outputs())
    output_channels.push_back(spec->now->scheduled.node(id).type.channels);
  auto made = BlockExecutor::create(spec->now->scheduled, spec->now->kernels, block, spec->live.max_delay_lengths,
                                    max_frames);
  if (!made) throw_error("cannot prepare the Processor: " + made.error(), "fxc-api");
  s.max_block = block;
  s.input_channels = std::move(input_channels);
  s.output_channels = std::move(output_channels);
  s.spec = std::move(spec);
  s.dtype = o.dtype;
  s.executor.emplace(std::move(*made));
  s.size_buffers();
}

namespace {

void prepare_cuda(Processor::Impl& s, const Program::Impl& program, std::size_t max_block, std::size_t max_frames) {
  const Options& o = s.program.options();
  std::vector<int> input_channels = declared_input_channels(s.program), output_channels;
  // The whole signal's schedule, as Program::run's: the chunked scan runs within each block.
  auto spec = program.specialization(o.channels);
  std::shared_ptr<const CompiledValues> now = program.current(o.channels);
  // By default the piece length of a whole run from host memory (runtime/cuda_executor.h), so
  // that blocks of it give Program::run's output bit for bit; no longer than the stream, whose
  // run would take one piece of its length.
  std::size_t piece = std::min(cuda_piece_frames(*now->cuda), kMaxBlock);
  if (max_frames > 0) piece = std::min(piece, max_frames);
  const std::size_t block = max_block ? max_block : o.max_block ? o.max_block : piece;
  check_block_length(block);
  for (ir::NodeId id : now->scheduled.outputs()) output_channels.push_back(now->scheduled.node(id).type.channels);
  CudaStream stream(now->cuda);
  if (auto ok = stream.reserve(block); !ok) throw_error("cannot prepare the Processor: " + ok.error(), "fxc-cuda");
  s.executor.reset();
  s.cuda.emplace(std::move(stream));
  {
    std::lock_guard lock(s.staged_mutex);
    s.staged.reset();
  }
  {
    std::lock_guard lock(s.error_mutex);
    s.device_error.clear();
  }
  s.max_block = block;
  s.input_channels = std::move(input_channels);
  s.output_channels = std::move(output_channels);
  s.spec = std::move(spec);
  s.dtype = o.dtype;
  s.size_buffers();
}

}  // namespace

std::string Processor::device_error() const { return impl().current_error(); }

std::size_t Processor::max_block() const { return impl().max_block; }

void Processor::process(std::span<const float* const* const> inputs, std::span<float* const* const> outputs,
                        std::size_t frames) noexcept {
  if (impl_) impl_->run<float>(inputs, outputs, frames);
}
void Processor::process(std::span<const double* const* const> inputs, std::span<double* const* const> outputs,
                        std::size_t frames) noexcept {
  if (impl_) impl_->run<double>(inputs, outputs, frames);
}
void Processor::process(const float* const* input, float* const* output, std::size_t frames) noexcept {
  if (impl_) impl_->run<float>(std::span<const float* const* const>(&input, 1), std::span<float* const* const>(&output, 1),
                    frames);
}
void Processor::process(const double* const* input, double* const* output, std::size_t frames) noexcept {
  if (impl_) impl_->run<double>(std::span<const double* const* const>(&input, 1), std::span<double* const* const>(&output, 1),
                     frames);
}

void Processor::reset() noexcept {
  if (!impl_) return;
  if (impl_->executor) impl_->executor->reset();
  if (impl_->cuda)
    if (auto ok = impl_->cuda->reset(); !ok) impl_->fail(ok.error());
}

void Processor::set(std::string_view name, double value) { set(impl().program.param_id(name), value); }

void Processor::set(int id, double value) { set_values({{id, value}}); }

void Processor::set(const std::vector<ParamValue>& values) { set_values(impl().program.impl().resolve(values)); }

void Processor::set_values(const std::vector<std::pair<int, double>>& values) {
  Impl& s = impl();
  if (values.empty()) return;
  std::lock_guard lock(s.control);
  if (!s.prepared()) throw_error("call prepare() before set() on a Processor", "fxc-api");
  std::vector<std::pair<int, double>> before;
  for (const auto& [id, value] : values) before.emplace_back(id, s.program.impl().value(id));
  s.program.impl().set(values);  // checks the ranges and that the stages accept them: all or none
  ParamValues now;
  for (const ParamInfo& p : s.program.params()) now[p.name] = p.value;
  DiagnosticEngine diags = s.program.impl().source().diagnostics();
  auto compiled = s.program.impl().compile_values(*s.spec, now, diags);
  if (!compiled) {
    s.program.impl().set(before);
    throw_diagnostics(diags);
  }
  // Staged together: the block that takes them takes all of them. A CUDA stream writes them
  // into its device buffers then (its delay lines grow there if they must).
  if (s.cuda) {
    // compile_values keeps the shape; were it another, the stream could not take it: refused
    // here, as on the CPU, not as a device error in a later block.
    if (ir::structural_hash(compiled->scheduled) != ir::structural_hash(s.cuda->graph())) {
      s.program.impl().set(before);
      internal_error("new values changed the CUDA stream's graph shape", __FILE__, __LINE__);
    }
    // Copied here, handed over under the lock (process() takes it only to swap).
    std::optional<ir::Graph> next(std::move(compiled->scheduled));
    {
      std::lock_guard staged_lock(s.staged_mutex);
      s.staged.swap(next);
    }
    return;
  }
  if (auto staged = s.executor->stage_values(compiled->scheduled); !staged) {
    // A delay longer than prepare() reserved: its parameter has no declared range (or one
    // set() does not reach through the Program).
    s.program.impl().set(before);
    const std::vector<ParamInfo> params = s.program.params();
    std::string what;
    for (const auto& [id, value] : values) {
      const ParamInfo& p = params[static_cast<std::size_t>(id)];
      what += (what.empty() ? "'" : ", '") + p.name + "' to " + format_double(value) + (p.unit.empty() ? "" : " " + p.unit);
    }
    const std::string& name = params[static_cast<std::size_t>(values[0].first)].name;
    throw_error("cannot set " + what + " in this Processor: " + staged.error() + "; declare the parameter's range (`" +
                    name + " = ... in [low, high]` in .fx, fxc::param with a Band) so that prepare() reserves the "
                    "longest delay",
                "fxc-param-range");
  }
}

double Processor::get(std::string_view name) const { return impl().program.get(name); }

void Processor::set(std::string_view name, std::string_view value_with_unit) {
  Impl& s = impl();
  int id = s.program.param_id(name);
  set(id, s.program.impl().parse_value(id, value_with_unit));
}

std::string Processor::save_state() const {
  Impl& s = impl();
  std::lock_guard lock(s.control);
  if (!s.prepared()) throw_error("call prepare() before save_state()", "fxc-api");
  if (!s.cuda) return s.executor->save_state();
  s.take_staged_values();
  auto bytes = s.cuda->save_state();
  if (!bytes) throw_error("save_state() on the GPU: " + bytes.error(), "fxc-cuda");
  return std::move(bytes).value();
}

void Processor::load_state(std::string_view bytes) {
  Impl& s = impl();
  std::lock_guard lock(s.control);
  if (!s.prepared()) throw_error("call prepare() before load_state()", "fxc-api");
  if (!s.cuda) {
    if (auto ok = s.executor->load_state(bytes); !ok) throw_error(ok.error(), "fxc-state");
    return;
  }
  // Checked against the values the next block runs with, as on the CPU.
  s.take_staged_values();
  auto state = s.cuda->state_from_bytes(bytes);
  if (!state) throw_error(state.error(), "fxc-state");  // the stream is as it was
  // From here an error is the device's: the state is then unknown, as after a failed block.
  if (auto ok = s.cuda->restore(*state); !ok) {
    s.fail(ok.error());
    throw_error("the GPU failed: " + ok.error(), "fxc-cuda");
  }
}

}  // namespace fxc
