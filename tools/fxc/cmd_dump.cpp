// SPDX-License-Identifier: Apache-2.0
// fxc dump: print the graph at a stage of compilation, as text, Graphviz dot or JSON.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "frontend/ast_dump.h"
#include "frontend/fx_file.h"
#include "codegen/cpu/cpu_compiler.h"
#include "codegen/cuda/emit_cuda.h"
#include "ir/export.h"
#include "ir/print.h"
#include "support/float_format.h"
#include "tools/fxc/commands.h"

namespace fxc::cli {
namespace {

struct DumpOptions {
  std::string graph;
  std::string emit = "ir";
  std::string format = "text";
  bool print_after_all = false;
  bool time_passes = false;
  bool locations = true;
  std::vector<std::string> passes;
  double fs_hz = 48000;
  int channels = 1;
  std::string target = "cpu";
  std::string dtype = "f64";
  std::optional<double> seconds;
  std::vector<std::string> thresholds;
  bool llvm_optimized = false;
};

int dump_ast(const DumpOptions& o) {
  DiagnosticEngine diags;
  auto ast = frontend::parse_fx_file(o.graph, diags);
  if (!ast) return report(diags);
  // Names and file names come from users' files: invalid UTF-8 is replaced, not thrown on.
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  if (o.format == "json") std::cout << frontend::ast_to_json(*ast).dump(2, ' ', false, kReplace) << '\n';
  else if (o.format == "dot") std::cout << frontend::ast_to_dot(*ast);
  else std::cout << frontend::ast_to_text(*ast);
  return report(diags);
}

int dump(const DumpOptions& o) {
  if (o.emit == "ast") return dump_ast(o);
  if (!(o.fs_hz > 0 && std::isfinite(o.fs_hz)))
    return user_error("--fs must be a positive number of Hz, got " + format_double(o.fs_hz));
  if (o.channels < 1) return user_error("--channels must be at least 1, got " + std::to_string(o.channels));

  DiagnosticEngine diags;
  std::optional<ir::Graph> graph = load_graph(o.graph, diags);
  if (!graph) return report(diags);

  passes::PipelineOptions pipeline;
  pipeline.print_after_all = o.print_after_all;
  pipeline.time_passes = o.time_passes;
  pipeline.print_locations = o.locations;
  // Pass logs go with a text dump; beside a JSON or dot document they would corrupt it.
  pipeline.log = o.format == "text" ? &std::cout : &std::cerr;
  pipeline.passes = o.passes;
  if (o.emit == "ir" && pipeline.passes.empty()) pipeline.passes = {"infer-types", "design-filters"};
  passes::PassContext context{diags, {o.fs_hz, o.channels, *parse_dtype(o.dtype)}};
  if (o.target == "cuda" || o.emit == "cuda") context.target = passes::cuda_target();
  if (o.seconds) {
    auto samples = samples_for_seconds(*o.seconds, o.fs_hz);
    if (!samples) return user_error(samples.error());
    context.binding.length_samples = *samples;
  }
  if (auto error = apply_thresholds(o.thresholds, context.thresholds)) return user_error(*error);
  auto result = passes::run_pipeline(*graph, context, pipeline);
  if (!result) return report(diags);

  if (o.emit == "cuda") {
    auto source = codegen::emit_cuda_source(*result);
    if (!source) return user_error(source.error());
    std::cout << *source;
    return report(diags);
  }
  if (o.emit == "llvm") {
    auto text = codegen::emit_cpu_llvm_ir(*result, o.llvm_optimized);
    if (!text) return user_error(text.error());
    std::cout << *text;
    return report(diags);
  }
  if (o.format == "json")
    std::cout << ir::to_json(*result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  else if (o.format == "dot") std::cout << ir::to_dot(*result);
  else if (!o.print_after_all) std::cout << ir::to_text(*result, {.locations = o.locations});
  return report(diags);
}

}  // namespace

void add_dump_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<DumpOptions>();
  CLI::App* cmd = app.add_subcommand("dump", "Print a graph at a stage of compilation.");
  cmd->add_option("graph", o->graph, "The .fx graph file")->required();
  cmd->add_option("--emit", o->emit,
                  "What to print: ast (as parsed), ir (built and designed), ir-opt (after all "
                  "passes), llvm (CPU kernels), cuda (CUDA C++ of the kernels; implies --target cuda)")
      ->check(CLI::IsMember({"ast", "ir", "ir-opt", "llvm", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--format", o->format, "text, dot (Graphviz) or json")
      ->check(CLI::IsMember({"text", "dot", "json"}))
      ->capture_default_str();
  cmd->add_flag("--print-after-all", o->print_after_all,
                "Print the IR after every pass ('(unchanged)' when a pass changed nothing)");
  cmd->add_flag("--time-passes", o->time_passes, "Print a table of the time each pass took");
  cmd->add_flag("--optimized", o->llvm_optimized, "With --emit llvm: the IR after LLVM's O3");
  cmd->add_flag("!--no-locations", o->locations, "Leave source locations out of the text IR");
  cmd->add_option("--passes", o->passes, "Run only these passes, in this order (comma-separated)")
      ->delimiter(',');
  cmd->add_option("--fs", o->fs_hz, "Sample rate to bind, in Hz")->capture_default_str();
  cmd->add_option("--channels", o->channels, "Channel count for inputs declared without one")
      ->capture_default_str();
  cmd->add_option("--target", o->target, "Target the strategies are chosen for: cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "Sample type to bind: f32 or f64")
      ->check(CLI::IsMember({"f32", "f64"}))
      ->capture_default_str();
  cmd->add_option("--seconds", o->seconds,
                  "Expected signal length in seconds, for the strategy choice (default: unknown)");
  cmd->add_option("--threshold", o->thresholds,
                  "Override a cost-model threshold: NAME=VALUE (see docs/passes.md)")
      ->allow_extra_args(false);
  cmd->footer(
      "Examples:\n"
      "  fxc dump examples/vocal.fx --emit ast\n"
      "  fxc dump examples/vocal.fx --emit ir --fs 44100 --channels 2\n"
      "  fxc dump examples/vocal.fx --emit ir-opt --print-after-all\n"
      "  fxc dump examples/vocal.fx --emit ir-opt --channels 1 --seconds 600 --threshold chunk_length=32768\n"
      "  fxc dump examples/vocal.fx --format dot | dot -Tsvg > vocal.svg");
  cmd->callback([&action, o] { action = [o] { return dump(*o); }; });
}

}  // namespace fxc::cli
