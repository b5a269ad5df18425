// SPDX-License-Identifier: Apache-2.0
#include "driver/graph_source.h"

#include "frontend/dsl.h"
#include "frontend/fx_file.h"
#include "frontend/fx_parameters.h"
#include "ir/verify.h"

namespace fxc::driver {

std::optional<GraphSource> GraphSource::from_fx(std::string text, std::string file, DiagnosticEngine& diags) {
  auto ast = frontend::parse_fx_source(text, file, diags);
  if (!ast) return std::nullopt;
  GraphSource source;
  source.params_ = frontend::fx_parameters(*ast, diags);
  if (diags.has_errors()) return std::nullopt;
  source.fx_text_ = std::move(text);
  source.file_ = std::move(file);
  return source;
}

std::optional<GraphSource> GraphSource::from_dsl(std::string name, std::vector<Output> outputs,
                                                 DiagnosticEngine& diags) {
  GraphSource source;
  for (const ParamRef& p : collect_params(outputs)) {
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

std::optional<ir::Graph> GraphSource::lower(const ParamValues& values, DiagnosticEngine& diags) const {
  if (!is_dsl_) return frontend::compile_fx_source(fx_text_, file_, values, diags);
  ir::Graph graph = make_graph(graph_name_, outputs_, values);
  if (!ir::verify(graph, diags)) return std::nullopt;
  return graph;
}

}  // namespace fxc::driver
