// SPDX-License-Identifier: Apache-2.0
// The fxc subcommands. Each adds itself to the application; when it is the one chosen on the
// command line, it stores its body in `action`.
#pragma once

#include "tools/fxc/cli_support.h"

namespace fxc::cli {

void add_run_command(CLI::App& app, Action& action);
void add_dump_command(CLI::App& app, Action& action);
void add_freqz_command(CLI::App& app, Action& action);
void add_info_command(CLI::App& app, Action& action);
void add_compile_command(CLI::App& app, Action& action);
void add_cache_command(CLI::App& app, Action& action);
void add_bench_command(CLI::App& app, Action& action);

}  // namespace fxc::cli
