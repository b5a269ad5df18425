// fxc: the command-line driver. Parses the command line, runs one subcommand, and maps what
// happened to the exit statuses of the contract (0 ok, 1 user error, 2 usage, 3 bug).
#include <CLI/CLI.hpp>
#include <iostream>

#include "tools/fxc/commands.h"

int main(int argc, char** argv) {
  using namespace fxc::cli;
  CLI::App app{"fxc " + version_string() +
               ": a compiler for audio signal-processing graphs.\n"
               "Graphs are written in .fx files (see docs/fx-language.md)."};
  app.set_version_flag("--version", "fxc " + version_string());
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  fxc run examples/vocal.fx -i voice.wav -o out.wav\n"
      "  fxc dump examples/vocal.fx --emit ir --fs 44100\n"
      "  fxc freqz examples/eq.fx --fs 48000 -o eq.svg\n"
      "  fxc info\n"
      "Run 'fxc SUBCOMMAND --help' for the options of each subcommand.");

  Action action;
  add_run_command(app, action);
  add_dump_command(app, action);
  add_freqz_command(app, action);
  add_info_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kUsageError;
  }

  try {
    return action ? action() : kUsageError;
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.message << "\nRun with --help for more information.\n";
    return kUsageError;
  } catch (const fxc::InternalError& e) {
    std::cerr << e.what() << '\n';
    return kInternalError;
  } catch (const std::exception& e) {
    std::cerr << "internal error (a bug in fxc, please report it): " << e.what() << '\n';
    return kInternalError;
  }
}
