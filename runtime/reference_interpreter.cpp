// SPDX-License-Identifier: Apache-2.0
#include "runtime/reference_interpreter.h"

#include <algorithm>
#include <cmath>

#include "ir/graph_algorithms.h"
#include "ir/verify.h"
#include "passes/design_filters.h"
#include "passes/infer_types.h"
#include "runtime/bind_inputs.h"

namespace fxc {
namespace {

using Channel = std::vector<double>;
using Buffer = std::vector<Channel>;  // [channel][sample]

// Transposed direct form II, section by section, exactly as scipy.signal.sosfilt.
Channel run_sos(const std::vector<design::Section>& sections, const Channel& x) {
  Channel y = x;
  for (const design::Section& s : sections) {
    double z0 = 0, z1 = 0;
    for (double& v : y) {
      double in = v;
      double out = s.b0 * in + z0;
      z0 = s.b1 * in - s.a1 * out + z1;
      z1 = s.b2 * in - s.a2 * out;
      v = out;
    }
  }
  return y;
}

// Transposed direct form II of the whole polynomial, as scipy.signal.lfilter.
Channel run_tf(std::vector<double> b, std::vector<double> a, const Channel& x) {
  std::size_t n = std::max(a.size(), b.size());
  b.resize(n, 0.0);
  a.resize(n, 0.0);
  double a0 = a[0];
  for (double& v : b) v /= a0;
  for (double& v : a) v /= a0;
  Channel z(n, 0.0), y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    y[i] = b[0] * x[i] + z[0];
    for (std::size_t k = 1; k < n; ++k) z[k - 1] = b[k] * x[i] + z[k] - a[k] * y[i];
  }
  return y;
}

Channel run_fir(const std::vector<double>& taps, const Channel& x) {
  Channel y(x.size(), 0.0);
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t k = 0; k < taps.size() && k <= i; ++k) y[i] += taps[k] * x[i - k];
  return y;
}

Channel run_delay(double samples, const Channel& x) {
  Channel y(x.size(), 0.0);
  std::size_t d = static_cast<std::size_t>(samples);
  for (std::size_t i = d; i < x.size(); ++i) y[i] = x[i - d];
  return y;
}

template <class F>
Channel map_samples(Channel c, F f) {
  for (double& v : c) v = f(v);
  return c;
}

// One stage of a chain applied to one channel.
Channel run_stage(const ir::Stage& stage, const Channel& x) {
  struct Apply {
    const Channel& x;
    Channel operator()(const ir::SosCascade& p) const { return run_sos(p.sections, x); }
    Channel operator()(const ir::FirFilter& p) const { return run_fir(p.taps, x); }
    Channel operator()(const ir::Delay& p) const { return run_delay(p.amount, x); }
    Channel operator()(const ir::Gain& p) const {
      return map_samples(x, [&](double v) { return p.gain * v; });
    }
    Channel operator()(const ir::Tanh&) const {
      return map_samples(x, [](double v) { return std::tanh(v); });
    }
    Channel operator()(const ir::Clip& p) const {
      return map_samples(x, [&](double v) { return std::clamp(v, p.lo, p.hi); });
    }
  };
  return std::visit(Apply{x}, stage);
}

class Interpreter {
 public:
  explicit Interpreter(const ir::Graph& graph) : graph_(graph), values_(graph.size()) {}

  Expected<std::vector<Signal>, std::string> run(std::span<const Signal> inputs) {
    std::vector<ir::NodeId> input_ids = graph_.inputs();
    if (inputs.size() != input_ids.size())
      return Unexpected{"the graph has " + std::to_string(input_ids.size()) + " input(s), got " +
                        std::to_string(inputs.size()) + " signal(s)"};
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      int declared = graph_.node(input_ids[i]).type.channels;
      const std::string& name = std::get<ir::Input>(graph_.node(input_ids[i]).op).name;
      if (declared != 0 && static_cast<std::size_t>(declared) != inputs[i].channels())
        return Unexpected{"input '" + name + "' has " + std::to_string(declared) +
                          " channel(s), the signal has " + std::to_string(inputs[i].channels())};
      if (inputs[i].samples() != inputs[0].samples())
        return Unexpected{"all inputs must have the same length: '" + name + "' has " +
                          std::to_string(inputs[i].samples()) + " samples, the first has " +
                          std::to_string(inputs[0].samples())};
      Buffer& b = values_[input_ids[i]];
      b.resize(inputs[i].channels(), Channel(inputs[i].samples()));
      for (std::size_t c = 0; c < inputs[i].channels(); ++c)
        for (std::size_t n = 0; n < inputs[i].samples(); ++n) b[c][n] = inputs[i].at(c, n);
    }

    auto order = ir::topological_order(graph_);
    if (!order) return Unexpected{std::string("the graph has a cycle")};
    for (ir::NodeId id : *order) {
      const ir::Node& node = graph_.node(id);
      if (ir::is_specification(node.op))
        return Unexpected{"node %" + std::to_string(id) + " (" +
                          std::string(ir::kind_name(node.op)) +
                          ") is a specification: design the filters first"};
      std::string error;
      std::visit([&](const auto& payload) { error = eval(id, payload); }, node.op);
      if (!error.empty()) return Unexpected{error};
    }

