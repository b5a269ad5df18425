#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GPU checks, in one run on a machine with an NVIDIA GPU, from the bundle that
# scripts/make-gpu-bundle.sh made (carried as .devbundle/): the CUDA device tests (each test
# case its own process, in parallel: they are bound by NVRTC on the CPU), the e2e CUDA test,
# then, alone on the GPU and in this order: bench/gpu_bench.py's primary rows (the targets), a
# same-run A/B of each GPU strategy, Nsight Compute's view of W1 and the vocal example, a trace of
# a fresh vocal run, the A/B's second round and gpu_bench.py's other rows. Logs go to $OUT
# (default /tmp/gpu-out).
#
#   bash scripts/gpu-check.sh [--budget-s S] [gpu_bench.py options...] 2>&1 | tee $OUT/gpu-check.log
#
# --budget-s (default 520): the whole script's wall time. Each section starts only while the time
# it needs is left, so that a device call's limit never cuts off what the sections before it
# wrote; each section's start time is printed ("== name at T s").
set -u
budget_s=520
bench_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget-s) budget_s=$2; shift 2 ;;
    *) bench_args+=("$1"); shift ;;
  esac
done
left() { echo $((budget_s - SECONDS)); }
# section NAME SECONDS_NEEDED: whether to run it (and say so, with the time).
section() {
  if [ "$(left)" -lt "$2" ]; then echo "== $1: skipped at $SECONDS s ($(left) s left, needs $2)"; return 1; fi
  echo "== $1 at $SECONDS s"
}
root=$(pwd -P)
# $OUT brings back at most 8 files: the logs, ab.txt, and raw.tar.xz (Nsight's CSVs, the traces).
out=${OUT:-/tmp/gpu-out}
raw=/tmp/gpu-raw
mkdir -p "$out" "$raw"
tar -xJf .devbundle/bundle.tar.xz -C /tmp || exit 1
export LD_LIBRARY_PATH=/tmp/bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p build-dev/tools/fxc build-dev/tests/e2e
cp /tmp/bundle/bin/fxc build-dev/tools/fxc/ && cp /tmp/bundle/bin/fxc_unit_tests build-dev/tests/ &&
  cp /tmp/bundle/bin/fxc_e2e_tests build-dev/tests/e2e/ || exit 1
# The test binaries name their data and the fxc binary by the path they were built at.
built_at=/work/main
if [ "$(readlink -f $built_at 2>/dev/null)" != "$root" ]; then
  if [ -e $built_at ]; then echo "$built_at exists and is not this checkout: the e2e test will not find fxc"
  else mkdir -p "$(dirname $built_at)" && ln -s "$root" $built_at; fi
fi
# Peers' wheels carried as .whl/ (scripts/fetch-gpu-wheels.sh: TorchFX), where there are any.
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl &&
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} || echo "the carried wheels did not install: no TorchFX row"
fi
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
build-dev/tools/fxc/fxc info 2>&1 | tee "$out/info.txt"

export FXC_REQUIRE_CUDA_DEVICE=1
if section "CUDA device tests" 130; then
  start=$SECONDS
  build-dev/tests/fxc_unit_tests --list-test-cases --test-case="CUDA device*" | grep '^CUDA device' |
    sed 's/,.*//; s/$/*/' > /tmp/cases.txt
  i=0
  while read -r pattern; do
    i=$((i + 1))
    (timeout 120 build-dev/tests/fxc_unit_tests "--test-case=$pattern" > "/tmp/case$i.log" 2>&1
     echo "rc=$? $pattern" >> "/tmp/case$i.log") &
  done < /tmp/cases.txt
  (timeout 120 build-dev/tests/e2e/fxc_e2e_tests "--test-case=CUDA device*" > /tmp/case_e2e.log 2>&1
   echo "rc=$? e2e CUDA device*" >> /tmp/case_e2e.log) &
  wait
  cat /tmp/case*.log > "$out/tests.log"
  echo "== CUDA device tests: $((SECONDS - start)) s"
  grep -h '^rc=' /tmp/case*.log
  grep -h -B2 -A12 'ERROR\|FAILED\|Assertion\|SIGSEGV\|exception' /tmp/case*.log | head -150
fi

