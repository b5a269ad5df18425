#!/usr/bin/env bash
# Builds the whole tree with AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/
# (Debug) and runs every CTest test (docs/hardening.md).
#
#   scripts/sanitize.sh [-j JOBS] [CTEST_ARGS...]      e.g. scripts/sanitize.sh -L unit
#
# Fails (exit 1) if the build fails, a test fails, or any process reported anything: every
# sanitizer report, including those of the fxc processes the golden and e2e tiers start
# (whose stderr the tests compare), goes to build-asan/sanitizer-logs/, and the script prints
# them. Leaks outside fxc are suppressed by scripts/lsan.supp, each with its reason.
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
# log_path: reports go to files named PREFIX.PID, whichever process (a test binary, or an
# fxc that a test runs) makes them. Leak checking is on by default with ASan on x86-64 Linux.
export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
status=0
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 3600 "$@" || status=$?
done=$(date +%s)

reports=$(find "$logs" -type f | sort)
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
