// SPDX-License-Identifier: Apache-2.0
#include "driver/compiled_program.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <variant>

#include "codegen/cpu/cpu_compiler.h"
#include "codegen/cuda/emit_cuda.h"
#include "support/api_error.h"
#include "ir/graph_algorithms.h"
#include "driver/compile_cpu.h"
#include "driver/compile_cuda.h"
#include "driver/kernel_cache.h"
#include "driver/run_batch.h"
#include "ir/export.h"
#include "ir/hash.h"
#include "ir/print.h"
#include "passes/pipeline.h"
#include "runtime/batch.h"
#include "runtime/bind_inputs.h"
#include "runtime/cpu_executor.h"
#include "runtime/frequency_response.h"
#include "runtime/reference_interpreter.h"
#include "runtime/stream_state_bytes.h"
#include "support/float_format.h"
#include "support/strings.h"

namespace fxc {


namespace {

// Throws Error ("[lead]'fc' = 5000 Hz is outside its range [20 Hz, 2000 Hz]") for a value
// outside the parameter's declared range.
void check_in_range(const ParamDecl& p, double v, const std::string& lead) {
  if ((p.min && v < *p.min) || (p.max && v > *p.max))
    throw_error(lead + "'" + p.name + "' = " + value_text(v, p.unit) + " is outside its range " +
                    range_text(*p.min, *p.max, p.unit),
                "fxc-param");
}

}  // namespace

Program::Impl::Impl(driver::GraphSource source, const Options& options)
    : options_(options), source_(std::move(source)) {
  if (!(options_.sample_rate_hz > 0 && std::isfinite(options_.sample_rate_hz)))
    throw_error("the sample rate must be a positive number of Hz, got " + format_double(options_.sample_rate_hz));
  if (options_.channels < 0) throw_error("Options::channels must be 0 or more");
  passes::StrategyThresholds thresholds;
  for (const auto& [name, value] : options_.thresholds)
    if (auto error = thresholds.set(name, format_double(value))) throw_error(*error, "fxc-threshold");
  target_ = options_.target == Target::cuda ? passes::cuda_target() : passes::host_target();
  if (options_.cache_directory != "none")
    options_.cache_directory = KernelCache::default_directory(options_.cache_directory);
  if (source_.is_dsl())  // .fx settings replaced the constants' text already (Program::from_source)
    for (const frontend::ConstantOverride& setting : driver::overrides_from(options_.settings)) {
      int id = param_id(setting.name);
      values_[setting.name] = parse_value(id, setting.value);
    }
  for (const auto& [name, value] : options_.params) values_[name] = value;
  for (const auto& [name, value] : options_.params) {
    int id = param_id(name);
    const ParamDecl& p = source_.params()[static_cast<std::size_t>(id)];
    check_in_range(p, value, "the parameter ");
  }
  DiagnosticEngine diags = source_.diagnostics();
  auto declared = source_.lower(values_, diags);
  if (!declared) throw_diagnostics(diags);
  declared_ = std::move(*declared);
  // Compile now when the channel counts are known; else at the first run.
  bool undeclared = false;
  for (ir::NodeId id : declared_.inputs()) undeclared = undeclared || declared_.node(id).type.channels == 0;
  if (!undeclared || options_.channels > 0) specialization(undeclared ? options_.channels : 0);
}

Program::Impl::Impl(const Impl& other)
    : options_(other.options_),
      source_(other.source_),
      declared_(other.declared_),
      target_(other.target_) {
  std::lock_guard lock(other.mutex_);
  values_ = other.values_;
  // The length classes' schedules are made again where the copy runs long signals (a
  // Processor's copy never does, and would otherwise reschedule them at every set()).
  for (const auto& [key, spec] : other.specs_)
    if (key.second == 0) specs_[key] = std::make_shared<Specialization>(*spec);
  warnings_ = other.warnings_;
}

CompileRequest Program::Impl::base_request(int channels, int length_class) const {
  CompileRequest r;
  r.sample_rate_hz = options_.sample_rate_hz;
  r.dtype = options_.dtype;
  r.channels = channels;
  r.cache_directory = options_.cache_directory == "none" ? std::string() : options_.cache_directory;
  if (options_.signal_length > 0) r.length_samples = static_cast<std::int64_t>(options_.signal_length);
  else if (length_class > 0) r.length_samples = class_frames(length_class);
  if (!options_.fuse) {
    // Each stage its own kernel: only the passes that make kernels run, none that merges.
    r.fusion = false;
    r.pipeline.passes = {"infer-types", "design-filters", "eliminate-dead-nodes", "fuse-chains", "select-strategy"};
  }
  r.pipeline.time_passes = options_.time_passes && options_.log;
  r.pipeline.log = options_.log;
  for (const auto& [name, value] : options_.thresholds) r.thresholds.set(name, format_double(value));
  return r;
}

std::vector<PortInfo> Program::Impl::ports(bool inputs) const {
  std::vector<PortInfo> out;
  for (ir::NodeId id : inputs ? declared_.inputs() : declared_.outputs()) {
    const ir::Node& node = declared_.node(id);
    std::string name = inputs ? std::get<ir::Input>(node.op).name : std::get<ir::Output>(node.op).name;
    int channels = node.type.channels;
    if (inputs && channels == 0) channels = options_.channels;
    out.push_back({std::move(name), channels});
  }
  // Outputs follow their inputs: the compiled graph knows their counts.
  std::lock_guard lock(mutex_);
  if (!inputs && !specs_.empty()) {
    auto it = specs_.find({options_.channels, 0});
    const ir::Graph& scheduled = (it != specs_.end() ? it->second : specs_.begin()->second)->now->scheduled;
    std::vector<ir::NodeId> ids = scheduled.outputs();
    std::vector<std::int64_t> latency = ir::lookahead_latency(scheduled);
    for (std::size_t k = 0; k < out.size() && k < ids.size(); ++k) {
      out[k].channels = scheduled.node(ids[k]).type.channels;
      out[k].latency = latency[ids[k]];
    }
  }
  return out;
}

std::vector<ParamInfo> Program::Impl::param_infos() const {
  std::vector<ParamInfo> out;
  int id = 0;
  for (const ParamDecl& p : source_.params()) {
    out.push_back(driver::param_info(p, id, value(id)));
    ++id;
  }
  return out;
}

int Program::Impl::param_id(std::string_view name) const {
  const auto& params = source_.params();
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].name == name) return static_cast<int>(i);
    names.push_back(params[i].name);
  }
  std::string message = "the graph has no parameter '" + std::string(name) + "'";
  if (auto near = nearest_name(name, names)) message += " (did you mean '" + *near + "'?)";
  else if (params.empty()) message += " (it has none: name a constant, fc = 200 Hz, or use fxc::param)";
  throw_error(message, "fxc-param");
}