# The targets first: gpu_bench.py's primary rows (W1, W4's chain on 1024 channels, W5, the vocal
# example) and the vocal example end to end, with the time left after the sections below.
if section "gpu_bench.py primary rows" 150; then
  PYTHONUNBUFFERED=1 timeout 240 python3 bench/gpu_bench.py --fxc build-dev/tools/fxc/fxc \
    "${bench_args[@]}" --rows primary 2>&1 | tee "$out/bench.log"
fi

# Same-run A/B on this GPU, alternated, two rounds (the second without the float64 reference
# check, which only the first needs), each run a line of ab.txt named by its first word. fxc bench
# prints the run from host memory (pieces, three streams) and device_resident (Program::run_device
# on the signal in GPU memory), medians of 5. Each run needs 45 s of the budget.
#   mixed: W1 (8 ch x 120 s, float32) with split-precision's mixed chain (the default: 6 sections
#     in float64, 9 in float32) and without it (split_error=0: all 15 in float64);
#   fir: W3 (1 ch x 60 s, its FIRs fused into one of 511 taps) by FFT overlap-save (the default,
#     fir_fft) and direct in shared-memory tiles (gpu_fir_fft_min_taps=1e9);
#   longfir: a FIR of 24001 taps (2 ch x 2 s: the float64 reference check convolves directly on
#     the host) partitioned (the default, fir_partitioned) and tiled;
#   wave / wave1024: W1 (8 ch x 120 s) and W4's chain (1024 ch x 6 s) with the chunk passes'
#     wavefront (the default) and without it (gpu_wavefront_max_steps=0);
#   pairs: W1 (8 ch x 120 s, float32) with its float64 sections in float pairs (forced:
#     gpu_float_pairs_max_f64_rate=1; the default takes them only where float64 runs at 1:32 or
#     slower) and in float64 (=0): on an H100 or H200 pairs should lose, by what the model's
#     pair_ops predicts (docs/cuda-performance-model.md, the L4 table), which this calibrates;
#   loops / freeverb: the stereo echo (bench/workloads/loop_echo.fx, 2 ch x 10 s) and Freeverb
#     (loop_freeverb.fx, 8 ch x 10 s) with their loops fused (the default: one kernel a loop, a
#     thread per channel) and unfused (gpu_fuse_loops=0: the loop's kernels once per pass of its
#     delay); `python3 bench/gpu_model.py --loops` predicts both.
ab() {  # name workload channels seconds fs threshold round
  [ "$(left)" -ge 45 ] || { echo "A/B $1 $6 round $7: skipped, $(left) s left"; return; }
  local check=()
  if [ "$7" != 1 ] || [ $(( $3 * ${4%.*} * $5 )) -gt 50000000 ]; then check=(--no-check); fi
  timeout 45 build-dev/tools/fxc/fxc bench "$2" --channels "$3" --seconds "$4" --fs "$5" \
    --target cuda --json --threshold "$6" "${check[@]}" > "/tmp/ab_$1_$6_$7.json" 2> "/tmp/ab.err" || tail -3 /tmp/ab.err
  python3 - "/tmp/ab_$1_$6_$7.json" "$1 $6" "$7" <<'PY' | tee -a "$out/ab.txt"
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    sys.exit(print(f"A/B {sys.argv[2]} round {sys.argv[3]}: no JSON ({e})"))
fused = j.get("fused", j)
dev = j.get("device_resident", {})
print(f"A/B {sys.argv[2]:>28} round {sys.argv[3]}: host memory {fused.get('median_ms', '?')} ms, "
      f"GPU memory {dev.get('median_ms', '?')} ms, largest error against float64 {j.get('max_abs_error_vs_f64_reference', '?')}")
PY
}
ab_round() {  # round; the newest strategies first
  for threshold in gpu_fuse_loops=1 gpu_fuse_loops=0; do
    ab loops bench/workloads/loop_echo.fx 2 10 48000 "$threshold" "$1"
    ab freeverb bench/workloads/loop_freeverb.fx 8 10 44100 "$threshold" "$1"
  done
  for threshold in gpu_float_pairs_max_f64_rate=0 gpu_float_pairs_max_f64_rate=1; do
    ab pairs bench/workloads/w1_api.fx 8 120 44100 "$threshold" "$1"
  done
  for threshold in gpu_wavefront_max_steps=48 gpu_wavefront_max_steps=0; do
    ab wave bench/workloads/w1_api.fx 8 120 44100 "$threshold" "$1"
    ab wave1024 bench/workloads/w4_profile.fx 1024 6 48000 "$threshold" "$1"
  done
  for threshold in gpu_fir_fft_min_taps=64 gpu_fir_fft_min_taps=1e9; do
    ab longfir bench/workloads/long_fir.fx 2 2 48000 "$threshold" "$1"
    ab fir bench/workloads/w3_fir.fx 1 60 44100 "$threshold" "$1"
  done
  for threshold in split_error=5e-7 split_error=0; do
    ab mixed bench/workloads/w1_api.fx 8 120 44100 "$threshold" "$1"
  done
}
section "A/B round 1" 60 && ab_round 1

