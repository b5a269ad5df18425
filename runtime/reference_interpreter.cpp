// SPDX-License-Identifier: Apache-2.0
#include "runtime/reference_interpreter.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

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

// ---- dynamics, from the equations of docs/fx-language.md ("Dynamics") ----

// alpha(tau) = exp(-1 / tau), tau in samples; 0 for tau = 0 (no smoothing).
double smoothing(double tau) { return tau > 0 ? std::exp(-1 / tau) : 0.0; }

double level_db(double v) { return 20 * std::log10(std::max(std::fabs(v), 1e-10)); }

// The gain reduction target xL >= 0 (dB) of a compressor, expander or limiter for one level.
double reduction_target(const ir::Dynamics& p, double xg) {
  double d = xg - p.threshold_db, w = p.knee_db;
  bool knee = w > 0 && std::fabs(2 * d) <= w;
  switch (p.type) {
    case design::DynamicsType::compressor: {
      double s = 1 - 1 / p.ratio;
      return 2 * d > w ? s * d : knee ? s * (d + w / 2) * (d + w / 2) / (2 * w) : 0.0;
    }
    case design::DynamicsType::expander: {
      double s = p.ratio - 1;
      return 2 * d < -w ? s * -d : knee ? s * (d - w / 2) * (d - w / 2) / (2 * w) : 0.0;
    }
    case design::DynamicsType::limiter: return std::max(d, 0.0);
    default: return 0.0;
  }
}

// Sample n of a dynamics stage on channel x; memory keeps y[n - 1] and the gate's counter.
double dynamics_at(const ir::Dynamics& p, const Channel& x, std::size_t n, std::vector<double>& memory) {
  memory.resize(2, 0.0);
  double& y = memory[0];
  double& h = memory[1];
  double attack = smoothing(p.attack), release = smoothing(p.release);
  auto smooth = [&](double target, bool attacking) {
    double a = attacking ? attack : release;
    y = a * y + (1 - a) * target;
  };
  using T = design::DynamicsType;
  if (p.type == T::envelope) {
    bool peak = p.detector == design::Detector::peak;
    double v = peak ? std::fabs(x[n]) : x[n] * x[n];
    smooth(v, v > y);
    return peak ? y : std::sqrt(y);
  }
  double xg = level_db(x[n]);
  double input = x[n];
  switch (p.type) {
    case T::compressor: {
      double target = reduction_target(p, xg);
      smooth(target, target > y);
      break;
    }
    case T::expander: {
      double target = reduction_target(p, xg);
      smooth(target, target < y);
      break;
    }
    case T::gate: {
      h = xg >= p.threshold_db ? 0.0 : std::min(h + 1, p.hold + 1);
      double target = h <= p.hold ? 0.0 : -p.range_db;
      smooth(target, target < y);
      break;
    }
    case T::limiter: {
      auto lookahead = static_cast<std::size_t>(p.lookahead);
      double z = 0;
      for (std::size_t k = 0; k <= lookahead && k <= n; ++k) z = std::max(z, reduction_target(p, level_db(x[n - k])));
      if (z > y) y = z;
      else smooth(z, false);
      input = n >= lookahead ? x[n - lookahead] : 0.0;
      break;
    }
    case T::envelope: break;
  }
  double makeup = p.type == T::compressor || p.type == T::expander ? p.makeup_db : 0.0;
  double gain = std::pow(10.0, (makeup - y) / 20);
  return p.output_gain ? gain : gain * input;
}

// Group g's level at sample n: the largest |x_c| of its channels, or their mean.
double link_level(const ir::Link& p, const Buffer& x, std::size_t g, std::size_t n) {
  std::size_t size = x.size() / static_cast<std::size_t>(p.groups);
  double level = 0;
  for (std::size_t c = g * size; c < (g + 1) * size; ++c)
    level = p.mode == design::LinkMode::max ? std::max(level, std::fabs(x[c][n])) : level + std::fabs(x[c][n]);
  return p.mode == design::LinkMode::max ? level : level / static_cast<double>(size);
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
    Channel operator()(const ir::Dynamics& p) const {
      Channel y(x.size());
      std::vector<double> memory;
      for (std::size_t n = 0; n < x.size(); ++n) y[n] = dynamics_at(p, x, n, memory);
      return y;
    }
    // A fused loop runs sample by sample (run_chain_by_sample): never a stage at a time.
    Channel operator()(const ir::LoopRead&) const { return x; }
    Channel operator()(const ir::LoopWrite&) const { return x; }
  };
  return std::visit(Apply{x}, stage);
}