double Program::Impl::value(int id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= source_.params().size())
    throw_error("no parameter has the id " + std::to_string(id), "fxc-param");
  const ParamDecl& p = source_.params()[static_cast<std::size_t>(id)];
  std::lock_guard lock(mutex_);
  auto it = values_.find(p.name);
  return it == values_.end() ? p.value : it->second;
}

double Program::Impl::parse_value(int id, std::string_view text) const {
  const ParamDecl& p = source_.params().at(static_cast<std::size_t>(id));
  std::string error;
  auto v = parse_param_value(p, text, error);
  if (!v) throw_error(error, "fxc-param");
  return *v;
}

std::optional<CompiledValues> Program::Impl::compile_values(const Specialization& spec, const ParamValues& values,
                                                            DiagnosticEngine& diags, bool kernels) const {
  CompiledValues out;
  out.values = values;
  auto lowered = driver::lower_marked(source_, spec.live.live, values, diags);
  if (!lowered) return std::nullopt;
  out.lowered = std::move(*lowered);
  if (options_.target == Target::reference) {
    // The interpreter runs the lowered graph; its types still say what the outputs hold
    // (outputs() and the Python package size their arrays by them), so they are inferred for
    // the channels this specialization is for. Without a count they stay unknown (0).
    out.scheduled = out.lowered;
    if (spec.request.channels > 0) {
      DiagnosticEngine quiet;
      passes::PassContext context = pass_context(spec.request, target_, quiet);
      if (auto typed = passes::run_pipeline(out.lowered, context, {.passes = {"infer-types"}})) out.scheduled = std::move(*typed);
    }
    return out;
  }
  auto scheduled = schedule_graph(out.lowered, spec.request, target_, diags);
  if (!scheduled) return std::nullopt;
  out.scheduled = std::move(*scheduled);
  if (spec.now) {
    // New values for compiled kernels: the shape must not have moved.
    if (ir::structural_hash(out.scheduled) != ir::structural_hash(spec.now->scheduled)) {
      // Another order or tap count is the values' doing (a parameter the analysis did not see
      // shape the graph); another strategy or state precision would be the analysis's bug.
      if (schedule_free_hash(out.scheduled, true) != schedule_free_hash(spec.now->scheduled, true))
        throw_error("these values change the compiled graph's shape (a filter order, a tap count): a constant "
                    "that does so cannot change once compiled; give it in Options::settings and compile again",
                    "fxc-param");
      throw InternalError("a live parameter value changed the compiled graph's shape (a bug in fxc): " +
                          ir::to_text(out.scheduled) + "\nwas\n" + ir::to_text(spec.now->scheduled));
    }
    out.kernels = spec.now->kernels;
    if (out.kernels) out.cpu_runner = std::make_shared<const CpuRunner>(out.scheduled, out.kernels);
    if (spec.now->cuda) {
      auto cuda = std::make_shared<CudaProgram>(*spec.now->cuda);
      cuda->scheduled = out.scheduled;
      out.cuda = std::move(cuda);
    }
    return out;
  }
  if (kernels && options_.compile_kernels && !compile_kernels(spec, out, diags)) return std::nullopt;
  return out;
}

bool Program::Impl::compile_kernels(const Specialization& spec, CompiledValues& now, DiagnosticEngine& diags) const {
  if (options_.target == Target::reference || now.kernels || now.cuda) return true;
  if (options_.target == Target::cpu) {
    KernelCache cache(spec.request.cache_directory);
    auto kernels = cache.cpu_kernels(now.scheduled, diags);
    if (!kernels) {
      diags.error({}, kernels.error(), "fxc-compile");
      return false;
    }
    now.kernels = *kernels;
    now.cpu_runner = std::make_shared<const CpuRunner>(now.scheduled, now.kernels);
    return true;
  }
  if (!options_.cuda_architecture.empty()) {
    // Ahead of time: a cubin for that architecture into the cache; nothing to run here.
    KernelCache cache(spec.request.cache_directory);
    auto cubin = cache.cuda_cubin(now.scheduled, options_.cuda_architecture, diags);
    if (!cubin) {
      diags.error({}, cubin.error(), "fxc-compile");
      return false;
    }
    return true;
  }
  auto device = open_cuda_device();
  if (!device) {
    diags.error({}, device.error(), "fxc-cuda");
    return false;
  }
  CompileRequest quiet = spec.request;  // the passes ran (and printed) when scheduling
  quiet.pipeline = {};
  auto program = compile_for_cuda(now.lowered, quiet, *device, diags);
  if (!program) return false;
  now.cuda = *program;
  return true;
}

