// SPDX-License-Identifier: Apache-2.0
#include "ir/graph_algorithms.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/reverse_graph.hpp>
#include <boost/graph/strong_components.hpp>
#include <algorithm>
#include <queue>

namespace fxc::ir {
namespace {

// Edges run from an operand to the node that reads it.
using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

bool operands_in_range(const Graph& graph) {
  for (const Node& node : graph.nodes())
    for (NodeId operand : node.operands)
      if (operand >= graph.size()) return false;
  return true;
}

// `back_edges`: whether feedback nodes' operand edges are in.
BoostGraph to_boost(const Graph& graph, bool back_edges) {
  BoostGraph g(graph.size());
  for (NodeId id = 0; id < graph.size(); ++id)
    if (back_edges || has_forward_operands(graph.node(id).op))
      for (NodeId operand : graph.node(id).operands) boost::add_edge(operand, id, g);
  return g;
}

// The strongly connected component of each node, and how many nodes each has.
std::pair<std::vector<std::size_t>, std::vector<std::size_t>> components(const BoostGraph& g) {
  std::vector<std::size_t> component(boost::num_vertices(g));
  std::size_t count = boost::strong_components(
      g, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, g)));
  std::vector<std::size_t> sizes(count, 0);
  for (std::size_t c : component) ++sizes[c];
  return {component, sizes};
}

bool reads_itself(const Graph& graph, NodeId id, bool back_edges) {
  if (!back_edges && !has_forward_operands(graph.node(id).op)) return false;
  const auto& operands = graph.node(id).operands;
  return std::find(operands.begin(), operands.end(), id) != operands.end();
}

template <class G>
std::vector<bool> bfs_marks(const G& g, const std::vector<NodeId>& roots) {
  std::vector<bool> seen(boost::num_vertices(g), false);
  struct Marker : boost::default_bfs_visitor {
    std::vector<bool>* seen;
    void discover_vertex(std::size_t v, const G&) const { (*seen)[v] = true; }
  } marker;
  marker.seen = &seen;
  for (NodeId root : roots)
    if (root < seen.size() && !seen[root]) {
      std::vector<boost::default_color_type> colours(boost::num_vertices(g));
      auto colour_map = boost::make_iterator_property_map(
          colours.begin(), boost::get(boost::vertex_index, g));
      // Vertices already marked are painted black so each search stops at them.
      for (std::size_t v = 0; v < seen.size(); ++v)
        if (seen[v]) colours[v] = boost::black_color;
      boost::breadth_first_visit(g, root, boost::visitor(marker).color_map(colour_map));
    }
  return seen;
}

}  // namespace

std::vector<NodeId> find_cycle(const Graph& graph, bool through_feedback, const std::vector<bool>* within) {
  if (!operands_in_range(graph)) return {};
  BoostGraph g(graph.size());
  for (NodeId id = 0; id < graph.size(); ++id)
    if ((through_feedback || has_forward_operands(graph.node(id).op)) && (!within || (*within)[id]))
      for (NodeId operand : graph.node(id).operands)
        if (!within || (*within)[operand]) boost::add_edge(operand, id, g);
  auto [component, sizes] = components(g);
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (within && !(*within)[id]) continue;
    if (reads_itself(graph, id, through_feedback)) return {id};
    if (sizes[component[id]] < 2) continue;
    // Walk operand edges inside the component from `id` until a node repeats: the walk's
    // tail from that node's first visit is a cycle. Every node of a component has an operand
    // in it, so the walk never gets stuck.
    std::vector<NodeId> walk;
    std::vector<std::size_t> seen_at(graph.size(), static_cast<std::size_t>(-1));
    NodeId at = id;
    while (seen_at[at] == static_cast<std::size_t>(-1)) {
      seen_at[at] = walk.size();
      walk.push_back(at);
      NodeId next = at;
      for (NodeId operand : graph.node(at).operands)
        if (component[operand] == component[id] && (through_feedback || has_forward_operands(graph.node(at).op))) {
          next = operand;
          break;
        }
      at = next;
    }
    return {walk.begin() + static_cast<std::ptrdiff_t>(seen_at[at]), walk.end()};
  }
  return {};
}

std::vector<std::vector<NodeId>> loops(const Graph& graph) {
  if (!operands_in_range(graph)) return {};
  BoostGraph g = to_boost(graph, true);
  auto [component, sizes] = components(g);
  std::vector<std::vector<NodeId>> by_component(sizes.size());
  for (NodeId id = 0; id < graph.size(); ++id)
    if (sizes[component[id]] > 1 || reads_itself(graph, id, true)) by_component[component[id]].push_back(id);
  std::vector<std::vector<NodeId>> out;
  for (auto& nodes : by_component)
    if (!nodes.empty()) out.push_back(std::move(nodes));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return out;
}

std::optional<std::vector<NodeId>> topological_order(const Graph& graph) {
  if (!operands_in_range(graph) || !find_cycle(graph).empty()) return std::nullopt;
  // Kahn's algorithm with a min-heap: boost::topological_sort's order depends on DFS details,
  // and dumps must be deterministic and stable under small edits.
  BoostGraph g = to_boost(graph, false);
  std::vector<std::size_t> pending(graph.size());
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId id = 0; id < graph.size(); ++id) {
    pending[id] = boost::in_degree(id, g);
    if (pending[id] == 0) ready.push(id);
  }
  std::vector<NodeId> order;
  while (!ready.empty()) {
    NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (auto [e, end] = boost::out_edges(id, g); e != end; ++e) {
      NodeId user = static_cast<NodeId>(boost::target(*e, g));
      if (--pending[user] == 0) ready.push(user);
    }
  }
  return order;
}

