#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the whole tree with AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/
# (Debug) and runs every CTest test (docs/hardening.md).
#
#   scripts/sanitize.sh [-j JOBS] [CTEST_ARGS...]      e.g. scripts/sanitize.sh -L unit
#
# Fails (exit 1) if the build fails, a test fails, or any process reported anything,
# including the fxc processes the golden and e2e tiers start (see below for how). Prints the
# reports and the time the build and the tests took. Leaks outside fxc are suppressed by
# scripts/lsan.supp, each with its reason. -j, if given, comes first.
# float-cast-overflow is named because GCC leaves it out of -fsanitize=undefined (clang does
# not): a double converted to an integer type it does not fit is undefined behaviour.
# Environment: CXX picks the compiler (default: the system c++, GCC on Debian 12).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

jobs=2
if [[ ${1:-} == -j ]]; then jobs=$2; shift 2; fi
build=$root/build-asan
logs=$build/sanitizer-logs

start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  ${CXX:+-DCMAKE_CXX_COMPILER="$CXX"} \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=undefined,float-cast-overflow" \
  >/dev/null
cmake --build "$build" -j "$jobs"
built=$(date +%s)

rm -rf "$logs"
mkdir -p "$logs"
# The bad-input cases that need file permissions run fxc as nobody when the tests run as root
# (tests/badinput/badinput_test.cpp): their reports must be writable here too.
chmod 1777 "$logs"
# A report must fail a test even where the process that makes it is an fxc whose exit status
# 1 a test expects. ASan and LSan write to files named PREFIX.PID (log_path), which are
# checked below. GCC's libubsan ignores log_path beside ASan and prints to stderr; abort_on_error
# turns its reports into SIGABRT, which no test expects. ctest's full log is searched too.
export ASAN_OPTIONS="log_path=$logs/asan:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1:abort_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
status=0
ctest --test-dir "$build" --output-on-failure --output-log "$build/ctest-output.log" -j "$jobs" \
  --timeout 3600 "$@" || status=$?
done=$(date +%s)

reports=$(find "$logs" -type f | sort)
if grep -qE 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$build/ctest-output.log"; then
  echo "== sanitizer reports in the tests' output ($build/ctest-output.log):"
  grep -E 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$build/ctest-output.log"
  status=1
fi
if [[ -n $reports ]]; then
  echo "== sanitizer reports ($(echo "$reports" | wc -l) files in $logs):"
  for f in $reports; do
    echo "--- $f"
    cat "$f"
  done
  status=1
fi
echo "sanitize.sh: build $((built - start)) s, tests $((done - built)) s, total $((done - start)) s"
if ((status != 0)); then
  echo "sanitize.sh: FAILED" >&2
  exit 1
fi
echo "sanitize.sh: every test passed with no sanitizer report"