int Program::Impl::length_class(std::size_t frames) const {
  if (options_.signal_length > 0 || options_.target != Target::cpu) return 0;
  // 0 below kLongRunFrames; capped where class_frames would overflow (no signal is that long).
  return std::min(static_cast<int>(std::bit_width(frames / kLongRunFrames)), 40);
}

std::shared_ptr<const Specialization> Program::Impl::specialization(int channels, bool kernels, int length_class) const {
  std::lock_guard lock(mutex_);
  if (auto it = specs_.find({channels, length_class}); it != specs_.end()) return it->second;
  auto spec = std::make_shared<Specialization>();
  spec->channels = channels;
  spec->request = base_request(channels, length_class);
  // Whole signals: Options::signal_length, or the length class's shortest length, guides the
  // strategy (a Processor sets its block length).
  DiagnosticEngine diags = source_.diagnostics();
  // A length class takes the live analysis of another schedule of its channel count (the one
  // for no length where there is one), which samples every ranged value (seconds for a ranged
  // graphic equaliser): its chains' bounds do not depend on the length. Where the class's graph
  // numbers its chains otherwise (a precision split for the length), select_strategy finds no
  // bounds for them and takes the worst their ranges allow: slower, never wrong.
  auto analysed = specs_.lower_bound({channels, 0});
  if (length_class > 0 && analysed != specs_.end() && analysed->first.first == channels) {
    spec->live = analysed->second->live;
  } else {
    auto live = driver::analyse_live_parameters(source_, values_, spec->request, target_,
                                                options_.live_unranged_params, diags);
    if (!live) throw_diagnostics(diags);
    spec->live = std::move(*live);
  }
  spec->request.live_chains = spec->live.chains;
  spec->request.live_designed_nodes = spec->live.designed_nodes;
  auto now = compile_values(*spec, values_, diags, kernels);
  if (!now) throw_diagnostics(diags);
  spec->now = std::make_shared<const CompiledValues>(std::move(*now));
  spec->first_kernels->from = spec->now;  // (set before any copy can share it)
  if (std::any_of(diags.diagnostics().begin(), diags.diagnostics().end(),
                  [](const Diagnostic& d) { return d.severity == Severity::warning; }))
    warnings_ += diags.str();
  specs_[{channels, length_class}] = spec;
  return spec;
}

void Program::Impl::set(const std::vector<std::pair<int, double>>& values) {
  std::vector<const ParamDecl*> decls;
  for (const auto& [id, v] : values) {
    if (id < 0 || static_cast<std::size_t>(id) >= source_.params().size())
      throw_error("no parameter has the id " + std::to_string(id), "fxc-param");
    const ParamDecl& p = source_.params()[static_cast<std::size_t>(id)];
    if (!std::isfinite(v)) throw_error("the parameter '" + p.name + "' must be a finite number", "fxc-param");
    check_in_range(p, v, "");
    decls.push_back(&p);
  }
  std::lock_guard lock(mutex_);
  if (!specs_.empty()) {
    const driver::LiveAnalysis& live = specs_.begin()->second->live;
    for (const ParamDecl* p : decls) {
      if (live.structural.count(p->name))
        throw_error("'" + p->name + "' shapes the compiled graph (a filter order, a tap count or a "
                    "structure), so it cannot change once compiled: give it as a setting "
                    "(Options::settings, fxc run --set, a keyword of fxc.compile) and compile again", "fxc-param");
      if (live.fixed.count(p->name))
        throw_error("'" + p->name + "' has no declared range and Options::live_unranged_params is false, so "
                    "its value was compiled in: declare a range ('" + p->name + " = ... in [MIN, MAX]') to "
                    "set it live", "fxc-param");
    }
  }
  ParamValues next = values_;
  for (std::size_t k = 0; k < values.size(); ++k) next[decls[k]->name] = values[k].second;
  std::vector<std::pair<std::shared_ptr<Specialization>, std::shared_ptr<const CompiledValues>>> made;
  for (const auto& [key, spec] : specs_) {
    if (key.second > 0) continue;  // a length class's schedule: made again at its next run
    DiagnosticEngine diags = source_.diagnostics();
    auto compiled = compile_values(*spec, next, diags);
    if (!compiled) throw_diagnostics(diags);
    made.emplace_back(spec, std::make_shared<const CompiledValues>(std::move(*compiled)));
  }
  if (made.empty()) {  // nothing compiled for no length yet: still check that the stages accept them
    DiagnosticEngine diags = source_.diagnostics();
    if (!source_.lower(next, diags)) throw_diagnostics(diags);
  }
  // Under the lock that runs take their values under: all at once. The length classes go, so
  // that a set() costs what it did before they were (a run of one holds its values meanwhile).
  for (auto& [spec, compiled] : made) spec->now = std::move(compiled);
  std::erase_if(specs_, [](const auto& entry) { return entry.first.second > 0; });
  values_ = std::move(next);
}

std::vector<std::pair<int, double>> Program::Impl::resolve(const std::vector<ParamValue>& values) const {
  std::vector<std::pair<int, double>> out;
  for (const ParamValue& v : values) {
    const int id = param_id(v.name);
    out.emplace_back(id, std::holds_alternative<double>(v.value) ? std::get<double>(v.value)
                                                                 : parse_value(id, std::get<std::string>(v.value)));
  }
  return out;
}

