#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fxc from Python against its Python peers, same run (performance.md, W1-W7).

For each workload W1-W6 (compare_peers.py's table and SOS builders, imported, plus W6: W4's
chain on 256 stereo signals of 1 s at 48 kHz, run as one (B, C, T) batch), in this process:
  - fxc:        the `fxc` package, `fxc.compile(<.fx>, fs, dtype="float32", channels=C,
                signal_length=T)` (the length guides the strategy, as `fxc bench` passes it),
                then `program(x)` on a float32 NumPy array (C, T), or (B, C, T) for W6;
  - SciPy:      scipy.signal.sosfilt in float64 and float32 (W3: lfilter per FIR stage);
  - torchaudio: torchaudio.functional.lfilter(clamp=False) in float32 and float64, one call per
                second-order section (W3: one per FIR stage, a = [1, 0, ..., 0]).
Each is timed with time.perf_counter: the median of --repeat calls after one warm-up call (a
measurement whose --repeat calls would take more than --peer-budget seconds, judged by the
warm-up, gets fewer timed calls, at least one; the table marks it with '*'). Two thread settings: 1 thread (fxc.set_threads(1),
torch.set_num_threads(1)) and fxc's default (fxc.set_threads(0): N = the cores available;
torch.set_num_threads(N)). SciPy is single-threaded and is timed once. "x SciPy" and
"x torchaudio" are the fastest variant's median over fxc's, measured in the same run.
Every result's largest absolute error against the float64 SciPy reference on the same float32
noise (uniform in [-1, 1], seed 1234, upcast exactly) is printed beside the times.

Compile times (ms), per workload: cold (empty memory caches, an empty cache directory: a
temporary one, so ~/.cache/fxc is neither used nor changed), disk hit (memory caches emptied,
the same directory), memory hit (the same Program made again in the process). One throwaway
compile first keeps LLVM's one-time start-up out of the first workload's cold time.

Per-call overhead (W7's graph, W4's chain at 48 kHz, float32): a Processor with block=64,
mono and stereo, called --calls times on one 64-frame block: `proc(x, out=out)`, `proc(x)`
(allocating its result) and, to split the cost, the native method under the wrapper and
`np.copyto(out, x)` (the floor of any call on two arrays from Python). Medians over groups of
1000 calls, in microseconds. Beside them, where build/bench/fxc_bench_stream exists, the C++
times of the same graph (stereo, 64 frames) from its W7 Google Benchmarks, run by this script:
the chain's kernel alone and fxc::Processor::process.

    PYTHONPATH=python /work/pyenv/bin/python bench/python_bench.py [--quick] [--repeat 5]
        [--markdown] [--only W2] [--calls 100000] [--peer-budget 10] [--no-torchaudio]

