// SPDX-License-Identifier: Apache-2.0
#include "driver/compiled_program.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "codegen/cpu/cpu_compiler.h"
#include "codegen/cuda/emit_cuda.h"
#include "driver/api_error.h"
#include "ir/export.h"
#include "ir/hash.h"
#include "ir/print.h"
#include "passes/pipeline.h"
#include "runtime/batch.h"
#include "runtime/bind_inputs.h"
#include "runtime/cpu_executor.h"
#include "runtime/kernel_cache.h"
#include "runtime/reference_interpreter.h"
#include "support/float_format.h"
#include "support/strings.h"

namespace fxc {

using driver::throw_diagnostics;
using driver::throw_error;

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
  for (const auto& [name, value] : options_.params) values_[name] = value;
  for (const auto& [name, value] : options_.params) {
    int id = param_id(name);
    const ParamDecl& p = source_.params()[static_cast<std::size_t>(id)];
    if ((p.min && value < *p.min) || (p.max && value > *p.max))
      throw_error("the parameter '" + name + "' = " + format_double(value) + " is outside its range [" +
                  format_double(*p.min) + ", " + format_double(*p.max) + "]", "fxc-param");
  }
  DiagnosticEngine diags;
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
  for (const auto& [channels, spec] : other.specs_) specs_[channels] = std::make_shared<Specialization>(*spec);
  warnings_ = other.warnings_;
}

CompileRequest Program::Impl::base_request(int channels) const {
  CompileRequest r;
  r.sample_rate_hz = options_.sample_rate_hz;
  r.dtype = options_.dtype;
  r.channels = channels;
  r.cache_directory = options_.cache_directory == "none" ? std::string() : options_.cache_directory;
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
  return out;
}

