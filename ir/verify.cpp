// SPDX-License-Identifier: Apache-2.0
#include "ir/verify.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ir/graph_algorithms.h"
#include "support/float_format.h"

namespace fxc::ir {
namespace {

bool finite(double v) { return std::isfinite(v); }
bool finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

class Verifier {
 public:
  Verifier(const Graph& graph, DiagnosticEngine& diags) : g_(graph), diags_(diags) {}

  bool run() {
    std::size_t before = diags_.error_count();
    for (NodeId id = 0; id < g_.size(); ++id) check_node(id);
    if (diags_.error_count() > before) return false;  // later checks assume sound operands
    if (std::vector<NodeId> cycle = find_cycle(g_); !cycle.empty()) {
      std::string path;
      for (NodeId id : cycle) path += "%" + std::to_string(id) + " <- ";
      error(cycle.front(), "the graph has a cycle through no feedback node: " + path + "%" +
                               std::to_string(cycle.front()));
      return false;
    }
    check_types();
    check_interface();
    return diags_.error_count() == before;
  }

 private:
  void error(NodeId id, const std::string& message) {
    diags_.error(g_.node(id).loc,
                 "%" + std::to_string(id) + " (" + std::string(kind_name(g_.node(id).op)) +
                     "): " + message,
                 "ir-verify");
  }

  void check_node(NodeId id) {
    const Node& node = g_.node(id);
    for (NodeId operand : node.operands)
      if (operand >= g_.size()) error(id, "operand %" + std::to_string(operand) + " does not exist");
    int want = arity(node.op);
    std::size_t have = node.operands.size();
    if (want >= 0 && have != static_cast<std::size_t>(want))
      error(id, "takes " + std::to_string(want) + " operand" + (want == 1 ? "" : "s") + ", has " +
                    std::to_string(have));
    if (want < 0 && have == 0) error(id, "takes at least one operand, has none");
    if (node.type.channels < 0) error(id, "has a negative channel count");
    std::visit([&](const auto& p) { check_payload(id, p); }, node.op);
  }

