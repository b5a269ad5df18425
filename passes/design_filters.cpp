// SPDX-License-Identifier: Apache-2.0
#include "passes/design_filters.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "design/filter_design.h"
#include "passes/precision_estimate.h"
#include "support/float_format.h"

namespace fxc::passes {
namespace {

// `seconds` at `fs_hz` to the nearest whole sample, halves up, as the language specifies. A
// time written in ms arrives divided by 1000, and times the rate a half can land a few ulps
// below it (0.3 ms at 5 kHz: 1.4999999999999998 samples): within a few ulps of the product
// (at least 1e-9 of a sample) it counts as the half it was written as.
double nearest_sample(double seconds, double fs_hz) {
  const double x = seconds * fs_hz;
  if (!(std::abs(x) < 0x1p52)) return x;  // whole already (or not finite): no half to round
  return std::floor(x + 0.5 + std::max(1e-9, 8 * std::abs(x) * std::numeric_limits<double>::epsilon()));
}

// Algorithm:
//   1. Copy the graph.
//   2. For each specification node, call the design function for its kind at the bound
//      sample rate and replace the payload with the concrete result in place (same id,
//      operands, type and location).
//   3. A design error is reported at the location of the offending parameter's value.
class FilterDesigner {
 public:
  FilterDesigner(ir::Graph& graph, PassContext& context, double fs_hz)
      : graph_(graph), context_(context), fs_hz_(fs_hz) {}

  void run() {
    for (ir::NodeId id = 0; id < graph_.size(); ++id)
      std::visit([&](auto& payload) { design(id, payload); }, graph_.node(id).op);
  }

 private:
  template <class T>
  void design(ir::NodeId, const T&) {}  // inputs, outputs and concrete stages stay as they are

  void design(ir::NodeId id, const ir::IirDesign& spec) {
    design::IirSpec s{spec.family, spec.order, spec.btype, spec.cutoff_hz,
                      spec.rp_db,  spec.rs_db, spec.norm};
    if (auto sos = check(id, design::design_iir(s, fs_hz_))) {
      warn_if_ill_conditioned(id, *sos);
      graph_.node(id).op = ir::SosCascade{std::move(*sos), false};
    }
  }

  void design(ir::NodeId id, const ir::Biquad& spec) {
    design::BiquadSpec s{spec.type, spec.f0_hz, spec.q, spec.gain_db};
    if (auto section = check(id, design::design_biquad(s, fs_hz_)))
      graph_.node(id).op = ir::SosCascade{{*section}, false};
  }

  void design(ir::NodeId id, const ir::FirDesign& spec) {
    design::FirwinSpec s{spec.numtaps, spec.cutoff_hz, spec.window, spec.kaiser_beta,
                         spec.pass_zero};
    if (auto taps = check(id, design::design_firwin(s, fs_hz_)))
      graph_.node(id).op = ir::FirFilter{std::move(*taps)};
  }

  void design(ir::NodeId id, const ir::TransferFunction& tf) {
    auto sos = check(id, design::tf_to_sos(tf.b, tf.a));
    if (!sos) return;
    if (!tf.allow_unstable && !check_stable(id, *sos, "a")) return;
    if (!tf.allow_unstable) warn_if_ill_conditioned(id, *sos);
    graph_.node(id).op = ir::SosCascade{std::move(*sos), tf.allow_unstable};
  }

  void design(ir::NodeId id, const ir::SosCascade& sos) {
    if (!sos.allow_unstable && check_stable(id, sos.sections, "sos")) warn_if_ill_conditioned(id, sos.sections);
  }

  // A filter whose recurrences amplify float64's rounding past what 16-bit audio holds would
  // otherwise give rounding noise for its output without a word (SciPy's sosfilt does too).
  void warn_if_ill_conditioned(ir::NodeId id, const std::vector<design::Section>& sections) {
    constexpr double kWarnAbove = 1e-4;
    const double error = float64_state_error(sections);
    if (!(error > kWarnAbove)) return;
    context_.diags.warning(
        graph_.node(id).loc,
        !std::isfinite(error)
            ? std::string("this filter's output overflows in float64 on noise of full scale (its sections' "
                          "gains multiply past the largest double): scale its sections, or split it")
            : "this filter amplifies float64's rounding: its output's error is about " +
                  (error >= 1 ? fmt::format("{:.2g} times its level", error) : fmt::format("{:.2g} of its level", error)) +
                  " (relative RMS, measured on noise against extended precision), in fxc as in SciPy; its poles "
                  "crowd together near z = 1 or z = -1 (a high order with a very wide or very narrow band): a lower "
                  "order, or the filter split into two, keeps it accurate",
        "fx-design");
  }