int Program::Impl::channels_for(std::span<const Signal> inputs) const {
  if (options_.channels > 0) return options_.channels;
  std::vector<ir::NodeId> ids = declared_.inputs();
  for (std::size_t i = 0; i < ids.size() && i < inputs.size(); ++i)
    if (declared_.node(ids[i]).type.channels == 0) return static_cast<int>(inputs[i].channels());
  return 0;
}

std::variant<std::vector<Signal>, std::shared_ptr<const CompiledValues>> Program::Impl::run_unless_compiled(
    std::span<const Signal> inputs) const {
  int channels = channels_for(inputs);
  const int length = length_class(inputs.empty() ? 0 : inputs[0].samples());
  std::shared_ptr<const CompiledValues> now = current(channels, length);
  DiagnosticEngine diags = source_.diagnostics();
  auto bound = bind_inputs(now->lowered, inputs, diags);
  if (!bound) throw_diagnostics(diags);
  if (options_.target == Target::reference) {
    auto out = run_reference(*bound, options_.sample_rate_hz, inputs, diags);
    if (!out) throw_diagnostics(diags);
    return std::move(*out);
  }
  std::vector<ir::NodeId> bound_inputs = bound->inputs(), compiled_inputs = now->scheduled.inputs();
  bool as_compiled = bound_inputs.size() == compiled_inputs.size();
  for (std::size_t i = 0; as_compiled && i < bound_inputs.size(); ++i)
    as_compiled = bound->node(bound_inputs[i]).type.channels == now->scheduled.node(compiled_inputs[i]).type.channels;
  if (!as_compiled) return run_bound(*bound, *specialization(channels, true, length), inputs);
  return now;
}

std::vector<Signal> Program::Impl::run(std::span<const Signal> inputs) const {
  auto ran = run_unless_compiled(inputs);
  if (auto* out = std::get_if<std::vector<Signal>>(&ran)) return std::move(*out);
  const auto& now = std::get<std::shared_ptr<const CompiledValues>>(ran);
  Expected<std::vector<Signal>, std::string> out =
      options_.target == Target::cpu ? now->cpu_runner->run(inputs)
                                     : execute_cuda(now->cuda, inputs);
  if (!out) throw_error(out.error(), "fxc-run");
  return std::move(*out);
}

std::vector<Signal> Program::Impl::run_consuming(std::vector<Signal> inputs) const {
  auto ran = run_unless_compiled(inputs);
  if (auto* out = std::get_if<std::vector<Signal>>(&ran)) return std::move(*out);
  const auto now = std::get<std::shared_ptr<const CompiledValues>>(std::move(ran));
  const std::vector<ir::NodeId> compiled_inputs = now->scheduled.inputs();
  // run()'s words for a wrong number of signals (the kernels' runner checks the count).
  if (inputs.size() != compiled_inputs.size()) return run(inputs);

  const DType dtype = options_.dtype;
  const std::size_t frames = inputs.empty() ? 0 : inputs[0].samples();
  for (Signal& s : inputs)
    if (s.dtype() != dtype) s = s.converted(dtype);
  auto channel_pointers = [](Signal& s) {
    std::vector<void*> p;
    for (std::size_t c = 0; c < s.channels(); ++c)
      p.push_back(s.dtype() == DType::f32 ? static_cast<void*>(s.f32(c).data()) : s.f64(c).data());
    return p;
  };
  // Each output is an input's memory where one of its channel count is left, else new. An
  // output that passes an input straight through takes that input's memory (nothing to copy)
  // or new memory: the run copies such outputs one after another, and one written over
  // another passed-through input overwrote it before it was read (two inputs swapped).
  const std::vector<ir::NodeId> out_ids = now->scheduled.outputs();
  std::vector<Signal> outputs(out_ids.size());
  std::vector<std::optional<std::size_t>> reused(out_ids.size());
  std::vector<bool> taken(inputs.size(), false), placed(out_ids.size(), false);
  for (std::size_t k = 0; k < out_ids.size(); ++k) {
    const ir::NodeId source = now->scheduled.node(out_ids[k]).operands[0];
    const auto it = std::find(compiled_inputs.begin(), compiled_inputs.end(), source);
    if (it == compiled_inputs.end()) continue;
    const auto i = static_cast<std::size_t>(it - compiled_inputs.begin());
    placed[k] = true;
    if (!taken[i]) {
      taken[i] = true;
      reused[k] = i;
    }
    if (!reused[k]) outputs[k] = Signal(inputs[i].channels(), frames, dtype, Signal::Uninitialized{});
  }
  for (std::size_t k = 0; k < out_ids.size(); ++k) {
    if (placed[k]) continue;
    const auto want = static_cast<std::size_t>(now->scheduled.node(out_ids[k]).type.channels);
    for (std::size_t i = 0; i < inputs.size() && !reused[k]; ++i)
      if (!taken[i] && inputs[i].channels() == want && inputs[i].samples() == frames) {
        taken[i] = true;
        reused[k] = i;
      }
    if (!reused[k]) outputs[k] = Signal(want, frames, dtype, Signal::Uninitialized{});
  }
  std::vector<std::vector<void*>> in_channels, out_channels;
  for (Signal& s : inputs) in_channels.push_back(channel_pointers(s));
  for (std::size_t k = 0; k < outputs.size(); ++k)
    out_channels.push_back(reused[k] ? in_channels[*reused[k]] : channel_pointers(outputs[k]));
  std::vector<const void* const*> in;
  std::vector<void* const*> out;
  for (const auto& p : in_channels) in.push_back(const_cast<const void* const*>(p.data()));
  for (const auto& p : out_channels) out.push_back(p.data());
  auto done = options_.target == Target::cpu ? now->cpu_runner->run_into(in, out, frames)
                                             : execute_cuda_into(now->cuda, in, out, frames);
  if (!done) throw_error(done.error(), "fxc-run");
  for (std::size_t k = 0; k < outputs.size(); ++k)
    if (reused[k]) {
      outputs[k] = std::move(inputs[*reused[k]]);
      outputs[k].set_source({});
    }
  return outputs;
}