// ---- sample by sample, for graphs with feedback ----
//
// The same definitions, one sample at a time: every node's whole output is kept, so a FIR, a
// delay or a feedback node reads its operand's past directly, and an IIR keeps its memory in
// `memory`. Sample n of every node is computed, in topological order, before sample n + 1 of
// any; a feedback node reads its operand at n - d with d >= 1, computed already.

// A fused loop's line and what its loop_write needs from its loop_read, per channel.
struct LoopMemory {
  std::vector<double> line;
  std::size_t pos = 0;
  double input = 0, read = 0;
};

// One stage on one channel: y[n] from the stage's input x[0..n] (and the memory it keeps).
double stage_at(const ir::Stage& stage, const Channel& x, std::size_t n, std::vector<double>& memory,
                LoopMemory& loop) {
  struct Apply {
    const Channel& x;
    std::size_t n;
    std::vector<double>& memory;
    LoopMemory& loop;
    double operator()(const ir::LoopRead& p) const {
      loop.line.resize(static_cast<std::size_t>(p.amount), 0.0);
      loop.input = x[n];
      loop.read = loop.line[loop.pos];
      return loop.read;
    }
    double operator()(const ir::LoopWrite& p) const {
      double s = p.input_weight * loop.input + p.loop_weight * x[n];
      loop.line[loop.pos] = s;
      loop.pos = (loop.pos + 1) % loop.line.size();
      const double out = p.output_read ? loop.read : s;
      return p.dry_mix ? p.wet_weight * out + p.dry_weight * loop.input : out;
    }
    double operator()(const ir::SosCascade& p) const {
      memory.resize(2 * p.sections.size(), 0.0);
      double v = x[n];
      for (std::size_t k = 0; k < p.sections.size(); ++k) {
        const design::Section& s = p.sections[k];
        double& z0 = memory[2 * k];
        double& z1 = memory[2 * k + 1];
        double out = s.b0 * v + z0;
        z0 = s.b1 * v - s.a1 * out + z1;
        z1 = s.b2 * v - s.a2 * out;
        v = out;
      }
      return v;
    }
    double operator()(const ir::FirFilter& p) const {
      double y = 0;
      for (std::size_t k = 0; k < p.taps.size() && k <= n; ++k) y += p.taps[k] * x[n - k];
      return y;
    }
    double operator()(const ir::Delay& p) const {
      auto d = static_cast<std::size_t>(p.amount);
      return n >= d ? x[n - d] : 0.0;
    }
    double operator()(const ir::Gain& p) const { return p.gain * x[n]; }
    double operator()(const ir::Tanh&) const { return std::tanh(x[n]); }
    double operator()(const ir::Clip& p) const { return std::clamp(x[n], p.lo, p.hi); }
    double operator()(const ir::Dynamics& p) const { return dynamics_at(p, x, n, memory); }
  };
  return std::visit(Apply{x, n, memory, loop}, stage);
}

// A chain holding a fused loop, one sample at a time through all its stages.
Channel run_chain_by_sample(const ir::Chain& chain, const Channel& x) {
  std::vector<Channel> values(chain.stages.size(), Channel(x.size(), 0.0));
  std::vector<std::vector<double>> memory(chain.stages.size());
  LoopMemory loop;
  for (std::size_t n = 0; n < x.size(); ++n) {
    const Channel* in = &x;
    for (std::size_t k = 0; k < chain.stages.size(); ++k) {
      values[k][n] = stage_at(chain.stages[k], *in, n, memory[k], loop);
      in = &values[k];
    }
  }
  return chain.stages.empty() ? x : values.back();
}

