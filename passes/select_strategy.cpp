#include "passes/select_strategy.h"

#include "passes/cost_model.h"

namespace fxc::passes {

ir::Graph select_strategy(const ir::Graph& graph, PassContext& context) {
  ir::Graph out = graph;
  for (ir::NodeId id = 0; id < out.size(); ++id) {
    auto* chain = std::get_if<ir::Chain>(&out.node(id).op);
    if (!chain) continue;
    int sections = 0;
    std::size_t max_taps = 0;
    bool linear = true;  // only sections and gains: time can be cut into chunks
    for (const ir::Stage& stage : chain->stages) {
      linear = linear && (std::holds_alternative<ir::SosCascade>(stage) ||
                          std::holds_alternative<ir::Gain>(stage));
      if (auto* sos = std::get_if<ir::SosCascade>(&stage))
        sections += static_cast<int>(sos->sections.size());
      if (auto* fir = std::get_if<ir::FirFilter>(&stage)) max_taps = std::max(max_taps, fir->taps.size());
    }
    Schedule s = choose_schedule(sections, max_taps, out.node(id).type.channels, linear, context);
    chain->strategy = s.strategy;
    chain->chunk_length = s.chunk_length;
    chain->fir_method = s.fir_method;
    chain->fft_block = s.fft_block;
    chain->reason = s.reason;
  }
  return out;
}

}  // namespace fxc::passes