std::vector<Signal> Program::Impl::run_bound(const ir::Graph& bound, const Specialization& spec,
                                             std::span<const Signal> inputs) const {
  CompileRequest request = spec.request;
  request.channels = 0;  // every input has its own count now
  DiagnosticEngine diags = source_.diagnostics();
  Expected<std::vector<Signal>, std::string> out = Unexpected{std::string()};
  if (options_.target == Target::cpu) {
    auto compiled = compile_for_cpu(bound, request, diags);
    if (!compiled) throw_diagnostics(diags);
    out = execute_cpu(compiled->scheduled, *compiled->kernels, inputs);
  } else {
    auto device = open_cuda_device();
    if (!device) throw_error(device.error(), "fxc-cuda");
    auto program = compile_for_cuda(bound, request, *device, diags);
    if (!program) throw_diagnostics(diags);
    out = execute_cuda(*program, inputs);
  }
  if (!out) throw_error(out.error(), "fxc-run");
  return std::move(*out);
}

namespace {

// What a run on device arrays needs before a graph is compiled: as many arrays as the graph
// has inputs and outputs, each `frames` long, none null, each aligned to its samples (a GPU
// faults on a misaligned load, and the fault ends the CUDA context for the whole process).
void check_device_arrays(std::size_t input_count, std::size_t output_count, std::span<const DeviceArray> inputs,
                         std::span<const DeviceArray> outputs, std::size_t frames, DType dtype) {
  if (inputs.size() != input_count || outputs.size() != output_count)
    throw_error("the graph has " + std::to_string(input_count) + " input(s) and " + std::to_string(output_count) +
                    " output(s), got " + std::to_string(inputs.size()) + " and " + std::to_string(outputs.size()) +
                    " device array(s)",
                "fxc-run");
  auto check = [&](const DeviceArray& a, const char* what, std::size_t index) {
    const std::string name = std::string(what) + " " + std::to_string(index);
    if (a.frames != frames)
      throw_error(name + " has " + std::to_string(a.frames) + " frames, input 0 " + std::to_string(frames) +
                      ": every array of a run has the same length",
                  "fxc-run");
    if (!a.data && frames > 0) throw_error(name + " is a null device pointer", "fxc-run");
    if (a.data % size_of(dtype) != 0)
      throw_error(fmt::format("{} at {:#x} is not aligned to its {}-byte samples", name, a.data, size_of(dtype)),
                  "fxc-run");
  };
  for (std::size_t i = 0; i < inputs.size(); ++i) check(inputs[i], "input", i);
  for (std::size_t o = 0; o < outputs.size(); ++o) check(outputs[o], "output", o);
}

// The caller's device arrays checked against a compiled graph's inputs and outputs (counts,
// one length, rows, null pointers), as pointers. `rows_note` ends the message for rows that do
// not match.
struct DevicePointers {
  std::vector<DevicePtr> inputs, outputs;
};
DevicePointers device_pointers(const ir::Graph& g, std::span<const DeviceArray> inputs,
                               std::span<const DeviceArray> outputs, std::size_t frames, DType dtype,
                               const std::string& rows_note) {
  std::vector<ir::NodeId> ins = g.inputs(), outs = g.outputs();
  check_device_arrays(ins.size(), outs.size(), inputs, outputs, frames, dtype);
  auto check = [&](const DeviceArray& a, ir::NodeId id, const char* what, std::size_t index) {
    if (static_cast<int>(a.channels) != g.node(id).type.channels)
      throw_error(std::string(what) + " " + std::to_string(index) + " has " + std::to_string(a.channels) +
                      " channels; the compiled graph's has " + std::to_string(g.node(id).type.channels) + rows_note,
                  "fxc-run");
    return static_cast<DevicePtr>(a.data);
  };
  DevicePointers out;
  for (std::size_t i = 0; i < inputs.size(); ++i) out.inputs.push_back(check(inputs[i], ins[i], "input", i));
  for (std::size_t o = 0; o < outputs.size(); ++o) out.outputs.push_back(check(outputs[o], outs[o], "output", o));
  return out;
}

std::size_t frames_of(std::span<const DeviceArray> inputs, std::span<const DeviceArray> outputs) {
  return inputs.empty() ? (outputs.empty() ? 0 : outputs[0].frames) : inputs[0].frames;
}

}  // namespace

void Program::Impl::run_device(std::span<const DeviceArray> inputs, std::span<const DeviceArray> outputs,
                               std::uintptr_t cuda_stream) const {
  if (options_.target != Target::cuda)
    throw_error("run_device runs on GPU memory: it needs a Program compiled with Target::cuda", "fxc-run");
  const std::size_t frames = frames_of(inputs, outputs);
  // Channel counts are checked as a host run checks them, on signals of no samples.
  std::vector<Signal> shapes;
  for (const DeviceArray& a : inputs) shapes.emplace_back(a.channels, 0, options_.dtype);
  const int channels = channels_for(shapes);
  std::shared_ptr<const CompiledValues> now = current(channels);
  DiagnosticEngine diags = source_.diagnostics();
  auto bound = bind_inputs(now->lowered, shapes, diags);
  if (!bound) throw_diagnostics(diags);
  DevicePointers p = device_pointers(now->scheduled, inputs, outputs, frames, options_.dtype,
                                     " (inputs declared without a count take Options::channels or the first run's)");
  auto done = execute_cuda_on_device(now->cuda, p.inputs, p.outputs, frames, cuda_stream);
  if (!done) throw_error(done.error(), "fxc-run");
}

