// SPDX-License-Identifier: Apache-2.0
#include "passes/fold_gains.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "ir/graph_algorithms.h"
#include "ir/rewrite.h"

namespace fxc::passes {
namespace {

// Algorithm: sweeps. Each sweep computes the users once, then visits every node and applies
// the first rule that matches there, unless a rewrite earlier in the same sweep touched the
// node or its neighbours (their users are then stale); sweeps repeat until one changes
// nothing. Each rule removes a gain or a sum operand, so this ends, and a graph needs about as
// many sweeps as its longest run of foldable nodes, not one per rewrite.
class GainFolder {
 public:
  explicit GainFolder(ir::Graph graph) : g_(std::move(graph)), dead_(g_.size(), false) {}

  ir::Graph run() {
    while (sweep()) {
    }
    std::vector<bool> keep(g_.size());
    for (ir::NodeId id = 0; id < g_.size(); ++id) keep[id] = !dead_[id];
    return ir::compact(g_, keep);
  }

 private:
  bool sweep() {
    users_ = g_.users();
    touched_.assign(g_.size(), false);
    bool changed = false;
    for (ir::NodeId id = 0; id < g_.size(); ++id) {
      if (dead_[id] || near_touched(id)) continue;
      std::vector<ir::NodeId> operands = g_.node(id).operands;  // a rewrite may clear them
      bool done = false;
      if (auto* sum = std::get_if<ir::Sum>(&g_.node(id).op))
        done = merge_repeated_operands(id, *sum) || sum_of_one(id, *sum);
      if (!done && std::holds_alternative<ir::Gain>(g_.node(id).op))
        done = remove_unit_gain(id) || into_operand(id) || into_sums(id) || into_user(id);
      if (done) {
        touch_around(id, operands);
        changed = true;
      }
    }
    return changed;
  }

  // A node whose own users or operands' users changed this sweep is left for the next one.
  bool near_touched(ir::NodeId id) const {
    if (touched_[id]) return true;
    for (ir::NodeId operand : g_.node(id).operands)
      if (touched_[operand]) return true;
    for (ir::NodeId user : users_[id])
      if (touched_[user]) return true;
    return false;
  }
  void touch_around(ir::NodeId id, const std::vector<ir::NodeId>& operands) {
    touched_[id] = true;
    for (ir::NodeId user : users_[id]) touched_[user] = true;
    for (ir::NodeId operand : operands) touched_[operand] = true;
  }

  double gain_of(ir::NodeId id) const { return std::get<ir::Gain>(g_.node(id).op).gain; }
  ir::NodeId operand_of(ir::NodeId id) const { return g_.node(id).operands[0]; }
  bool single_use(ir::NodeId id) const { return ir::has_single_use(users_, g_, id); }

  // Drops `id`; it reads nothing any more, so it no longer counts as a user.
  void kill(ir::NodeId id) {
    dead_[id] = true;
    g_.node(id).operands.clear();
  }

  // Removes `id`, making its users read what it read.
  void bypass(ir::NodeId id) {
    ir::replace_uses(g_, id, operand_of(id));
    kill(id);
  }

  bool remove_unit_gain(ir::NodeId id) {
    // A live gain is 1 only for now: removing it would change the kernel's shape.
    if (gain_of(id) != 1.0 || g_.node(id).live) return false;
    bypass(id);
    return true;
  }

  // The gain's operand absorbs it: a gain, an sos, a fir or a sum read only by this gain.
  bool into_operand(ir::NodeId id) {
    ir::NodeId p = operand_of(id);
    if (!single_use(p) || !scale(p, gain_of(id))) return false;
    ir::Node& absorbed = g_.node(p);
    absorbed.origins = ir::merged_origins(absorbed, g_.node(id));
    absorbed.live = absorbed.live || g_.node(id).live;
    ir::replace_uses(g_, id, p);
    kill(id);
    return true;
  }

  // The gain's only user absorbs it: a gain, an sos or a fir (a sum: into_sums).
  bool into_user(ir::NodeId id) {
    if (!single_use(id)) return false;
    ir::NodeId user = users_[id][0];
    ir::Node& u = g_.node(user);
    // scale() on a sum scales its output; a gain on one operand is into_sums'.
    if (ir::holds<ir::Output>(u) || ir::holds<ir::Sum>(u) || !scale(user, gain_of(id))) return false;
    u.origins = ir::merged_origins(g_.node(id), u);
    u.live = u.live || g_.node(id).live;
    bypass(id);
    return true;
  }

