// SPDX-License-Identifier: Apache-2.0
#include "ir/graph_algorithms.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/reverse_graph.hpp>
#include <boost/graph/strong_components.hpp>
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

BoostGraph to_boost(const Graph& graph) {
  BoostGraph g(graph.size());
  for (NodeId id = 0; id < graph.size(); ++id)
    for (NodeId operand : graph.node(id).operands) boost::add_edge(operand, id, g);
  return g;
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

std::optional<NodeId> find_cycle_node(const Graph& graph) {
  if (!operands_in_range(graph)) return std::nullopt;
  BoostGraph g = to_boost(graph);
  std::vector<std::size_t> component(graph.size());
  std::size_t count = boost::strong_components(
      g, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, g)));
  if (count == graph.size()) {
    for (NodeId id = 0; id < graph.size(); ++id)
      for (NodeId operand : graph.node(id).operands)
        if (operand == id) return id;  // a self-loop is a component of one
    return std::nullopt;
  }
  std::vector<std::size_t> sizes(count, 0);
  for (std::size_t c : component) ++sizes[c];
  for (NodeId id = 0; id < graph.size(); ++id)
    if (sizes[component[id]] > 1) return id;
  return std::nullopt;
}

std::optional<std::vector<NodeId>> topological_order(const Graph& graph) {
  if (!operands_in_range(graph) || find_cycle_node(graph)) return std::nullopt;
  // Kahn's algorithm with a min-heap: boost::topological_sort's order depends on DFS details,
  // and dumps must be deterministic and stable under small edits.
  BoostGraph g = to_boost(graph);
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

std::vector<bool> reachable_from(const Graph& graph, const std::vector<NodeId>& sources) {
  if (!operands_in_range(graph)) return std::vector<bool>(graph.size(), false);
  return bfs_marks(to_boost(graph), sources);
}

std::vector<bool> reaching(const Graph& graph, const std::vector<NodeId>& sinks) {
  if (!operands_in_range(graph)) return std::vector<bool>(graph.size(), false);
  BoostGraph g = to_boost(graph);
  return bfs_marks(boost::make_reverse_graph(g), sinks);
}

}  // namespace fxc::ir