void Program::Impl::run_batch_device(std::span<const DeviceArray> inputs, std::span<const DeviceArray> outputs,
                                     std::size_t items, std::uintptr_t cuda_stream) const {
  if (options_.target != Target::cuda)
    throw_error("run_batch_device runs on GPU memory: it needs a Program compiled with Target::cuda", "fxc-run");
  if (items == 0) throw_error("a batch needs at least one item", "fxc-batch");
  refuse_if_ahead_of_time();
  const std::size_t frames = frames_of(inputs, outputs);
  // One item's channel counts: each array's rows are the items' channels, item after item.
  std::vector<Signal> shapes;
  std::vector<int> per_item;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].channels % items != 0)
      throw_error("input " + std::to_string(i) + " has " + std::to_string(inputs[i].channels) + " rows, not a multiple of " +
                      std::to_string(items) + " items: a batch's rows are items x channels",
                  "fxc-batch");
    per_item.push_back(static_cast<int>(inputs[i].channels / items));
    shapes.emplace_back(inputs[i].channels / items, 0, options_.dtype);
  }
  // What needs no compiled graph is checked before one is compiled: counts, lengths, pointers.
  check_device_arrays(declared_.inputs().size(), declared_.outputs().size(), inputs, outputs, frames, options_.dtype);
  auto spec = specialization(channels_for(shapes), false);  // the batch compiles its own kernels
  std::shared_ptr<const CompiledValues> now;
  std::shared_ptr<const CudaProgram> program, earlier;  // earlier: the same shape at other values
  {
    std::lock_guard lock(mutex_);
    now = spec->now;
    for (auto it = device_batches_.begin(); it != device_batches_.end(); ++it)
      if (it->items == items && it->frames == frames) {
        if (it->values != now) {
          earlier = it->program;
          continue;
        }
        program = it->program;
        std::rotate(it, it + 1, device_batches_.end());  // the most recently used goes last
        break;
      }
  }
  if (!program) {
    // After a set(), the kernels of the batch at the earlier values serve with the new ones.
    std::shared_ptr<GpuDevice> device;
    if (earlier) {
      device = earlier->device;
    } else {
      auto opened = open_cuda_device();
      if (!opened) throw_error(opened.error(), "fxc-cuda");
      device = *opened;
    }
    DiagnosticEngine diags = source_.diagnostics();
    auto compiled =
        compile_batch_for_cuda(now->lowered, per_item, items, frames, spec->request, device, diags, earlier);
    if (!compiled) throw_diagnostics(diags);
    program = *compiled;
    std::lock_guard lock(mutex_);
    // The least recently used goes: programs of earlier values go that way too.
    if (device_batches_.size() >= kDeviceBatches) device_batches_.pop_front();
    device_batches_.push_back({items, frames, now, program});
  }
  DevicePointers p = device_pointers(program->scheduled, inputs, outputs, frames, options_.dtype,
                                     " (" + std::to_string(items) + " items x each item's channels)");
  auto done = execute_cuda_on_device(program, p.inputs, p.outputs, frames, cuda_stream);
  if (!done) throw_error(done.error(), "fxc-run");
}

std::vector<Signal> Program::Impl::run_cuda_in_blocks(std::span<const Signal> inputs, std::size_t block) const {
  std::shared_ptr<const CompiledValues> now = current(channels_for(inputs));
  DiagnosticEngine diags = source_.diagnostics();
  if (!bind_inputs(now->lowered, inputs, diags)) throw_diagnostics(diags);
  const std::size_t total = inputs.empty() ? 0 : inputs[0].samples();
  const DType dtype = codegen::cuda_signal_dtype(now->scheduled);
  // The blocks are read through pointers: every input as the compiled graph binds it (two
  // inputs declared without a count, given different counts, bind another graph than this).
  const std::vector<ir::NodeId> ids = now->scheduled.inputs();
  if (ids.size() != inputs.size())
    throw_error("the graph has " + std::to_string(ids.size()) + " input(s), got " + std::to_string(inputs.size()) +
                " signal(s)", "fxc-run");
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].channels() != static_cast<std::size_t>(now->scheduled.node(ids[i]).type.channels) ||
        inputs[i].samples() != total)
      throw_error("input " + std::to_string(i) + " does not match the bound graph (" +
                      std::to_string(now->scheduled.node(ids[i]).type.channels) + " channels, " +
                      std::to_string(total) + " samples): run_in_blocks binds one channel count for every input "
                      "declared without one", "fxc-run");
  // The outputs written in place, a block at a time.
  PlanarRun run = planar_run(inputs, now->scheduled, dtype, total);
  CudaStream stream(now->cuda);
  if (auto ok = stream.process_into(run.in_ports, run.out_ports, total, block); !ok) throw_error(ok.error(), "fxc-run");
  return std::move(run.outputs);
}

