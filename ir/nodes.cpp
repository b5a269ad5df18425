#include "ir/nodes.h"

#include <utility>

namespace fxc::ir {
namespace {

template <std::size_t... I>
bool make_op_impl(std::string_view kind, Op& out, std::index_sequence<I...>) {
  return ((std::variant_alternative_t<I, Op>::kKind == kind
               ? (out.emplace<I>(), true)
               : false) || ...);
}

}  // namespace

std::string_view kind_name(const Op& op) {
  return std::visit([](const auto& payload) { return payload.kKind; }, op);
}

int arity(const Op& op) {
  return std::visit([](const auto& payload) { return payload.kArity; }, op);
}

bool make_op(std::string_view kind, Op& out) {
  return make_op_impl(kind, out, std::make_index_sequence<std::variant_size_v<Op>>());
}

std::vector<std::string_view> kind_names() {
  std::vector<std::string_view> out;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (out.push_back(std::variant_alternative_t<I, Op>::kKind), ...);
  }(std::make_index_sequence<std::variant_size_v<Op>>());
  return out;
}

std::string_view name(DelayUnit unit) { return unit == DelayUnit::samples ? "samples" : "seconds"; }

bool is_specification(const Op& op) {
  if (const auto* delay = std::get_if<Delay>(&op)) return delay->unit == DelayUnit::seconds;
  return std::holds_alternative<IirDesign>(op) || std::holds_alternative<Biquad>(op) ||
         std::holds_alternative<FirDesign>(op);
}

}  // namespace fxc::ir