// A transfer function's memory (transposed direct form II), one sample.
double tf_at(const ir::TransferFunction& p, double x, std::vector<double>& z) {
  std::size_t size = std::max(p.a.size(), p.b.size());
  z.resize(size, 0.0);
  auto b = [&](std::size_t k) { return k < p.b.size() ? p.b[k] / p.a[0] : 0.0; };
  auto a = [&](std::size_t k) { return k < p.a.size() ? p.a[k] / p.a[0] : 0.0; };
  double y = b(0) * x + z[0];
  for (std::size_t k = 1; k < size; ++k) z[k - 1] = b(k) * x + z[k] - a(k) * y;
  return y;
}

class SampleInterpreter {
 public:
  SampleInterpreter(const ir::Graph& graph, std::vector<Buffer>& values) : graph_(graph), values_(values) {}

  std::string run(const std::vector<ir::NodeId>& order, std::size_t samples) {
    for (ir::NodeId id : order) {
      const ir::Node& node = graph_.node(id);
      if (ir::holds<ir::Input>(node)) continue;
      auto channels = static_cast<std::size_t>(node.type.channels);
      values_[id].assign(channels, Channel(samples, 0.0));
      if (const auto* chain = std::get_if<ir::Chain>(&node.op))
        stage_values_[id].assign(chain->stages.size(), Buffer(channels, Channel(samples, 0.0)));
      memory_[id].assign(channels * std::max<std::size_t>(1, stages_of(node)), {});
    }
    for (std::size_t n = 0; n < samples; ++n)
      for (ir::NodeId id : order) {
        const ir::Node& node = graph_.node(id);
        if (ir::holds<ir::Input>(node)) continue;
        for (std::size_t c = 0; c < values_[id].size(); ++c) {
          std::optional<double> v = std::visit([&](const auto& p) { return at(id, p, c, n); }, node.op);
          if (!v) return "node %" + std::to_string(id) + " (" + std::string(ir::kind_name(node.op)) +
                        ") cannot run sample by sample";
          values_[id][c][n] = *v;
        }
      }
    return {};
  }

 private:
  static std::size_t stages_of(const ir::Node& node) {
    const auto* chain = std::get_if<ir::Chain>(&node.op);
    return chain ? chain->stages.size() : 1;
  }
  const Channel& operand(ir::NodeId id, std::size_t c, std::size_t i = 0) const {
    return values_[graph_.node(id).operands[i]][c];
  }
  std::vector<double>& memory(ir::NodeId id, std::size_t c, std::size_t stage = 0) {
    return memory_[id][c * stages_of(graph_.node(id)) + stage];
  }
  template <class P>
  std::optional<double> single_stage(ir::NodeId id, const P& p, std::size_t c, std::size_t n) {
    LoopMemory none;
    return stage_at(ir::Stage(p), operand(id, c), n, memory(id, c), none);
  }