PlanarRun planar_run(std::span<const Signal> inputs, const ir::Graph& scheduled, DType dtype, std::size_t frames) {
  PlanarRun run;
  run.converted.reserve(inputs.size());  // no reallocation: `in` points into it
  for (const Signal& s : inputs)
    if (s.dtype() != dtype) run.converted.push_back(s.converted(dtype));
  for (ir::NodeId id : scheduled.outputs())
    run.outputs.emplace_back(static_cast<std::size_t>(scheduled.node(id).type.channels), frames, dtype,
                             Signal::Uninitialized{});
  auto data = [&](const Signal& s, std::size_t c) {
    return dtype == DType::f32 ? static_cast<const void*>(s.f32(c).data()) : static_cast<const void*>(s.f64(c).data());
  };
  run.in.resize(inputs.size());
  run.out.resize(run.outputs.size());
  for (std::size_t i = 0, k = 0; i < inputs.size(); ++i) {
    const Signal& s = inputs[i].dtype() == dtype ? inputs[i] : run.converted[k++];
    for (std::size_t c = 0; c < s.channels(); ++c) run.in[i].push_back(data(s, c));
    run.in_ports.push_back(run.in[i].data());
  }
  for (std::size_t k = 0; k < run.outputs.size(); ++k) {
    for (std::size_t c = 0; c < run.outputs[k].channels(); ++c)
      run.out[k].push_back(const_cast<void*>(data(run.outputs[k], c)));
    run.out_ports.push_back(run.out[k].data());
  }
  return run;
}

void Program::Impl::refuse_if_ahead_of_time() const {
  if (options_.target == Target::cuda && !options_.cuda_architecture.empty())
    throw_error("this Program compiled its CUDA kernels ahead of time for " + options_.cuda_architecture +
                " (Options::cuda_architecture), so it cannot run: make one without an architecture to run on "
                "this machine's GPU", "fxc-cuda");
}

std::shared_ptr<const CompiledValues> Program::Impl::current(int channels, int length_class) const {
  auto spec = specialization(channels, true, length_class);
  std::lock_guard lock(mutex_);
  refuse_if_ahead_of_time();
  if (options_.target != Target::reference && !spec->now->kernels && !spec->now->cuda) {
    // Options::compile_kernels was false: the first run compiles them, or takes those a copy
    // of this Program compiled for the specialisation's first values (under the shared lock:
    // a copy compiling them meanwhile is waited for). Values a set() made are this copy's.
    FirstKernels& first = *spec->first_kernels;
    std::lock_guard first_lock(first.mutex);
    const bool shared = first.from == spec->now;
    std::shared_ptr<const CompiledValues> compiled = shared ? first.compiled : nullptr;
    if (!compiled) {
      auto with_kernels = std::make_shared<CompiledValues>(*spec->now);
      DiagnosticEngine diags = source_.diagnostics();
      if (!compile_kernels(*spec, *with_kernels, diags)) throw_diagnostics(diags);
      compiled = std::move(with_kernels);
      if (shared) first.compiled = compiled;
    }
    // Kept for the next run, unless a set() dropped this length class meanwhile.
    if (auto it = specs_.find({channels, length_class}); it != specs_.end() && it->second == spec)
      it->second->now = compiled;
    return compiled;
  }
  return spec->now;
}

std::vector<std::vector<Signal>> Program::Impl::run_batch(const std::vector<std::vector<Signal>>& items) const {
  if (items.empty()) return {};
  auto spec = specialization(channels_for(items[0]), false);  // the batch compiles its own kernels
  std::shared_ptr<const CompiledValues> now;
  {
    std::lock_guard lock(mutex_);
    now = spec->now;
  }
  DiagnosticEngine diags = source_.diagnostics();
  std::optional<std::vector<std::vector<Signal>>> out;
  if (options_.target == Target::reference) {
    out.emplace();
    for (const auto& item : items) {
      auto one = run_reference(now->lowered, options_.sample_rate_hz, item, diags);
      if (!one) throw_diagnostics(diags);
      out->push_back(std::move(*one));
    }
    return std::move(*out);
  }
  if (options_.target == Target::cpu) {
    out = fxc::run_batch(now->lowered, items, spec->request, diags);
  } else {
    auto device = open_cuda_device();
    if (!device) throw_error(device.error(), "fxc-cuda");
    out = run_batch_cuda(now->lowered, items, spec->request, *device, diags);
  }
  if (!out) throw_diagnostics(diags);
  return std::move(*out);
}

bool Program::Impl::run_batch_into(std::span<const void* const* const> inputs, std::span<void* const* const> outputs,
                                   std::size_t items, std::size_t frames) const {
  if (options_.target != Target::cpu) return false;
  auto spec = specialization(options_.channels, false);  // the batch compiles its own kernels
  std::shared_ptr<const CompiledValues> now;
  {
    std::lock_guard lock(mutex_);
    now = spec->now;
  }
  std::vector<int> channels;
  for (const PortInfo& port : ports(true)) channels.push_back(port.channels);
  DiagnosticEngine diags = source_.diagnostics();
  if (!fxc::run_batch_into(now->lowered, channels, items, frames, inputs, outputs, spec->request, diags))
    throw_diagnostics(diags);
  return true;
}

