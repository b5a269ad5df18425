#include "frontend/dsl.h"

#include <cmath>
#include <unordered_map>

namespace fxc {
namespace {

SourceLoc to_loc(const std::source_location& where) {
  return {where.file_name(), static_cast<std::uint32_t>(where.line()),
          static_cast<std::uint32_t>(where.column())};
}

Chain stage(ir::Op op, const std::source_location& where) {
  return Chain({{std::move(op), to_loc(where)}});
}

Flow unary(ir::Op op, const Flow& in, SourceLoc loc) {
  return Flow(std::make_shared<const DslNode>(DslNode{std::move(op), {in.node()}, std::move(loc)}));
}

Flow mix(const Flow& a, const Flow& b, double sign) {
  return Flow(std::make_shared<const DslNode>(
      DslNode{ir::Sum{{1.0, sign}}, {a.node(), b.node()}, a.node()->loc}));
}

Chain iir(design::IirFamily family, int order, std::vector<double> cutoff_hz,
          design::BandType btype, double rp_db, double rs_db, design::BesselNorm norm,
          const std::source_location& where) {
  return stage(ir::IirDesign{family, order, btype, std::move(cutoff_hz), rp_db, rs_db, norm},
               where);
}

Chain make_biquad(design::BiquadType type, double f0_hz, double q, double gain_db,
             const std::source_location& where) {
  return stage(ir::Biquad{type, f0_hz, q, gain_db}, where);
}

double db_to_linear(double db) { return std::pow(10.0, db / 20.0); }

}  // namespace

Flow operator|(const Flow& flow, const Chain& chain) {
  Flow out = flow;
  for (const Chain::Stage& s : chain.stages()) out = unary(s.op, out, s.loc);
  return out;
}

Chain operator|(const Chain& first, const Chain& second) {
  std::vector<Chain::Stage> stages = first.stages();
  stages.insert(stages.end(), second.stages().begin(), second.stages().end());
  return Chain(std::move(stages));
}

Flow operator+(const Flow& a, const Flow& b) { return mix(a, b, 1.0); }
Flow operator-(const Flow& a, const Flow& b) { return mix(a, b, -1.0); }
Flow operator*(double g, const Flow& flow) { return unary(ir::Gain{g}, flow, flow.node()->loc); }
Flow operator*(const Flow& flow, double g) { return g * flow; }
Flow operator*(Level g, const Flow& flow) { return db_to_linear(g.db) * flow; }
Chain operator*(double g, const Chain& chain) {
  SourceLoc loc = chain.stages().empty() ? SourceLoc{} : chain.stages().back().loc;
  return chain | Chain({{ir::Gain{g}, loc}});
}
Chain operator*(Level g, const Chain& chain) { return db_to_linear(g.db) * chain; }

Flow input(std::string name, int channels, std::source_location where) {
  return Flow(std::make_shared<const DslNode>(
      DslNode{ir::Input{std::move(name)}, {}, to_loc(where), channels}));
}

Chain BandWord::operator()(Frequency f0, double q, std::source_location where) const {
  return make_biquad(biquad, f0.hz, q, 0, where);
}

Chain butter(int order, Frequency cutoff, design::BandType btype, std::source_location where) {
  return iir(design::IirFamily::butter, order, {cutoff.hz}, btype, 0, 0, {}, where);
}
Chain butter(int order, Band band, design::BandType btype, std::source_location where) {
  return iir(design::IirFamily::butter, order, {band.low.hz, band.high.hz}, btype, 0, 0, {}, where);
}
Chain cheby1(int order, Level rp, Frequency cutoff, design::BandType btype,
             std::source_location where) {
  return iir(design::IirFamily::cheby1, order, {cutoff.hz}, btype, rp.db, 0, {}, where);
}
Chain cheby1(int order, Level rp, Band band, design::BandType btype, std::source_location where) {
  return iir(design::IirFamily::cheby1, order, {band.low.hz, band.high.hz}, btype, rp.db, 0, {},
             where);
}
Chain cheby2(int order, Level rs, Frequency cutoff, design::BandType btype,
             std::source_location where) {
  return iir(design::IirFamily::cheby2, order, {cutoff.hz}, btype, 0, rs.db, {}, where);
}
Chain cheby2(int order, Level rs, Band band, design::BandType btype, std::source_location where) {
  return iir(design::IirFamily::cheby2, order, {band.low.hz, band.high.hz}, btype, 0, rs.db, {},
             where);
}
Chain ellip(int order, Level rp, Level rs, Frequency cutoff, design::BandType btype,
            std::source_location where) {
  return iir(design::IirFamily::ellip, order, {cutoff.hz}, btype, rp.db, rs.db, {}, where);
}
Chain ellip(int order, Level rp, Level rs, Band band, design::BandType btype,
            std::source_location where) {
  return iir(design::IirFamily::ellip, order, {band.low.hz, band.high.hz}, btype, rp.db, rs.db,
             {}, where);
}
Chain bessel(int order, Frequency cutoff, design::BandType btype, design::BesselNorm norm,
             std::source_location where) {
  return iir(design::IirFamily::bessel, order, {cutoff.hz}, btype, 0, 0, norm, where);
}

Chain notch(Frequency f0, double q, std::source_location where) {
  return make_biquad(design::BiquadType::notch, f0.hz, q, 0, where);
}
Chain allpass(Frequency f0, double q, std::source_location where) {
  return make_biquad(design::BiquadType::allpass, f0.hz, q, 0, where);
}
Chain peaking(Frequency f0, double q, Level gain, std::source_location where) {
  return make_biquad(design::BiquadType::peaking, f0.hz, q, gain.db, where);
}
Chain lowshelf(Frequency f0, Level gain, double q, std::source_location where) {
  return make_biquad(design::BiquadType::lowshelf, f0.hz, q, gain.db, where);
}
Chain highshelf(Frequency f0, Level gain, double q, std::source_location where) {
  return make_biquad(design::BiquadType::highshelf, f0.hz, q, gain.db, where);
}

Chain sos(std::vector<std::vector<double>> rows, bool allow_unstable,
          std::source_location where) {
  std::vector<design::Section> sections;
  for (const auto& r : rows) {
    // A malformed row (not 6 values, a0 = 0) becomes a non-finite section, which the verifier
    // reports at this call: the DSL has no diagnostics engine of its own to report to.
    bool ok = r.size() == 6 && r[3] != 0;
    sections.push_back(ok ? design::Section{r[0] / r[3], r[1] / r[3], r[2] / r[3], r[4] / r[3],
                                            r[5] / r[3]}
                          : design::Section{NAN, NAN, NAN, NAN, NAN});
  }
  return stage(ir::SosCascade{std::move(sections), allow_unstable}, where);
}
Chain tf(std::vector<double> b, std::vector<double> a, bool allow_unstable,
         std::source_location where) {
  return stage(ir::TransferFunction{std::move(b), std::move(a), allow_unstable}, where);
}
Chain fir(std::vector<double> taps, std::source_location where) {
  return stage(ir::FirFilter{std::move(taps)}, where);
}
Chain firwin(int numtaps, std::vector<double> cutoff_hz, design::Window window, bool pass_zero,
             double kaiser_beta, std::source_location where) {
  return stage(ir::FirDesign{numtaps, std::move(cutoff_hz), window, kaiser_beta, pass_zero},
               where);
}

Chain gain(double linear, std::source_location where) { return stage(ir::Gain{linear}, where); }
Chain gain(Level level, std::source_location where) {
  return stage(ir::Gain{db_to_linear(level.db)}, where);
}
Chain delay(Samples samples, std::source_location where) {
  return stage(ir::Delay{samples.count, ir::DelayUnit::samples}, where);
}
Chain delay(Duration time, std::source_location where) {
  return stage(ir::Delay{time.seconds, ir::DelayUnit::seconds}, where);
}
Chain tanh(std::source_location where) { return stage(ir::Tanh{}, where); }
Chain clip(double lo, double hi, std::source_location where) {
  return stage(ir::Clip{lo, hi}, where);
}

ir::Graph make_graph(std::string name, const std::vector<Output>& outputs) {
  ir::Graph graph;
  graph.name = std::move(name);
  std::unordered_map<const DslNode*, ir::NodeId> lowered;
  // Depth-first, operands before users, so ids come out in a topological order.
  auto lower = [&](auto& self, const std::shared_ptr<const DslNode>& node) -> ir::NodeId {
    if (auto it = lowered.find(node.get()); it != lowered.end()) return it->second;
    ir::Node n{node->op, {}, {node->channels, DType::f64}, node->loc, {}, {}};
    for (const auto& operand : node->operands) n.operands.push_back(self(self, operand));
    ir::NodeId id = graph.add(std::move(n));
    lowered.emplace(node.get(), id);
    return id;
  };
  for (const Output& out : outputs) {
    ir::NodeId value = lower(lower, out.flow.node());
    graph.add({ir::Output{out.name}, {value}, {}, out.flow.node()->loc, {}, {}});
  }
  // Channel counts known from declared inputs flow to every node; ids are topological here.
  for (ir::NodeId id = 0; id < graph.size(); ++id)
    for (ir::NodeId operand : graph.node(id).operands)
      if (graph.node(id).type.channels == 0)
        graph.node(id).type.channels = graph.node(operand).type.channels;
  return graph;
}

}  // namespace fxc
