// SPDX-License-Identifier: Apache-2.0
// fxc dump: print the graph at a stage of compilation, as text, Graphviz dot or JSON.
#include <algorithm>
#include <CLI/CLI.hpp>
#include <fxc/fxc.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "frontend/ast_dump.h"
#include "frontend/fx_file.h"
#include "support/deep_stack.h"
#include "support/float_format.h"
#include "tools/fxc/commands.h"

namespace fxc::cli {
namespace {

struct DumpCommandOptions {
  std::string graph;
  std::string emit = "ir";
  std::string format = "text";
  bool print_after_all = false;
  bool time_passes = false;
  bool locations = true;
  std::vector<std::string> passes;
  double fs_hz = 48000;
  int channels = 1;
  bool channels_given = false;  ///< --channels was on the command line
  std::string target = "cpu";
  std::string dtype = "f64";
  std::optional<double> seconds;
  std::vector<std::string> thresholds;
  bool llvm_optimized = false;
  std::vector<std::string> given;  ///< the options on the command line, as written
};

int dump_ast(const DumpCommandOptions& o) {
  // The tree, its JSON and the JSON's text are each as deep as the file nests (to the 1000
  // levels the parser allows), and each is written and freed recursively.
  return on_deep_stack([&] {
    DiagnosticEngine diags;
    auto ast = frontend::parse_fx_file(o.graph, diags);
    if (!ast) return report(diags);
    // Names and file names come from users' files: invalid UTF-8 is replaced, not thrown on.
    if (o.format == "json") std::cout << frontend::ast_to_json_text(*ast) << '\n';
    else if (o.format == "dot") std::cout << frontend::ast_to_dot(*ast);
    else std::cout << frontend::ast_to_text(*ast);
    return report(diags);
  });
}

// An option that changes nothing in the dump asked for is said to be unused (a warning: the
// contract's `dump` takes --fs, --channels, --passes and --print-after-all with any --emit),
// and dropped, so that the library, which refuses such requests, gets none. Options that
// contradict the dump asked for are command-line errors.
DumpCommandOptions applicable(DumpCommandOptions o) {
  auto given = [&](std::string_view name) { return std::find(o.given.begin(), o.given.end(), name) != o.given.end(); };
  // LLVM IR and CUDA C++ are text only: a dot or json request would silently print text.
  if ((o.emit == "llvm" || o.emit == "cuda") && o.format != "text")
    throw UsageError{"--format " + o.format + " applies to --emit ast, ir and ir-opt; --emit " + o.emit +
                     " prints text"};
  if (o.emit == "llvm" && o.target == "cuda")
    throw UsageError{"--emit llvm prints the CPU's kernels; --emit cuda prints the CUDA target's"};
  if (o.emit == "cuda" && given("--target") && o.target == "cpu")
    throw UsageError{"--emit cuda prints the CUDA target's kernels, not --target cpu's (--emit llvm prints the CPU's)"};
  auto unused = [&](const std::string& what, const std::string& why) {
    std::cerr << "warning: " << what << " is not used: " << why << "\n";
  };
  const bool binds = o.emit != "ast";
  const bool runs_passes = o.emit == "ir" || o.emit == "ir-opt";
  const std::string kernels = "--emit " + o.emit + " prints the kernels of the whole pipeline";
  const std::string parsed = "--emit ast prints the file as parsed, before anything is bound";
  if (!runs_passes) {
    if (given("--passes")) unused("--passes", binds ? kernels : parsed);
    if (o.print_after_all) unused("--print-after-all", binds ? kernels : parsed);
    if (o.time_passes) unused("--time-passes", binds ? kernels : parsed);
    o.passes.clear();
    o.print_after_all = o.time_passes = false;
  }
  if (!binds)
    for (const char* name : {"--fs", "--channels", "--seconds", "--threshold", "--target", "--dtype"})
      if (given(name)) unused(name, parsed);
  if (o.llvm_optimized && o.emit != "llvm") unused("--optimized", "it applies to --emit llvm");
  o.llvm_optimized = o.llvm_optimized && o.emit == "llvm";
  if (!o.locations && (o.format != "text" || !runs_passes))
    unused("--no-locations", o.format != "text" ? "--format " + o.format + " always has the locations"
                                                : "it applies to the text IR of --emit ir and ir-opt");
  if (!runs_passes || o.format != "text") o.locations = true;
  return o;
}

int dump(const DumpCommandOptions& given) {
  // Checked for --emit ast too, which binds neither: a bad value is a mistake wherever it goes.
  if (!(given.fs_hz > 0 && std::isfinite(given.fs_hz)))
    return user_error("--fs must be a positive number of Hz, got " + format_double(given.fs_hz));
  if (given.channels < 1) return user_error("--channels must be at least 1, got " + std::to_string(given.channels));
  const DumpCommandOptions o = applicable(given);
  if (o.emit == "ast") return dump_ast(o);
  Options options;
  options.sample_rate_hz = o.fs_hz;
  options.channels = o.channels;
  options.dtype = *parse_dtype(o.dtype);
  options.target = o.target == "cuda" || o.emit == "cuda" ? Target::cuda : Target::cpu;
  if (o.seconds) {
    auto samples = samples_for_seconds(*o.seconds, o.fs_hz);
    if (!samples) return user_error(samples.error());
    options.signal_length = static_cast<std::size_t>(*samples);
  }
  auto thresholds = parse_thresholds(o.thresholds);
  if (!thresholds) return user_error(thresholds.error(), "fxc-threshold");
  options.thresholds = *thresholds;
  options.live_unranged_params = false;  // as fxc run compiles it
  options.compile_kernels = false;       // a dump needs none (nor a GPU for --target cuda)
  options.cache_directory = "none";
  fxc::DumpOptions dump;
  dump.emit = o.emit;
  dump.format = o.format;
  dump.passes = o.passes;
  dump.print_after_all = o.print_after_all;
  dump.time_passes = o.time_passes;
  dump.locations = o.locations;
  dump.llvm_optimized = o.llvm_optimized;
  // Pass logs go with a text dump; beside a JSON or dot document they would corrupt it.
  dump.log = o.format == "text" ? &std::cout : &std::cerr;
  try {
    warn_unused_channels(inspect_graph_file(o.graph), o.channels, o.channels_given);
    Program program = program_from_file(o.graph, options);
    std::cout << program.dump(dump);
    std::cerr << program.warnings();
  } catch (const Error& e) {
    return report(e);
  }
  return kSuccess;
}

}  // namespace

void add_dump_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<DumpCommandOptions>();
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
  cmd->add_flag("--optimized", o->llvm_optimized, "With --emit llvm: the IR after LLVM's O1 pipeline (the one the kernels are compiled with)");
  cmd->add_flag("!--no-locations", o->locations, "Leave source locations out of the text IR");
  cmd->add_option("--passes", o->passes, "Run only these passes, in this order (comma-separated)")
      ->delimiter(',');
  cmd->add_option("--fs", o->fs_hz, "Sample rate to bind, in Hz")->capture_default_str();
  CLI::Option* channels =
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
      "  fxc dump bench/workloads/w5_long_mono.fx --emit ir-opt --channels 1 --seconds 600 --threshold chunk_length=32768\n"
      "  fxc dump examples/vocal.fx --format dot | dot -Tsvg > vocal.svg");
  cmd->callback([&action, o, channels, cmd] {
    o->channels_given = channels->count() > 0;
    for (const CLI::Option* option : cmd->get_options())
      if (option->count() > 0) o->given.push_back(option->get_name());
    action = [o] { return dump(*o); };
  });
}

}  // namespace fxc::cli
