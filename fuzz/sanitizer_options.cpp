// SPDX-License-Identifier: Apache-2.0
// Sanitizer defaults built into every fuzz target, so that a report stops the run and names
// the input whoever starts the binary (libFuzzer, CTest's replay, a person reproducing a
// crash). The fuzz build compiles UBSan recoverable so that scripts/run-fuzzers.sh -k can
// suppress the reports of bugs already known (fuzz/known-bugs.supp); without a suppression,
// halt_on_error makes every report fatal. The environment's UBSAN_OPTIONS come after these.
extern "C" const char* __ubsan_default_options() {
  return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}
