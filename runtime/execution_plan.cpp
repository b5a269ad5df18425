// SPDX-License-Identifier: Apache-2.0
#include "runtime/execution_plan.h"

#include <algorithm>

#include "codegen/chain_layout.h"
#include "ir/graph_algorithms.h"
#include "passes/cost_model.h"

namespace fxc {

// Algorithm:
//  1. Steps: ir::loop_order without inputs and outputs; each loop's steps are one region.
//  2. Last use of each node: the last step reading it, or "the end" for an output's operand
//     (outputs are written after every step) and for a feedback node's (its line is written
//     after every step).
//  3. Slots, greedily along the steps: a step takes its operand's slot when it is that slot's
//     last reader (chains; a sum only its first operand's), else a free slot or a new one;
//     then the slots of operands read for the last time are freed, and a value no one reads
//     frees its own.
Expected<ExecutionPlan, std::string> plan_execution(const ir::Graph& g, const codegen::CpuKernels& kernels) {
  ExecutionPlan plan;
  auto loop_order = ir::loop_order(g);
  if (!loop_order) return Unexpected{std::string("the graph has a cycle without a feedback node")};
  const std::vector<ir::NodeId>* order = &loop_order->order;
  plan.inputs = g.inputs();
  plan.outputs = g.outputs();
  plan.channels.resize(g.size());
  plan.row.resize(g.size());
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    plan.channels[id] = g.node(id).type.channels;
    plan.row[id] = plan.table_size;
    plan.table_size += static_cast<std::size_t>(std::max(plan.channels[id], 0));
  }

  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> step_of(g.size(), kNone);
  for (ir::NodeId id : *order) {
    const ir::Node& node = g.node(id);
    if (ir::holds<ir::Input>(node) || ir::holds<ir::Output>(node)) continue;
    ExecutionPlan::Step step{id, ExecutionPlan::Kind::chain, -1, nullptr};
    if (const auto* chain = std::get_if<ir::Chain>(&node.op)) {
      if (!codegen::runs_in_runtime(*chain)) step.kernel = kernels.kernel(id);
      else if (codegen::compute_dtype(*chain, node.type.dtype) != node.type.dtype)
        return Unexpected{"internal error (a bug in fxc): FFT convolution scheduled in float64 state for the "
                          "float32 chain %" + std::to_string(id)};
      std::size_t delays = static_cast<std::size_t>(codegen::layout_of(*chain).delay_count);
      plan.max_delay_lines = std::max(plan.max_delay_lines, delays * static_cast<std::size_t>(plan.channels[id]));
    } else if (ir::is_routing(node.op)) {
      step.kind = ExecutionPlan::Kind::route;
    } else if (ir::holds<ir::Feedback>(node)) {
      step.kind = ExecutionPlan::Kind::feedback;
    } else if (ir::holds<ir::Sum>(node)) {
      step.kind = ExecutionPlan::Kind::sum;
      step.kernel = kernels.kernel(id);
      plan.max_sum_pointers = std::max(plan.max_sum_pointers,
                                       node.operands.size() * static_cast<std::size_t>(plan.channels[id]));
    } else {
      return Unexpected{"internal error (a bug in fxc): node %" + std::to_string(id) + " (" +
                        std::string(ir::kind_name(node.op)) + ") was not scheduled into a kernel"};
    }
    if (!step.kernel && step.kind != ExecutionPlan::Kind::feedback && step.kind != ExecutionPlan::Kind::route &&
        !(step.kind == ExecutionPlan::Kind::chain && codegen::runs_in_runtime(std::get<ir::Chain>(node.op))))
      return Unexpected{"internal error (a bug in fxc): no kernel for " +
                        std::string(step.kind == ExecutionPlan::Kind::sum ? "sum" : "chain") + " %" +
                        std::to_string(id)};
    step_of[id] = plan.steps.size();
    // Loops, contiguous in the order: a step of the same loop as the last one extends it.
    const int loop = loop_order->loop[id];
    int region = -1;
    if (loop >= 0) {
      if (plan.steps.empty() || plan.step_loop.back() < 0 ||
          loop_order->loop[plan.steps.back().node] != loop) {
        plan.loops.push_back({plan.steps.size(), plan.steps.size(), {}});
      }
      region = static_cast<int>(plan.loops.size()) - 1;
      plan.loops.back().end = plan.steps.size() + 1;
      if (step.kind == ExecutionPlan::Kind::feedback) plan.loops.back().feedback_steps.push_back(plan.steps.size());
    }
    plan.step_loop.push_back(region);
    plan.steps.push_back(step);
  }

  const std::size_t end = plan.steps.size();
  std::vector<std::size_t> last_use(g.size(), kNone);
  auto use = [&](ir::NodeId id, std::size_t at) {
    last_use[id] = last_use[id] == kNone ? at : std::max(last_use[id], at);
  };
  for (std::size_t s = 0; s < end; ++s)
    for (ir::NodeId operand : g.node(plan.steps[s].node).operands)
      use(operand, plan.steps[s].kind == ExecutionPlan::Kind::feedback ? end : s);
  for (ir::NodeId o : plan.outputs) use(g.node(o).operands[0], end);

  std::vector<int> slot_of(g.size(), -1);
  std::vector<int> free_slots;
  for (std::size_t s = 0; s < end; ++s) {
    ExecutionPlan::Step& step = plan.steps[s];
    const ir::Node& node = g.node(step.node);
    ir::NodeId head = node.operands[0];
    // In place only where channel n of the value is channel n of the operand's.
    const bool in_place = step.kind == ExecutionPlan::Kind::chain || step.kind == ExecutionPlan::Kind::sum;
    if (in_place && slot_of[head] >= 0 && last_use[head] == s) {
      step.slot = slot_of[head];
    } else if (!free_slots.empty()) {
      step.slot = free_slots.back();
      free_slots.pop_back();
    } else {
      step.slot = static_cast<int>(plan.slot_channels.size());
      plan.slot_channels.push_back(0);
    }
    slot_of[step.node] = step.slot;
    plan.slot_channels[step.slot] = std::max(plan.slot_channels[step.slot], plan.channels[step.node]);
    for (ir::NodeId operand : step.kind == ExecutionPlan::Kind::feedback ? std::vector<ir::NodeId>{} : node.operands) {
      int slot = slot_of[operand];
      if (slot >= 0 && slot != step.slot && last_use[operand] == s &&
          std::find(free_slots.begin(), free_slots.end(), slot) == free_slots.end())
        free_slots.push_back(slot);
    }
    if (last_use[step.node] == kNone) free_slots.push_back(step.slot);
  }

  for (ir::NodeId i : plan.inputs) plan.input_last_read.push_back(last_use[i] == kNone ? 0 : last_use[i]);
  std::vector<char> taken(g.size(), 0);
  for (ir::NodeId o : plan.outputs) {
    ir::NodeId source = g.node(o).operands[0];
    bool computed = step_of[source] != kNone;
    plan.output_source.push_back(source);
    plan.output_step.push_back(computed ? step_of[source] : end);
    plan.output_direct.push_back(computed && !taken[source]);
    taken[source] = 1;
  }
  plan.runs_in_pieces = passes::cpu_runs_in_pieces(g);
  return plan;
}

}  // namespace fxc
