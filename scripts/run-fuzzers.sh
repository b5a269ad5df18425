#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets in build-fuzz/ and runs them one at a time (docs/hardening.md).
#
#   scripts/run-fuzzers.sh [-t SECONDS] [-j JOBS] [-k] [TARGET...]
#
#   -t SECONDS  how long each target runs (default 300)
#   -j JOBS     parallel build jobs (default 2)
#   -k          step around the bugs already found (FXC_FUZZ_SKIP_KNOWN_BUGS and the UBSan
#               suppressions in fuzz/known-bugs.supp), to look for new ones
#   TARGET      fuzz_fx_parser fuzz_ir_parser fuzz_npy_reader fuzz_audio_reader
#               fuzz_cache_entry fuzz_pipeline fuzz_kernels (default: all, in that order)
#
# Environment: CXX (a clang++ of version 15 or newer; default: the newest clang++-NN found),
# FXC_FUZZ_FLAGS (more libFuzzer flags, e.g. "-fork=1 -ignore_crashes=1" to go on after a
# crash).
#
# Each target starts from its seed corpus (fuzz/corpus/TARGET, read only) and the inputs it
# found before (build-fuzz/corpus/TARGET, where new ones go). A crash, timeout or out-of-memory
# input is kept in fuzz/crashes/TARGET/; the log is build-fuzz/logs/TARGET.log. libFuzzer stops
# a target at its first crash; the script goes on with the next target and exits 1 at the end
# if any target crashed, 0 if all ran clean. Reproduce a crash with
#   build-fuzz/fuzz/TARGET fuzz/crashes/TARGET/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

seconds=300
jobs=2
skip_known=0
while getopts "t:j:kh" opt; do
  case $opt in
    t) seconds=$OPTARG ;;
    j) jobs=$OPTARG ;;
    k) skip_known=1 ;;
    *) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
all_targets=(fuzz_fx_parser fuzz_ir_parser fuzz_npy_reader fuzz_audio_reader fuzz_cache_entry
             fuzz_pipeline fuzz_kernels)
if (($#)); then targets=("$@"); else targets=("${all_targets[@]}"); fi
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "unknown target '$t'" >&2; exit 2; }
done

# clang 14 cannot compile the tree: it lacks __builtin_source_location, which libstdc++ 12's
# std::source_location (frontend/dsl.h) needs. Debian 12 has clang-19 (the LLVM the CPU
# backend uses): apt-get install clang-19 libclang-rt-19-dev
if [[ -z "${CXX:-}" ]]; then
  for candidate in clang++-{30..15} clang++; do
    command -v "$candidate" >/dev/null || continue
    major=$("$candidate" -dumpversion | cut -d. -f1)
    if ((major >= 15)); then CXX=$candidate; break; fi
  done
fi
[[ -n "${CXX:-}" ]] || { echo "no clang++ 15 or newer; apt-get install clang-19 libclang-rt-19-dev" >&2; exit 2; }

build=$root/build-fuzz
# -O1 -g without NDEBUG, with libstdc++'s bounds checks: assertions are worth more than speed.
# fuzz/ is added with the tests (FXC_BUILD_TESTS, on by default); only the targets are built.
cmake -S "$root" -B "$build" -G Ninja -DFXC_FUZZ=ON -DFXC_BUILD_TESTS=ON \
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS="-D_GLIBCXX_ASSERTIONS" >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

fuzzer_dir=$build/fuzz
mkdir -p "$build/logs"
# UBSan's defaults (fatal reports) are built into the targets: fuzz/sanitizer_options.cpp.
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
if ((skip_known)); then
  export FXC_FUZZ_SKIP_KNOWN_BUGS=1
  export UBSAN_OPTIONS="suppressions=$root/fuzz/known-bugs.supp:${UBSAN_OPTIONS:-}"
fi

failed=()
for t in "${targets[@]}"; do
  seeds=$root/fuzz/corpus/$t
  work=$build/corpus/$t
  crashes=$root/fuzz/crashes/$t
  log=$build/logs/$t.log
  mkdir -p "$work" "$crashes"
  flags=(-max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 -timeout=10
         -artifact_prefix="$crashes/")
  case $t in
    fuzz_fx_parser | fuzz_pipeline) flags+=(-dict="$root/fuzz/fx.dict" -max_len=4096) ;;
    fuzz_ir_parser) flags+=(-dict="$root/fuzz/ir.dict" -max_len=16384) ;;
    fuzz_npy_reader) flags+=(-max_len=4096) ;;
    fuzz_audio_reader) flags+=(-max_len=16384) ;;
    # Each input recompiles a kernel (tens of milliseconds): a slow target by design.
    fuzz_cache_entry) flags+=(-max_len=8192 -timeout=60) ;;
    # Each input compiles two graphs with LLVM: slow by design; 512 bytes choose a graph.
    fuzz_kernels) flags+=(-max_len=1024 -timeout=60) ;;
  esac
  echo "== $t: ${seconds}s"
  status=0
  # shellcheck disable=SC2086  # FXC_FUZZ_FLAGS is a list of flags
  "$fuzzer_dir/$t" "${flags[@]}" ${FXC_FUZZ_FLAGS:-} "$work" "$seeds" >"$log" 2>&1 || status=$?
  # The last coverage line and the final statistics.
  grep -E '^#[0-9]+\s+(DONE|INITED|NEW|REDUCE|pulse)' "$log" | tail -1 || true
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb|new_units_added)' "$log" || true
  if ((status != 0)); then
    echo "!! $t failed (exit $status); see $log and $crashes/" >&2
    grep -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error:|SUMMARY:|fxc fuzz property failed' "$log" | head -5 >&2 || true
    failed+=("$t")
  fi
done

if ((${#failed[@]})); then
  echo "crashed: ${failed[*]}" >&2
  exit 1
fi
echo "all ${#targets[@]} targets ran ${seconds}s each without a crash"
