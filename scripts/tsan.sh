#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libraries, fxc_thread_tests (tests/unit/threads_test.cpp, kernel_cache_test.cpp
# block_executor_test.cpp and the public API's threaded cases (tests/api): one compiled graph
# run from several threads, the chunked scan's
# worker threads, concurrent kernel-cache lookups and writers, the BlockExecutor's values
# handover while an audio thread runs blocks, fxc::Processor::set from a control thread
# while process() runs), fxc_realtime_tests and the corpus runner shared by threads (fxc run
# --jobs) with ThreadSanitizer in
# build-tsan/, and runs them. Fails on a failing case or any ThreadSanitizer report.
#
#   scripts/tsan.sh [-j JOBS]
#
# JIT-compiled kernels and libLLVM are not instrumented: TSan sees the executor, the runtime
# and the cache around them. On 2 cores: about 6 minutes to build from scratch, under a
# minute to run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=2
if [[ ${1:-} == -j ]]; then jobs=$2; shift 2; fi
build=$PWD/build-tsan

start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFXC_BUILD_BENCH=OFF \
  ${CXX:+-DCMAKE_CXX_COMPILER="$CXX"} \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" >/dev/null
cmake --build "$build" -j "$jobs" --target fxc_thread_tests fxc_realtime_tests fxc_corpus_tests fxc fxc_e2e_tests
built=$(date +%s)

log=$build/tsan-report
rm -f "$log".*
status=0
TSAN_OPTIONS="log_path=$log:halt_on_error=1:second_deadlock_stack=1:${TSAN_OPTIONS:-}" \
  "$build/tests/fxc_thread_tests" --min-test-cases=17 \
  "--test-case=one compiled graph runs*,the pool runs every part*,chains split across threads*,the memory cache serves*,concurrent writers of one key*,two processes writing one key*,BlockExecutor*,execute_cpu_into*,set() from one thread while others run,Processor: set from another thread*" || status=$?
TSAN_OPTIONS="log_path=$log:halt_on_error=1:second_deadlock_stack=1:${TSAN_OPTIONS:-}" \
  "$build/tests/fxc_realtime_tests" || status=$?
TSAN_OPTIONS="log_path=$log:halt_on_error=1:second_deadlock_stack=1:${TSAN_OPTIONS:-}" \
  "$build/tests/corpus/fxc_corpus_tests" "--test-case=CorpusRunner from several threads*" || status=$?
# fxc run on files: the next chunk read and the last one written on threads of their own while
# a chunk runs (corpus/stream_files.cpp). The end-to-end cases start this build's fxc, which
# inherits TSAN_OPTIONS and so reports into the same log.
TSAN_OPTIONS="log_path=$log:halt_on_error=1:second_deadlock_stack=1:${TSAN_OPTIONS:-}" \
  "$build/tests/e2e/fxc_e2e_tests" --min-test-cases=5 "--test-case=--block on files*" || status=$?
done=$(date +%s)
if compgen -G "$log.*" >/dev/null; then
  echo "== ThreadSanitizer reports:"
  cat "$log".*
  status=1
fi
echo "tsan.sh: build $((built - start)) s, tests $((done - built)) s"
if ((status != 0)); then
  echo "tsan.sh: FAILED" >&2
  exit 1
fi
echo "tsan.sh: the threaded cases passed with no ThreadSanitizer report"
