// SPDX-License-Identifier: Apache-2.0
#include "runtime/frequency_response.h"

#include <algorithm>
#include <string>

#include "design/filter_design.h"
#include "ir/graph_algorithms.h"

namespace fxc {
namespace {

using Response = std::vector<std::complex<double>>;

// Algorithm: for one input at a time, propagate H(w) through the graph in topological order:
// the input is 1, a node not fed by it is 0, a filter multiplies by its own response, a gain
// scales, a delay of d samples multiplies by e^{-jwd}, a sum adds its weighted operands. With
// feedback the order does not give every operand first: the same relations are solved as a
// linear system per frequency instead (solve_from_input).
class ResponsePropagator {
 public:
  ResponsePropagator(const ir::Graph& g, const std::vector<double>& w, DiagnosticEngine& diags)
      : g_(g), w_(w), diags_(diags) {}

  bool from_input(ir::NodeId input, const std::vector<ir::NodeId>& order,
                  std::vector<Response>& values) {
    std::vector<bool> fed = ir::reachable_from(g_, {input});
    values.assign(g_.size(), Response(w_.size(), 0.0));
    values[input].assign(w_.size(), 1.0);
    for (ir::NodeId id : order) {
      if (!fed[id] || id == input) continue;
      const ir::Node& node = g_.node(id);
      bool ok = std::visit([&](const auto& p) { return apply(node, p, values, values[id]); }, node.op);
      if (!ok) return false;
    }
    return true;
  }

  /// For a linear graph with loops: per frequency, the responses of all nodes fed by `input`
  /// solve H = M H + e_input, where row n of M holds what node n multiplies each operand's
  /// response by (a stage's own response, a sum's weights, a feedback delay's e^{-jwd}).
  bool solve_from_input(ir::NodeId input, std::vector<Response>& values) {
    std::vector<bool> fed = ir::reachable_from(g_, {input});
    std::vector<ir::NodeId> nodes;  // the unknowns
    std::vector<int> index(g_.size(), -1);
    for (ir::NodeId id = 0; id < g_.size(); ++id)
      if (fed[id]) {
        index[id] = static_cast<int>(nodes.size());
        nodes.push_back(id);
      }
    // Each unknown's factors: (operand's unknown, response over w).
    std::vector<std::vector<std::pair<int, Response>>> factors(nodes.size());
    for (std::size_t r = 0; r < nodes.size(); ++r) {
      const ir::Node& node = g_.node(nodes[r]);
      if (nodes[r] == input) continue;
      for (std::size_t i = 0; i < node.operands.size(); ++i) {
        int k = index[node.operands[i]];
        if (k < 0) continue;  // not fed by this input: zero
        Response factor(w_.size(), 1.0);
        if (const auto* sum = std::get_if<ir::Sum>(&node.op)) {
          factor.assign(w_.size(), sum->weights[i]);
        } else {
          ir::Node single = node;
          single.operands = {0};
          Values unit{Response(w_.size(), 1.0)};
          bool ok = std::visit([&](const auto& p) { return apply(single, p, unit, factor); }, node.op);
          if (!ok) return false;
        }
        factors[r].emplace_back(k, std::move(factor));
      }
    }
    values.assign(g_.size(), Response(w_.size(), 0.0));
    const std::size_t n = nodes.size();
    std::vector<std::complex<double>> a(n * n), b(n);
    for (std::size_t f = 0; f < w_.size(); ++f) {
      std::fill(a.begin(), a.end(), 0.0);
      std::fill(b.begin(), b.end(), 0.0);
      for (std::size_t r = 0; r < n; ++r) {
        a[r * n + r] = 1.0;
        if (nodes[r] == input) b[r] = 1.0;
        for (const auto& [k, factor] : factors[r]) a[r * n + static_cast<std::size_t>(k)] -= factor[f];
      }
      // Gaussian elimination with partial pivoting.
      for (std::size_t c = 0; c < n; ++c) {
        std::size_t pivot = c;
        for (std::size_t r = c + 1; r < n; ++r)
          if (std::abs(a[r * n + c]) > std::abs(a[pivot * n + c])) pivot = r;
        if (std::abs(a[pivot * n + c]) == 0) {
          diags_.error({}, "the loops of this graph have no finite response at " + std::to_string(w_[f]) +
                               " rad/sample (a pole on the unit circle)", "fxc-freqz");
          return false;
        }
        if (pivot != c) {
          for (std::size_t j = 0; j < n; ++j) std::swap(a[c * n + j], a[pivot * n + j]);
          std::swap(b[c], b[pivot]);
        }
        for (std::size_t r = c + 1; r < n; ++r) {
          std::complex<double> m = a[r * n + c] / a[c * n + c];
          if (m == 0.0) continue;
          for (std::size_t j = c; j < n; ++j) a[r * n + j] -= m * a[c * n + j];
          b[r] -= m * b[c];
        }
      }
      for (std::size_t c = n; c-- > 0;) {
        std::complex<double> v = b[c];
        for (std::size_t j = c + 1; j < n; ++j) v -= a[c * n + j] * b[j];
        b[c] = v / a[c * n + c];
        values[nodes[c]][f] = b[c];
      }
    }
    return true;
  }

