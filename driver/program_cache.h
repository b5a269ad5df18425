// SPDX-License-Identifier: Apache-2.0
// Programs made from .fx text, by their text and options: making the same Program again in a
// process copies the first (microseconds) instead of running the pass pipeline and the live
// parameter analysis again (a kernel-cache memory hit still costs those: 0.1-2 ms).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "driver/compiled_program.h"

namespace fxc::driver {

/// A new Impl equal to the one `make` made for the same `text`, `name` and `options` earlier
/// in this process, with the same texts in the files it imports (read again each time), or
/// `make()`'s (remembered for next time). Options that print while
/// compiling (time_passes with a log) always make a new one.
std::shared_ptr<Program::Impl> cached_program(std::string_view text, const std::string& name, const Options& options,
                                              const std::function<std::shared_ptr<Program::Impl>()>& make);

/// Forgets every remembered Program (clear_kernel_memory_cache() calls it).
void clear_program_cache();

}  // namespace fxc::driver