std::vector<ParamInfo> Program::Impl::param_infos() const {
  std::vector<ParamInfo> out;
  int id = 0;
  for (const ParamDecl& p : source_.params()) {
    ParamInfo info;
    info.name = p.name;
    info.id = id;
    info.unit = std::string(unit_text(p.unit));
    info.value = value(id++);
    info.has_range = p.min && p.max;
    info.min = p.min.value_or(-std::numeric_limits<double>::infinity());
    info.max = p.max.value_or(std::numeric_limits<double>::infinity());
    out.push_back(std::move(info));
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
                                                            DiagnosticEngine& diags) const {
  CompiledValues out;
  out.values = values;
  auto lowered = driver::lower_marked(source_, spec.live.live, values, diags);
  if (!lowered) return std::nullopt;
  out.lowered = std::move(*lowered);
  if (options_.target == Target::reference) {
    out.scheduled = out.lowered;
    return out;
  }
  auto scheduled = schedule_graph(out.lowered, spec.request, target_, diags);
  if (!scheduled) return std::nullopt;
  out.scheduled = std::move(*scheduled);
  if (spec.now) {
    // New values for compiled kernels: the shape must not have moved.
    if (ir::structural_hash(out.scheduled) != ir::structural_hash(spec.now->scheduled))
      throw InternalError("a live parameter value changed the compiled graph's shape (a bug in fxc): " +
                          ir::to_text(out.scheduled) + "\nwas\n" + ir::to_text(spec.now->scheduled));
    out.kernels = spec.now->kernels;
    if (spec.now->cuda) {
      auto cuda = std::make_shared<CudaProgram>(*spec.now->cuda);
      cuda->scheduled = out.scheduled;
      out.cuda = std::move(cuda);
    }
    return out;
  }
  if (options_.target == Target::cpu) {
    KernelCache cache(spec.request.cache_directory);
    auto kernels = cache.cpu_kernels(out.scheduled, diags);
    if (!kernels) {
      diags.error({}, kernels.error(), "fxc-compile");
      return std::nullopt;
    }
    out.kernels = *kernels;
  } else {
    auto device = open_cuda_device();
    if (!device) {
      diags.error({}, device.error(), "fxc-cuda");
      return std::nullopt;
    }
    auto program = compile_for_cuda(out.lowered, spec.request, *device, diags);
    if (!program) return std::nullopt;
    out.cuda = *program;
  }
  return out;
}

std::shared_ptr<const Specialization> Program::Impl::specialization(int channels) const {
  std::lock_guard lock(mutex_);
  if (auto it = specs_.find(channels); it != specs_.end()) return it->second;
  auto spec = std::make_shared<Specialization>();
  spec->channels = channels;
  spec->request = base_request(channels);
  // Whole signals: no length guides the strategy (a Processor sets its block length).
  DiagnosticEngine diags;
  auto live = driver::analyse_live_parameters(source_, values_, spec->request, target_, diags);
  if (!live) throw_diagnostics(diags);
  spec->live = std::move(*live);
  spec->request.live_pole_radius = spec->live.pole_radius;
  auto now = compile_values(*spec, values_, diags);
  if (!now) throw_diagnostics(diags);
  spec->now = std::make_shared<const CompiledValues>(std::move(*now));
  if (std::any_of(diags.diagnostics().begin(), diags.diagnostics().end(),
                  [](const Diagnostic& d) { return d.severity == Severity::warning; }))
    warnings_ += diags.str();
  specs_[channels] = spec;
  return spec;
}

void Program::Impl::set(int id, double v) {
  if (id < 0 || static_cast<std::size_t>(id) >= source_.params().size())
    throw_error("no parameter has the id " + std::to_string(id), "fxc-param");
  const ParamDecl& p = source_.params()[static_cast<std::size_t>(id)];
  if (!std::isfinite(v)) throw_error("the parameter '" + p.name + "' must be a finite number", "fxc-param");
  if ((p.min && v < *p.min) || (p.max && v > *p.max))
    throw_error("'" + p.name + "' = " + format_double(v) + " is outside its range [" + format_double(*p.min) +
                ", " + format_double(*p.max) + "]", "fxc-param");
  std::lock_guard lock(mutex_);
  ParamValues next = values_;
  next[p.name] = v;
  std::vector<std::pair<std::shared_ptr<Specialization>, std::shared_ptr<const CompiledValues>>> made;
  for (const auto& [channels, spec] : specs_) {
    DiagnosticEngine diags;
    auto compiled = compile_values(*spec, next, diags);
    if (!compiled) throw_diagnostics(diags);
    made.emplace_back(spec, std::make_shared<const CompiledValues>(std::move(*compiled)));
  }
  if (specs_.empty()) {  // nothing compiled yet: still check that the stages accept it
    DiagnosticEngine diags;
    if (!source_.lower(next, diags)) throw_diagnostics(diags);
  }
  for (auto& [spec, compiled] : made) spec->now = std::move(compiled);
  values_ = std::move(next);
}

int Program::Impl::channels_for(std::span<const Signal> inputs) const {
  if (options_.channels > 0) return options_.channels;
  std::vector<ir::NodeId> ids = declared_.inputs();
  for (std::size_t i = 0; i < ids.size() && i < inputs.size(); ++i)
    if (declared_.node(ids[i]).type.channels == 0) return static_cast<int>(inputs[i].channels());
  return 0;
}

std::vector<Signal> Program::Impl::run(std::span<const Signal> inputs) const {
  auto spec = specialization(channels_for(inputs));
  std::shared_ptr<const CompiledValues> now;
  {
    std::lock_guard lock(mutex_);
    now = spec->now;
  }
  DiagnosticEngine diags;
  auto bound = bind_inputs(now->lowered, inputs, diags);
  if (!bound) throw_diagnostics(diags);
  if (options_.target == Target::reference) {
    auto out = run_reference(*bound, options_.sample_rate_hz, inputs, diags);
    if (!out) throw_diagnostics(diags);
    return std::move(*out);
  }
  Expected<std::vector<Signal>, std::string> out =
      options_.target == Target::cpu ? execute_cpu(now->scheduled, *now->kernels, inputs)
                                     : execute_cuda(now->cuda, inputs);
  if (!out) throw_error(out.error(), "fxc-run");
  return std::move(*out);
}

std::shared_ptr<const CompiledValues> Program::Impl::current(int channels) const {
  auto spec = specialization(channels);
  std::lock_guard lock(mutex_);
  return spec->now;
}

std::vector<std::vector<Signal>> Program::Impl::run_batch(const std::vector<std::vector<Signal>>& items) const {
  if (items.empty()) return {};
  auto spec = specialization(channels_for(items[0]));
  std::shared_ptr<const CompiledValues> now;
  {
    std::lock_guard lock(mutex_);
    now = spec->now;
  }
  DiagnosticEngine diags;
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

std::string Program::Impl::dump(std::string_view emit) const {
  bool undeclared = false;
  for (ir::NodeId id : declared_.inputs()) undeclared = undeclared || declared_.node(id).type.channels == 0;
  if (undeclared && options_.channels == 0 && specs_.empty())
    throw_error("the graph's channel counts are not known yet: give Options::channels or run a signal first");
  auto spec = specialization(undeclared ? (options_.channels ? options_.channels : specs_.begin()->first) : 0);
  std::shared_ptr<const CompiledValues> now;
  {
    std::lock_guard lock(mutex_);
    now = spec->now;
  }
  if (emit == "ir") {
    DiagnosticEngine diags;
    passes::PassContext context{diags, {options_.sample_rate_hz, spec->channels, options_.dtype}};
    passes::PipelineOptions pipeline;
    pipeline.passes = {"infer-types", "design-filters"};
    auto designed = passes::run_pipeline(now->lowered, context, pipeline);
    if (!designed) throw_diagnostics(diags);
    return ir::to_text(*designed);
  }
  if (emit == "ir-opt") return ir::to_text(now->scheduled);
  if (emit == "dot") return ir::to_dot(now->scheduled);
  if (emit == "json") return ir::to_json(now->scheduled).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (emit == "llvm") {
    auto text = codegen::emit_cpu_llvm_ir(now->scheduled, false);
    if (!text) throw_error(text.error(), "fxc-emit");
    return *text;
  }
  if (emit == "cuda") {
    auto text = codegen::emit_cuda_source(now->scheduled);
    if (!text) throw_error(text.error(), "fxc-emit");
    return *text;
  }
  throw_error("unknown dump '" + std::string(emit) + "': ir, ir-opt, dot, json, llvm or cuda", "fxc-emit");
}

std::string Program::Impl::warnings() const {
  std::lock_guard lock(mutex_);
  return warnings_;
}

}  // namespace fxc
