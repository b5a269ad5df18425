// SPDX-License-Identifier: Apache-2.0
#include "frontend/dsl.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unordered_map>

#include "design/filter_design.h"
#include "support/api_error.h"

namespace fxc {
namespace {

SourceLoc to_loc(const std::source_location& where) {
  return {where.file_name(), static_cast<std::uint32_t>(where.line()),
          static_cast<std::uint32_t>(where.column())};
}

// A parameter's value in `values`, else its declared one.
double value_of(const ParamRef& p, double declared, const ParamValues& values) {
  if (!p) return declared;
  auto it = values.find(p->name);
  return it == values.end() ? declared : it->second;
}
double hz(const Frequency& f, const ParamValues& v) { return value_of(f.param, f.hz, v); }
double db(const Level& l, const ParamValues& v) {
  return l.param ? l.sign * value_of(l.param, l.sign * l.db, v) : l.db;
}
double seconds(const Duration& d, const ParamValues& v) { return value_of(d.param, d.seconds, v); }
double count(const Samples& s, const ParamValues& v) { return value_of(s.param, s.count, v); }
double number(const Number& n, const ParamValues& v) { return value_of(n.param, n.value, v); }
double db_to_linear(double db) { return std::pow(10.0, db / 20.0); }

// Letters, digits and '_', not first a digit: what names a parameter or a port, as in .fx.
bool is_identifier(const std::string& name) {
  return !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A Flow's node, or an fxc::Error for an empty Flow: one moved from, or made from a null node.
const std::shared_ptr<const DslNode>& node_of(const Flow& flow) {
  if (!flow.node())
    throw_error("an empty fxc::Flow (moved from, or made from a null node) is used: build flows from fxc::input",
           "fxc-api");
  return flow.node();
}

// A Chain's stage, or an fxc::Error for a null one.
const DslNode& stage_of(const std::shared_ptr<const DslNode>& stage) {
  if (!stage) throw_error("an fxc::Chain holds a null stage: build chains from the stage functions", "fxc-api");
  return *stage;
}

// A stage whose op `make` builds from parameter values; `params` are those it reads.
template <class Make>
Chain stage(Make make, const std::source_location& where, std::vector<ParamRef> params = {}) {
  std::erase(params, nullptr);
  auto node = std::make_shared<DslNode>();
  node->make_op = [make = std::move(make)](const ParamValues& v) -> ir::Op { return make(v); };
  node->loc = to_loc(where);
  node->params = std::move(params);
  return Chain({std::move(node)});
}

Flow apply(const DslNode& stage, const Flow& in) {
  auto node = std::make_shared<DslNode>(stage);
  node->operands = {node_of(in)};
  return Flow(std::move(node));
}

Flow mix(const Flow& a, const Flow& b, double sign) {
  auto node = std::make_shared<DslNode>();
  node->make_op = [sign](const ParamValues&) -> ir::Op { return ir::Sum{{1.0, sign}}; };
  node->operands = {node_of(a), node_of(b)};
  node->loc = a.node()->loc;
  return Flow(std::move(node));
}

Chain iir(design::IirFamily family, int order, std::vector<Frequency> cutoff, BandType btype,
          Level rp, Level rs, BesselNorm norm, const std::source_location& where) {
  std::vector<ParamRef> params{rp.param, rs.param};
  for (const Frequency& f : cutoff) params.push_back(f.param);
  return stage(
      [=](const ParamValues& v) {
        std::vector<double> cutoff_hz;
        for (const Frequency& f : cutoff) cutoff_hz.push_back(hz(f, v));
        return ir::IirDesign{family, order, btype, std::move(cutoff_hz), db(rp, v), db(rs, v), norm};
      },
      where, std::move(params));
}

Chain make_biquad(BiquadType type, Frequency f0, Number q, Level gain,
                  const std::source_location& where) {
  return stage([=](const ParamValues& v) { return ir::Biquad{type, hz(f0, v), number(q, v), db(gain, v)}; },
               where, {f0.param, q.param, gain.param});
}

template <class T>
ParamRef declare(std::string name, ParamUnit unit, double value, std::optional<std::pair<T, T>> range,
                 double (*get)(const T&), const std::source_location& where) {
  if (!is_identifier(name))
    throw_error("a parameter name must be an identifier (letters, digits and '_', not first a digit), got '" + name + "'",
           "fxc-dsl", to_loc(where));
  auto decl = std::make_shared<ParamDecl>();
  decl->name = std::move(name);
  decl->unit = unit;
  decl->value = value;
  if (range) {
    decl->min = get(range->first);
    decl->max = get(range->second);
  }
  decl->loc = to_loc(where);
  return decl;
}

}  // namespace

Frequency param(std::string name, Frequency value, std::optional<Band> range, std::source_location where) {
  std::optional<std::pair<Frequency, Frequency>> r;
  if (range) r.emplace(range->low, range->high);
  return {value.hz, declare<Frequency>(std::move(name), ParamUnit::hz, value.hz, r,
                                       [](const Frequency& f) { return f.hz; },
                                       where)};
}
Level param(std::string name, Level value, std::optional<std::pair<Level, Level>> range, std::source_location where) {
  return {value.db, declare<Level>(std::move(name), ParamUnit::db, value.db, range,
                                   [](const Level& l) { return l.db; }, where)};
}
Duration param(std::string name, Duration value, std::optional<std::pair<Duration, Duration>> range,
               std::source_location where) {
  return {value.seconds, declare<Duration>(std::move(name), ParamUnit::seconds, value.seconds, range,
                                           [](const Duration& d) { return d.seconds; },
                                           where)};
}
Samples param(std::string name, Samples value, std::optional<std::pair<Samples, Samples>> range,
              std::source_location where) {
  return {value.count, declare<Samples>(std::move(name), ParamUnit::samples, value.count, range,
                                        [](const Samples& s) { return s.count; },
                                        where)};
}
Number param(std::string name, double value, std::optional<std::pair<double, double>> range,
             std::source_location where) {
  return {value, declare<double>(std::move(name), ParamUnit::number, value, range,
                                 [](const double& d) { return d; }, where)};
}

Flow operator|(const Flow& flow, const Chain& chain) {
  Flow out = flow;
  (void)node_of(flow);
  for (const auto& s : chain.stages()) out = apply(stage_of(s), out);
  return out;
}

Chain operator|(const Chain& first, const Chain& second) {
  auto stages = first.stages();
  stages.insert(stages.end(), second.stages().begin(), second.stages().end());
  return Chain(std::move(stages));
}

Flow operator+(const Flow& a, const Flow& b) { return mix(a, b, 1.0); }
Flow operator-(const Flow& a, const Flow& b) { return mix(a, b, -1.0); }
Flow operator*(Number g, const Flow& flow) {
  auto node = std::make_shared<DslNode>();
  node->make_op = [g](const ParamValues& v) -> ir::Op { return ir::Gain{number(g, v)}; };
  node->operands = {node_of(flow)};
  node->loc = flow.node()->loc;
  if (g.param) node->params = {g.param};
  return Flow(std::move(node));
}
Flow operator*(const Flow& flow, Number g) { return g * flow; }
Flow operator*(Level g, const Flow& flow) {
  auto node = std::make_shared<DslNode>();
  node->make_op = [g](const ParamValues& v) -> ir::Op { return ir::Gain{db_to_linear(db(g, v))}; };
  node->operands = {node_of(flow)};
  node->loc = flow.node()->loc;
  if (g.param) node->params = {g.param};
  return Flow(std::move(node));
}
Chain operator*(Number g, const Chain& chain) {
  SourceLoc loc = chain.stages().empty() ? SourceLoc{} : stage_of(chain.stages().back()).loc;
  Chain scale = stage([g](const ParamValues& v) { return ir::Gain{number(g, v)}; }, {}, {g.param});
  auto node = std::make_shared<DslNode>(*scale.stages()[0]);
  node->loc = loc;
  return chain | Chain({node});
}
Chain operator*(Level g, const Chain& chain) {
  SourceLoc loc = chain.stages().empty() ? SourceLoc{} : stage_of(chain.stages().back()).loc;
  Chain scale = stage([g](const ParamValues& v) { return ir::Gain{db_to_linear(db(g, v))}; }, {}, {g.param});
  auto node = std::make_shared<DslNode>(*scale.stages()[0]);
  node->loc = loc;
  return chain | Chain({node});
}

Flow input(std::string name, int channels, std::source_location where) {
  if (!is_identifier(name))
    throw_error("an input name must be an identifier (letters, digits and '_', not first a digit), got '" + name + "'",
           "fxc-dsl", to_loc(where));
  auto node = std::make_shared<DslNode>();
  node->make_op = [name = std::move(name)](const ParamValues&) -> ir::Op { return ir::Input{name}; };
  node->loc = to_loc(where);
  node->channels = channels;
  return Flow(std::move(node));
}

Chain BandWord::operator()(Frequency f0, Number q, std::source_location where) const {
  return make_biquad(biquad, f0, q, Level{0}, where);
}

Chain butter(int order, Frequency cutoff, BandType btype, std::source_location where) {
  return iir(design::IirFamily::butter, order, {cutoff}, btype, {0}, {0}, {}, where);
}
Chain butter(int order, Band band, BandType btype, std::source_location where) {
  return iir(design::IirFamily::butter, order, {band.low, band.high}, btype, {0}, {0}, {}, where);
}
Chain cheby1(int order, Level rp, Frequency cutoff, BandType btype, std::source_location where) {
  return iir(design::IirFamily::cheby1, order, {cutoff}, btype, rp, {0}, {}, where);
}
Chain cheby1(int order, Level rp, Band band, BandType btype, std::source_location where) {
  return iir(design::IirFamily::cheby1, order, {band.low, band.high}, btype, rp, {0}, {}, where);
}
Chain cheby2(int order, Level rs, Frequency cutoff, BandType btype, std::source_location where) {
  return iir(design::IirFamily::cheby2, order, {cutoff}, btype, {0}, rs, {}, where);
}
Chain cheby2(int order, Level rs, Band band, BandType btype, std::source_location where) {
  return iir(design::IirFamily::cheby2, order, {band.low, band.high}, btype, {0}, rs, {}, where);
}
Chain ellip(int order, Level rp, Level rs, Frequency cutoff, BandType btype, std::source_location where) {
  return iir(design::IirFamily::ellip, order, {cutoff}, btype, rp, rs, {}, where);
}
Chain ellip(int order, Level rp, Level rs, Band band, BandType btype, std::source_location where) {
  return iir(design::IirFamily::ellip, order, {band.low, band.high}, btype, rp, rs, {}, where);
}
Chain bessel(int order, Frequency cutoff, BandType btype, BesselNorm norm, std::source_location where) {
  return iir(design::IirFamily::bessel, order, {cutoff}, btype, {0}, {0}, norm, where);
}

Chain notch(Frequency f0, Number q, std::source_location where) {
  return make_biquad(BiquadType::notch, f0, q, Level{0}, where);
}
Chain allpass(Frequency f0, Number q, std::source_location where) {
  return make_biquad(BiquadType::allpass, f0, q, Level{0}, where);
}
Chain peaking(Frequency f0, Number q, Level gain, std::source_location where) {
  return make_biquad(BiquadType::peaking, f0, q, gain, where);
}
Chain lowshelf(Frequency f0, Level gain, Number q, std::source_location where) {
  return make_biquad(BiquadType::lowshelf, f0, q, gain, where);
}
Chain highshelf(Frequency f0, Level gain, Number q, std::source_location where) {
  return make_biquad(BiquadType::highshelf, f0, q, gain, where);
}

Chain sos(std::vector<std::vector<double>> rows, bool allow_unstable, std::source_location where) {
  // A malformed row (not 6 values, a0 = 0, not finite) is refused here, at this call, as
  // fx's sos() refuses it.
  auto sections = design::normalize_sos(rows);
  if (!sections) throw_error("sos: " + sections.error().message, "fxc-dsl", to_loc(where));
  return stage([sections = *sections, allow_unstable](const ParamValues&) {
    return ir::SosCascade{sections, allow_unstable};
  }, where);
}
Chain tf(std::vector<double> b, std::vector<double> a, bool allow_unstable, std::source_location where) {
  return stage([=](const ParamValues&) { return ir::TransferFunction{b, a, allow_unstable}; }, where);
}
Chain fir(std::vector<double> taps, std::source_location where) {
  return stage([=](const ParamValues&) { return ir::FirFilter{taps}; }, where);
}
Chain firwin(int numtaps, std::vector<double> cutoff_hz, Window window, bool pass_zero,
             double kaiser_beta, std::source_location where) {
  return stage([=](const ParamValues&) { return ir::FirDesign{numtaps, cutoff_hz, window, kaiser_beta, pass_zero}; },
               where);
}

Chain gain(Number linear, std::source_location where) {
  return stage([=](const ParamValues& v) { return ir::Gain{number(linear, v)}; }, where, {linear.param});
}
Chain gain(Level level, std::source_location where) {
  return stage([=](const ParamValues& v) { return ir::Gain{db_to_linear(db(level, v))}; }, where, {level.param});
}
Chain delay(Samples samples, std::source_location where) {
  return stage([=](const ParamValues& v) { return ir::Delay{count(samples, v), ir::DelayUnit::samples}; }, where,
               {samples.param});
}
Chain delay(Duration time, std::source_location where) {
  return stage([=](const ParamValues& v) { return ir::Delay{seconds(time, v), ir::DelayUnit::seconds}; }, where,
               {time.param});
}
Chain tanh(std::source_location where) {
  return stage([](const ParamValues&) { return ir::Tanh{}; }, where);
}
Chain clip(double lo, double hi, std::source_location where) {
  return stage([=](const ParamValues&) { return ir::Clip{lo, hi}; }, where);
}

// Dynamics: the .fx stages' payloads (frontend/stage_table.cpp's build_dynamics), times in seconds.
namespace {
ir::Dynamics dynamics(design::DynamicsType type, const ParamValues& v, Duration attack, Duration release) {
  ir::Dynamics p;
  p.type = type;
  p.unit = ir::DelayUnit::seconds;
  p.attack = seconds(attack, v);
  p.release = seconds(release, v);
  return p;
}
}  // namespace

Chain envelope(Duration attack, Duration release, Detector detector, std::source_location where) {
  return stage(
      [=](const ParamValues& v) {
        ir::Dynamics p = dynamics(design::DynamicsType::envelope, v, attack, release);
        p.detector = detector;
        return p;
      },
      where, {attack.param, release.param});
}
namespace {
// The compressor's and the expander's parameters are the same.
Chain ratio_stage(design::DynamicsType type, Level threshold, Number ratio, Duration attack, Duration release,
                  Level knee, Level makeup, const std::source_location& where) {
  return stage(
      [=](const ParamValues& v) {
        ir::Dynamics p = dynamics(type, v, attack, release);
        p.threshold_db = db(threshold, v);
        p.ratio = number(ratio, v);
        p.knee_db = db(knee, v);
        p.makeup_db = db(makeup, v);
        return p;
      },
      where, {threshold.param, ratio.param, attack.param, release.param, knee.param, makeup.param});
}
}  // namespace

Chain compressor(Level threshold, Number ratio, Duration attack, Duration release, Level knee, Level makeup,
                 std::source_location where) {
  return ratio_stage(design::DynamicsType::compressor, threshold, ratio, attack, release, knee, makeup, where);
}
Chain expander(Level threshold, Number ratio, Duration attack, Duration release, Level knee, Level makeup,
               std::source_location where) {
  return ratio_stage(design::DynamicsType::expander, threshold, ratio, attack, release, knee, makeup, where);
}
Chain gate(Level threshold, Duration attack, Duration release, Duration hold, Level range, std::source_location where) {
  return stage(
      [=](const ParamValues& v) {
        ir::Dynamics p = dynamics(design::DynamicsType::gate, v, attack, release);
        p.threshold_db = db(threshold, v);
        p.hold = seconds(hold, v);
        p.range_db = db(range, v);
        return p;
      },
      where, {threshold.param, attack.param, release.param, hold.param, range.param});
}
Chain limiter(Level ceiling, Duration release, Duration lookahead, std::source_location where) {
  return stage(
      [=](const ParamValues& v) {
        ir::Dynamics p = dynamics(design::DynamicsType::limiter, v, Duration{0}, release);
        p.threshold_db = db(ceiling, v);
        p.lookahead = seconds(lookahead, v);
        return p;
      },
      where, {ceiling.param, release.param, lookahead.param});
}

ir::Graph make_graph(std::string name, const std::vector<Output>& outputs, const ParamValues& values) {
  ir::Graph graph;
  graph.name = std::move(name);
  std::unordered_map<const DslNode*, ir::NodeId> lowered;
  // Depth-first, operands before users, so ids come out in a topological order.
  auto lower = [&](auto& self, const std::shared_ptr<const DslNode>& node) -> ir::NodeId {
    if (auto it = lowered.find(node.get()); it != lowered.end()) return it->second;
    ir::Node n{node->make_op(values), {}, {node->channels, DType::f64}, node->loc, {}, {}};
    for (const auto& operand : node->operands) n.operands.push_back(self(self, operand));
    ir::NodeId id = graph.add(std::move(n));
    lowered.emplace(node.get(), id);
    return id;
  };
  for (const Output& out : outputs) {
    ir::NodeId value = lower(lower, node_of(out.flow));
    graph.add({ir::Output{out.name}, {value}, {}, out.flow.node()->loc, {}, {}});
  }
  // Channel counts known from declared inputs flow to every node; ids are topological here.
  for (ir::NodeId id = 0; id < graph.size(); ++id)
    for (ir::NodeId operand : graph.node(id).operands)
      if (graph.node(id).type.channels == 0)
        graph.node(id).type.channels = graph.node(operand).type.channels;
  return graph;
}

std::vector<ParamRef> collect_params(const std::vector<Output>& outputs) {
  std::vector<ParamRef> found;
  std::unordered_map<const DslNode*, bool> seen;
  auto visit = [&](auto& self, const std::shared_ptr<const DslNode>& node) -> void {
    if (!seen.emplace(node.get(), true).second) return;
    for (const auto& operand : node->operands) self(self, operand);
    for (const ParamRef& p : node->params)
      if (std::find(found.begin(), found.end(), p) == found.end()) found.push_back(p);
  };
  for (const Output& out : outputs) visit(visit, node_of(out.flow));
  return found;
}

}  // namespace fxc
