// SPDX-License-Identifier: Apache-2.0
// The order a scheduled graph's kernels run in and where each node's value lives, worked out
// once per graph shape so that a run does no graph work: every runner (execute_cpu,
// CpuStream, BlockExecutor) walks the same plan.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/cpu/cpu_compiler.h"
#include "ir/graph.h"
#include "support/expected.h"

namespace fxc {

struct ExecutionPlan {
  /// `feedback`: a feedback node, whose value the runtime copies from its line at the step
  /// and whose operand it writes into the line after the last step of the block.
  /// `route`: a select, matrix or concat, which the runtime runs itself (run_graph.cpp).
  enum class Kind : std::uint8_t { chain, sum, feedback, route };
  struct Step {
    ir::NodeId node;
    Kind kind;
    int slot;               ///< the buffer slot that holds the node's value
    FxcChainKernel kernel;  ///< null for a feedback node and for a chain the runtime runs itself (FFT)
  };
  /// Chains, sums, routing and feedback nodes, each after its operands (a feedback node's
  /// operand aside) and each loop's together (ir::loop_order). Outputs read at the end.
  std::vector<Step> steps;
  std::vector<int> channels;        ///< by node
  std::vector<std::size_t> row;     ///< by node: its first channel pointer in a run's table
  std::size_t table_size = 0;       ///< channel pointers of every node
  /// Buffers shared by nodes whose values do not live at the same time: a chain runs in place
  /// on its operand's buffer when it is that buffer's last reader, a sum on its first
  /// operand's. Each slot holds slot_channels[s] channels.
  std::vector<int> slot_channels;
  std::vector<ir::NodeId> inputs;   ///< the graph's inputs, in order
  std::vector<ir::NodeId> outputs;  ///< the graph's outputs, in order
  /// Per output: the node whose value it is, and whether that node may compute straight into
  /// the caller's output memory (a chain or sum that no earlier output already takes).
  std::vector<ir::NodeId> output_source;
  std::vector<char> output_direct;
  /// Per output: the step that computes its source (steps.size() for an input).
  std::vector<std::size_t> output_step;
  /// Per input: the last step that reads it; steps.size() when an output reads it as it is.
  std::vector<std::size_t> input_last_read;
  std::size_t max_sum_pointers = 0;  ///< operands x channels of the widest sum
  std::size_t max_delay_lines = 0;   ///< channels x delays of the chain with most lines
  /// A loop's steps, steps[begin, end): they run together in blocks of at most the loop's
  /// shortest feedback delay, each block's feedback values read from the lines first and the
  /// feedback nodes' operands written into them after (run_graph.h). Every other step runs
  /// over the whole call at once.
  struct Loop {
    std::size_t begin = 0, end = 0;
    std::vector<std::size_t> feedback_steps;
  };
  std::vector<Loop> loops;
  /// A whole run goes in pieces of a few thousand frames (passes::cpu_runs_in_pieces, the rule
  /// the passes scheduled the chains by: a feedback loop, or a fused one among 3+ steps).
  bool runs_in_pieces = false;
  std::vector<int> step_loop;  ///< by step: its index in loops, or -1
};

/// The samples a loop runs at a time out of `frames`: no more than its shortest feedback
/// delay, `length(i)` for i < `feedbacks` (in samples), and at least one. The CPU runtime
/// and the CUDA executor both cut loops with it.
template <class Length>
std::size_t loop_block_length(std::size_t frames, std::size_t feedbacks, Length length) {
  std::size_t block = frames;
  for (std::size_t i = 0; i < feedbacks; ++i)
    block = std::min(block, static_cast<std::size_t>(std::max<std::int64_t>(length(i), 1)));
  return std::max<std::size_t>(block, 1);
}

/// The plan of `scheduled` (the output of the whole pass pipeline) with its kernels, which
/// must outlive the plan. Fails for a cycle, or (a bug in fxc) a node that no kernel runs.
Expected<ExecutionPlan, std::string> plan_execution(const ir::Graph& scheduled,
                                                    const codegen::CpuKernels& kernels);

}  // namespace fxc
