// SPDX-License-Identifier: Apache-2.0
// fxc: the command-line driver. Parses the command line, runs one subcommand, and maps what
// happened to the exit statuses of the contract (0 ok, 1 user error, 2 usage, 3 bug).
#include <CLI/CLI.hpp>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <malloc.h>
#include <new>

#include "support/file_io.h"
#include "support/strings.h"

#include "tools/fxc/commands.h"

namespace {

// Ctrl-C, a kill or a closed terminal: the half-written temporary and pending files go (they
// stayed, hidden, up to the size of the outputs), then the signal ends the process as it would
// have, with the shell's status for it; outputs being renamed into place are placed first.
extern "C" void remove_unfinished_files_and_end(int signal_number) { fxc::end_interrupted_process(signal_number); }

void handle_signals() {
  // A write past the file-size limit (ulimit -f) or into a closed pipe fails with EFBIG or
  // EPIPE and is reported as any failed write is (exit status 1, nothing half-written left),
  // instead of killing the process without a word (exit status 153 or 141).
  ::signal(SIGXFSZ, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  struct sigaction interrupted {};
  interrupted.sa_handler = remove_unfinished_files_and_end;
  sigemptyset(&interrupted.sa_mask);
  // A signal the caller ignores stays ignored: `nohup fxc ...` must outlive the terminal, and
  // a script's `fxc ... &` ignores SIGINT.
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction before {};
    if (::sigaction(signal_number, nullptr, &before) == 0 && before.sa_handler == SIG_IGN) continue;
    ::sigaction(signal_number, &interrupted, nullptr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fxc::cli;
  handle_signals();
  // Signals are large and short-lived: keep big blocks in the heap for reuse instead of
  // returning them to the kernel after each use, which made every run page-fault its
  // buffers in again (half of a batch run's time).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  CLI::App app{"fxc " + version_string() +
               ": a compiler for audio signal-processing graphs.\n"
               "Graphs are written in .fx files (see docs/fx-language.md)."};
  app.set_version_flag("--version", "fxc " + version_string());
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  fxc run examples/vocal.fx -i voice.wav -o out.wav\n"
      "  fxc dump examples/vocal.fx --emit ir --fs 44100\n"
      "  fxc freqz examples/crossover.fx --fs 48000 -o crossover.svg\n"
      "  fxc compile examples/vocal.fx && fxc bench examples/vocal.fx --channels 2\n"
      "  fxc info\n"
      "Run 'fxc SUBCOMMAND --help' for the options of each subcommand.");

  Action action;
  add_run_command(app, action);
  add_compile_command(app, action);
  add_dump_command(app, action);
  add_freqz_command(app, action);
  add_bench_command(app, action);
  add_cache_command(app, action);
  add_info_command(app, action);

  // CLI11 says only "A subcommand is required" for a mistyped one; name it and suggest.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string_view> known;
    for (const CLI::App* sub : app.get_subcommands({})) known.push_back(sub->get_name());
    if (std::find(known.begin(), known.end(), argv[1]) == known.end()) {
      std::cerr << "error: unknown subcommand '" << argv[1] << "'";
      if (auto near = fxc::nearest_name(argv[1], known)) std::cerr << " (did you mean '" << *near << "'?)";
      std::cerr << "\nRun with --help for more information.\n";
      return kUsageError;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kUsageError;
  }

  // An empty value ('-o ""', a script's unset variable) would read as the option not given:
  // --save-state '' would save nothing and --load-state '' start from silence, silently.
  for (const CLI::App* sub : app.get_subcommands())
    for (const CLI::Option* option : sub->get_options())
      if (option->count() > 0)
        for (const std::string& value : option->results())
          if (value.empty()) {
            std::cerr << "error: " << option->get_name() << " was given an empty value\n"
                      << "Run with --help for more information.\n";
            return kUsageError;
          }

  try {
    const int status = action ? action() : kUsageError;
    // What went to standard output through std::cout (dump, freqz to a pipe, cache list) is
    // checked as run -o - checks its writes: a reader gone (SIGPIPE is ignored) or a full disk
    // is a failed write, not a success.
    errno = 0;
    std::cout.flush();
    if (!std::cout) {
      const int error = errno;
      std::cerr << "error: cannot write '<stdout>': " << (error ? std::strerror(error) : "the write failed (a reader that went away, a full disk)") << '\n';
      return status == kSuccess ? kUserError : status;
    }
    return status;
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.message << '\n';
    if (e.help_hint) std::cerr << "Run with --help for more information.\n";
    return kUsageError;
  } catch (const fxc::InternalError& e) {
    std::cerr << e.what() << '\n';
    return kInternalError;
  } catch (const std::bad_alloc&) {
    // Not a bug: the signals (inputs, outputs, one buffer per live node) did not fit.
    std::cerr << "error: out of memory: the signals of this run do not fit in the memory "
                 "available (shorter or fewer inputs, or --block, need less)\n";
    return kUserError;
  } catch (const std::exception& e) {
    std::cerr << "internal error (a bug in fxc, please report it): " << e.what() << '\n';
    return kInternalError;
  }
}
