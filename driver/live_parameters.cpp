// SPDX-License-Identifier: Apache-2.0
#include "driver/live_parameters.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "codegen/chain_layout.h"
#include "design/filter_design.h"
#include "ir/field_text.h"
#include "ir/hash.h"
#include "passes/cost_model.h"
#include "passes/pipeline.h"
#include "passes/precision_estimate.h"
#include "support/float_format.h"

namespace fxc::driver {
namespace {

std::string op_text(const ir::Node& node) {
  return std::string(ir::kind_name(node.op)) + "{" +
         std::visit([](const auto& p) { return ir::fields_text(p, false); }, node.op) + "}";
}

// Another value for `p` than `now`, inside its range when it has one, for the liveness probe.
double probe_value(const ParamDecl& p, double now) {
  if (p.min && p.max) {
    if (*p.min == *p.max) return now;
    return now == *p.max ? *p.min : *p.max;
  }
  double other = now == 0 ? 1 : now * 0.75;
  if (p.unit == ParamUnit::samples) other = std::floor(now * 0.75) == now ? now + 1 : std::floor(now * 0.75);
  return other;
}

// A plain number whose value and declared range's ends are all whole numbers.
bool whole_numbered(const ParamDecl& p, double now) {
  auto whole = [](double x) { return std::isfinite(x) && x == std::round(x); };
  return p.unit == ParamUnit::number && p.min && p.max && whole(*p.min) && whole(*p.max) && whole(now);
}

// The values `p` is tried at for step 2.
std::vector<double> sample_values(const ParamDecl& p, double now, double sample_rate_hz) {
  std::vector<double> out;
  if (p.min && p.max) {
    double lo = *p.min, hi = *p.max;
    bool log = lo > 0 && (p.unit == ParamUnit::hz || p.unit == ParamUnit::seconds || p.unit == ParamUnit::samples);
    // A plain number whose value and range ends are all whole may be an order or a count
    // (`n = 4 in [1, 8]`): its points are taken rounded too, and a stage that refuses it at
    // a fraction (run_at) says nothing about the range.
    const bool counts = whole_numbered(p, now);
    constexpr int kPoints = 9;
    for (int i = 0; i < kPoints; ++i) {
      double t = static_cast<double>(i) / (kPoints - 1);
      double v = log ? lo * std::pow(hi / lo, t) : lo + (hi - lo) * t;
      if (p.unit == ParamUnit::samples) v = std::round(v);
      out.push_back(std::clamp(v, lo, hi));
      if (counts) out.push_back(std::clamp(std::round(v), lo, hi));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  switch (p.unit) {
    case ParamUnit::hz: out = {1, 20, 200, 2000, 0.45 * sample_rate_hz, 0.49 * sample_rate_hz}; break;
    case ParamUnit::db: out = {-60, -12, 0, 12, 24}; break;
    case ParamUnit::seconds:
    case ParamUnit::samples: out = {now * 0.5, now * 2 + 1}; break;
    case ParamUnit::number: out = now == 0 ? std::vector<double>{-1, 1} : std::vector<double>{now * 0.1, now * 0.5, now * 2, now * 10}; break;
  }
  return out;
}

struct ChainFacts {
  double radius = 0;
  std::vector<std::int64_t> delays;
  std::vector<design::Section> cascade;  ///< its sections, for the float32 error
  std::string shape;                     ///< passes::live_chain_shape
};

// Every pass but select-strategy: the graph whose chains select_strategy will schedule.
std::optional<ir::Graph> designed_graph(const ir::Graph& marked, const CompileRequest& request,
                                        const passes::Target& target, DiagnosticEngine& diags) {
  // The request's own passes (Options::fuse = false runs only five), but select-strategy:
  // the ids must be those the compile's select-strategy sees.
  CompileRequest designing = request;
  designing.pipeline = {};
  if (request.pipeline.passes.empty())
    for (const passes::PassInfo& p : passes::all_passes()) designing.pipeline.passes.emplace_back(p.name);
  else
    designing.pipeline.passes = request.pipeline.passes;
  std::erase(designing.pipeline.passes, std::string("select-strategy"));
  return schedule_graph(marked, designing, target, diags);
}

struct Facts {
  std::map<ir::NodeId, ChainFacts> chains;
  std::string shape;  ///< the designed graph's structural hash
  std::size_t nodes = 0;
};

std::optional<Facts> chain_facts(const ir::Graph& marked, const CompileRequest& request,
                                 const passes::Target& target, DiagnosticEngine& diags) {
  auto designed = designed_graph(marked, request, target, diags);
  if (!designed) return std::nullopt;
  Facts out;
  out.shape = ir::structural_hash(*designed);
  out.nodes = designed->size();
  for (ir::NodeId id = 0; id < designed->size(); ++id) {
    const ir::Node& node = designed->node(id);
    if (const auto* feedback = std::get_if<ir::Feedback>(&node.op); feedback && node.live) {
      out.chains.emplace(id, ChainFacts{0.0, {static_cast<std::int64_t>(feedback->amount)}, {}, {}});
      continue;
    }
    const auto* chain = std::get_if<ir::Chain>(&node.op);
    if (!chain || !node.live) continue;
    ChainFacts f;
    for (const ir::Stage& stage : chain->stages)
      if (const auto* sos = std::get_if<ir::SosCascade>(&stage)) {
        f.radius = std::max(f.radius, design::max_pole_radius(sos->sections));
        f.cascade.insert(f.cascade.end(), sos->sections.begin(), sos->sections.end());
      }
    f.shape = passes::live_chain_shape(*chain);
    f.delays = codegen::values_of(*chain).delay_lengths;
    out.chains.emplace(id, std::move(f));
  }
  return out;
}

std::string describe(const ParamDecl& p, double v) {
  std::string unit(unit_text(p.unit));
  return format_double(v) + (unit.empty() ? "" : " " + unit);
}

}  // namespace

std::optional<ir::Graph> lower_marked(const GraphSource& source, const std::vector<bool>& live,
                                      const ParamValues& values, DiagnosticEngine& diags) {
  auto graph = source.lower(values, diags);
  if (!graph) return std::nullopt;
  for (ir::NodeId id = 0; id < graph->size() && id < live.size(); ++id) graph->node(id).live = live[id];
  return graph;
}

std::optional<LiveAnalysis> analyse_live_parameters(const GraphSource& source, const ParamValues& values,
                                                    const CompileRequest& request, const passes::Target& target,
                                                    bool unranged_live, DiagnosticEngine& diags) {
  LiveAnalysis out;
  auto now = source.lower(values, diags);
  if (!now) return std::nullopt;
  out.live.assign(now->size(), false);
  auto current = [&](const ParamDecl& p) {
    auto it = values.find(p.name);
    return it == values.end() ? p.value : it->second;
  };

  auto considered = [&](const ParamDecl& p) {
    return !out.fixed.count(p.name) && !out.structural.count(p.name);
  };
  // 1. Liveness: the nodes each parameter's probe value changes. (A probe that changes the
  // lowered structure marks the parameter structural here; one that changes only the designed
  // shape, an order's section count, is found by the range sampling below.)
  for (const ParamDecl& p : source.params()) {
    if (!unranged_live && !(p.min && p.max)) {
      out.fixed.insert(p.name);
      continue;
    }
    ParamValues probe = values;
    probe[p.name] = probe_value(p, current(p));
    DiagnosticEngine ignored;  // a probe value a stage refuses says nothing about liveness
    auto other = source.lower(probe, ignored);
    // A range whose far end its stage refuses (`range = -40 dB in [-80 dB, 6 dB]` of a gate)
    // is live all the same: probed inside it, so that the sampling below reports that end.
    if (!other && p.min && p.max)
      for (double inside : {*p.min, 0.5 * (*p.min + *p.max)}) {
        if (inside == current(p)) continue;
        probe[p.name] = inside;
        if ((other = source.lower(probe, ignored))) break;
      }
    if (!other) continue;
    bool same_structure = other->size() == now->size();
    for (ir::NodeId id = 0; same_structure && id < now->size(); ++id)
      same_structure = now->node(id).op.index() == other->node(id).op.index() &&
                       now->node(id).operands == other->node(id).operands;
    if (!same_structure) {
      out.structural.insert(p.name);
      continue;
    }
    for (ir::NodeId id = 0; id < now->size(); ++id)
      if (op_text(now->node(id)) != op_text(other->node(id))) out.live[id] = true;
  }
  if (std::none_of(out.live.begin(), out.live.end(), [](bool b) { return b; })) return out;
  // 2. Ranges.
  auto base_graph = lower_marked(source, out.live, values, diags);
  if (!base_graph) return std::nullopt;
  // Its errors are the compile's; its warnings (a design's float64 rounding) the compile
  // gives again, and would be said twice.
  DiagnosticEngine base_diags;
  auto base = chain_facts(*base_graph, request, target, base_diags);
  for (const Diagnostic& d : base_diags.diagnostics())
    if (d.severity == Severity::error) diags.report(d);
  if (!base) return std::nullopt;
  // The cascades of every sampled value: measured in float32 at the end, where the radius over
  // the range leaves it to the measured error (microseconds per section, but for hundreds of
  // sections at a dozen values each, seconds: a ranged graphic equaliser).
  std::map<ir::NodeId, std::vector<std::vector<design::Section>>> cascades;
  out.designed_nodes = base->nodes;
  for (const auto& [id, f] : base->chains) {
    out.chains[id] = {f.radius, 0.0, f.shape};
    out.max_delay_lengths[id] = f.delays;
    if (!f.cascade.empty()) cascades[id].push_back(f.cascade);
  }
  std::set<std::string> warned_delays;  // one warning per parameter
  auto take = [&](const std::map<ir::NodeId, ChainFacts>& facts, const ParamDecl* unbounded) {
    for (const auto& [id, f] : facts) {
      if (!base->chains.count(id)) continue;
      const ChainFacts& b = base->chains.at(id);
      if (!f.cascade.empty()) cascades[id].push_back(f.cascade);
      if (unbounded) {
        if (std::abs(f.radius - b.radius) > 1e-12) out.chains[id].pole_radius = 1.0;
        if (f.delays != b.delays && warned_delays.insert(unbounded->name).second)
          diags.warning(unbounded->loc,
                        "'" + unbounded->name + "' sets a delay's length but has no declared range: a Processor "
                        "reserves only its current length, and set() refuses a longer one (declare the range, "
                        "e.g. '" + unbounded->name + " = 10 ms in [1 ms, 1 s]')",
                        "fxc-param-range");
        continue;
      }
      out.chains[id].pole_radius = std::max(out.chains[id].pole_radius, f.radius);
      auto& longest = out.max_delay_lengths[id];
      for (std::size_t k = 0; k < longest.size() && k < f.delays.size(); ++k)
        longest[k] = std::max(longest[k], f.delays[k]);
    }
  };
  auto run_at = [&](const ParamValues& at, const ParamDecl* varied, double v) -> bool {
    DiagnosticEngine local;
    auto marked = lower_marked(source, out.live, at, local);
    std::optional<Facts> facts;
    if (marked) facts = chain_facts(*marked, request, target, local);
    if (!facts) {
      if (varied && !(varied->min && varied->max)) return true;  // outside what it allows: set() refuses it
      if (varied && whole_numbered(*varied, current(*varied)) && v != std::round(v))
        return true;  // an order or a count at a fraction: set() refuses it too
      Diagnostic& d = diags.error(varied ? varied->loc : SourceLoc{},
                                  varied ? "the range of '" + varied->name + "' reaches " + describe(*varied, v) +
                                               ", which its stage refuses"
                                         : "the parameters' ranges reach values a stage refuses",
                                  "fxc-param-range");
      for (const Diagnostic& why : local.diagnostics())
        d.notes.push_back({Severity::note, why.loc, why.message, why.code, {}});
      return false;
    }
    if (varied && facts->shape != base->shape) {
      // Another order or tap count at this value: the parameter shapes the graph.
      out.structural.insert(varied->name);
      return true;
    }
    take(facts->chains, varied && !(varied->min && varied->max) ? varied : nullptr);
    return true;
  };
  bool ok = true;
  for (const ParamDecl& p : source.params()) {
    if (!considered(p)) continue;
    for (double v : sample_values(p, current(p), request.sample_rate_hz)) {
      ParamValues at = values;
      at[p.name] = v;
      if (!run_at(at, &p, v)) {  // one error per parameter: its first value refused
        ok = false;
        break;
      }
    }
  }
  // Every range at its ends at once, for stages two parameters meet in; after an error about
  // one parameter this would only say the same again.
  for (bool high : {false, true}) {
    if (!ok) break;
    ParamValues at = values;
    bool any = false;
    for (const ParamDecl& p : source.params())
      if (p.min && p.max && considered(p)) {
        at[p.name] = high ? *p.max : *p.min;
        any = true;
      }
    if (any) ok = run_at(at, nullptr, 0) && ok;
  }
  if (!ok) return std::nullopt;
  const passes::StrategyThresholds& t = request.thresholds;
  if (request.dtype == DType::f32 && t.f64_state_pole_radius <= 1)
    for (const auto& [id, sampled] : cascades) {
      passes::LiveChainBounds& bounds = out.chains[id];
      if (bounds.pole_radius >= t.f64_state_pole_radius) continue;  // float64 state by the radius already
      for (const auto& cascade : sampled)
        bounds.float32_error = std::max(bounds.float32_error, passes::float32_state_error(cascade));
    }
  return out;
}

}  // namespace fxc::driver
