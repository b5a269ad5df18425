// SPDX-License-Identifier: Apache-2.0
// fxc::Program: "graph + options -> runnable program", the one compile entry point that the
// command line and every embedder use.
#include <fxc/processor.h>
#include <fxc/program.h>
#include <fxc/version.h>


#include "support/api_error.h"
#include "driver/compiled_program.h"
#include "driver/program_cache.h"
#include "frontend/fx_file.h"
#include "runtime/cpu_executor.h"
#include "driver/kernel_cache.h"
#include "runtime/thread_pool.h"

namespace fxc {

const char* version() { return FXC_VERSION; }


namespace {

// Signals as planar pointers (the caller's memory) and back.
template <class T>
Signal signal_from(const T* const* channels, int count, std::size_t frames, DType dtype) {
  Signal s(static_cast<std::size_t>(count), frames, dtype, Signal::Uninitialized{});
  for (int c = 0; c < count; ++c)
    for (std::size_t i = 0; i < frames; ++i) {
      if (dtype == DType::f32) s.f32(c)[i] = static_cast<float>(channels[c][i]);
      else s.f64(c)[i] = static_cast<double>(channels[c][i]);
    }
  return s;
}

template <class T>
void copy_out(const Signal& s, T* const* channels) {
  for (std::size_t c = 0; c < s.channels(); ++c)
    for (std::size_t i = 0; i < s.samples(); ++i) channels[c][i] = static_cast<T>(s.at(c, i));
}

// Throws Error for a null pointer the caller passed where a planar run reads or writes: a
// port's pointer array, or, when there are frames, a channel's samples. `rows(k)` is port k's
// channel count (times the items of a batch).
template <class P, class Rows>
void check_pointers(std::span<P* const* const> ports, const Rows& rows, const char* what, std::size_t frames) {
  for (std::size_t k = 0; k < ports.size(); ++k) {
    if (!ports[k]) throw_error(std::string(what) + " " + std::to_string(k) + " is a null pointer array", "fxc-run");
    if (frames == 0) continue;
    for (std::size_t c = 0; c < rows(k); ++c)
      if (!ports[k][c])
        throw_error(std::string(what) + " " + std::to_string(k) + "'s channel " + std::to_string(c) +
                        " is a null pointer",
                    "fxc-run");
  }
}

}  // namespace

// ---- construction ----

Program::Program(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Program::Impl& Program::impl() const {
  if (!impl_) throw_error("this fxc::Program was moved from: assign a Program to it before using it", "fxc-api");
  return *impl_;
}

Program Program::from_source(std::string_view fx_text, const Options& options, std::string name) {
  return Program(driver::cached_program(fx_text, name, options, [&] {
    DiagnosticEngine diags;
    auto source = driver::GraphSource::from_fx(std::string(fx_text), name, driver::overrides_from(options.settings),
                                               diags);
    if (!source) throw_diagnostics(diags);
    return std::make_shared<Impl>(std::move(*source), options);
  }));
}

Program Program::from_file(const std::string& path, const Options& options) {
  DiagnosticEngine diags;
  std::optional<std::string> text = frontend::read_fx_text(path, diags);
  if (!text) throw_diagnostics(diags);
  return from_source(*text, options, path);
}

void clear_kernel_memory_cache() {
  clear_memory_cache();
  driver::clear_program_cache();
}

void set_threads(int threads) {
  if (threads < 0)
    throw_error("set_threads takes 1 or more threads, or 0 for the default; got " + std::to_string(threads));
  ThreadPool::shared().set_threads(threads);
}
int threads() { return ThreadPool::shared().threads(); }

GraphInfo inspect_source(std::string_view fx_text, std::string name, const std::vector<std::string>& settings) {
  DiagnosticEngine diags;
  auto source = driver::GraphSource::from_fx(std::string(fx_text), std::move(name),
                                             driver::overrides_from(settings), diags);
  if (!source) throw_diagnostics(diags);
  auto graph = source->lower({}, diags);
  if (!graph) throw_diagnostics(diags);
  GraphInfo info;
  for (ir::NodeId id : graph->inputs())
    info.inputs.push_back({std::get<ir::Input>(graph->node(id).op).name, graph->node(id).type.channels});
  for (ir::NodeId id : graph->outputs())
    info.outputs.push_back({std::get<ir::Output>(graph->node(id).op).name, graph->node(id).type.channels});
  int id = 0;
  for (const ParamDecl& p : source->params()) info.params.push_back(driver::param_info(p, id++, p.value));
  return info;
}

GraphInfo inspect_file(const std::string& path, const std::vector<std::string>& settings) {
  DiagnosticEngine diags;
  std::optional<std::string> text = frontend::read_fx_text(path, diags);
  if (!text) throw_diagnostics(diags);
  return inspect_source(*text, path, settings);
}

Program::Program(std::vector<Output> outputs, const Options& options, std::string name) {
  DiagnosticEngine diags;
  auto source = driver::GraphSource::from_dsl(std::move(name), std::move(outputs), diags);
  if (!source) throw_diagnostics(diags);
  impl_ = std::make_shared<Impl>(std::move(*source), options);
}

Program::Program(const Program& other)
    : impl_(other.impl_ ? std::make_shared<Impl>(*other.impl_) : nullptr) {}  // a moved-from copies as one
Program& Program::operator=(const Program& other) {
  if (this != &other) impl_ = other.impl_ ? std::make_shared<Impl>(*other.impl_) : nullptr;
  return *this;
}
Program::Program(Program&&) noexcept = default;
Program& Program::operator=(Program&&) noexcept = default;
Program::~Program() = default;

const Options& Program::options() const { return impl().options(); }

std::vector<PortInfo> Program::inputs() const { return impl().ports(true); }
std::vector<PortInfo> Program::outputs() const { return impl().ports(false); }

// ---- parameters ----

std::vector<ParamInfo> Program::params() const { return impl().param_infos(); }
int Program::param_id(std::string_view name) const { return impl().param_id(name); }
void Program::set(std::string_view name, double value) { impl().set(impl().param_id(name), value); }
void Program::set(int id, double value) { impl().set(id, value); }
void Program::set(std::string_view name, std::string_view value_with_unit) {
  int id = impl().param_id(name);
  impl().set(id, impl().parse_value(id, value_with_unit));
}
void Program::set(const std::vector<ParamValue>& values) { impl().set(impl().resolve(values)); }
double Program::get(std::string_view name) const { return impl().value(impl().param_id(name)); }

// ---- whole signals ----

std::vector<Signal> Program::run(const std::vector<Signal>& inputs) const { return impl().run(inputs); }
std::vector<Signal> Program::run(std::vector<Signal>&& inputs) const { return impl().run_consuming(std::move(inputs)); }

// The one output of run(Signal).
static Signal only_output(std::vector<Signal> out) {
  if (out.size() != 1)
    throw_error("Program::run(Signal) is for a graph of one output; this one has " +
                std::to_string(out.size()) + ": use run(std::vector<Signal>)");
  return std::move(out[0]);
}

Signal Program::run(const Signal& input) const {
  return only_output(impl().run(std::span<const Signal>(&input, 1)));  // no copy of the input
}

Signal Program::run(Signal&& input) const {
  std::vector<Signal> inputs;
  inputs.push_back(std::move(input));
  return only_output(impl().run_consuming(std::move(inputs)));
}

template <class T>
static void run_planar(const Program::Impl& impl, std::span<const T* const* const> inputs,
                       std::span<T* const* const> outputs, std::size_t frames) {
  std::vector<PortInfo> in_ports = impl.ports(true);
  if (inputs.size() != in_ports.size())
    throw_error("the graph has " + std::to_string(in_ports.size()) + " input(s), got " +
                std::to_string(inputs.size()));
  DType dtype = impl.options().dtype;
  // ports() gives an undeclared input Options::channels: 0 means neither says.
  for (const PortInfo& port : in_ports)
    if (port.channels == 0)
      throw_error("the input '" + port.name + "' has no declared channel count: give Options::channels, "
                  "or run fxc::Signal values");
  check_pointers(inputs, [&](std::size_t k) { return static_cast<std::size_t>(in_ports[k].channels); }, "input", frames);
  // Compiled kernels in the caller's sample type run straight on the caller's memory (on the
  // GPU: staged straight from and to it).
  const Target target = impl.options().target;
  if ((target == Target::cpu || target == Target::cuda) && (dtype == DType::f32) == std::is_same_v<T, float>) {
    std::shared_ptr<const CompiledValues> now =
        impl.current(impl.options().channels, impl.length_class(frames));  // as channels_for() binds
    std::vector<ir::NodeId> out_ids = now->scheduled.outputs();
    if (outputs.size() != out_ids.size())
      throw_error("the graph has " + std::to_string(out_ids.size()) + " output(s), got " +
                  std::to_string(outputs.size()));
    check_pointers(
        outputs, [&](std::size_t k) { return static_cast<std::size_t>(now->scheduled.node(out_ids[k]).type.channels); },
        "output", frames);
    // Pointer arrays of the executor's type, copied: no cast between pointer types.
    std::vector<std::vector<const void*>> in_channels(inputs.size());
    std::vector<const void* const*> in(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      in_channels[i].assign(inputs[i], inputs[i] + in_ports[i].channels);
      in[i] = in_channels[i].data();
    }
    std::vector<std::vector<void*>> out_channels(outputs.size());
    std::vector<void* const*> out(outputs.size());
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      out_channels[k].assign(outputs[k], outputs[k] + now->scheduled.node(out_ids[k]).type.channels);
      out[k] = out_channels[k].data();
    }
    auto done = target == Target::cpu ? now->cpu_runner->run_into(in, out, frames)
                                      : execute_cuda_into(now->cuda, in, out, frames);
    if (!done) throw_error(done.error(), "fxc-run");
    return;
  }
  std::vector<Signal> signals;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    int channels = in_ports[i].channels ? in_ports[i].channels : impl.options().channels;
    signals.push_back(signal_from(inputs[i], channels, frames, dtype));
  }
  std::vector<Signal> out = impl.run(signals);
  if (outputs.size() != out.size())
    throw_error("the graph has " + std::to_string(out.size()) + " output(s), got " +
                std::to_string(outputs.size()));
  check_pointers(outputs, [&](std::size_t k) { return out[k].channels(); }, "output", frames);
  for (std::size_t k = 0; k < out.size(); ++k) copy_out(out[k], outputs[k]);
}