# From Nsight Compute, on W1 (8 ch x 120 s) and the vocal example (stereo, 60 s) run from a file
# as `fxc run` runs them: first where W1's chunk passes wait (below), then each kernel's time
# (gpu__time_duration per launch).
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$ncu" ]; then
  echo "ncu not found: no per-kernel times"
elif section "Nsight Compute" 150; then
  python3 - <<'PY'
import numpy as np, scipy.io.wavfile as wav
rng = np.random.default_rng(1)
wav.write("/tmp/w1.wav", 44100, (rng.random((44100 * 120, 8), dtype=np.float32) * 2 - 1))
wav.write("/tmp/vocal.wav", 48000, (rng.random((48000 * 60, 2), dtype=np.float32) * 2 - 1))
PY
  # Why the warps wait: warp states, issue slots and occupancy of W1's two chunk passes (one
  # launch each: `fxc run`'s first piece) as they run by default and with the wavefront, and of
  # the fused loop of the stereo echo (a warp of two threads; `fxc bench`'s first launch).
  for job in "w1_plain regex:chunk_states|fxc_chain_1$ 2 run bench/workloads/w1_api.fx -i /tmp/w1.wav -o /tmp/w1_out.wav" \
             "w1_wavefront regex:chunk_states|fxc_chain_1$ 2 run bench/workloads/w1_api.fx -i /tmp/w1.wav -o /tmp/w1_out.wav --threshold gpu_wavefront_max_steps=48" \
             "echo_fused regex:fxc_chain_[0-9]+$ 1 bench bench/workloads/loop_echo.fx --channels 2 --seconds 2 --repeat 1 --no-check"; do
    set -f; set -- $job; set +f  # the kernel regexes are not file patterns
    name=$1 kernels=$2 count=$3; shift 3
    timeout 60 "$ncu" --clock-control none --section WarpStateStats --section SchedulerStats --section Occupancy \
      --section ComputeWorkloadAnalysis --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
      --kernel-name "$kernels" --launch-count "$count" --csv --page details build-dev/tools/fxc/fxc "$@" \
      --target cuda > "$raw/ncu_stalls_$name.csv" 2> /tmp/ncu_stall.err || tail -3 /tmp/ncu_stall.err
    set -- "$name"
    python3 - "$raw/ncu_stalls_$1.csv" "$1" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
if not rows:
    sys.exit(print(f"ncu stalls {sys.argv[2]}: no rows"))
head = rows[0]
k, m, u, v = (head.index(c) for c in ("Kernel Name", "Metric Name", "Metric Unit", "Metric Value"))
keep = ("Warp Cycles Per Issued Instruction", "Issue Slots Busy", "No Eligible", "Active Warps Per Scheduler",
        "Eligible Warps Per Scheduler", "Achieved Occupancy", "Theoretical Occupancy", "Registers Per Thread",
        "Executed Ipc Active", "Block Limit Registers", "Block Limit Shared Mem")
print(f"ncu stalls, {sys.argv[2]}:")
for r in rows[1:]:
    stall = r[m].startswith("smsp__average_warps_issue_stalled_")
    try:
        big = float(r[v].replace(",", "")) >= 0.05
    except ValueError:
        big = False
    if any(r[m].startswith(x) for x in keep) or (stall and big):
        print(f"  {r[k].split('(')[0]:32} {r[m]:40} {r[v]} {r[u]}")
PY
  done
  # Each kernel's time.
  # w1_bench: fxc bench's runs of W1 whole (from host memory, unfused, then on GPU memory), where
  # `fxc run` (w1) goes in pieces of 2^20 frames.
  for job in "w1 run bench/workloads/w1_api.fx -i /tmp/w1.wav -o /tmp/w1_out.wav" \
             "vocal run examples/vocal.fx -i /tmp/vocal.wav -o /tmp/vocal_out.wav" \
             "w1_bench bench bench/workloads/w1_api.fx --channels 8 --seconds 120 --fs 44100 --repeat 1 --no-check"; do
    set -- $job
    name=$1; shift
    timeout 60 "$ncu" --clock-control none --metrics gpu__time_duration.sum --csv build-dev/tools/fxc/fxc "$@" \
      --target cuda > "$raw/ncu_$name.csv" 2> "/tmp/ncu_$name.err" || tail -3 "/tmp/ncu_$name.err"
    set -- "$name"
    python3 - "$raw/ncu_$1.csv" "$1" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