  void check_payload(NodeId, const Input&) {}
  void check_payload(NodeId, const Output&) {}
  void check_payload(NodeId id, const IirDesign& p) {
    if (p.order < 1) error(id, "order must be at least 1");
    std::size_t edges = design::is_band(p.btype) ? 2 : 1;
    if (p.cutoff_hz.size() != edges)
      error(id, std::string(design::name(p.btype)) + " needs " + std::to_string(edges) +
                    " cutoff frequenc" + (edges == 1 ? "y" : "ies") + ", has " +
                    std::to_string(p.cutoff_hz.size()));
  }
  void check_payload(NodeId id, const Biquad& p) {
    if (!finite(p.f0_hz) || !finite(p.q) || !finite(p.gain_db))
      error(id, "parameters must be finite numbers");
  }
  void check_payload(NodeId id, const FirDesign& p) {
    if (p.numtaps < 1) error(id, "numtaps must be at least 1");
    if (p.cutoff_hz.empty()) error(id, "needs at least one cutoff frequency");
  }
  void check_payload(NodeId id, const SosCascade& p) {
    if (p.sections.empty()) error(id, "has no sections");
    for (const design::Section& s : p.sections)
      if (!finite(std::vector<double>{s.b0, s.b1, s.b2, s.a1, s.a2})) {
        error(id, "has a non-finite coefficient");
        break;
      }
  }
  void check_payload(NodeId id, const TransferFunction& p) {
    if (p.b.empty() || p.a.empty()) error(id, "needs non-empty b and a");
    else if (p.a[0] == 0) error(id, "a[0] must not be 0");
    if (!finite(p.b) || !finite(p.a)) error(id, "has a non-finite coefficient");
  }
  void check_payload(NodeId id, const FirFilter& p) {
    if (p.taps.empty()) error(id, "has no taps");
    if (!finite(p.taps)) error(id, "has a non-finite tap");
  }
  void check_payload(NodeId id, const Gain& p) {
    if (!finite(p.gain)) error(id, "gain must be finite");
  }
  void check_payload(NodeId id, const Sum& p) {
    if (p.weights.size() != g_.node(id).operands.size())
      error(id, "has " + std::to_string(p.weights.size()) + " weights for " +
                    std::to_string(g_.node(id).operands.size()) + " operands");
    if (!finite(p.weights)) error(id, "weights must be finite");
  }
  void check_payload(NodeId id, const Delay& p) {
    if (!finite(p.amount) || p.amount < 0) error(id, "delay must be a finite number >= 0");
    if (p.unit == DelayUnit::samples && p.amount != std::floor(p.amount))
      error(id, "a delay in samples must be a whole number");
    if (p.unit == DelayUnit::samples && p.amount > Delay::kMaxSamples)
      error(id, "a delay in samples must be at most " + format_double(Delay::kMaxSamples));
  }
  void check_payload(NodeId id, const Select& p) {
    if (p.indices.empty()) error(id, "selects no channel");
    for (int i : p.indices)
      if (i < 0) error(id, "a channel index must be >= 0");
    if (p.of < 0) error(id, "'of' must be >= 0");
  }
  void check_payload(NodeId id, const Matrix& p) {
    if (p.rows < 1) error(id, "a matrix needs at least one row");
    else if (p.gains.size() % static_cast<std::size_t>(p.rows) != 0)
      error(id, std::to_string(p.gains.size()) + " gains do not fill " + std::to_string(p.rows) + " rows");
    if (!finite(p.gains)) error(id, "gains must be finite");
  }
  void check_payload(NodeId, const Concat&) {}
  void check_payload(NodeId id, const Multiply& p) {
    if (p.groups < 1) error(id, "a multiply needs at least one group");
  }
  void check_payload(NodeId id, const Link& p) {
    if (p.groups < 1) error(id, "a link needs at least one group");
  }
  void check_payload(NodeId id, const Feedback& p) {
    if (!finite(p.amount) || p.amount < 0) error(id, "delay must be a finite number >= 0");
    if (p.unit == DelayUnit::samples && (p.amount < 1 || p.amount != std::floor(p.amount)))
      error(id, "a feedback delay in samples must be a whole number >= 1");
    if (p.unit == DelayUnit::samples && p.amount > Delay::kMaxSamples)
      error(id, "a delay in samples must be at most " + format_double(Delay::kMaxSamples));
  }
  void check_payload(NodeId id, const LoopRead& p) {
    if (!finite(p.amount) || p.amount < 1 || p.amount != std::floor(p.amount))
      error(id, "a loop's delay must be a whole number of samples >= 1");
  }
  void check_payload(NodeId id, const LoopWrite& p) {
    if (!finite(p.input_weight) || !finite(p.loop_weight) || !finite(p.wet_weight) || !finite(p.dry_weight))
      error(id, "loop weights must be finite");
  }
  void check_payload(NodeId, const Tanh&) {}
  void check_payload(NodeId id, const Dynamics& p) {
    if (!finite(std::vector<double>{p.threshold_db, p.ratio, p.knee_db, p.makeup_db, p.attack, p.release,
                                    p.hold, p.range_db, p.lookahead}))
      error(id, "parameters must be finite numbers");
    if (p.ratio < 1) error(id, "ratio must be at least 1");
    if (p.knee_db < 0) error(id, "knee must be at least 0 dB");
    if (p.range_db > 0) error(id, "range must be at most 0 dB");
    if (p.attack < 0 || p.release < 0 || p.hold < 0 || p.lookahead < 0) error(id, "times must be at least 0");
    if (p.unit == DelayUnit::samples && (p.hold != std::floor(p.hold) || p.lookahead != std::floor(p.lookahead)))
      error(id, "hold and lookahead in samples must be whole numbers");
    if (p.unit == DelayUnit::samples && p.lookahead > Dynamics::kMaxLookaheadSamples)
      error(id, "a lookahead must be at most " + format_double(Dynamics::kMaxLookaheadSamples) + " samples");
  }
  void check_payload(NodeId id, const Chain& p) {
    if (p.stages.empty()) error(id, "has no stages");
    for (const Stage& stage : p.stages) std::visit([&](const auto& s) { check_payload(id, s); }, stage);
    // A fused loop: one read, then only sos, gain, tanh and clip, then one write.
    int open = 0, reads = 0;
    for (const Stage& stage : p.stages) {
      if (std::holds_alternative<LoopRead>(stage)) open = ++reads;
      else if (std::holds_alternative<LoopWrite>(stage)) open = open == 1 ? 0 : -1;
      else if (open == 1 && !std::holds_alternative<SosCascade>(stage) && !std::holds_alternative<Gain>(stage) &&
               !std::holds_alternative<Tanh>(stage) && !std::holds_alternative<Clip>(stage))
        open = -1;
      if (open < 0 || reads > 1) break;
    }
    if (open != 0 || reads > 1) error(id, "a fused loop needs one loop_read, then sos, gain, tanh or clip stages, then one loop_write");
    if (p.strategy == IirStrategy::chunked_scan || gpu_chunked(p.strategy))
      if (p.chunk_length < 1) error(id, "a chunked strategy needs a chunk length >= 1");
    if (p.strategy == IirStrategy::gpu_chunked_wavefront) {
      const int steps = wavefront_steps(p.stages);
      if (steps < 2)
        error(id, "gpu_chunked_wavefront pipelines 2 steps or more, this chain has " + std::to_string(steps));
    }
    if (p.fir_method == FirMethod::fft_overlap_save && (p.fft_block < 2 || (p.fft_block & (p.fft_block - 1)) != 0))
      error(id, "FFT overlap-save needs an FFT block that is a power of two, at least 2");
    if (mixed_precision(p.state_precision) && (p.stages.empty() || !std::holds_alternative<SosCascade>(p.stages[0])))
      error(id, "state_precision " + std::string(name(p.state_precision)) +
                    " needs an sos cascade as the first stage (the sections it runs in float64)");
    if (p.state_precision == StatePrecision::pairs) {
      auto other = std::find_if(p.stages.begin(), p.stages.end(), [](const Stage& s) {
        return !std::holds_alternative<SosCascade>(s) && !std::holds_alternative<Gain>(s);
      });
      if (other != p.stages.end())
        error(id, "state_precision pairs is for chains of sos cascades and gains, not " +
                      std::string(std::visit([](const auto& s) { return std::decay_t<decltype(s)>::kKind; }, *other)));
      else if (std::none_of(p.stages.begin(), p.stages.end(), [](const Stage& s) { return std::holds_alternative<SosCascade>(s); }))
        error(id, "state_precision pairs needs an sos cascade (a chain of gains alone has no float64 state)");
    }
  }
  void check_payload(NodeId id, const Clip& p) {
    if (!finite(p.lo) || !finite(p.hi)) error(id, "bounds must be finite");
    else if (p.lo > p.hi) error(id, "lower bound exceeds upper bound");
  }

