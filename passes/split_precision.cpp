// SPDX-License-Identifier: Apache-2.0
#include "passes/split_precision.h"

#include <algorithm>
#include <optional>

#include "design/filter_design.h"
#include "passes/cost_model.h"
#include "passes/precision_estimate.h"

namespace fxc::passes {
namespace {

bool is_nonlinear(const ir::Stage& stage) {
  return std::holds_alternative<ir::Tanh>(stage) || std::holds_alternative<ir::Clip>(stage) ||
         std::holds_alternative<ir::Dynamics>(stage);
}

// Vector operations per sample for `sections` sections over `channels` channels in lanes of
// `lanes` (channel lanes: each section once per group of `lanes` channels).
double vector_ops(int sections, int channels, int lanes) {
  return static_cast<double>(sections) * ((channels + lanes - 1) / lanes);
}

// The sections of `chain` that need float64 state (`hot`, in order) and the chain without
// them (`cold`); `dynamics`: the cold part's dynamics stages.
struct Split {
  ir::Chain hot, cold;
  int cold_sections = 0, dynamics = 0;
};

// Where the chain's sections divide at the precision boundary: nullopt when none needs float64
// state, none is left without it, or one that needs it sits after a non-linear stage (it
// cannot move to the front).
std::optional<Split> partition(const ir::Chain& chain, const PassContext& context) {
  const double threshold = context.thresholds.f64_state_pole_radius;
  std::size_t linear_end = chain.stages.size();
  for (std::size_t k = 0; k < chain.stages.size(); ++k)
    if (is_nonlinear(chain.stages[k])) {
      linear_end = k;
      break;
    }
  ir::SosCascade hot;
  Split out;
  for (std::size_t k = 0; k < chain.stages.size(); ++k) {
    const auto* sos = std::get_if<ir::SosCascade>(&chain.stages[k]);
    if (!sos) {
      out.cold.stages.push_back(chain.stages[k]);
      continue;
    }
    ir::SosCascade rest = *sos;
    rest.sections.clear();
    for (const design::Section& s : sos->sections) {
      if (design::max_pole_radius(design::Sos{s}) < threshold) {
        rest.sections.push_back(s);
        ++out.cold_sections;
      } else if (k < linear_end) {
        hot.sections.push_back(s);
        hot.allow_unstable = hot.allow_unstable || sos->allow_unstable;
      } else {
        return std::nullopt;
      }
    }
    if (!rest.sections.empty()) out.cold.stages.push_back(std::move(rest));
  }
  for (const ir::Stage& stage : chain.stages) out.dynamics += std::holds_alternative<ir::Dynamics>(stage) ? 1 : 0;
  if (hot.sections.empty() || out.cold_sections + out.dynamics == 0) return std::nullopt;
  out.hot.stages.push_back(std::move(hot));
  return out;
}

// Whether the cold part keeps float64 quality in float32: its sections' own float32 error,
// measured where they will run (after the hot ones, on their output rounded to float32), at
// most thresholds.split_error. (A radius below the threshold is not enough: high-order designs
// near Nyquist lose 90 dB with every pole inside it; and sections measured alone on noise can
// hide their error under the measurement's floor and lose it on the hot part's output: a wide
// band-stop near Nyquist after a low lowpass, float32_state_error_after.) With dynamics in
// it, the part is as precise as a float32 dynamics stage can be (1e-5 of the peak,
// docs/fx-language.md): its sections then need only the bound a float32 chain of them alone
// gets (select_strategy's).
std::vector<design::Section> cold_sections(const Split& split) {
  std::vector<design::Section> cascade;
  for (const ir::Stage& stage : split.cold.stages)
    if (const auto* sos = std::get_if<ir::SosCascade>(&stage))
      cascade.insert(cascade.end(), sos->sections.begin(), sos->sections.end());
  return cascade;
}

bool cold_part_keeps_quality(const Split& split, const PassContext& context) {
  const auto& hot = std::get<ir::SosCascade>(split.hot.stages[0]).sections;
  const double bound = split.dynamics > 0 ? context.thresholds.f64_state_error : context.thresholds.split_error;
  return float32_state_error_after(hot, cold_sections(split)) <= bound;
}

// On the CPU the cold part is a chain of its own, whose precision select_strategy chooses as
// for any chain: from its sections' float32 error measured alone on noise. Where that says
// float64, the split would buy a second pass over the signal and no float32 width, which is
// what split_pays_on_cpu counted on: the chain stays whole.
bool cold_part_runs_in_float32(const Split& split, const PassContext& context) {
  ChainSummary summary = summarize(split.cold);
  summary.signal = DType::f32;
  measure_float32_error(split.cold, summary, context);
  return choose_state_precision(summary, context) == ir::StatePrecision::signal;
}

// On a GPU, whether the cold part can compute in float32 for less: a FIR's taps and ring, and
// a limiter's lookahead rings, stay in the chain's float64 buffers (ChainLayout: one type per
// kernel), so float arithmetic there would convert every tap or cell it reads, every sample,
// at a fraction of the float64 rate. Such chains stay whole.
bool cold_part_reads_float64_per_tap(const Split& split) {
  for (const ir::Stage& stage : split.cold.stages) {
    if (std::holds_alternative<ir::FirFilter>(stage)) return true;
    if (const auto* dyn = std::get_if<ir::Dynamics>(&stage); dyn && dyn->lookahead > 0) return true;
  }
  return false;
}

// Whether select_strategy would run `chain` on `channels` channels (each item's, in a batch) in
// time chunks, computing in `compute`.
bool runs_in_time_chunks(const ir::Chain& chain, int channels, DType compute, const PassContext& context) {
  ChainSummary summary = summarize(chain);
  summary.signal = context.binding.dtype;
  PassContext computing = context;
  computing.binding.dtype = compute;
  return choose_schedule(summary, channels, computing).strategy == ir::IirStrategy::chunked_scan;
}

// On the CPU, whether two chains cost less than one. Whole: every section at float64's width.
// Split: the hot ones so, the rest at float32's, plus one more pass over the signal between
// the two chains, written and read back through memory: kPassCost sections' worth per vector
// group. (Measured: W6's 512 channels x 1 s took 2x as long split, 46 against 23 ms, where
// counting the pass as one section predicted a gain; W1's 8 channels x 120 s gain 0.64x
// single-threaded.)
// Where the whole chain runs in time chunks, the chunks fill the lanes whatever the channels:
// a section costs channels / lanes vector operations a sample. There a tie splits too, for
// what the count leaves out: each chunk's fix-up runs every section of its chain over the
// slowest one's decay, so the cold sections' share of it goes (measured, one thread, split
// against whole: W1's chain at 44.1 kHz on one channel x 10 s 1.6-2.0x, 2 ch x 10 s 1.9x,
// 1 ch x 60 s 1.9x; W4's chain on 2 ch x 3 s 1.1-1.45x, W5 1.1-1.3x).
// One channel otherwise runs a wavefront or a sequential loop, whose cost follows other rules:
// it stays whole.
bool split_pays_on_cpu(const Split& split, const ir::Chain& whole_chain, int channels, const PassContext& context) {
  constexpr int kPassCost = 4;
  // A dynamics stage in sections' worth per vector group (measured: a compressor on 64
  // channels x 10 s, AVX2, 91 ms in float32 against 565 ms in float64, where a section costs
  // about 2 ns per vector group and sample).
  constexpr int kDynamicsCost32 = 12, kDynamicsCost64 = 40;
  const int lanes32 = context.target.lanes(DType::f32), lanes64 = context.target.lanes(DType::f64);
  const int hot_sections = static_cast<int>(std::get<ir::SosCascade>(split.hot.stages[0]).sections.size());
  const int per_item = std::max(channels / std::max(context.binding.batch, 1), 1);
  if (runs_in_time_chunks(whole_chain, per_item, DType::f64, context)) {  // sections and gains only
    auto chunked_ops = [&](int sections, int lanes) { return static_cast<double>(sections) * channels / lanes; };
    const double cold = runs_in_time_chunks(split.cold, per_item, DType::f32, context)
                            ? chunked_ops(split.cold_sections, lanes32)
                            : vector_ops(split.cold_sections, channels, lanes32);
    const double parts = chunked_ops(hot_sections, lanes64) + cold + chunked_ops(kPassCost, lanes32);
    return parts <= chunked_ops(hot_sections + split.cold_sections, lanes64);
  }
  if (channels < 2) return false;
  const double whole =
      vector_ops(hot_sections + split.cold_sections + kDynamicsCost64 * split.dynamics, channels, lanes64);
  const double parts = vector_ops(hot_sections, channels, lanes64) +
                       vector_ops(split.cold_sections + kDynamicsCost32 * split.dynamics, channels, lanes32) +
                       vector_ops(kPassCost, channels, lanes32);
  return parts < whole;
}

}  // namespace

ir::Graph split_precision(const ir::Graph& graph, PassContext& context) {
  if (context.binding.dtype != DType::f32 || context.thresholds.split_error <= 0) return graph;
  const bool gpu = context.target.kind == TargetKind::cuda;
  if (!gpu && context.target.kind != TargetKind::cpu) return graph;
  // Ids are worked out first: a feedback node may read a node after it.
  std::vector<std::optional<Split>> parts(graph.size());
  std::vector<ir::NodeId> moved(graph.size());  // old id -> new id
  // On the CPU a graph that runs in pieces has no chain in time chunks (select_strategy): its
  // chains are weighed without the signal's length, as it schedules them.
  const bool pieces = !gpu && cpu_runs_in_pieces(graph);
  PassContext weighing = context;
  if (pieces) weighing.binding.length_samples.reset();
  int splits = 0;  // on the CPU, each a step more
  ir::NodeId next = 0;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::Node& node = graph.node(id);
    const auto* chain = std::get_if<ir::Chain>(&node.op);
    int channels = std::max(node.type.channels, 1) * std::max(context.binding.batch, 1);  // a batch lays items side by side
    // A fused loop's stages run between its line's read and write: they stay together.
    if (chain && !node.live && !ir::has_loop(chain->stages)) {
      parts[id] = partition(*chain, context);
      // On a GPU the split is inside the kernel, for nothing: the hot sections run first in
      // float64 and the rest in float32 in the same pass over the signal. On the CPU it is a
      // second kernel at another vector width, which must pay for its pass.
      if (parts[id] && !gpu && !split_pays_on_cpu(*parts[id], *chain, channels, weighing)) parts[id].reset();
      if (parts[id] && gpu && cold_part_reads_float64_per_tap(*parts[id])) parts[id].reset();
      if (parts[id] && !cold_part_keeps_quality(*parts[id], context)) parts[id].reset();
      if (parts[id] && !gpu && !cold_part_runs_in_float32(*parts[id], context)) parts[id].reset();
      // A split is a step more, which can put a graph with a fused loop in pieces: then none of
      // its chains would keep the time chunks or the length the split was weighed with (and a
      // fused echo alone ran twice as long in pieces). Such a chain stays whole.
      if (parts[id] && !gpu && !pieces && cpu_runs_in_pieces(graph, splits + 1)) parts[id].reset();
      if (parts[id] && !gpu) ++splits;
    }
    if (parts[id] && !gpu) ++next;  // the hot part comes first
    moved[id] = next++;
  }
  ir::Graph out;
  out.name = graph.name;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    ir::Node node = graph.node(id);
    for (ir::NodeId& operand : node.operands) operand = moved[operand];
    if (parts[id] && gpu) {
      ir::Chain mixed = std::move(parts[id]->hot);
      for (ir::Stage& stage : parts[id]->cold.stages) mixed.stages.push_back(std::move(stage));
      mixed.state_precision = ir::StatePrecision::mixed;
      node.op = std::move(mixed);
    } else if (parts[id]) {
      ir::Node hot = node;  // same input, type and locations
      hot.op = std::move(parts[id]->hot);
      node.operands = {out.add(std::move(hot))};
      node.op = std::move(parts[id]->cold);
    }
    out.add(std::move(node));
  }
  return out;
}

}  // namespace fxc::passes