  std::optional<double> at(ir::NodeId, const ir::Input&, std::size_t, std::size_t) { return std::nullopt; }
  std::optional<double> at(ir::NodeId id, const ir::Output&, std::size_t c, std::size_t n) {
    return operand(id, c)[n];
  }
  std::optional<double> at(ir::NodeId, const ir::IirDesign&, std::size_t, std::size_t) { return std::nullopt; }
  std::optional<double> at(ir::NodeId, const ir::Biquad&, std::size_t, std::size_t) { return std::nullopt; }
  std::optional<double> at(ir::NodeId, const ir::FirDesign&, std::size_t, std::size_t) { return std::nullopt; }
  std::optional<double> at(ir::NodeId id, const ir::SosCascade& p, std::size_t c, std::size_t n) {
    return single_stage(id, p, c, n);
  }
  std::optional<double> at(ir::NodeId id, const ir::TransferFunction& p, std::size_t c, std::size_t n) {
    return tf_at(p, operand(id, c)[n], memory(id, c));
  }
  std::optional<double> at(ir::NodeId id, const ir::FirFilter& p, std::size_t c, std::size_t n) {
    return single_stage(id, p, c, n);
  }
  std::optional<double> at(ir::NodeId id, const ir::Gain& p, std::size_t c, std::size_t n) {
    return single_stage(id, p, c, n);
  }
  std::optional<double> at(ir::NodeId id, const ir::Delay& p, std::size_t c, std::size_t n) {
    return single_stage(id, p, c, n);
  }
  std::optional<double> at(ir::NodeId id, const ir::Tanh& p, std::size_t c, std::size_t n) {
    return single_stage(id, p, c, n);
  }
  std::optional<double> at(ir::NodeId id, const ir::Clip& p, std::size_t c, std::size_t n) {
    return single_stage(id, p, c, n);
  }
  std::optional<double> at(ir::NodeId id, const ir::Dynamics& p, std::size_t c, std::size_t n) {
    if (p.unit != ir::DelayUnit::samples) return std::nullopt;
    return single_stage(id, p, c, n);
  }
  std::optional<double> at(ir::NodeId id, const ir::Feedback& p, std::size_t c, std::size_t n) {
    if (p.unit != ir::DelayUnit::samples || p.amount < 1) return std::nullopt;
    auto d = static_cast<std::size_t>(p.amount);
    return n >= d ? operand(id, c)[n - d] : 0.0;
  }
  std::optional<double> at(ir::NodeId id, const ir::Select& p, std::size_t c, std::size_t n) {
    return operand(id, static_cast<std::size_t>(p.indices[c]))[n];
  }
  std::optional<double> at(ir::NodeId id, const ir::Matrix& p, std::size_t c, std::size_t n) {
    const Buffer& x = values_[graph_.node(id).operands[0]];
    double y = 0;
    for (std::size_t k = 0; k < x.size(); ++k) y += p.gains[c * x.size() + k] * x[k][n];
    return y;
  }
  std::optional<double> at(ir::NodeId id, const ir::Multiply&, std::size_t c, std::size_t n) {
    const Buffer& a = values_[graph_.node(id).operands[0]];
    const Buffer& b = values_[graph_.node(id).operands[1]];
    return a[c][n] * b[c * b.size() / a.size()][n];
  }
  std::optional<double> at(ir::NodeId id, const ir::Link& p, std::size_t c, std::size_t n) {
    return link_level(p, values_[graph_.node(id).operands[0]], c, n);
  }
  std::optional<double> at(ir::NodeId id, const ir::Concat&, std::size_t c, std::size_t n) {
    for (ir::NodeId operand : graph_.node(id).operands) {
      if (c < values_[operand].size()) return values_[operand][c][n];
      c -= values_[operand].size();
    }
    return std::nullopt;
  }
  std::optional<double> at(ir::NodeId id, const ir::Sum& p, std::size_t c, std::size_t n) {
    double y = 0;
    for (std::size_t i = 0; i < p.weights.size(); ++i) y += p.weights[i] * operand(id, c, i)[n];
    return y;
  }
  std::optional<double> at(ir::NodeId id, const ir::Chain& p, std::size_t c, std::size_t n) {
    const Channel* x = &operand(id, c);
    std::vector<LoopMemory>& loops = loops_[id];
    loops.resize(values_[id].size());
    for (std::size_t k = 0; k < p.stages.size(); ++k) {
      Channel& y = stage_values_[id][k][c];
      y[n] = stage_at(p.stages[k], *x, n, memory(id, c, k), loops[c]);
      x = &y;
    }
    return (*x)[n];
  }