 private:
  using Values = std::vector<Response>;

  bool nonlinear(const ir::Node& node) {
    // A dynamics stage by the name it was written with (a 'compressor'), not its IR kind.
    const auto* dynamics = std::get_if<ir::Dynamics>(&node.op);
    std::string stage(dynamics ? design::name(dynamics->type) : ir::kind_name(node.op));
    diags_.error(node.loc, "a '" + stage + "' stage is not linear, so the graph has no frequency response",
                 "fxc-freqz");
    return false;
  }
  bool undesigned(const ir::Node& node) {
    diags_.error(node.loc, "internal: freqz needs designed filters", "fxc-freqz");
    return false;
  }
  template <class F>
  bool scale(const ir::Node& node, const Values& v, Response& out, F f) {
    const Response& in = v[node.operands[0]];
    for (std::size_t k = 0; k < w_.size(); ++k) out[k] = in[k] * f(w_[k]);
    return true;
  }

  bool apply(const ir::Node&, const ir::Input&, const Values&, Response&) { return true; }
  bool apply(const ir::Node& n, const ir::Output&, const Values& v, Response& out) {
    out = v[n.operands[0]];
    return true;
  }
  bool apply(const ir::Node& n, const ir::IirDesign&, const Values&, Response&) { return undesigned(n); }
  bool apply(const ir::Node& n, const ir::Biquad&, const Values&, Response&) { return undesigned(n); }
  bool apply(const ir::Node& n, const ir::FirDesign&, const Values&, Response&) { return undesigned(n); }
  bool apply(const ir::Node& n, const ir::SosCascade& p, const Values& v, Response& out) {
    return scale(n, v, out, [&](double w) { return design::frequency_response(p.sections, w); });
  }
  bool apply(const ir::Node& n, const ir::TransferFunction& p, const Values& v, Response& out) {
    return scale(n, v, out, [&](double w) {
      return design::frequency_response(p.b, w) / design::frequency_response(p.a, w);
    });
  }
  bool apply(const ir::Node& n, const ir::FirFilter& p, const Values& v, Response& out) {
    return scale(n, v, out, [&](double w) { return design::frequency_response(p.taps, w); });
  }
  bool apply(const ir::Node& n, const ir::Gain& p, const Values& v, Response& out) {
    return scale(n, v, out, [&](double) { return std::complex<double>(p.gain); });
  }
  bool apply(const ir::Node& n, const ir::Delay& p, const Values& v, Response& out) {
    if (p.unit != ir::DelayUnit::samples) return undesigned(n);
    return scale(n, v, out, [&](double w) { return std::polar(1.0, -w * p.amount); });
  }
  template <class P>
    requires(std::is_same_v<P, ir::Select> || std::is_same_v<P, ir::Matrix> || std::is_same_v<P, ir::Concat>)
  bool apply(const ir::Node& n, const P&, const Values&, Response&) {
    diags_.error(n.loc,
                 "the graph routes channels ('" + std::string(P::kKind) +
                     "'), so its channels have different responses; fxc computes one response per path and does "
                     "not compute those of routed graphs yet",
                 "fxc-freqz");
    return false;
  }
  bool apply(const ir::Node& n, const ir::Feedback& p, const Values& v, Response& out) {
    if (p.unit != ir::DelayUnit::samples) return undesigned(n);
    return scale(n, v, out, [&](double w) { return std::polar(1.0, -w * p.amount); });
  }
  bool apply(const ir::Node& n, const ir::Tanh&, const Values&, Response&) { return nonlinear(n); }
  bool apply(const ir::Node& n, const ir::Dynamics&, const Values&, Response&) { return nonlinear(n); }
  // A side-chain's or a link's: the dynamics stage before them is reported first.
  bool apply(const ir::Node& n, const ir::Multiply&, const Values&, Response&) { return nonlinear(n); }
  bool apply(const ir::Node& n, const ir::Link&, const Values&, Response&) { return nonlinear(n); }
  bool apply(const ir::Node& n, const ir::Clip&, const Values&, Response&) { return nonlinear(n); }
  bool apply(const ir::Node& n, const ir::Chain& p, const Values& v, Response& out) {
    out = v[n.operands[0]];
    // A fused loop: the input x at loop_read, the body's response B after it; at loop_write
    // s = a x / (1 - b B e^{-jwD}), and the output is s, or s e^{-jwD} (the line's sample).
    Response loop_input;
    double delay = 0;
    for (const ir::Stage& stage : p.stages) {
      if (const auto* read = std::get_if<ir::LoopRead>(&stage)) {
        loop_input = out;
        delay = read->amount;
        out.assign(w_.size(), 1.0);
        continue;
      }
      if (const auto* write = std::get_if<ir::LoopWrite>(&stage)) {
        for (std::size_t k = 0; k < w_.size(); ++k) {
          std::complex<double> late = std::polar(1.0, -w_[k] * delay);
          std::complex<double> s = write->input_weight * loop_input[k] / (1.0 - write->loop_weight * out[k] * late);
          out[k] = write->output_read ? s * late : s;
          if (write->dry_mix) out[k] = write->wet_weight * out[k] + write->dry_weight * loop_input[k];
        }
        continue;
      }
      Response in = out;
      ir::Node single{std::visit(
                          [](const auto& s) -> ir::Op {
                            if constexpr (std::is_constructible_v<ir::Op, decltype(s)>) return ir::Op(s);
                            else return ir::Gain{1};  // unreachable: handled above
                          },
                          stage),
                      {0}, {}, n.loc, {}, {}};
      Values staged{in};
      bool ok = std::visit(
          [&](const auto& s) {
            if constexpr (std::is_constructible_v<ir::Op, decltype(s)>) return apply(single, s, staged, out);
            else return false;
          },
          stage);
      if (!ok) return false;
    }
    return true;
  }
  bool apply(const ir::Node& n, const ir::Sum& p, const Values& v, Response& out) {
    for (std::size_t i = 0; i < n.operands.size(); ++i)
      for (std::size_t k = 0; k < w_.size(); ++k) out[k] += p.weights[i] * v[n.operands[i]][k];
    return true;
  }

  const ir::Graph& g_;
  const std::vector<double>& w_;
  DiagnosticEngine& diags_;
};

}  // namespace

std::vector<PathResponse> frequency_response(const ir::Graph& graph,
                                             const std::vector<double>& w_rad,
                                             DiagnosticEngine& diags) {
  auto order = ir::topological_order(graph);
  if (!order) {
    diags.error({}, "the graph has a cycle", "fxc-freqz");
    return {};
  }
  ResponsePropagator propagator(graph, w_rad, diags);
  const bool looped = std::any_of(graph.nodes().begin(), graph.nodes().end(),
                                  [](const ir::Node& n) { return ir::holds<ir::Feedback>(n); });
  std::vector<PathResponse> out;
  for (ir::NodeId input : graph.inputs()) {
    std::vector<Response> values;
    if (!(looped ? propagator.solve_from_input(input, values) : propagator.from_input(input, *order, values)))
      return {};
    std::vector<bool> fed = ir::reachable_from(graph, {input});
    for (ir::NodeId output : graph.outputs())
      if (fed[output]) out.push_back({input, output, values[output]});
  }
  return out;
}

}  // namespace fxc