--quick shortens the signals (W6: 256 x 0.25 s) and the overhead loop; --only runs the
workloads whose id starts with it (W7: only the overhead).
"""
import argparse, json, os, platform, shutil, subprocess, sys, tempfile, time

import numpy as np
from scipy import signal

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(BENCH, ".."))
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(ROOT, "python"))

import compare_peers  # noqa: E402  (the workload table and the SOS / FIR builders)
import fxc  # noqa: E402

try:
    import torch
    import torchaudio
    import torchaudio.functional as TAF
except ImportError as e:  # the torchaudio columns are left out, with a note
    torch = torchaudio = TAF = None
    TORCH_NOTE = f"torchaudio columns left out: {e}"
else:
    TORCH_NOTE = None

# (id, .fx file, builder, channels, seconds, quick seconds, fs, batch items)
WORKLOADS = [(name, fx, builder, ch, secs, quick, fs, 1)
             for name, fx, _, builder, ch, secs, quick, fs in compare_peers.WORKLOADS]
WORKLOADS.append(("W6 many files", "w6_many_files.fx", compare_peers.w4, 2, 1, 0.25, 48000, 256))
W7 = ("w7_stream.fx", 48000)  # W4's chain streamed


# ---- timing ----

def timed_ms(fn, repeat, budget_s=float("inf")):
    """(median ms of `repeat` calls after a warm-up call, calls timed, the last result). A call
    slower than budget_s / repeat in the warm-up gets fewer timed calls (at least one)."""
    t = time.perf_counter(); fn(); warm = time.perf_counter() - t
    runs = repeat if warm * repeat <= budget_s else max(1, int(budget_s / warm))
    times = []
    for _ in range(runs):
        t = time.perf_counter(); result = fn(); times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[len(times) // 2], runs, result


def max_abs_error(got, want):
    if torch is not None and isinstance(got, torch.Tensor):
        got = got.numpy()
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - want)))


# ---- the peers ----

def scipy_runner(coefficients, x):
    """A call running the chain with SciPy on x (its dtype): sosfilt, or lfilter per FIR stage."""
    if isinstance(coefficients, list):
        taps = [h.astype(x.dtype) for h in coefficients]
        def run():
            y = x
            for h in taps:
                y = signal.lfilter(h, [1.0], y, axis=-1)
            return y
        return run
    sos = coefficients.astype(x.dtype)
    return lambda: signal.sosfilt(sos, x, axis=-1)


def torchaudio_runner(coefficients, x):
    """A call running the chain with torchaudio on the tensor x (its dtype): lfilter once per
    section (or FIR stage), clamp=False (lfilter clamps to [-1, 1] by default)."""
    if isinstance(coefficients, list):
        stages = [(np.eye(1, len(h))[0], h) for h in coefficients]  # a = [1, 0, ..., 0], b = taps
    else:
        stages = [(s[3:], s[:3]) for s in coefficients]
    stages = [(torch.tensor(a, dtype=x.dtype), torch.tensor(b, dtype=x.dtype)) for a, b in stages]
    def run():
        y = x
        for a, b in stages:
            y = TAF.lfilter(y, a, b, clamp=False)
        return y
    return run


# ---- fxc ----

def compile_times(path, fs, channels, length, repeat, cache_root):
    """(program, {"cold", "disk", "memory"} ms): a cold compile into a new cache directory,
    then disk hits (memory caches emptied) and memory hits, medians of `repeat`."""
    cache_dir = tempfile.mkdtemp(dir=cache_root)
    make = lambda: fxc.compile(path, fs=fs, dtype="float32", channels=channels, signal_length=length,
                               cache_dir=cache_dir)
    fxc._core.clear_kernel_memory_cache()
    t = time.perf_counter(); make(); cold = (time.perf_counter() - t) * 1e3
    def disk():
        fxc._core.clear_kernel_memory_cache()
        return make()
    disk_ms = timed_ms(disk, repeat)[0]
    program = make()
    memory_ms = timed_ms(make, repeat)[0]
    return program, dict(cold=cold, disk=disk_ms, memory=memory_ms)


def set_threads(n):
    """n = 1, or 0 for fxc's default; torch follows fxc's count. Returns the count."""
    fxc.set_threads(n)
    if torch is not None:
        torch.set_num_threads(fxc.threads())
    return fxc.threads()


def run_workload(spec, args, thread_settings, cache_root):
    name, fx, builder, ch, secs, quick_secs, fs, items = spec
    secs = quick_secs if args.quick else secs
    n = int(round(secs * fs))
    shape = (items, ch, n) if items > 1 else (ch, n)
    label = f"{name} {items} x {ch} ch x {secs:g} s" if items > 1 else f"{name} {ch} ch x {secs:g} s"
    row = dict(name=label, times={}, runs={}, err={})

    program, row["compile"] = compile_times(os.path.join(BENCH, "workloads", fx), fs, ch, n, args.repeat, cache_root)

    x32 = np.random.default_rng(1234).uniform(-1, 1, shape).astype(np.float32)
    x64 = x32.astype(np.float64)
    coefficients = builder(fs)
    scipy64, scipy32 = scipy_runner(coefficients, x64), scipy_runner(coefficients, x32)
    reference = scipy64()  # float64 reference, outside any timing
    budget = args.peer_budget

    def measure(key, fn):  # key: "fxc @N", "torchaudio f32 @N", "scipy f64", ...
        row["times"][key], row["runs"][key], result = timed_ms(fn, args.repeat, budget)
        error_key = key if key.startswith("fxc") else key.split(" @")[0]  # a peer's error: once
        if error_key not in row["err"]:
            row["err"][error_key] = max_abs_error(result, reference)

    measure("scipy f64", scipy64)
    measure("scipy f32", scipy32)
    if torch is not None:
        t32, t64 = torch.from_numpy(x32), torch.from_numpy(x64)
        ta32, ta64 = torchaudio_runner(coefficients, t32), torchaudio_runner(coefficients, t64)
    for setting in thread_settings:
        threads = set_threads(setting)
        tag = f" @{threads}"
        measure("fxc" + tag, lambda: program(x32))
        if torch is not None:
            measure("torchaudio f32" + tag, ta32)
            measure("torchaudio f64" + tag, ta64)
    set_threads(0)
    return row


# ---- per-call overhead ----

def per_call_us(fn, calls, group=1000):
    """Median microseconds per call over groups of `group` calls, after one warm-up group."""
    for _ in range(group):
        fn()
    per = []
    for _ in range(max(1, calls // group)):
        t = time.perf_counter()
        for _ in range(group):
            fn()
        per.append((time.perf_counter() - t) / group * 1e6)
    return sorted(per)[len(per) // 2]


def overhead(args, cache_root):
    fx, fs = W7
    path = os.path.join(BENCH, "workloads", fx)
    rows = []
    for ch in (1, 2):
        program = fxc.compile(path, fs=fs, dtype="float32", channels=ch, cache_dir=cache_root)
        proc = program.processor(block=64, channels=ch)
        x = np.random.default_rng(1234).uniform(-1, 1, (ch, 64)).astype(np.float32)
        out = np.empty_like(x)
        native = proc._core.process  # the nanobind method under Processor.__call__
        r = dict(channels=ch)
        r["out="] = per_call_us(lambda: proc(x, out=out), args.calls)
        r["alloc"] = per_call_us(lambda: proc(x), args.calls)
        r["native"] = per_call_us(lambda: native(x, out), args.calls)
        r["copyto"] = per_call_us(lambda: np.copyto(out, x), args.calls)
        # Accuracy: one second streamed in 64-frame blocks against one whole-signal call.
        proc.reset()
        sig = np.random.default_rng(7).uniform(-1, 1, (ch, fs - fs % 64)).astype(np.float32)
        streamed = np.concatenate([proc(np.ascontiguousarray(sig[:, k:k + 64])) for k in range(0, sig.shape[1], 64)], axis=1)
        whole = fxc.compile(path, fs=fs, dtype="float32", channels=ch, cache_dir=cache_root)(sig)
        r["stream_vs_whole"] = max_abs_error(streamed, whole.astype(np.float64))
        rows.append(r)
    return rows


def cpp_stream_times(binary, repeat):
    """{benchmark: median us} from fxc_bench_stream's 64-frame W7 benchmarks (stereo), or a note."""
    if not os.path.exists(binary):
        return None, f"{os.path.relpath(binary, ROOT)} not built: the C++ column is left out"
    cmd = [binary, "--benchmark_filter=block:64$", f"--benchmark_repetitions={max(3, repeat)}",
           "--benchmark_report_aggregates_only=true", "--benchmark_format=json"]
    try:
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300).stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        return None, f"{os.path.basename(binary)} failed: {e}"
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    times = {}
    for b in out.get("benchmarks", []):
        if b.get("aggregate_name") == "median":
            times[b["run_name"].split("/")[0]] = b["real_time"] * scale[b.get("time_unit", "ns")]
    return times, None


