#!/usr/bin/env bash
# Builds the unit tests with ThreadSanitizer in build-tsan/ (RelWithDebInfo) and runs the
# tests whose threads share data: the BlockExecutor's values handover (control threads staging
# values while an audio thread runs blocks) and its allocation-free check.
#
#   scripts/tsan.sh [-j JOBS]
#
# Only the two test binaries are built (the first build compiles the libraries under TSan:
# about 20 minutes on two cores; ccache makes later ones short); the tests take about a
# minute. Fails (exit 1) on a build failure, a failed test or any ThreadSanitizer report.
# The JIT-compiled kernels are not instrumented; everything around them is.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=2
if [[ ${1:-} == -j ]]; then jobs=$2; shift 2; fi
build=$PWD/build-tsan

start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  ${CXX:+-DCMAKE_CXX_COMPILER="$CXX"} -DCMAKE_CXX_FLAGS="-fsanitize=thread" >/dev/null
cmake --build "$build" -j "$jobs" --target fxc_unit_tests fxc_realtime_tests
built=$(date +%s)

export TSAN_OPTIONS="halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:${TSAN_OPTIONS:-}"
status=0
"$build/tests/fxc_unit_tests" --test-case="BlockExecutor*,execute_cpu_into*" || status=$?
"$build/tests/fxc_realtime_tests" || status=$?
done=$(date +%s)
echo "tsan.sh: build $((built - start)) s, tests $((done - built)) s"
if ((status != 0)); then
  echo "tsan.sh: FAILED" >&2
  exit 1
fi
echo "tsan.sh: the threaded tests passed with no ThreadSanitizer report"