  void check_types() {
    std::set<DType> dtypes;
    for (NodeId id = 0; id < g_.size(); ++id) {
      const Node& node = g_.node(id);
      dtypes.insert(node.type.dtype);
      if (const auto* chain = std::get_if<Chain>(&node.op);
          chain && chain->state_precision != StatePrecision::signal &&
          chain->state_precision != StatePrecision::f64 && node.type.dtype != DType::f32)
        error(id, "state_precision " + std::string(name(chain->state_precision)) + " is for float32 chains" +
                      (mixed_precision(chain->state_precision)
                           ? " (its first stage's sections in float64 or float pairs, float32 after)"
                           : " (float pairs stand in for a float32 signal's float64 arithmetic)"));
      if (holds<Input>(node)) continue;
      for (NodeId operand : node.operands)
        if (holds<Output>(g_.node(operand)))
          error(id, "reads output %" + std::to_string(operand) + "; outputs have no users");
      if (is_routing(node.op)) {
        check_routing(id);
        continue;
      }
      // Every stage keeps its operand's channel count; a sum needs equal counts.
      int expected = 0;
      for (NodeId operand : node.operands) {
        int c = g_.node(operand).type.channels;
        if (c == 0) continue;
        if (expected != 0 && c != expected)
          error(id, "operands have different channel counts (" + std::to_string(expected) +
                        " and " + std::to_string(c) + ")");
        expected = expected ? expected : c;
      }
      if (expected != 0 && node.type.channels != 0 && node.type.channels != expected)
        error(id, "has " + std::to_string(node.type.channels) + " channels but its operand has " +
                      std::to_string(expected));
    }
    if (dtypes.size() > 1) diags_.error({}, "the graph mixes f32 and f64 nodes", "ir-verify");
  }