void Program::run(std::span<const float* const* const> inputs, std::span<float* const* const> outputs,
                  std::size_t frames) const {
  run_planar<float>(impl(), inputs, outputs, frames);
}
void Program::run(std::span<const double* const* const> inputs, std::span<double* const* const> outputs,
                  std::size_t frames) const {
  run_planar<double>(impl(), inputs, outputs, frames);
}
void Program::run_device(std::span<const DeviceArray> inputs, std::span<const DeviceArray> outputs,
                         std::uintptr_t cuda_stream) const {
  impl().run_device(inputs, outputs, cuda_stream);
}

void Program::run_batch_device(std::span<const DeviceArray> inputs, std::span<const DeviceArray> outputs,
                               std::size_t items, std::uintptr_t cuda_stream) const {
  impl().run_batch_device(inputs, outputs, items, cuda_stream);
}

void Program::run(const float* const* input, float* const* output, std::size_t frames) const {
  run_planar<float>(impl(), std::span<const float* const* const>(&input, 1),
                    std::span<float* const* const>(&output, 1), frames);
}
void Program::run(const double* const* input, double* const* output, std::size_t frames) const {
  run_planar<double>(impl(), std::span<const double* const* const>(&input, 1),
                     std::span<double* const* const>(&output, 1), frames);
}

