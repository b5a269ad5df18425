// SPDX-License-Identifier: Apache-2.0
#include "ir/nodes.h"

#include <algorithm>
#include <span>
#include <utility>

namespace fxc::ir {
namespace {

template <class V, std::size_t... I>
bool make_op_impl(std::string_view kind, V& out, std::index_sequence<I...>) {
  return ((std::variant_alternative_t<I, V>::kKind == kind ? (out.template emplace<I>(), true)
                                                           : false) ||
          ...);
}

constexpr std::string_view kDelayUnits[] = {"samples", "seconds"};
constexpr std::string_view kStrategies[] = {"none",
                                            "sequential",
                                            "channel_lanes",
                                            "section_wavefront",
                                            "chunked_scan",
                                            "gpu_thread_per_channel",
                                            "gpu_chunked_scan",
                                            "gpu_chunked_wavefront"};
constexpr std::string_view kFirMethods[] = {"none", "direct", "fft_overlap_save"};
constexpr std::string_view kStatePrecisions[] = {"signal", "f64", "mixed", "pairs", "mixed_pairs"};

template <class E>
std::span<const std::string_view> names_of() {
  if constexpr (std::is_same_v<E, DelayUnit>) return kDelayUnits;
  else if constexpr (std::is_same_v<E, IirStrategy>) return kStrategies;
  else if constexpr (std::is_same_v<E, FirMethod>) return kFirMethods;
  else return kStatePrecisions;
}

}  // namespace

std::string_view kind_name(const Op& op) {
  return std::visit([](const auto& payload) { return payload.kKind; }, op);
}

int arity(const Op& op) {
  return std::visit([](const auto& payload) { return payload.kArity; }, op);
}

template <class V>
bool make_op(std::string_view kind, V& out) {
  return make_op_impl(kind, out, std::make_index_sequence<std::variant_size_v<V>>());
}
template bool make_op<Op>(std::string_view, Op&);
template bool make_op<Stage>(std::string_view, Stage&);

std::vector<std::string_view> kind_names() {
  std::vector<std::string_view> out;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (out.push_back(std::variant_alternative_t<I, Op>::kKind), ...);
  }(std::make_index_sequence<std::variant_size_v<Op>>());
  return out;
}

std::string_view name(DelayUnit unit) { return kDelayUnits[static_cast<int>(unit)]; }
std::string_view name(IirStrategy strategy) { return kStrategies[static_cast<int>(strategy)]; }
std::string_view name(FirMethod method) { return kFirMethods[static_cast<int>(method)]; }
std::string_view name(StatePrecision precision) {
  return kStatePrecisions[static_cast<int>(precision)];
}

template <class E>
std::optional<E> parse_ir_enum(std::string_view word) {
  std::span<const std::string_view> names = names_of<E>();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == word) return static_cast<E>(i);
  return std::nullopt;
}
template <class E>
std::vector<std::string_view> ir_enum_names() {
  std::span<const std::string_view> names = names_of<E>();
  return {names.begin(), names.end()};
}
template std::optional<DelayUnit> parse_ir_enum<DelayUnit>(std::string_view);
template std::optional<IirStrategy> parse_ir_enum<IirStrategy>(std::string_view);
template std::optional<FirMethod> parse_ir_enum<FirMethod>(std::string_view);
template std::optional<StatePrecision> parse_ir_enum<StatePrecision>(std::string_view);
template std::vector<std::string_view> ir_enum_names<DelayUnit>();
template std::vector<std::string_view> ir_enum_names<IirStrategy>();
template std::vector<std::string_view> ir_enum_names<FirMethod>();
template std::vector<std::string_view> ir_enum_names<StatePrecision>();

bool has_loop(const std::vector<Stage>& stages) {
  for (const Stage& s : stages)
    if (std::holds_alternative<LoopRead>(s)) return true;
  return false;
}

bool partial_lanes_vectorize(const std::vector<Stage>& stages, bool float64, bool vector_calls) {
  for (const Stage& s : stages) {
    if (std::holds_alternative<FirFilter>(s) || std::holds_alternative<Delay>(s) ||
        std::holds_alternative<LoopRead>(s) || std::holds_alternative<LoopWrite>(s))
      return false;
    const bool scalar_calls = float64 && !vector_calls;
    if (auto* d = std::get_if<Dynamics>(&s); d && (d->lookahead > 0 || scalar_calls)) return false;
    if (scalar_calls && std::holds_alternative<Tanh>(s)) return false;
  }
  return true;
}

bool fir_or_memoryless(const Stage& stage) {
  return std::holds_alternative<FirFilter>(stage) || std::holds_alternative<Gain>(stage) ||
         std::holds_alternative<Clip>(stage) || std::holds_alternative<Tanh>(stage);
}

bool fir_and_memoryless(const std::vector<Stage>& stages) {
  return std::all_of(stages.begin(), stages.end(), fir_or_memoryless) &&
         std::any_of(stages.begin(), stages.end(), [](const Stage& s) { return std::holds_alternative<FirFilter>(s); });
}

int wavefront_steps(const std::vector<Stage>& stages) {
  int steps = 0;
  for (const Stage& s : stages)
    steps += std::holds_alternative<SosCascade>(s) ? static_cast<int>(std::get<SosCascade>(s).sections.size()) : 1;
  return steps;
}

std::size_t scanned_prefix(const std::vector<Stage>& stages) {
  std::size_t prefix = 0;
  bool pointwise = false;  // a clip or tanh seen: no section may follow
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const Stage& s = stages[i];
    if (std::holds_alternative<SosCascade>(s)) {
      if (pointwise) return 0;
      prefix = i + 1;
    } else if (std::holds_alternative<Clip>(s) || std::holds_alternative<Tanh>(s)) {
      pointwise = true;
    } else if (!std::holds_alternative<Gain>(s)) {
      return 0;
    }
  }
  return prefix;
}

bool is_routing(const Op& op) {
  return std::holds_alternative<Select>(op) || std::holds_alternative<Matrix>(op) || std::holds_alternative<Concat>(op) ||
         std::holds_alternative<Multiply>(op) || std::holds_alternative<Link>(op);
}

bool has_forward_operands(const Op& op) { return !std::holds_alternative<Feedback>(op); }

bool is_specification(const Op& op) {
  if (const auto* delay = std::get_if<Delay>(&op)) return delay->unit == DelayUnit::seconds;
  if (const auto* feedback = std::get_if<Feedback>(&op)) return feedback->unit == DelayUnit::seconds;
  return std::holds_alternative<IirDesign>(op) || std::holds_alternative<Biquad>(op) ||
         std::holds_alternative<FirDesign>(op);
}

}  // namespace fxc::ir