  // Channel counts through select, matrix, concat, link and multiply, where they are known.
  void check_routing(NodeId id) {
    const Node& node = g_.node(id);
    const int have = node.type.channels;
    auto known = [&](NodeId operand) { return g_.node(operand).type.channels; };
    if (const auto* s = std::get_if<Select>(&node.op)) {
      int in = known(node.operands[0]);
      if (have != 0 && have != static_cast<int>(s->indices.size()))
        error(id, "has " + std::to_string(have) + " channels for " + std::to_string(s->indices.size()) + " indices");
      for (int i : s->indices)
        if (in != 0 && i >= in) error(id, "channel index " + std::to_string(i) + " is out of range for " + std::to_string(in) + " channels");
      if (in != 0 && s->of != 0 && s->of != in)
        error(id, "was written for " + std::to_string(s->of) + " channels, its operand has " + std::to_string(in));
    } else if (const auto* m = std::get_if<Matrix>(&node.op)) {
      int in = known(node.operands[0]);
      if (have != 0 && have != m->rows)
        error(id, "has " + std::to_string(have) + " channels for " + std::to_string(m->rows) + " rows");
      if (in != 0 && !m->gains.empty() && m->rows > 0 &&
          m->gains.size() != static_cast<std::size_t>(m->rows) * static_cast<std::size_t>(in))
        error(id, std::to_string(m->gains.size() / static_cast<std::size_t>(m->rows)) + " columns for an operand of " +
                      std::to_string(in) + " channels");
    } else if (const auto* l = std::get_if<Link>(&node.op)) {
      int in = known(node.operands[0]);
      if (have != 0 && have != l->groups)
        error(id, "has " + std::to_string(have) + " channels for " + std::to_string(l->groups) + " groups");
      if (in != 0 && l->groups > 0 && in % l->groups != 0)
        error(id, std::to_string(in) + " channels do not divide into " + std::to_string(l->groups) + " groups");
    } else if (const auto* m = std::get_if<Multiply>(&node.op)) {
      int a = known(node.operands[0]), b = known(node.operands[1]);
      if (have != 0 && a != 0 && have != a)
        error(id, "has " + std::to_string(have) + " channels but its signal has " + std::to_string(a));
      if (a != 0 && b != 0 && b != a && (b != m->groups || a % b != 0))
        error(id, "a gain of " + std::to_string(b) + " channels for a signal of " + std::to_string(a) + " in " +
                      std::to_string(m->groups) + " groups");
    } else {
      int sum = 0;
      for (NodeId operand : node.operands) sum = known(operand) == 0 || sum < 0 ? -1 : sum + known(operand);
      if (sum > 0 && have != 0 && have != sum)
        error(id, "has " + std::to_string(have) + " channels; its operands have " + std::to_string(sum) + " in all");
    }
  }

  void check_interface() {
    std::vector<NodeId> inputs = g_.inputs(), outputs = g_.outputs();
    if (inputs.empty()) diags_.error({}, "the graph has no input", "ir-verify");
    if (outputs.empty()) diags_.error({}, "the graph has no output", "ir-verify");
    std::set<std::string> names;
    for (NodeId id : inputs) {
      const std::string& n = std::get<Input>(g_.node(id).op).name;
      if (n.empty()) error(id, "an input needs a name");
      else if (!names.insert(n).second) error(id, "the name '" + n + "' is used twice");
    }
    for (NodeId id : outputs) {
      const std::string& n = std::get<Output>(g_.node(id).op).name;
      if (!n.empty() && !names.insert(n).second) error(id, "the name '" + n + "' is used twice");
    }
    // An output, or a loop that an output reads, that no input reaches (a loop with nothing
    // fed into it): the interpreter and the channel inference have no signal to go by.
    std::vector<bool> fed = reachable_from(g_, inputs), used = reaching(g_, outputs);
    for (NodeId id = 0; id < g_.size(); ++id)
      if (!fed[id] && used[id] && (std::holds_alternative<Output>(g_.node(id).op) ||
                                   std::holds_alternative<Feedback>(g_.node(id).op)))
        error(id, "does not depend on any input");
  }

  const Graph& g_;
  DiagnosticEngine& diags_;
};

}  // namespace

bool verify(const Graph& graph, DiagnosticEngine& diags) { return Verifier(graph, diags).run(); }

}  // namespace fxc::ir