if not rows:
    sys.exit(print(f"ncu {sys.argv[2]}: no rows"))
head = rows[0]; k, v, u = head.index("Kernel Name"), head.index("Metric Value"), head.index("Metric Unit")
total, count = collections.defaultdict(float), collections.Counter()
for r in rows[1:]:
    scale = {"ns": 1e-3, "us": 1, "ms": 1e3, "nsecond": 1e-3, "usecond": 1, "msecond": 1e3}.get(r[u], float("nan"))
    name = r[k].split("(")[0]
    total[name] += float(r[v].replace(",", "")) * scale; count[name] += 1
print(f"ncu {sys.argv[2]}: {sum(total.values()):.1f} us in {sum(count.values())} launches")
for name, us in sorted(total.items(), key=lambda x: -x[1]):
    print(f"  {us:10.1f} us  {count[name]:4d} x  {name}")
PY
  done
fi

# Where `fxc run --target cuda` of the vocal example spends its wall time (the target of 5x the
# CPU end to end): a Chrome trace of each target's second fresh run (the kernel cache warm), then
# of a corpus of 8 such files in one process with --jobs 1 and 4, each file of its own length
# (60 s down to 49.5 s), as a real corpus's are: each length is a Program of its own, whose
# staging the device lends from the blocks the last file gave back since 2026-12-02 (each
# "allocate pinned staging" in the trace is a block pinned: two for the corpus with --jobs 1,
# up to eight with --jobs 4; gpu_bench.py's
# corpus of 8 copies of one file, which share one Program, ran 140 and 79 ms a file on the H200,
# 2026-11-30, where its GPU work is about 2 ms), each trace's spans summed by name, beside the
# process's wall time.
trace_summary() {  # TRACE_JSON LABEL WALL_MS
  python3 - "$1" "$2" "$3" <<'PY' | cat
import collections, json, sys
try:
    events = json.load(open(sys.argv[1]))["traceEvents"]
except Exception as e:
    sys.exit(print(f"trace {sys.argv[2]}: none ({e})"))
total, count = collections.defaultdict(float), collections.Counter()
for e in events:
    if "dur" not in e:
        continue
    name = e["name"].split(" /")[0] if e["name"].startswith(("read /", "write /")) else e["name"]
    total[name] += e["dur"] / 1e3; count[name] += 1
print(f"{sys.argv[2]}: {sys.argv[3]} ms wall; spans (ms summed over threads, count):")
for name, ms in sorted(total.items(), key=lambda x: -x[1])[:16]:
    print(f"  {ms:9.2f}  {count[name]:4d} x  {name}")
PY
}
if section "vocal trace" 60; then
python3 - <<'PY'
import numpy as np, os, scipy.io.wavfile as wav
wav.write("/tmp/vocal_trace.wav", 48000, (np.random.default_rng(3).random((48000 * 60, 2), dtype=np.float32) - 0.5))
os.makedirs("/tmp/vocal_corpus", exist_ok=True)
x = wav.read("/tmp/vocal_trace.wav")[1]
for k in range(8):
    wav.write(f"/tmp/vocal_corpus/take{k}.wav", 48000, x[: 48000 * 60 - k * 72000])
PY
for target in cpu cuda; do
  for run in 1 2; do
    t0=$(date +%s%N)
    timeout 60 build-dev/tools/fxc/fxc run examples/vocal.fx -i /tmp/vocal_trace.wav -o /tmp/vocal_trace_out.wav \
      --target $target --trace "/tmp/trace_$target.json" 2> /tmp/trace.err || tail -3 /tmp/trace.err
    wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  done
  cp "/tmp/trace_$target.json" "$raw/trace_vocal_$target.json" 2>/dev/null
  trace_summary "/tmp/trace_$target.json" "vocal, fresh process, --target $target" "$wall_ms"
