// SPDX-License-Identifier: Apache-2.0
// fxc::Processor: a Program's graph run block by block, with parameter values handed over
// from control threads at block boundaries.
//
// Today the blocks run through CpuStream, which allocates per block (its executor, output
// signals, delay-line growth): process() is correct and exact but not yet real-time safe.
// The handover is already what the real-time engine needs: set() compiles the new values on
// the calling thread and publishes them with one atomic exchange; process() takes the newest
// at the start of a block, with no lock.
#include <fxc/processor.h>
#include <fxc/program.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "driver/api_error.h"
#include "driver/compiled_program.h"
#include "runtime/cpu_executor.h"

namespace fxc {

using driver::throw_diagnostics;
using driver::throw_error;

struct Processor::Impl {
  Program program;  // a copy: its parameters are this processor's
  std::shared_ptr<const Specialization> spec;
  std::size_t max_block = 0;
  std::optional<CpuStream> stream;
  std::vector<int> input_channels, output_channels;
  DType dtype = DType::f32;
  // Values compiled by set(), waiting for the audio thread.
  std::atomic<std::shared_ptr<const CompiledValues>> pending;

  explicit Impl(const Program& p) : program(p) {}

  template <class T>
  void run(std::span<const T* const* const> inputs, std::span<T* const* const> outputs, std::size_t frames) noexcept {
    auto zero = [&] {
      for (std::size_t k = 0; k < outputs.size(); ++k)
        for (int c = 0; k < output_channels.size() && c < output_channels[k]; ++c)
          std::fill_n(outputs[k][c], frames, T(0));
    };
    if (!stream || inputs.size() != input_channels.size() || outputs.size() != output_channels.size()) {
      zero();
      return;
    }
    if (auto next = pending.exchange(nullptr)) (void)stream->update_values(next->scheduled);
    for (std::size_t start = 0; start < frames; start += max_block) {
      std::size_t count = std::min(max_block, frames - start);
      std::vector<Signal> block;
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        Signal s(static_cast<std::size_t>(input_channels[i]), count, dtype, Signal::Uninitialized{});
        for (int c = 0; c < input_channels[i]; ++c)
          for (std::size_t n = 0; n < count; ++n) {
            if (dtype == DType::f32) s.f32(c)[n] = static_cast<float>(inputs[i][c][start + n]);
            else s.f64(c)[n] = static_cast<double>(inputs[i][c][start + n]);
          }
        block.push_back(std::move(s));
      }
      auto out = stream->process(block);
      if (!out) {
        zero();
        return;
      }
      for (std::size_t k = 0; k < out->size(); ++k)
        for (std::size_t c = 0; c < (*out)[k].channels(); ++c)
          for (std::size_t n = 0; n < count; ++n) outputs[k][c][start + n] = static_cast<T>((*out)[k].at(c, n));
    }
  }
};

Processor::Processor(const Program& program) : impl_(std::make_unique<Impl>(program)) {
  if (program.options().target != Target::cpu)
    throw_error("a Processor runs compiled CPU kernels: compile the Program with Target::cpu", "fxc-api");
}
Processor::Processor(Processor&&) noexcept = default;
Processor& Processor::operator=(Processor&&) noexcept = default;
Processor::~Processor() = default;

Processor Program::processor() const {
  Processor p(*this);
  p.prepare();
  return p;
}

void Processor::prepare(std::size_t max_block) {
  Impl& s = *impl_;
  const Options& o = s.program.options();
  s.max_block = max_block ? max_block : (o.max_block ? o.max_block : 4096);
  if (s.max_block > (std::size_t{1} << 24))
    throw_error("a Processor's blocks are at most 16777216 frames; got " + std::to_string(s.max_block));
  int channels = o.channels;
  s.input_channels.clear();
  s.output_channels.clear();
  for (const PortInfo& p : s.program.inputs()) {
    if (p.channels == 0)
      throw_error("the input '" + p.name + "' declares no channel count: give Options::channels for a Processor");
    s.input_channels.push_back(p.channels);
  }
  Program::Impl& program = *s.program.impl_;
  s.spec = program.specialization(channels);
  // Streams are scheduled for one block's length: no chunked scan, no whole-signal choices.
  auto spec = std::make_shared<Specialization>(*s.spec);
  spec->request.length_samples = static_cast<std::int64_t>(s.max_block);
  spec->now.reset();
  DiagnosticEngine diags;
  ParamValues values;
  for (const ParamInfo& p : s.program.params()) values[p.name] = p.value;
  auto compiled = program.compile_values(*spec, values, diags);
  if (!compiled) throw_diagnostics(diags);
  spec->now = std::make_shared<const CompiledValues>(std::move(*compiled));
  s.spec = spec;
  s.dtype = o.dtype;
  for (ir::NodeId id : spec->now->scheduled.outputs())
    s.output_channels.push_back(spec->now->scheduled.node(id).type.channels);
  s.stream.emplace(spec->now->scheduled, spec->now->kernels);
  s.pending.store(nullptr);
}

std::size_t Processor::max_block() const { return impl_->max_block; }

void Processor::process(std::span<const float* const* const> inputs, std::span<float* const* const> outputs,
                        std::size_t frames) noexcept {
  impl_->run<float>(inputs, outputs, frames);
}
void Processor::process(std::span<const double* const* const> inputs, std::span<double* const* const> outputs,
                        std::size_t frames) noexcept {
  impl_->run<double>(inputs, outputs, frames);
}
void Processor::process(const float* const* input, float* const* output, std::size_t frames) noexcept {
  impl_->run<float>(std::span<const float* const* const>(&input, 1), std::span<float* const* const>(&output, 1),
                    frames);
}
void Processor::process(const double* const* input, double* const* output, std::size_t frames) noexcept {
  impl_->run<double>(std::span<const double* const* const>(&input, 1), std::span<double* const* const>(&output, 1),
                     frames);
}

void Processor::reset() noexcept {
  if (impl_->stream) impl_->stream->reset();
}

void Processor::set(std::string_view name, double value) { set(impl_->program.param_id(name), value); }

void Processor::set(int id, double value) {
  Impl& s = *impl_;
  if (!s.spec) throw_error("call prepare() before set() on a Processor", "fxc-api");
  s.program.set(id, value);  // checks the range and that the stages accept it
  ParamValues values;
  for (const ParamInfo& p : s.program.params()) values[p.name] = p.value;
  DiagnosticEngine diags;
  auto compiled = s.program.impl_->compile_values(*s.spec, values, diags);
  if (!compiled) throw_diagnostics(diags);
  s.pending.store(std::make_shared<const CompiledValues>(std::move(*compiled)));
}

void Processor::set(std::string_view name, std::string_view value_with_unit) {
  Impl& s = *impl_;
  int id = s.program.param_id(name);
  set(id, s.program.impl_->parse_value(id, value_with_unit));
}

std::string Processor::save_state() const {
  if (!impl_->stream) throw_error("call prepare() before save_state()", "fxc-api");
  return impl_->stream->save_state();
}

void Processor::load_state(std::string_view bytes) {
  if (!impl_->stream) throw_error("call prepare() before load_state()", "fxc-api");
  if (auto ok = impl_->stream->load_state(bytes); !ok) throw_error("cannot load the state: " + ok.error(), "fxc-state");
}

}  // namespace fxc
