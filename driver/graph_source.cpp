// SPDX-License-Identifier: Apache-2.0
#include "driver/graph_source.h"

#include <filesystem>
#include <limits>

#include "support/api_error.h"
#include "support/deep_stack.h"

#include "frontend/dsl.h"
#include "frontend/fx_file.h"
#include "frontend/fx_parameters.h"
#include "ir/verify.h"

namespace fxc::driver {

std::optional<GraphSource> GraphSource::from_fx(std::string text, std::string file,
                                                std::vector<frontend::ConstantOverride> overrides,
                                                DiagnosticEngine& diags) {
  // The AST is walked here (its constants, its parameters) and freed, recursively, to the
  // depth the parser allows: on the frontend's stack, not the caller's (support/deep_stack.h).
  return on_deep_stack([&] { return from_fx_here(std::move(text), std::move(file), std::move(overrides), diags); });
}

std::optional<GraphSource> GraphSource::from_fx_here(std::string text, std::string file,
                                                     std::vector<frontend::ConstantOverride> overrides,
                                                     DiagnosticEngine& diags) {
  DiagnosticEngine parsing;
  auto ast = frontend::parse_fx_source(text, file, parsing);
  if (!ast || !frontend::apply_constant_overrides(*ast, overrides, parsing)) {
    // Report as a compile does: the rest of the file lowered too, every error in file order.
    (void)frontend::compile_fx_source(text, file, overrides, ParamValues{}, diags);
    if (!diags.has_errors()) diags = std::move(parsing);
    return std::nullopt;
  }
  diags.add_source(file, text);
  for (const Diagnostic& d : parsing.diagnostics()) diags.report(d);
  GraphSource source;
  source.overrides_ = std::move(overrides);
  source.params_ = frontend::fx_parameters(*ast, diags);
  if (diags.has_errors()) return std::nullopt;
  source.fx_text_ = std::move(text);
  source.file_ = std::move(file);
  return source;
}

std::optional<GraphSource> GraphSource::from_dsl(std::string name, std::vector<Output> outputs,
                                                 DiagnosticEngine& diags) {
  GraphSource source;
  for (const ParamRef& p : on_deep_stack([&] { return collect_params(outputs); })) {
    auto same = std::find_if(source.params_.begin(), source.params_.end(),
                             [&](const ParamDecl& d) { return d.name == p->name; });
    if (same != source.params_.end()) {
      Diagnostic& d = diags.error(p->loc, "the parameter '" + p->name + "' is declared twice (fxc::param names must be unique in a graph)", "fxc-param");
      d.notes.push_back({Severity::note, same->loc, "first declared here", "", {}});
      continue;
    }
    if (p->min && p->max && !(*p->min <= p->value && p->value <= *p->max))
      diags.error(p->loc, "the parameter '" + p->name + "' starts outside its range", "fxc-param");
    source.params_.push_back(*p);
  }
  if (diags.has_errors()) return std::nullopt;
  source.graph_name_ = std::move(name);
  source.outputs_ = std::move(outputs);
  source.is_dsl_ = true;
  return source;
}

std::string GraphSource::name_of(const ir::Graph& lowered) const {
  if (!lowered.name.empty() || is_dsl_) return lowered.name;
  return std::filesystem::path(file_).stem().string();
}

std::optional<ir::Graph> GraphSource::lower(const ParamValues& values, DiagnosticEngine& diags) const {
  if (!is_dsl_) return frontend::compile_fx_source(fx_text_, file_, overrides_, values, diags);
  // make_graph walks the DSL's expressions recursively, as deep as they nest (the DSL has no
  // limit of its own): on the frontend's stack, not the caller's.
  ir::Graph graph = on_deep_stack([&] { return make_graph(graph_name_, outputs_, values); });
  // What the verifier finds in a DSL graph is the caller's mistake (an order of 0, a name used
  // twice), not fxc's: said as one, at the C++ call, without the IR's node numbers.
  DiagnosticEngine found;
  if (ir::verify(graph, found)) return graph;
  for (Diagnostic d : found.diagnostics()) {
    if (d.code == "ir-verify") {
      d.code = "fxc-dsl";
      if (d.message.starts_with("%"))
        if (auto colon = d.message.find("): "); colon != std::string::npos) d.message.erase(0, colon + 3);
    }
    diags.report(std::move(d));
  }
  return std::nullopt;
}

DiagnosticEngine GraphSource::diagnostics() const {
  DiagnosticEngine diags;
  if (!is_dsl_) diags.add_source(file_, fx_text_);
  return diags;
}

ParamInfo param_info(const ParamDecl& p, int id, double value) {
  ParamInfo info;
  info.name = p.name;
  info.id = id;
  info.unit = std::string(unit_text(p.unit));
  info.value = value;
  info.has_range = p.min && p.max;
  info.min = p.min.value_or(-std::numeric_limits<double>::infinity());
  info.max = p.max.value_or(std::numeric_limits<double>::infinity());
  return info;
}

std::vector<frontend::ConstantOverride> overrides_from(const std::vector<std::string>& settings) {
  std::vector<frontend::ConstantOverride> overrides;
  for (const std::string& setting : settings) {
    auto eq = setting.find('=');
    if (eq == std::string::npos || eq == 0)
      throw_error("Options::settings: expected NAME=VALUE, got '" + setting + "'", "fx-set");
    overrides.push_back({setting.substr(0, eq), setting.substr(eq + 1)});
  }
  return overrides;
}

}  // namespace fxc::driver