    std::vector<Signal> outputs;
    for (ir::NodeId id : graph_.outputs()) {
      const Buffer& b = values_[id];
      std::size_t samples = b.empty() ? 0 : b[0].size();
      Signal s(b.size(), samples, DType::f64);
      for (std::size_t c = 0; c < b.size(); ++c) std::copy(b[c].begin(), b[c].end(), s.f64(c).begin());
      outputs.push_back(std::move(s));
    }
    return outputs;
  }

 private:
  const Buffer& operand(ir::NodeId id, std::size_t i = 0) const {
    return values_[graph_.node(id).operands[i]];
  }

  // Applies `f` to each channel of the single operand.
  template <class F>
  std::string per_channel(ir::NodeId id, F f) {
    const Buffer& in = operand(id);
    Buffer out;
    for (const Channel& c : in) out.push_back(f(c));
    values_[id] = std::move(out);
    return {};
  }

  template <class F>
  std::string pointwise(ir::NodeId id, F f) {
    return per_channel(id, [&](Channel c) {
      for (double& v : c) v = f(v);
      return c;
    });
  }

  std::string eval(ir::NodeId, const ir::Input&) { return {}; }
  std::string eval(ir::NodeId id, const ir::Output&) {
    values_[id] = operand(id);
    return {};
  }
  std::string eval(ir::NodeId, const ir::IirDesign&) { return "unreachable"; }
  std::string eval(ir::NodeId, const ir::Biquad&) { return "unreachable"; }
  std::string eval(ir::NodeId, const ir::FirDesign&) { return "unreachable"; }
  std::string eval(ir::NodeId id, const ir::SosCascade& p) {
    return per_channel(id, [&](const Channel& c) { return run_sos(p.sections, c); });
  }
  std::string eval(ir::NodeId id, const ir::TransferFunction& p) {
    return per_channel(id, [&](const Channel& c) { return run_tf(p.b, p.a, c); });
  }
  std::string eval(ir::NodeId id, const ir::FirFilter& p) {
    return per_channel(id, [&](const Channel& c) { return run_fir(p.taps, c); });
  }
  std::string eval(ir::NodeId id, const ir::Gain& p) {
    return pointwise(id, [&](double v) { return p.gain * v; });
  }
  std::string eval(ir::NodeId id, const ir::Delay& p) {
    return per_channel(id, [&](const Channel& c) { return run_delay(p.amount, c); });
  }
  std::string eval(ir::NodeId id, const ir::Tanh&) {
    return pointwise(id, [](double v) { return std::tanh(v); });
  }
  std::string eval(ir::NodeId id, const ir::Clip& p) {
    return pointwise(id, [&](double v) { return std::clamp(v, p.lo, p.hi); });
  }
  std::string eval(ir::NodeId id, const ir::Chain& p) {
    return per_channel(id, [&](Channel c) {
      for (const ir::Stage& stage : p.stages) c = run_stage(stage, c);
      return c;
    });
  }
  std::string eval(ir::NodeId id, const ir::Sum& p) {
    const Buffer& first = operand(id, 0);
    Buffer out(first.size(), Channel(first.empty() ? 0 : first[0].size(), 0.0));
    for (std::size_t i = 0; i < p.weights.size(); ++i) {
      const Buffer& in = operand(id, i);
      if (in.size() != out.size())
        return "sum %" + std::to_string(id) + ": operands have " + std::to_string(out.size()) +
               " and " + std::to_string(in.size()) + " channels";
      for (std::size_t c = 0; c < out.size(); ++c)
        for (std::size_t n = 0; n < out[c].size(); ++n) out[c][n] += p.weights[i] * in[c][n];
    }
    values_[id] = std::move(out);
    return {};
  }

  const ir::Graph& graph_;
  std::vector<Buffer> values_;
};

}  // namespace

Expected<std::vector<Signal>, std::string> interpret(const ir::Graph& graph,
                                                     std::span<const Signal> inputs) {
  return Interpreter(graph).run(inputs);
}

std::optional<std::vector<Signal>> run_reference(const ir::Graph& graph, double sample_rate_hz,
                                                 std::span<const Signal> inputs,
                                                 DiagnosticEngine& diags) {
  std::optional<ir::Graph> with_channels = bind_inputs(graph, inputs, diags);
  if (!with_channels) return std::nullopt;
  passes::PassContext context{diags, {sample_rate_hz, 0, DType::f64}};
  ir::Graph bound = passes::infer_types(*with_channels, context);
  if (diags.has_errors()) return std::nullopt;
  bound = passes::design_filters(bound, context);
  if (diags.has_errors() || !ir::verify(bound, diags)) return std::nullopt;
  auto outputs = interpret(bound, inputs);
  if (!outputs) {
    diags.error({}, outputs.error(), "fxc-run");
    return std::nullopt;
  }
  return std::move(*outputs);
}

}  // namespace fxc