  // A gain read only by sums, one or several (Freeverb's input gain before its eight combs):
  // the weights that read it absorb it, and a pass over memory goes.
  bool into_sums(ir::NodeId id) {
    std::vector<ir::NodeId> users = users_[id];
    std::sort(users.begin(), users.end());
    users.erase(std::unique(users.begin(), users.end()), users.end());  // each sum scaled once
    if (users.empty()) return false;
    const double k = gain_of(id);
    for (ir::NodeId user : users) {
      const auto* sum = std::get_if<ir::Sum>(&g_.node(user).op);
      if (!sum) return false;
      for (std::size_t i = 0; i < g_.node(user).operands.size(); ++i)
        if (g_.node(user).operands[i] == id && !std::isfinite(sum->weights[i] * k)) return false;
    }
    for (ir::NodeId user : users) {
      ir::Node& u = g_.node(user);
      auto& sum = std::get<ir::Sum>(u.op);
      for (std::size_t i = 0; i < u.operands.size(); ++i)
        if (u.operands[i] == id) sum.weights[i] *= k;
      u.origins = ir::merged_origins(g_.node(id), u);
      u.live = u.live || g_.node(id).live;
    }
    bypass(id);
    return true;
  }

  // Multiplies the output of a linear node by `k`, if it is a kind that can absorb a gain and
  // no value overflows (then the gain stays a stage of its own, and the samples overflow as
  // they would unfolded).
  bool scale(ir::NodeId id, double k) {
    ir::Op& op = g_.node(id).op;
    if (!scaled_values_finite(op, k)) return false;
    if (auto* gain = std::get_if<ir::Gain>(&op)) {
      gain->gain *= k;
    } else if (auto* sos = std::get_if<ir::SosCascade>(&op)) {
      design::Section& s = sos->sections.front();
      s.b0 *= k, s.b1 *= k, s.b2 *= k;
    } else if (auto* fir = std::get_if<ir::FirFilter>(&op)) {
      for (double& t : fir->taps) t *= k;
    } else if (auto* sum = std::get_if<ir::Sum>(&op)) {
      for (double& w : sum->weights) w *= k;
    } else {
      return false;
    }
    return true;
  }

  static bool scaled_values_finite(const ir::Op& op, double k) {
    auto finite = [k](double v) { return std::isfinite(v * k); };
    if (auto* gain = std::get_if<ir::Gain>(&op)) return finite(gain->gain);
    if (auto* sos = std::get_if<ir::SosCascade>(&op)) {
      const design::Section& s = sos->sections.front();
      return finite(s.b0) && finite(s.b1) && finite(s.b2);
    }
    if (auto* fir = std::get_if<ir::FirFilter>(&op)) return std::all_of(fir->taps.begin(), fir->taps.end(), finite);
    if (auto* sum = std::get_if<ir::Sum>(&op)) return std::all_of(sum->weights.begin(), sum->weights.end(), finite);
    return true;
  }

  bool merge_repeated_operands(ir::NodeId id, ir::Sum& sum) {
    ir::Node& node = g_.node(id);
    std::map<ir::NodeId, std::size_t> first;
    std::vector<ir::NodeId> operands;
    std::vector<double> weights;
    for (std::size_t i = 0; i < node.operands.size(); ++i) {
      auto [it, inserted] = first.emplace(node.operands[i], operands.size());
      if (inserted) {
        operands.push_back(node.operands[i]);
        weights.push_back(sum.weights[i]);
      } else {
        weights[it->second] += sum.weights[i];
      }
    }
    if (operands.size() == node.operands.size()) return false;
    if (!std::all_of(weights.begin(), weights.end(), [](double w) { return std::isfinite(w); })) return false;
    node.operands = std::move(operands);
    sum.weights = std::move(weights);
    return true;
  }

  bool sum_of_one(ir::NodeId id, const ir::Sum& sum) {
    if (g_.node(id).operands.size() != 1) return false;
    g_.node(id).op = ir::Gain{sum.weights[0]};
    return true;
  }

  ir::Graph g_;
  std::vector<bool> dead_;
  std::vector<std::vector<ir::NodeId>> users_;
  std::vector<bool> touched_;
};

}  // namespace

ir::Graph fold_gains(const ir::Graph& graph, PassContext&) { return GainFolder(graph).run(); }

}  // namespace fxc::passes