done
for jobs in 1 4; do
  for target in cpu cuda; do
    [ "$(left)" -gt 20 ] || break
    rm -rf /tmp/vocal_corpus_out
    t0=$(date +%s%N)
    timeout 30 build-dev/tools/fxc/fxc run examples/vocal.fx -i /tmp/vocal_corpus --out-dir /tmp/vocal_corpus_out \
      --jobs $jobs --target $target --trace "/tmp/trace_corpus.json" 2> /tmp/trace.err || tail -3 /tmp/trace.err
    wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    cp /tmp/trace_corpus.json "$raw/trace_vocal_corpus_${target}_jobs$jobs.json" 2>/dev/null
    trace_summary /tmp/trace_corpus.json "vocal, corpus of 8 files of 49.5-60 s, --jobs $jobs, --target $target" "$wall_ms"
  done
done
# The same corpus streamed (--block): each file makes and drops a Processor, whose program
# opened a device of its own until 2026-12-02 (the primary context made again per file where
# nothing else held it); now one `open CUDA device` a process.
if [ "$(left)" -gt 20 ]; then
  rm -rf /tmp/vocal_corpus_out
  t0=$(date +%s%N)
  timeout 30 build-dev/tools/fxc/fxc run examples/vocal.fx -i /tmp/vocal_corpus --out-dir /tmp/vocal_corpus_out \
    --block 65536 --target cuda --trace /tmp/trace_corpus.json 2> /tmp/trace.err || tail -3 /tmp/trace.err
  wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  cp /tmp/trace_corpus.json "$raw/trace_vocal_corpus_cuda_block.json" 2>/dev/null
  trace_summary /tmp/trace_corpus.json "vocal, corpus of 8 files of 49.5-60 s, --block 65536, --target cuda" "$wall_ms"
fi
fi

# Where W1 from host memory spends its time (20.0 ms on the H200 against 1.63 ms on GPU memory,
# 2026-11-30): `fxc run` of an 8 ch x 120 s .npy (each target's second fresh run), its trace's
# spans summed, so that `stage in`, `wait for GPU` and `stage out` (since 2026-12-02) split the
# GPU run into the host's copies and the device's work.
if section "W1 trace" 40; then
python3 -c "
import numpy as np
np.save('/tmp/w1_trace.npy', (np.random.default_rng(4).random((8, 44100 * 120), dtype=np.float32) - 0.5))
"
for target in cpu cuda; do
  for run in 1 2; do
    t0=$(date +%s%N)
    timeout 30 build-dev/tools/fxc/fxc run bench/workloads/w1_api.fx -i /tmp/w1_trace.npy -o /tmp/w1_trace_out.npy \
      --fs 44100 --dtype f32 --target $target --trace "/tmp/trace_w1_$target.json" 2> /tmp/trace.err || tail -3 /tmp/trace.err
    wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  done
  cp "/tmp/trace_w1_$target.json" "$raw/trace_w1_$target.json" 2>/dev/null
  trace_summary "/tmp/trace_w1_$target.json" "W1 8 ch x 120 s .npy, fresh process, --target $target" "$wall_ms"
done
rm -f /tmp/w1_trace.npy /tmp/w1_trace_out.npy
fi

# A Processor on the GPU (since 2026-12-01): the cost of a block, what a plugin's callback or a
# stream pays per call (copies, the graph's replay, the wait), against the CPU's Processor.
if section "Processor blocks" 30; then
  for block in 64 4096; do
    for target in cpu cuda; do
      if timeout 20 build-dev/tools/fxc/fxc bench examples/vocal.fx --seconds 2 --block $block --target $target \
        > /tmp/block.out 2> /tmp/block.err; then
        echo "--target $target, --block $block: $(sed -n 2,3p /tmp/block.out | tr -s ' ')"
      else
        echo "--target $target, --block $block: failed"; tail -3 /tmp/block.err
      fi
    done
  done | tee "$out/processor_blocks.txt"
fi

section "A/B round 2" 60 && ab_round 2

if section "gpu_bench.py secondary rows" 60; then
  PYTHONUNBUFFERED=1 timeout $(( $(left) - 5 )) python3 bench/gpu_bench.py --fxc build-dev/tools/fxc/fxc \
    "${bench_args[@]}" --rows secondary --deadline-s $(( $(left) - 40 )) 2>&1 | tee "$out/bench_secondary.log"
fi
tar -C "$raw" -cJf "$out/raw.tar.xz" . 2>/dev/null
echo "== done at $SECONDS s"