  const ir::Graph& graph_;
  std::vector<Buffer>& values_;
  std::map<ir::NodeId, std::vector<Buffer>> stage_values_;         // chains: each stage's output
  std::map<ir::NodeId, std::vector<std::vector<double>>> memory_;  // [channel * stages + stage]
  std::map<ir::NodeId, std::vector<LoopMemory>> loops_;            // chains with a fused loop: by channel
};

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
    if (!order) return Unexpected{std::string("the graph has a cycle without a feedback node")};
    for (ir::NodeId id : *order)
      if (ir::is_specification(graph_.node(id).op))
        return Unexpected{"node %" + std::to_string(id) + " (" + std::string(ir::kind_name(graph_.node(id).op)) +
                          ") is a specification: design the filters first"};
    bool looped = std::any_of(graph_.nodes().begin(), graph_.nodes().end(),
                              [](const ir::Node& n) { return ir::holds<ir::Feedback>(n); });
    if (looped) {
      std::size_t samples = inputs.empty() ? 0 : inputs[0].samples();
      if (std::string error = SampleInterpreter(graph_, values_).run(*order, samples); !error.empty())
        return Unexpected{error};
    }
    for (ir::NodeId id : looped ? std::vector<ir::NodeId>{} : *order) {
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
  std::string eval(ir::NodeId id, const ir::Dynamics& p) {
    if (p.unit != ir::DelayUnit::samples)
      return "node %" + std::to_string(id) + " (dynamics) has times in seconds: design the filters first";
    return per_channel(id, [&](const Channel& c) { return run_stage(p, c); });
  }
  std::string eval(ir::NodeId id, const ir::Chain& p) {
    if (ir::has_loop(p.stages)) return per_channel(id, [&](const Channel& c) { return run_chain_by_sample(p, c); });
    return per_channel(id, [&](Channel c) {
      for (const ir::Stage& stage : p.stages) c = run_stage(stage, c);
      return c;
    });
  }
  std::string eval(ir::NodeId id, const ir::Select& p) {
    const Buffer& in = operand(id);
    Buffer out;
    for (int i : p.indices) out.push_back(in.at(static_cast<std::size_t>(i)));
    values_[id] = std::move(out);
    return {};
  }
  std::string eval(ir::NodeId id, const ir::Matrix& p) {
    const Buffer& in = operand(id);
    std::size_t samples = in.empty() ? 0 : in[0].size();
    Buffer out(static_cast<std::size_t>(p.rows), Channel(samples, 0.0));
    if (p.gains.size() != out.size() * in.size()) return "matrix %" + std::to_string(id) + ": gains do not match";
    for (std::size_t r = 0; r < out.size(); ++r)
      for (std::size_t k = 0; k < in.size(); ++k)
        for (std::size_t n = 0; n < samples; ++n) out[r][n] += p.gains[r * in.size() + k] * in[k][n];
    values_[id] = std::move(out);
    return {};
  }
  std::string eval(ir::NodeId id, const ir::Multiply&) {
    const Buffer& a = operand(id, 0);
    const Buffer& b = operand(id, 1);
    if (a.empty() || b.empty() || a.size() % b.size() != 0)
      return "multiply %" + std::to_string(id) + ": channel counts do not match";
    Buffer out = a;
    for (std::size_t c = 0; c < a.size(); ++c)
      for (std::size_t n = 0; n < a[c].size(); ++n) out[c][n] *= b[c * b.size() / a.size()][n];
    values_[id] = std::move(out);
    return {};
  }
  std::string eval(ir::NodeId id, const ir::Link& p) {
    const Buffer& in = operand(id);
    if (p.groups < 1 || in.size() % static_cast<std::size_t>(p.groups) != 0)
      return "link %" + std::to_string(id) + ": channels do not divide into groups";
    std::size_t samples = in.empty() ? 0 : in[0].size();
    Buffer out(static_cast<std::size_t>(p.groups), Channel(samples));
    for (std::size_t g = 0; g < out.size(); ++g)
      for (std::size_t n = 0; n < samples; ++n) out[g][n] = link_level(p, in, g, n);
    values_[id] = std::move(out);
    return {};
  }
  std::string eval(ir::NodeId id, const ir::Concat&) {
    Buffer out;
    for (std::size_t i = 0; i < graph_.node(id).operands.size(); ++i)
      for (const Channel& c : operand(id, i)) out.push_back(c);
    values_[id] = std::move(out);
    return {};
  }
  std::string eval(ir::NodeId, const ir::Feedback&) { return "unreachable: feedback runs sample by sample"; }
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