  void design(ir::NodeId id, const ir::Delay& delay) {
    if (delay.unit != ir::DelayUnit::seconds) return;
    double samples = nearest_sample(delay.amount, fs_hz_);
    if (!std::isfinite(samples) || samples < 0 || samples > ir::Delay::kMaxSamples) {
      error(id, "d", "delay of " + format_double(delay.amount) + " s is out of range: " +
                         format_double(samples) + " samples at " + format_double(fs_hz_) +
                         " Hz (at most " + format_double(ir::Delay::kMaxSamples) + ")");
      return;
    }
    graph_.node(id).op = ir::Delay{samples, ir::DelayUnit::samples};
  }

  void design(ir::NodeId id, const ir::Feedback& feedback) {
    double samples = feedback.amount;
    if (feedback.unit == ir::DelayUnit::seconds) samples = nearest_sample(feedback.amount, fs_hz_);
    if (!std::isfinite(samples) || samples > ir::Delay::kMaxSamples) {
      error(id, "d", "delay of " + format_double(feedback.amount) + " s is out of range: " +
                         format_double(samples) + " samples at " + format_double(fs_hz_) +
                         " Hz (at most " + format_double(ir::Delay::kMaxSamples) + ")");
      return;
    }
    if (samples < 1) {
      error(id, "d", "a delay inside a feedback loop must be at least one sample; " +
                         (feedback.unit == ir::DelayUnit::seconds
                              ? format_double(feedback.amount) + " s is " + format_double(samples) + " samples at " +
                                    format_double(fs_hz_) + " Hz"
                              : "found " + format_double(samples)));
      return;
    }
    ir::Feedback designed = feedback;
    designed.amount = samples;
    designed.unit = ir::DelayUnit::samples;
    graph_.node(id).op = designed;
  }

  // Times to samples: attack and release exactly (their coefficients take any length), hold
  // and lookahead to the nearest whole sample, halves up, as delays.
  void design(ir::NodeId id, const ir::Dynamics& dynamics) {
    if (dynamics.unit != ir::DelayUnit::seconds) return;
    ir::Dynamics designed = dynamics;
    designed.attack = dynamics.attack * fs_hz_;
    designed.release = dynamics.release * fs_hz_;
    designed.hold = nearest_sample(dynamics.hold, fs_hz_);
    designed.lookahead = nearest_sample(dynamics.lookahead, fs_hz_);
    designed.unit = ir::DelayUnit::samples;
    if (!(designed.lookahead <= ir::Dynamics::kMaxLookaheadSamples)) {
      error(id, "lookahead", "a lookahead of " + format_double(dynamics.lookahead) + " s is " +
                                 format_double(designed.lookahead) + " samples at " + format_double(fs_hz_) +
                                 " Hz: at most " + format_double(ir::Dynamics::kMaxLookaheadSamples));
      return;
    }
    for (double t : {designed.attack, designed.release, designed.hold})
      if (!std::isfinite(t)) {
        error(id, "attack", "a time is out of range at " + format_double(fs_hz_) + " Hz");
        return;
      }
    graph_.node(id).op = designed;
  }

  bool check_stable(ir::NodeId id, const design::Sos& sos, const std::string& param) {
    if (design::is_stable(sos)) return true;
    Diagnostic& d = error(id, param,
                          "unstable filter: a pole lies on or outside the unit circle (radius " +
                              format_double(design::max_pole_radius(sos)) + ")");
    d.notes.push_back({Severity::note, {},
                       "add 'allow_unstable=true' to the stage if this is intended", "", {}});
    return false;
  }

  template <class T>
  std::optional<T> check(ir::NodeId id, design::DesignResult<T> result) {
    if (result) return std::move(*result);
    error(id, result.error().param, result.error().message);
    return std::nullopt;
  }

  Diagnostic& error(ir::NodeId id, const std::string& param, const std::string& message) {
    Diagnostic& d = context_.diags.error(graph_.node(id).loc_of(param), message, "fx-design");
    ir::note_calls(d, graph_.node(id));
    return d;
  }

  ir::Graph& graph_;
  PassContext& context_;
  double fs_hz_;
};

}  // namespace

ir::Graph design_filters(const ir::Graph& graph, PassContext& context) {
  ir::Graph out = graph;
  double fs_hz = context.binding.sample_rate_hz.value_or(0);
  if (!context.binding.sample_rate_hz || !(fs_hz > 0) || !std::isfinite(fs_hz)) {
    bool needs_rate = false;
    for (const ir::Node& node : graph.nodes()) needs_rate |= ir::is_specification(node.op);
    if (needs_rate) {
      context.diags.error({}, context.binding.sample_rate_hz
                                  ? "sample rate must be a positive finite number, got " +
                                        format_double(fs_hz) + " Hz"
                                  : "the graph needs a sample rate to design its filters",
                          "fx-design");
      return out;
    }
  }
  FilterDesigner(out, context, fs_hz).run();
  return out;
}

}  // namespace fxc::passes