template <class T>
static void run_batch_planar(const Program::Impl& impl, std::span<const T* const* const> inputs,
                             std::span<T* const* const> outputs, std::size_t items, std::size_t frames) {
  std::vector<PortInfo> in_ports = impl.ports(true);
  if (inputs.size() != in_ports.size())
    throw_error("the graph has " + std::to_string(in_ports.size()) + " input(s), got " +
                std::to_string(inputs.size()));
  if (items == 0) throw_error("a batch needs at least one item", "fxc-batch");
  for (const PortInfo& port : in_ports)
    if (port.channels == 0)
      throw_error("the input '" + port.name + "' has no declared channel count: give Options::channels, "
                  "or run fxc::Signal values");
  check_pointers(inputs, [&](std::size_t k) { return items * static_cast<std::size_t>(in_ports[k].channels); },
                 "input", frames);
  // The caller's memory as it is, where the kernels compute in its sample type on the CPU.
  if ((impl.options().dtype == DType::f32) == std::is_same_v<T, float>) {
    std::vector<std::vector<const void*>> in_channels(inputs.size());
    std::vector<const void* const*> in(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      in_channels[i].assign(inputs[i], inputs[i] + items * static_cast<std::size_t>(in_ports[i].channels));
      in[i] = in_channels[i].data();
    }
    (void)impl.specialization(impl.options().channels);  // scheduled: the outputs' counts are known
    std::vector<PortInfo> out_ports = impl.ports(false);
    if (outputs.size() != out_ports.size())
      throw_error("the graph has " + std::to_string(out_ports.size()) + " output(s), got " +
                  std::to_string(outputs.size()));
    check_pointers(outputs, [&](std::size_t k) { return items * static_cast<std::size_t>(out_ports[k].channels); },
                   "output", frames);
    std::vector<std::vector<void*>> out_channels(outputs.size());
    std::vector<void* const*> out(outputs.size());
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      out_channels[k].assign(outputs[k], outputs[k] + items * static_cast<std::size_t>(out_ports[k].channels));
      out[k] = out_channels[k].data();
    }
    if (impl.run_batch_into(in, out, items, frames)) return;
  }
  // Another sample type or target: through owning signals, one copy each way.
  std::vector<std::vector<Signal>> batch(items);
  for (std::size_t b = 0; b < items; ++b)
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      auto channels = static_cast<std::size_t>(in_ports[i].channels);
      batch[b].push_back(signal_from(inputs[i] + b * channels, static_cast<int>(channels), frames, impl.options().dtype));
    }
  std::vector<std::vector<Signal>> results = impl.run_batch(batch);
  for (std::size_t b = 0; b < items; ++b) {
    if (outputs.size() != results[b].size())
      throw_error("the graph has " + std::to_string(results[b].size()) + " output(s), got " +
                  std::to_string(outputs.size()));
    if (b == 0)
      check_pointers(outputs, [&](std::size_t k) { return items * results[0][k].channels(); }, "output", frames);
    for (std::size_t k = 0; k < outputs.size(); ++k) copy_out(results[b][k], outputs[k] + b * results[b][k].channels());
  }
}

void Program::run_batch(std::span<const float* const* const> inputs, std::span<float* const* const> outputs,
                        std::size_t items, std::size_t frames) const {
  run_batch_planar<float>(impl(), inputs, outputs, items, frames);
}
void Program::run_batch(std::span<const double* const* const> inputs, std::span<double* const* const> outputs,
                        std::size_t items, std::size_t frames) const {
  run_batch_planar<double>(impl(), inputs, outputs, items, frames);
}

std::vector<std::vector<Signal>> Program::run_batch(const std::vector<std::vector<Signal>>& items) const {
  return impl().run_batch(items);
}

std::string Program::dump(std::string_view emit) const {
  DumpOptions options;
  options.emit = std::string(emit);
  if (emit == "dot" || emit == "json") {
    options.emit = "ir-opt";
    options.format = std::string(emit);
  }
  return impl().dump(options);
}
std::string Program::dump(const DumpOptions& options) const { return impl().dump(options); }
std::string Program::warnings() const { return impl().warnings(); }
std::vector<FrequencyResponse> Program::frequency_response(const std::vector<double>& frequencies_hz) const {
  return impl().frequency_response(frequencies_hz);
}
std::string Program::name() const { return impl().name(); }

}  // namespace fxc