# ---- printing ----

def fmt_ms(row, key):
    if key not in row["times"]:
        return "-"
    t = row["times"][key]
    mark = "*" if row["runs"][key] < row["repeat"] else ""
    return (f"{t:.1f}" if t >= 10 else f"{t:.2f}") + mark


def ratio(row, peers, fxc_key):
    got = [row["times"][p] for p in peers if p in row["times"]]
    return f"{min(got) / row['times'][fxc_key]:.1f}x" if got and fxc_key in row["times"] else "-"


def print_table(title, cols, lines, markdown):
    print()
    print(title)
    if markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for line in lines:
            print("| " + " | ".join(line) + " |")
        return
    widths = [max(len(c), *(len(l[i]) for l in lines)) if lines else len(c) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cols, widths))))
    for line in lines:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter signals and overhead loop")
    ap.add_argument("--repeat", type=int, default=5, help="timed calls per median (default 5)")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    ap.add_argument("--only", default="", help="run only workloads whose id starts with this (W7: the overhead)")
    ap.add_argument("--calls", type=int, default=0, help="calls per overhead measurement (default 100000, 20000 with --quick)")
    ap.add_argument("--peer-budget", type=float, default=10.0,
                    help="seconds of timed calls per measurement before it takes fewer than --repeat (default 10)")
    ap.add_argument("--no-torchaudio", action="store_true", help="leave the torchaudio columns out")
    ap.add_argument("--stream-bench", default=os.path.join(ROOT, "build", "bench", "fxc_bench_stream"),
                    help="the C++ W7 benchmark binary (default build/bench/fxc_bench_stream)")
    args = ap.parse_args()
    args.calls = args.calls or (20000 if args.quick else 100000)
    sys.stdout.reconfigure(line_buffering=True)
    load_before = os.getloadavg()[0]
    global torch
    if args.no_torchaudio:
        torch = None
    note = "torchaudio left out (--no-torchaudio)" if args.no_torchaudio else TORCH_NOTE

    default_threads = set_threads(0)
    thread_settings = [1] if default_threads == 1 else [1, 0]
    cache_root = tempfile.mkdtemp(prefix="fxc-python-bench-")
    rows, over, cpp, cpp_note = [], None, None, None
    try:
        fxc.compile("input x\noutput x | butter(2, 1 kHz)", fs=48000, channels=1, cache_dir=cache_root)  # LLVM start-up
        for spec in WORKLOADS:
            if args.only and not spec[0].startswith(args.only):
                continue
            row = run_workload(spec, args, thread_settings, cache_root)
            row["repeat"] = args.repeat
            rows.append(row)
            print(f"done: {row['name']}", file=sys.stderr, flush=True)
        if "W7".startswith(args.only):
            over = overhead(args, cache_root)
            cpp, cpp_note = cpp_stream_times(args.stream_bench, args.repeat)
    finally:
        shutil.rmtree(cache_root, ignore_errors=True)

    info = fxc.info()
    print(f"fxc {fxc.__version__} ({info.get('llvm', '')}, CPU target {info.get('cpu_target', '?')}), Python {platform.python_version()}, NumPy {np.__version__}, "
          f"SciPy {__import__('scipy').__version__}" + (f", torch {torch.__version__}, torchaudio {torchaudio.__version__}"
                                                       if torch is not None else ""))
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs; "
          f"fxc default threads {default_threads}" + ("; torch threads follow fxc's" if torch is not None else "") +
          f"; 1-minute load average {load_before:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
    if note:
        print("note:", note)

    ta = torch is not None
    for setting in thread_settings:
        n = 1 if setting == 1 else default_threads
        tag = f" @{n}"
        cols = ["workload", "fxc f32", "SciPy f64", "SciPy f32"] + (["TA f32", "TA f64"] if ta else []) + \
               ["x SciPy"] + (["x TA"] if ta else [])
        lines = []
        for r in rows:
            line = [r["name"], fmt_ms(r, "fxc" + tag), fmt_ms(r, "scipy f64"), fmt_ms(r, "scipy f32")]
            if ta:
                line += [fmt_ms(r, "torchaudio f32" + tag), fmt_ms(r, "torchaudio f64" + tag)]
            line.append(ratio(r, ["scipy f64", "scipy f32"], "fxc" + tag))
            if ta:
                line.append(ratio(r, ["torchaudio f32" + tag, "torchaudio f64" + tag], "fxc" + tag))
            lines.append(line)
        if rows:
            print_table(f"Times in ms, {n} thread{'s' if n > 1 else ''} (fxc.set_threads({setting})"
                        + (f", torch.set_num_threads({n})" if ta else "") + "); medians of "
                        f"{args.repeat} after a warm-up ('*': fewer timed calls, --peer-budget)", cols, lines, args.markdown)

    if rows:
        fxc_keys = [k for k in rows[0]["err"] if k.startswith("fxc")]
        cols = ["workload"] + [f"fxc f32 ({k.split('@')[1]} thr)" for k in fxc_keys] + ["SciPy f32"] + \
               (["TA f32", "TA f64"] if ta else [])
        lines = [[r["name"]] + [f"{r['err'][k]:.1e}" for k in fxc_keys] + [f"{r['err']['scipy f32']:.1e}"] +
                 ([f"{r['err'].get('torchaudio f32', float('nan')):.1e}", f"{r['err'].get('torchaudio f64', float('nan')):.1e}"] if ta else [])
                 for r in rows]
        print_table("Max abs error against SciPy float64 (sosfilt; lfilter per stage for W3) on the same noise",
                    cols, lines, args.markdown)
        cols = ["workload", "cold", "disk hit", "memory hit"]
        lines = [[r["name"], f"{r['compile']['cold']:.1f}", f"{r['compile']['disk']:.2f}", f"{r['compile']['memory']:.3f}"]
                 for r in rows]
        print_table(f"fxc compile in ms (float32, channels and length given; disk and memory hits: medians of {args.repeat})",
                    cols, lines, args.markdown)

    if over:
        cols = ["W7 chain, 64 frames", "proc(x, out=out)", "proc(x)", "native process(x, out)", "np.copyto(out, x)",
                "C++ Processor", "C++ kernel alone", "stream vs whole"]
        lines = []
        for r in over:
            stereo = r["channels"] == 2 and cpp
            lines.append([f"{'mono' if r['channels'] == 1 else 'stereo'}", f"{r['out=']:.2f}", f"{r['alloc']:.2f}",
                          f"{r['native']:.2f}", f"{r['copyto']:.2f}",
                          f"{cpp['w7_processor']:.3f}" if stereo and "w7_processor" in cpp else "-",
                          f"{cpp['w7_kernel_alone']:.3f}" if stereo and "w7_kernel_alone" in cpp else "-",
                          f"{r['stream_vs_whole']:.1e}"])
        print_table(f"Per-call time in us from Python (Processor, block=64, float32; medians over groups of 1000 "
                    f"calls, {args.calls} calls each; target: under 5 us)", cols, lines, args.markdown)
        if cpp:
            extra = ", ".join(f"{k} {v:.3f} us" for k, v in sorted(cpp.items()))
            print(f"C++ (fxc_bench_stream, stereo, 64 frames, medians): {extra}")
        if cpp_note:
            print("note:", cpp_note)
        print("'stream vs whole': max |difference| of one second in 64-frame blocks against one whole-signal call")


if __name__ == "__main__":
    sys.exit(main())
