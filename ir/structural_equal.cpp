// SPDX-License-Identifier: Apache-2.0
#include "ir/structural_equal.h"

#include <cmath>
#include <map>

#include "ir/field_text.h"
#include "support/float_format.h"

namespace fxc::ir {
namespace {

// Splits field text into tokens: numbers, words, and single punctuation characters.
std::vector<std::string> tokens(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) out.push_back(current), current.clear();
  };
  for (char c : text) {
    if (c == ',' || c == '[' || c == ']' || c == '{' || c == '}' || c == '=' || c == ' ') {
      flush();
      if (c != ' ') out.emplace_back(1, c);
    } else {
      current += c;
    }
  }
  flush();
  return out;
}

bool close(const std::string& x, const std::string& y, double tolerance) {
  if (x == y) return true;
  auto a = parse_double(x), b = parse_double(y);
  if (!a || !b) return false;
  return std::abs(*a - *b) <= tolerance * std::max(std::abs(*a), std::abs(*b));
}

class Comparer {
 public:
  Comparer(const Graph& a, const Graph& b, double tolerance, std::string* why)
      : a_(a), b_(b), tolerance_(tolerance), why_(why) {}

  bool run() {
    std::vector<NodeId> oa = a_.outputs(), ob = b_.outputs();
    if (oa.size() != ob.size()) return fail("the graphs have " + std::to_string(oa.size()) +
                                            " and " + std::to_string(ob.size()) + " outputs");
    for (std::size_t i = 0; i < oa.size(); ++i)
      if (!same(oa[i], ob[i])) return false;
    return true;
  }

 private:
  bool same(NodeId x, NodeId y) {
    if (auto it = matched_.find(x); it != matched_.end())
      return it->second == y || fail("%" + std::to_string(x) + " corresponds to two nodes");
    const Node& nx = a_.node(x);
    const Node& ny = b_.node(y);
    std::string where = "%" + std::to_string(x) + " vs %" + std::to_string(y) + ": ";
    if (nx.op.index() != ny.op.index())
      return fail(where + std::string(kind_name(nx.op)) + " vs " + std::string(kind_name(ny.op)));
    if (nx.type != ny.type) return fail(where + "types differ");
    std::string fx = std::visit([](const auto& p) { return fields_text(p, false); }, nx.op);
    std::string fy = std::visit([](const auto& p) { return fields_text(p, false); }, ny.op);
    std::vector<std::string> tx = tokens(fx), ty = tokens(fy);
    bool fields_equal = tx.size() == ty.size();
    for (std::size_t i = 0; fields_equal && i < tx.size(); ++i)
      fields_equal = close(tx[i], ty[i], tolerance_);
    if (!fields_equal) return fail(where + "{" + fx + "} vs {" + fy + "}");
    if (nx.operands.size() != ny.operands.size()) return fail(where + "operand counts differ");
    matched_[x] = y;
    for (std::size_t i = 0; i < nx.operands.size(); ++i)
      if (!same(nx.operands[i], ny.operands[i])) return false;
    return true;
  }

  bool fail(const std::string& message) {
    if (why_ && why_->empty()) *why_ = message;
    return false;
  }

  const Graph& a_;
  const Graph& b_;
  double tolerance_;
  std::string* why_;
  std::map<NodeId, NodeId> matched_;
};

}  // namespace

bool structurally_equal(const Graph& a, const Graph& b, double relative_tolerance,
                        std::string* why) {
  return Comparer(a, b, relative_tolerance, why).run();
}

}  // namespace fxc::ir