std::string Program::Impl::dump(const DumpOptions& o) const {
  bool undeclared = false;
  for (ir::NodeId id : declared_.inputs()) undeclared = undeclared || declared_.node(id).type.channels == 0;
  int channels = 0;
  if (undeclared) {
    std::lock_guard lock(mutex_);
    if (options_.channels == 0 && specs_.empty())
      throw_error("the graph's channel counts are not known yet: give Options::channels or run a signal first");
    channels = options_.channels ? options_.channels : specs_.begin()->first.first;
  }
  auto spec = specialization(channels, false);  // a dump reads graphs, not kernels
  std::shared_ptr<const CompiledValues> now;
  {
    std::lock_guard lock(mutex_);
    now = spec->now;
  }
  if ((o.emit == "llvm" || o.emit == "cuda") && o.format != "text")
    throw_error("format '" + o.format + "' applies to the dumps ir and ir-opt; " + o.emit + " is text", "fxc-emit");
  // What a dump would otherwise ignore without a word.
  if ((o.emit == "llvm" || o.emit == "cuda") && (!o.passes.empty() || o.print_after_all || o.time_passes))
    throw_error("passes, print_after_all and time_passes apply to the dumps ir and ir-opt; " + o.emit +
                    " prints the kernels of the whole pipeline",
                "fxc-emit");
  if (o.llvm_optimized && o.emit != "llvm")
    throw_error("llvm_optimized applies to the dump llvm, not " + o.emit, "fxc-emit");
  if (!o.locations && (o.format != "text" || (o.emit != "ir" && o.emit != "ir-opt")))
    throw_error("leaving locations out applies to the text IR of the dumps ir and ir-opt" +
                    (o.format != "text" ? "; the " + o.format + " dump always has them"
                                        : "; the dump " + o.emit + " has none"),
                "fxc-emit");
  if (o.emit == "llvm" && options_.target != Target::cpu)
    throw_error("the dump llvm is the CPU's kernels: compile the Program for the cpu target", "fxc-emit");
  if (o.emit == "cuda" && options_.target != Target::cuda)
    throw_error("the dump cuda is the GPU's kernels: compile the Program for the cuda target (Target::cuda, "
                "target=\"cuda\" in Python; no GPU is needed to dump)",
                "fxc-emit");
  if (o.emit == "llvm" || o.emit == "cuda") {
    auto text = o.emit == "llvm" ? codegen::emit_cpu_llvm_ir(now->scheduled, o.llvm_optimized)
                                 : codegen::emit_cuda_source(now->scheduled);
    if (!text) throw_error(text.error(), "fxc-emit");
    return *text;
  }
  if (o.emit != "ir" && o.emit != "ir-opt")
    throw_error("unknown dump '" + o.emit + "': ir, ir-opt, llvm or cuda (Program::dump(emit) also takes dot and json: "
                "ir-opt in that format)",
                "fxc-emit");
  if (o.format != "text" && o.format != "dot" && o.format != "json")
    throw_error("unknown dump format '" + o.format + "': text, dot or json", "fxc-emit");

  // The scheduled graph as compiled; any other stage, or one with the passes' own printing,
  // runs the pipeline again from the lowered graph with the compile's settings.
  std::ostringstream log;
  std::optional<ir::Graph> staged;
  if (o.emit == "ir-opt" && o.passes.empty() && !o.print_after_all && !o.time_passes) {
    staged = now->scheduled;
  } else {
    DiagnosticEngine diags = source_.diagnostics();
    passes::PassContext context = pass_context(spec->request, target_, diags);
    passes::PipelineOptions pipeline;
    pipeline.passes = o.passes;
    if (o.emit == "ir" && pipeline.passes.empty()) pipeline.passes = {"infer-types", "design-filters"};
    pipeline.print_after_all = o.print_after_all;
    pipeline.time_passes = o.time_passes;
    pipeline.print_locations = o.locations;
    pipeline.log = o.log ? o.log : &log;
    staged = passes::run_pipeline(now->lowered, context, pipeline);
    if (!staged) throw_diagnostics(diags);
  }
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;  // names may be invalid UTF-8
  if (o.format == "json") log << ir::to_json(*staged).dump(2, ' ', false, kReplace) << '\n';
  else if (o.format == "dot") log << ir::to_dot(*staged);
  else if (!o.print_after_all) log << ir::to_text(*staged, {.locations = o.locations});
  return log.str();
}

std::vector<FrequencyResponse> Program::Impl::frequency_response(const std::vector<double>& frequencies_hz) const {
  ParamValues values;
  {
    std::lock_guard lock(mutex_);
    values = values_;
  }
  DiagnosticEngine diags = source_.diagnostics();
  auto lowered = source_.lower(values, diags);
  if (!lowered) throw_diagnostics(diags);
  CompileRequest request = base_request(1, 0);
  request.dtype = DType::f64;
  request.pipeline = {};
  request.pipeline.passes = {"infer-types", "design-filters"};
  auto designed = schedule_graph(*lowered, request, target_, diags);
  if (!designed) throw_diagnostics(diags);
  std::vector<double> w;
  for (double f : frequencies_hz) {
    if (!std::isfinite(f) || f < 0)
      throw_error("frequency_response: frequencies must be finite and at least 0 Hz, got " + format_double(f));
    w.push_back(2 * M_PI * f / options_.sample_rate_hz);
  }
  std::vector<PathResponse> paths = fxc::frequency_response(*designed, w, diags);
  if (diags.has_errors()) throw_diagnostics(diags);
  std::vector<FrequencyResponse> out;  // in output order, then input order
  std::vector<ir::NodeId> outputs = designed->outputs(), inputs = designed->inputs();
  for (std::size_t k = 0; k < outputs.size(); ++k)
    for (std::size_t i = 0; i < inputs.size(); ++i)
      for (PathResponse& p : paths)
        if (p.output == outputs[k] && p.input == inputs[i])
          out.push_back({std::get<ir::Output>(designed->node(outputs[k]).op).name,
                         std::get<ir::Input>(designed->node(inputs[i]).op).name, k, i, std::move(p.response)});
  return out;
}

std::string Program::Impl::warnings() const {
  std::lock_guard lock(mutex_);
  return warnings_;
}

}  // namespace fxc
