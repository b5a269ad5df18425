// SPDX-License-Identifier: Apache-2.0
#include "ir/hash.h"

#include "ir/print.h"
#include "support/sha256.h"

namespace fxc::ir {

// Both hashes are of the canonical text, so what is hashed is exactly what a dump shows.
std::string structural_hash(const Graph& graph) {
  return sha256_hex(to_text(graph, {.locations = false, .shape_only = true}));
}

std::string value_hash(const Graph& graph) {
  Graph unnamed = graph;
  unnamed.name.clear();
  for (NodeId id = 0; id < unnamed.size(); ++id)
    std::visit(
        [](auto& payload) {
          using P = std::decay_t<decltype(payload)>;
          P::fields(payload, [](FieldRole role, std::string_view, auto& field) {
            if constexpr (std::is_same_v<std::decay_t<decltype(field)>, std::string>)
              if (role == FieldRole::label) field.clear();
          });
        },
        unnamed.node(id).op);
  return sha256_hex(to_text(unnamed, {.locations = false, .shape_only = false}));
}

}  // namespace fxc::ir