std::optional<LoopOrder> loop_order(const Graph& graph) {
  auto order = topological_order(graph);
  if (!order) return std::nullopt;
  LoopOrder out;
  out.loop.assign(graph.size(), -1);
  std::vector<std::vector<NodeId>> found = loops(graph);
  for (std::size_t l = 0; l < found.size(); ++l)
    for (NodeId id : found[l]) out.loop[id] = static_cast<int>(l);
  int next = static_cast<int>(found.size());
  for (NodeId id = 0; id < graph.size(); ++id)
    if (!has_forward_operands(graph.node(id).op) && out.loop[id] < 0) out.loop[id] = next++;
  // Kahn's algorithm on the graph with each loop contracted to one vertex: a vertex is ready
  // when every operand from outside it is placed; a loop is placed whole, in `order`'s order.
  // Ties go to the smallest id, as in topological_order.
  auto vertex = [&](NodeId id) { return out.loop[id] >= 0 ? static_cast<std::size_t>(graph.size()) + out.loop[id] : id; };
  std::vector<std::size_t> pending(graph.size() + static_cast<std::size_t>(next), 0);
  std::vector<std::vector<NodeId>> users(pending.size());
  std::vector<std::vector<NodeId>> members(static_cast<std::size_t>(next));
  for (NodeId id : *order)
    if (out.loop[id] >= 0) members[static_cast<std::size_t>(out.loop[id])].push_back(id);
  std::vector<NodeId> smallest(pending.size(), static_cast<NodeId>(graph.size()));
  for (NodeId id = 0; id < graph.size(); ++id) {
    smallest[vertex(id)] = std::min(smallest[vertex(id)], id);
    for (NodeId operand : graph.node(id).operands) {
      if (vertex(operand) == vertex(id)) continue;
      ++pending[vertex(id)];
      users[vertex(operand)].push_back(id);
    }
  }
  using Item = std::pair<NodeId, std::size_t>;  // (smallest id, vertex)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (std::size_t v = 0; v < pending.size(); ++v)
    if (smallest[v] < graph.size() && pending[v] == 0) ready.push({smallest[v], v});
  while (!ready.empty()) {
    std::size_t v = ready.top().second;
    ready.pop();
    std::vector<NodeId> placed = v < graph.size() ? std::vector<NodeId>{static_cast<NodeId>(v)} : members[v - graph.size()];
    out.order.insert(out.order.end(), placed.begin(), placed.end());
    for (NodeId user : users[v])
      if (--pending[vertex(user)] == 0) ready.push({smallest[vertex(user)], vertex(user)});
  }
  if (out.order.size() != graph.size()) return std::nullopt;
  return out;
}

std::vector<bool> reachable_from(const Graph& graph, const std::vector<NodeId>& sources) {
  if (!operands_in_range(graph)) return std::vector<bool>(graph.size(), false);
  return bfs_marks(to_boost(graph, true), sources);
}

std::vector<bool> reaching(const Graph& graph, const std::vector<NodeId>& sinks) {
  if (!operands_in_range(graph)) return std::vector<bool>(graph.size(), false);
  BoostGraph g = to_boost(graph, true);
  return bfs_marks(boost::make_reverse_graph(g), sinks);
}

std::vector<std::int64_t> lookahead_latency(const Graph& graph) {
  std::vector<std::int64_t> latency(graph.size(), 0);
  std::optional<std::vector<NodeId>> order = topological_order(graph);
  if (!order) return latency;
  auto own = [](const Dynamics& d) -> std::int64_t {
    return d.type == design::DynamicsType::limiter && d.unit == DelayUnit::samples ? static_cast<std::int64_t>(d.lookahead)
                                                                                    : 0;
  };
  // A node that no input reaches but through a feedback edge (a loop's body: the delayed
  // output it reads) is no path from the inputs at all: its limiters lengthen the loop, not
  // the output's lateness. kUnreached marks it, and counts as nothing at the end.
  constexpr std::int64_t kUnreached = -1;
  for (NodeId id : *order) {
    const Node& node = graph.node(id);
    std::int64_t in = node.operands.empty() ? 0 : kUnreached;
    if (has_forward_operands(node.op))
      for (NodeId operand : node.operands) in = std::max(in, latency[operand]);
    if (in != kUnreached) {
      if (const auto* d = std::get_if<Dynamics>(&node.op)) in += own(*d);
      // In a fused loop the stages from loop_read to loop_write are its body, as above.
      if (const auto* chain = std::get_if<Chain>(&node.op)) {
        bool in_body = false;
        for (const Stage& stage : chain->stages) {
          if (std::holds_alternative<LoopRead>(stage)) in_body = true;
          if (std::holds_alternative<LoopWrite>(stage)) in_body = false;
          if (const auto* d = std::get_if<Dynamics>(&stage); d && !in_body) in += own(*d);
        }
      }
    }
    latency[id] = in;
  }
  for (std::int64_t& l : latency) l = std::max<std::int64_t>(l, 0);
  return latency;
}

}  // namespace fxc::ir
