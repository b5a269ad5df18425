#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU benchmark: fxc's CUDA target against the memory floor and the GPU peers, in one run.

    python3 bench/gpu_bench.py [--fxc build/tools/fxc/fxc] [--quick] [--dtype f32] [--dry-run]

Per workload (W1 8 ch x 120 s, W4's chain on 1024 ch x 60 s, W5, the vocal example, then W1 on
1024 ch x 10 s, W2, W3, W4 2 ch, W6 as 512 channels, a FIR of 24001 taps on 2 ch x 60 s, the
loop echo on 2 ch x 60 s and Freeverb on 8 ch x 60 s), in this order:
  - fxc host:   `fxc bench --target cuda --json`, fused.median_ms: a whole signal from host memory,
                so it includes the host<->device copies and the host staging (end to end);
  - fxc device: where the Python package cannot run (no package for this Python), the C++
                API's Program::run_device as `fxc bench --target cuda` times it (device_resident:
                signals in GPU memory, host clock around each call, which synchronizes), its
                output checked equal to the host path's; else the Python package, `fxc.compile(.fx, fs, target="cuda", channels=C,
                signal_length=N)` then `program(x)` on a CUDA torch tensor (a CUDA tensor out),
                timed with torch.cuda.Event on the current stream: one warm-up call, then the
                median of --repeat. Checked on its first and last channel against SciPy in
                float64. Skipped, with the reason, where the package, torch CUDA or the
                package's CUDA tensor support is missing;
  - the floor:  2·C·N·b / bandwidth (input read once, output written once), b the sample size,
                the bandwidth the device's peak (memory clock x bus width from torch or the
                driver, or a known name; --bandwidth-gbs overrides), and "x floor" = device
                time / floor. The measured device copy bandwidth is printed beside it;
  - peers:      torchaudio.functional.lfilter (one call per section; FIR: per stage) and
                cupyx.scipy.signal.sosfilt (FIR: lfilter per stage; a FIR of more than
                LONG_FIR_TAPS taps: torchaudio's and cupyx's fftconvolve) on the same device data
                (cupy reads the torch tensor through DLPack on torch's stream), and, where torchfx
                imports (its wheel carried: docs/cuda.md), TorchFX's own chain for W1-W4 (its fused
                SOS cascade on the GPU; W3 its FFT FIR pipe): same CUDA events,
                and "x" = peer / fxc device. Peers walk time serially, so a full-length call can
                take minutes: each peer is timed on N/64, N/16, N/4, N samples while the next size
                fits --peer-budget-s; a time marked '~' is extrapolated linearly from the largest
                size run (serial in time: linear; for a parallel peer it overstates the peer).
Then the vocal example end to end on a stereo WAV: `fxc run examples/vocal.fx -i in.wav -o
out.wav` wall time, --target cuda against --target cpu (median of 3 after a warm-up run that
fills the kernel cache), and the same on a corpus of 8 such files in one process (`-i DIR
--out-dir`, --jobs 1 and 4: the device opened once; median of 2 after a warm-up, per file), and
the targets of design/performance.md (W1 <= 3x floor, 1024 ch x 60 s
<= 2x floor, >= 10x both peers on W1 and W5, vocal >= 5x the CPU end to end) marked met/MISSED.

Sizes fit an 80 GB GPU (1024 ch x 60 s float32: 11.8 GB per signal, input + output in this
process; `fxc bench` runs before the tensors exist). --deadline-s stops starting new workloads so
that the run fits a 10-minute call. --dry-run needs no GPU: it prints what would run, the bytes
and floors at --bandwidth-gbs (default: the H100's 3350), which Python modules import, and runs
each row's `fxc bench` on the CPU for a few milliseconds to check the JSON fields read here.
"""
import argparse
import ctypes
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from compare_peers import w1, w2, w3, w4  # noqa: E402  the same designs as the CPU comparison

LONG_FIR_TAPS = 2048  # from here the peers convolve FIRs by FFT, as their users would


def long_fir(fs):
    """bench/workloads/long_fir.fx: firwin(24001, 1000 Hz)."""
    from scipy import signal
    return [signal.firwin(24001, 1000, fs=fs)]


# (name, graph, SOS or FIR builder (None: no peers), channels, seconds, quick seconds, fs, target)
# target: "floor3" / "floor2" (x floor), "peers10" (>= 10x both peers), "nocheck" (no fxc bench
# accuracy check); primary rows run first.
PRIMARY = [
    ("W1 api 8 ch", "bench/workloads/w1_api.fx", w1, 8, 120, 10, 44100, "floor3 peers10"),
    ("W4 chain 1024 ch", "bench/workloads/w4_profile.fx", w4, 1024, 60, 5, 48000, "floor2"),
    ("W5 long mono", "bench/workloads/w5_long_mono.fx", w4, 1, 600, 60, 44100, "peers10"),
    ("vocal 2 ch", "examples/vocal.fx", None, 2, 60, 10, 48000, ""),
]
SECONDARY = [
    ("W1 api 1024 ch", "bench/workloads/w1_api.fx", w1, 1024, 10, 2, 44100, ""),
    ("W2 iir 8 ch", "bench/workloads/w2_iir.fx", w2, 8, 60, 10, 44100, ""),
    ("W2 iir 1 ch", "bench/workloads/w2_iir.fx", w2, 1, 300, 30, 44100, ""),
    ("W3 fir 1 ch", "bench/workloads/w3_fir.fx", w3, 1, 60, 10, 44100, ""),
    ("W4 profile 2 ch", "bench/workloads/w4_profile.fx", w4, 2, 10, 10, 48000, ""),
    ("W6 256 x 1 s stereo", "bench/workloads/w6_many_files.fx", w4, 512, 1, 1, 48000, ""),
    # 24001 taps: fxc's partitioned FFT convolution against the peers' FFT convolutions; fxc
    # bench's float64 reference would convolve directly on one CPU thread (138 G products): no
    # host check, the device check against SciPy's fftconvolve.
    ("long FIR 2 ch", "bench/workloads/long_fir.fx", long_fir, 2, 60, 10, 48000, "nocheck"),
    # Loops through one mix, fused into one kernel each (a thread per channel): no GPU peer
    # runs them; `python3 bench/gpu_model.py --loops` predicts them, fused and unfused.
    ("loop echo 2 ch", "bench/workloads/loop_echo.fx", None, 2, 60, 10, 48000, ""),
    ("Freeverb 8 ch", "bench/workloads/loop_freeverb.fx", None, 8, 60, 10, 44100, ""),
]
CHECK_LIMIT = 50_000_000   # fxc bench's float64 reference runs on one CPU thread: only below this


def host_check(ch, N, target):
    """Whether fxc bench checks a row against its float64 reference."""
    return ch * N <= CHECK_LIMIT and "nocheck" not in target.split()


def peer_methods(design):
    """What the peers run for a design (an SOS array or a list of FIR taps)."""
    if not isinstance(design, list):
        return "torchaudio lfilter, cupyx sosfilt"
    if any(len(t) > LONG_FIR_TAPS for t in design):
        return "torchaudio fftconvolve, cupyx fftconvolve"
    return "torchaudio lfilter, cupyx lfilter"


KNOWN_GBS = [("H200", 4800), ("H100 NVL", 3900), ("H100 PCIe", 2000), ("H100", 3350), ("A100-SXM4-80GB", 2039),
             ("A100 80GB PCIe", 1935), ("A100", 1555), ("L40S", 864), ("L4", 300)]


def note(e):
    return f"n/a ({type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''})"


# ---------------------------------------------------------------- the device
def peak_bandwidth(torch):
    """(bytes/s, where it came from) or (None, why not): memory clock x bus width x 2 (DDR)."""
    try:
        p = torch.cuda.get_device_properties(0)
        clk, bus = getattr(p, "memory_clock_rate", 0), getattr(p, "memory_bus_width", 0)
        if clk and bus:
            return 2 * clk * 1e3 * bus / 8, "torch device properties"
    except Exception:
        pass
    try:
        cu = ctypes.CDLL("libcuda.so.1")
        dev, clk, bus = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        if (cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
                and cu.cuDeviceGetAttribute(ctypes.byref(clk), 36, dev) == 0     # MEMORY_CLOCK_RATE, kHz
                and cu.cuDeviceGetAttribute(ctypes.byref(bus), 37, dev) == 0     # GLOBAL_MEMORY_BUS_WIDTH
                and clk.value and bus.value):
            return 2 * clk.value * 1e3 * bus.value / 8, "driver memory clock x bus width"
    except Exception:
        pass
    name = ""
    try:
        name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=20).stdout.splitlines()[0]
    except Exception:
        pass
    for key, gbs in KNOWN_GBS:
        if key.lower() in name.lower():
            return gbs * 1e9, f"datasheet for '{name}'"
    return None, f"unknown ('{name}')"


def copy_bandwidth(torch):
    """Measured device-to-device copy, bytes/s counted read + write, 1 GiB buffers."""
    a = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    ms = event_median(torch, lambda: b.copy_(a), 10)
    return 2 * 4 * (1 << 28) / (ms / 1e3)


def event_median(torch, fn, repeat, warmup=1):
    for _ in range(warmup):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(max(1, repeat)):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def free_gpu(torch):
    gc.collect()
    if torch is not None:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    try:
        import cupy as cp
        cp.get_default_memory_pool().free_all_blocks()
    except Exception:
        pass


# ---------------------------------------------------------------- fxc bench (host memory)
def bench_cmd(args, fx, ch, seconds, fs, target="cuda", repeat=None, check=True):
    cmd = [args.fxc, "bench", os.path.join(ROOT, fx), "--target", target, "--channels", str(ch), "--seconds",
           f"{seconds:g}", "--fs", str(fs), "--dtype", args.dtype, "--repeat", str(repeat or args.repeat), "--json"]
    return cmd + ([] if check else ["--no-check"])


def run_bench(cmd):
    """fxc bench --json's fields: fused.median_ms, fused.dispatches, includes_host_copies,
    max_abs_error_vs_f64_reference (null with --no-check), unfused.median_ms."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError((r.stderr or r.stdout).strip().splitlines()[-1] if (r.stderr or r.stdout).strip()
                           else f"exit status {r.returncode}")
    j = json.loads(r.stdout)
    dev = j.get("device_resident") or {}
    return {"host_ms": j["fused"]["median_ms"], "dispatches": j["fused"].get("dispatches"),
            "host_copies": j.get("includes_host_copies"), "bench_err": j.get("max_abs_error_vs_f64_reference"),
            "unfused_ms": (j.get("unfused") or {}).get("median_ms"),
            "run_device_ms": dev.get("median_ms"), "run_device_why": dev.get("error"),
            "run_device_vs_host": dev.get("max_abs_difference_from_host_run")}


# ---------------------------------------------------------------- device-resident (Python package)
def import_fxc():
    """The installed package, else build/pyenv's or .venv's, else python/ (needs its _core built)."""
    ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    tried = []
    for extra in [None] + [os.path.join(ROOT, d, "lib", ver, "site-packages") for d in ("build/pyenv", ".venv")] + \
            [os.path.join(ROOT, "python")]:
        if extra is not None:
            if not os.path.isdir(extra):
                continue
            sys.path.insert(0, extra)
        try:
            import fxc
            return fxc, None
        except Exception as e:
            tried.append(note(e))
            for m in [m for m in sys.modules if m == "fxc" or m.startswith("fxc.")]:
                del sys.modules[m]
            if extra is not None:
                sys.path.remove(extra)
    return None, tried[-1] + " (pip install . or bash scripts/test-python.sh)"


def reference(builder, fs, x64):
    from scipy import signal
    design = builder(fs)
    if isinstance(design, list):
        for taps in design:
            if len(taps) > LONG_FIR_TAPS:
                x64 = signal.fftconvolve(x64, taps)[:len(x64)]
            else:
                x64 = signal.lfilter(taps, [1.0], x64)
        return x64
    return signal.sosfilt(design, x64)


def fxc_device(fxc, torch, x, fx, builder, fs, repeat):
    """Median ms of program(x) on a CUDA tensor, and its error on the first and last channel."""
    C, N = x.shape
    prog = fxc.compile(os.path.join(ROOT, fx), fs=fs, dtype="float32" if x.dtype == torch.float32 else "float64",
                       target="cuda", channels=C, signal_length=N)
    y = prog(x)
    if isinstance(y, tuple):
        y = y[0]
    if not (isinstance(y, torch.Tensor) and y.is_cuda):
        raise TypeError("the package returned host memory for a CUDA tensor (no device-resident path yet)")
    torch.cuda.synchronize()
    err = None
    if builder is not None:
        err = 0.0
        for c in sorted({0, C - 1}):
            ref = reference(builder, fs, x[c].double().cpu().numpy())
            # np.maximum keeps a NaN (the builtin max(err, nan) returns err): a NaN output fails the check.
            err = float(np.maximum(err, np.max(np.abs(y[c].double().cpu().numpy() - ref))))
    del y
    ms = event_median(torch, lambda: prog(x), repeat, warmup=0)   # the call above was the warm-up
    return ms, err


# ---------------------------------------------------------------- peers
def ladder_sizes(N, fs):
    sizes = [N]
    while len(sizes) < 4 and sizes[-1] // 4 >= min(N, fs):
        sizes.append(sizes[-1] // 4)
    return sizes[::-1]


def time_peer(torch, fn, x, fs, repeat, budget_s):
    """(ms for all N samples, note): fn on x[:, :n] for growing n while it fits the budget."""
    C, N = x.shape
    sizes = ladder_sizes(N, fs)
    t0 = time.perf_counter()
    fn(x[:, :sizes[0]].contiguous())          # warm-up (plans, kernels, allocator)
    torch.cuda.synchronize()
    last, why = None, ""
    for n in sizes:
        if last is not None and time.perf_counter() - t0 + last[1] * n / last[0] / 1e3 > budget_s:
            break
        try:
            xs = x if n == N else x[:, :n].contiguous()
            ms = event_median(torch, lambda: fn(xs), 1, warmup=0)
        except Exception as e:            # out of memory at this size: extrapolate from the last
            why = f", {type(e).__name__} at {n} samples"
            break
        finally:
            xs = None
            free_gpu(torch)
        last = (n, ms)
    if last is None:
        raise RuntimeError(why.strip(", "))
    if last[0] < N:
        return last[1] * N / last[0], f"~ from {last[0]} of {N} samples{why}"
    left = budget_s - (time.perf_counter() - t0)
    k = min(repeat - 1, int(left / (last[1] / 1e3))) if last[1] > 0 else repeat - 1
    times = [last[1]] + ([event_median(torch, lambda: fn(x), 1, warmup=0) for _ in range(max(0, k))])
    return statistics.median(times), f"{len(times)} run(s)"


def peers(torch, x, builder, fs, repeat, budget_s):
    out = {}
    design = builder(fs)
    is_fir = isinstance(design, list)
    try:
        import torchaudio.functional as F
        if is_fir:
            coefs = [(torch.tensor(t, dtype=x.dtype, device="cuda"), None) for t in design]
            for i, (b, _) in enumerate(coefs):
                a = torch.zeros_like(b)
                a[0] = 1.0
                coefs[i] = (b, a)
        else:
            coefs = [(torch.tensor(s[:3], dtype=x.dtype, device="cuda"), torch.tensor(s[3:], dtype=x.dtype, device="cuda"))
                     for s in design]

        def run_torch(xs):
            y = xs
            for b, a in coefs:
                if is_fir and b.numel() > LONG_FIR_TAPS:
                    y = F.fftconvolve(y, b.expand(y.shape[0], -1))[..., :y.shape[-1]]
                else:
                    y = F.lfilter(y, a, b, clamp=False)
            return y
        out["torchaudio"] = time_peer(torch, run_torch, x, fs, repeat, budget_s)
    except Exception as e:  # not installed, or failed: say so
        out["torchaudio"] = (None, note(e))
    free_gpu(torch)
    try:
        import cupy as cp
        import cupyx.scipy.signal as cs
        dt = cp.float32 if x.dtype == torch.float32 else cp.float64
        sos = None if is_fir else cp.asarray(design, dtype=dt)
        taps = [cp.asarray(t, dtype=dt) for t in design] if is_fir else []
        one = cp.asarray([1.0], dtype=dt)

        def run_cupy(xs):
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                xc = cp.from_dlpack(xs)
                if is_fir:
                    for t in taps:
                        if t.size > LONG_FIR_TAPS:
                            xc = cs.fftconvolve(xc, t[None, :], axes=-1)[:, :xc.shape[-1]]
                        else:
                            xc = cs.lfilter(t, one, xc, axis=-1)
                    return xc
                return cs.sosfilt(sos, xc, axis=-1)
        out["cupyx"] = time_peer(torch, run_cupy, x, fs, repeat, budget_s)
    except Exception as e:
        out["cupyx"] = (None, note(e))
    free_gpu(torch)
    try:
        out["torchfx"] = (None, "no TorchFX chain for this workload")
        workload = {w1: "W1", w2: "W2", w3: "W3", w4: "W4"}.get(builder)
        if workload:
            sys.path.insert(0, os.path.join(ROOT, "bench", "peers", "torchfx"))
            from torchfx_bench import torchfx_paths  # imports torchfx: not installed is a note
            paths = torchfx_paths(workload, fs, x.device)
            name = "fused" if "fused" in paths else "pipe"  # its fastest path, as users would pick it
            with torch.inference_mode():
                ms, how = time_peer(torch, paths[name], x, fs, repeat, budget_s)
            out["torchfx"] = (ms, f"{how}, {name}")
    except Exception as e:
        out["torchfx"] = (None, note(e))
    free_gpu(torch)
    return out


# ---------------------------------------------------------------- the vocal example end to end
VOCAL_CORPUS_FILES = 8
VOCAL_CORPUS_JOBS = (1, 4)   # files at a time: one, and enough to overlap reading, the device and writing


def timed_runs(cmd, runs, before=None):
    """Wall-clock milliseconds of `runs` runs of `cmd` after one untimed run (it fills the
    kernel cache), or the last line of its error. `before` runs ahead of each, untimed."""
    times = []
    for i in range(runs + 1):
        if before:
            before()
        t = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return None, (r.stderr.strip().splitlines() or ["failed"])[-1]
        if i:
            times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times), " ".join(cmd[1:])


def vocal_end_to_end(args, seconds):
    """`fxc run examples/vocal.fx` on a stereo WAV, cpu against cuda, two ways: one file per
    process (the driver, the context and the kernel cache opened each time) and a corpus of
    VOCAL_CORPUS_FILES files in one process (`-i DIR --out-dir`: opened once), per file."""
    from scipy.io import wavfile
    res = {}
    vocal = os.path.join(ROOT, "examples", "vocal.fx")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.wav")
        x = np.random.default_rng(7).uniform(-0.5, 0.5, (int(seconds * 48000), 2)).astype(np.float32)
        wavfile.write(src, 48000, x)
        corpus = os.path.join(tmp, "corpus")
        os.mkdir(corpus)
        for k in range(VOCAL_CORPUS_FILES):
            os.link(src, os.path.join(corpus, f"take{k}.wav"))
        outs = {}
        for target in ("cpu", "cuda"):
            dst = os.path.join(tmp, f"out_{target}.wav")
            options = ["--target", target, "--dtype", args.dtype]
            res[target] = timed_runs([args.fxc, "run", vocal, "-i", src, "-o", dst] + options, 3)
            if res[target][0] is not None:
                with warnings.catch_warnings():    # fxc's WAVs carry a chunk SciPy skips
                    warnings.simplefilter("ignore")
                    outs[target] = wavfile.read(dst)[1].astype(np.float64)
            for jobs in VOCAL_CORPUS_JOBS:
                out_dir = os.path.join(tmp, f"corpus_{target}_{jobs}")
                ms, how = timed_runs([args.fxc, "run", vocal, "-i", corpus, "--out-dir", out_dir, "--jobs", str(jobs)]
                                     + options, 2, before=lambda d=out_dir: shutil.rmtree(d, ignore_errors=True))
                res[f"{target}_corpus{jobs}"] = (ms / VOCAL_CORPUS_FILES if ms is not None else None, how)
                if ms is not None and target in outs:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        last = wavfile.read(os.path.join(out_dir, f"take{VOCAL_CORPUS_FILES - 1}.wav"))[1]
                    diff = float(np.max(np.abs(last.astype(np.float64) - outs[target])))
                    res[target + "_corpus_diff"] = float(np.maximum(diff, res.get(target + "_corpus_diff", 0.0)))
        if len(outs) == 2:
            res["max_abs_diff"] = float(np.max(np.abs(outs["cpu"] - outs["cuda"])))
    return res


# ---------------------------------------------------------------- main
def fmt(v, spec=".4g", width=None):
    s = format(v, spec) if isinstance(v, float) else ("" if v is None else str(v))
    return s if width is None or len(s) <= width else s[:width - 3] + "..."


def seconds_of(args, ch, sec, qsec, fs):
    """The row's length: --quick's, then shortened to --max-samples channel-samples."""
    s = qsec if args.quick else sec
    if args.max_samples and ch * s * fs > args.max_samples:
        s = float(f"{args.max_samples / (ch * fs):.3g}")
    return s


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fxc", default=os.path.join(ROOT, "build", "tools", "fxc", "fxc"))
    p.add_argument("--dtype", default="f32", choices=["f32", "f64"])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="short signals (1024 ch x 5 s, W1 8 ch x 10 s, ...)")
    p.add_argument("--no-peers", action="store_true")
    p.add_argument("--peer-budget-s", type=float, default=15.0,
                   help="seconds per peer per workload (a third of it on the secondary rows)")
    p.add_argument("--bandwidth-gbs", type=float, default=None,
                   help="device memory bandwidth for the floor, GB/s (default: the device's peak)")
    p.add_argument("--deadline-s", type=float, default=480.0, help="start no workload after this many seconds")
    p.add_argument("--max-samples", type=float, default=None,
                   help="shorten a row whose channels x samples exceed this (the row's name says so)")
    p.add_argument("--only", default="", help="run only the workloads whose name contains this text")
    p.add_argument("--rows", default="all", choices=["all", "primary", "secondary"],
                   help="primary: the targets' rows and the vocal example end to end; secondary: the rest")
    p.add_argument("--dry-run", action="store_true", help="print what would run; needs no GPU")
    args = p.parse_args()
    t_start = time.perf_counter()
    b = 4 if args.dtype == "f32" else 8
    budget = args.peer_budget_s / (3 if args.quick else 1)
    rows_plan = [(w, True) for w in PRIMARY if args.rows != "secondary"] + \
        [(w, False) for w in SECONDARY if args.rows != "primary"]
    rows_plan = [r for r in rows_plan if args.only.lower() in r[0][0].lower()]
    vocal_s = 10 if args.quick else 60

    have_fxc = os.path.exists(args.fxc)
    if not have_fxc and not args.dry_run:
        sys.exit(f"{args.fxc} not found: build fxc first (cmake -S . -B build -G Ninja && cmake --build build)")
    fxc, fxc_why = import_fxc()
    try:
        import torch
        cuda_ok = torch.cuda.is_available()
        torch_why = None if cuda_ok else "torch has no CUDA device"
    except Exception as e:
        torch, cuda_ok, torch_why = None, False, note(e)
    mods = {}
    for m in ("torchaudio", "cupy", "torchfx"):
        try:
            __import__(m)
            mods[m] = "yes"
        except Exception as e:
            mods[m] = note(e)
    print(f"fxc package: {'yes' if fxc else fxc_why}; torch CUDA: {'yes' if cuda_ok else torch_why}; "
          f"torchaudio: {mods['torchaudio']}; cupy: {mods['cupy']}; torchfx: {mods['torchfx']}")
    dev_col = fxc is not None and cuda_ok
    if not dev_col:
        print("device-resident column: from fxc bench's run_device (the fxc package or torch CUDA is missing)")

    if args.dry_run:
        bw = (args.bandwidth_gbs or 3350) * 1e9
        print(f"DRY RUN: nothing runs on a GPU. Floors at {bw / 1e9:.0f} GB/s "
              f"({'--bandwidth-gbs' if args.bandwidth_gbs else 'assumed: H100 SXM datasheet'}); dtype {args.dtype}; "
              f"repeat {args.repeat}; peer budget {budget:g} s per peer (secondary rows {budget / 3:g} s); "
              f"deadline {args.deadline_s:g} s")
        for (name, fx, builder, ch, sec, qsec, fs, target), primary in rows_plan:
            s = seconds_of(args, ch, sec, qsec, fs)
            N = int(s * fs)
            check = host_check(ch, N, target)
            print(f"\n{name}{'' if primary else ' (secondary)'}: {ch} ch x {s:g} s @ {fs} Hz = {ch} x {N} samples, "
                  f"{2 * ch * N * b / 1e6:.1f} MB moved, floor {2 * ch * N * b / bw * 1e6:.1f} us, "
                  f"GPU memory here {2 * ch * N * b / 1e9:.2f} GB (x, y){'; target ' + target if target else ''}")
            print("  host:   fxc " + " ".join(bench_cmd(args, fx, ch, s, fs, repeat=3 if ch * N > 1e9 else None,
                                                   check=check)[1:]))
            print(f"  device: fxc.compile('{fx}', fs={fs}, dtype='{'float32' if b == 4 else 'float64'}', "
                  f"target='cuda', channels={ch}, signal_length={N}); program(x_cuda) x (1 + {args.repeat}), CUDA events"
                  + (f"; error on channels {sorted({0, ch - 1})} against SciPy float64" if builder else ""))
            if builder is not None and not args.no_peers:
                print(f"  peers:  {peer_methods(builder(fs))} on sizes {ladder_sizes(N, fs)} while within the budget")
            if have_fxc:   # the JSON fields this script reads, from a few ms of the CPU target
                try:
                    r = run_bench(bench_cmd(args, fx, ch, 0.01, fs, target="cpu", repeat=1))
                    print(f"  fxc bench --target cpu --seconds 0.01 parsed: {json.dumps(r)}")
                except Exception as e:
                    print(f"  fxc bench --target cpu --seconds 0.01: {note(e)}")
        print(f"\nvocal end to end: fxc run examples/vocal.fx -i in.wav (stereo, {vocal_s} s, 48 kHz float WAV) "
              f"-o out.wav --target cpu|cuda --dtype {args.dtype}: 1 + 3 runs each, wall-clock medians, outputs "
              f"compared; then -i DIR --out-dir OUT --jobs 1|4 on {VOCAL_CORPUS_FILES} such files, 1 + 2 runs each, per "
              f"file; "
              f"target: cuda >= 5x faster")
        return

    if not cuda_ok:
        print("no torch CUDA: neither the device copy bandwidth nor the peers are measured")
    bw, bw_src = (args.bandwidth_gbs * 1e9, "--bandwidth-gbs") if args.bandwidth_gbs else \
        peak_bandwidth(torch) if torch is not None else (None, "no torch")
    copy_bw = None
    if cuda_ok:
        try:
            copy_bw = copy_bandwidth(torch)
        except Exception as e:
            print(f"copy bandwidth: {note(e)}")
        print(f"device: {torch.cuda.get_device_name(0)}, "
              f"{torch.cuda.get_device_properties(0).total_memory / 1e9:.1f} GB")
    if bw is None and copy_bw is not None:
        bw, bw_src = copy_bw, "measured copy (peak unknown: pass --bandwidth-gbs)"
    info = subprocess.run([args.fxc, "info"], capture_output=True, text=True).stdout
    print(next((line for line in info.splitlines() if line.startswith("CUDA:")), "CUDA: ?"))
    print(f"floor bandwidth: {fmt(bw and bw / 1e9, '.0f')} GB/s ({bw_src}); measured copy: "
          f"{fmt(copy_bw and copy_bw / 1e9, '.0f') or 'n/a'} GB/s")

    rows, verdicts = [], []

    def do_row(w, primary):
        name, fx, builder, ch, sec, qsec, fs, target = w
        s = seconds_of(args, ch, sec, qsec, fs)
        if s < (qsec if args.quick else sec):
            name = f"{name} ({s:g} s)"
        N = int(s * fs)
        nbytes = 2 * ch * N * b
        row = {"workload": name, "C x N": f"{ch} x {N}", "MB": nbytes / 1e6,
               "floor_us": nbytes / bw * 1e6 if bw else None}
        free_gpu(torch if cuda_ok else None)
        try:   # before this process allocates the signal: fxc bench needs the device memory
            r = run_bench(bench_cmd(args, fx, ch, s, fs, repeat=3 if ch * N > 1e9 else None,
                                    check=host_check(ch, N, target)))
            row.update(host_ms=r["host_ms"], host_err=r["bench_err"])
            if not dev_col and r["run_device_ms"] is not None:   # the C++ API on GPU memory
                row.update(device_ms=r["run_device_ms"], device_src="fxc bench run_device",
                           device_vs_host=r["run_device_vs_host"])
                if bw:
                    row["x floor"] = row["device_ms"] / (row["floor_us"] / 1e3)
                if copy_bw:
                    row["x copy floor"] = row["device_ms"] / (nbytes / copy_bw * 1e3)
            elif not dev_col and r["run_device_why"]:
                row["device_ms"] = "run_device: " + r["run_device_why"]
        except Exception as e:
            row["host_ms"] = note(e)
        x = None
        if cuda_ok:
            free = torch.cuda.mem_get_info()[0]
            if 1.1 * nbytes > free:   # x and y
                row.setdefault("device_ms", "")
                row["device_ms"] = row["device_ms"] if row.get("device_src") else f"n/a ({nbytes / 1e9:.1f} GB of signals, {free / 1e9:.1f} GB free)"
            else:
                g = torch.Generator(device="cuda").manual_seed(1)
                x = torch.rand((ch, N), generator=g, device="cuda",
                               dtype=torch.float32 if b == 4 else torch.float64).mul_(2).sub_(1)
        if x is not None and dev_col:
            try:
                row["device_ms"], row["device_err"] = fxc_device(fxc, torch, x, fx, builder, fs, args.repeat)
                if bw:
                    row["x floor"] = row["device_ms"] / (row["floor_us"] / 1e3)
                if copy_bw:
                    row["x copy floor"] = row["device_ms"] / (nbytes / copy_bw * 1e3)
            except Exception as e:
                row["device_ms"] = note(e)
            free_gpu(torch)
        elif "device_ms" not in row:
            row["device_ms"] = "skipped (see the first line)"
        if x is not None and builder is not None and not args.no_peers:
            for peer, (ms, how) in peers(torch, x, builder, fs, args.repeat, budget if primary else budget / 3).items():
                row[peer + "_ms"] = ms if ms is not None else how
                if ms is not None:
                    row[peer + " run"] = how
                    if isinstance(row.get("device_ms"), float):
                        row[peer + " / fxc"] = ms / row["device_ms"]
        del x
        free_gpu(torch if cuda_ok else None)
        for t in target.split():
            if t.startswith("floor"):
                lim = float(t[5:])
                v = row.get("x floor")
                verdicts.append(f"{name}: device time within {lim:g}x of the floor: "
                                + (f"{v:.2f}x, {'met' if v <= lim else 'MISSED'}" if v else "not measured"))
            if t == "peers10":
                for peer in ("torchaudio", "cupyx"):
                    v = row.get(peer + " / fxc")
                    verdicts.append(f"{name}: at least 10x {peer}: " + (
                        f"{v:.1f}x{' (extrapolated peer)' if row[peer + ' run'].startswith('~') else ''}, "
                        f"{'met' if v >= 10 else 'MISSED'}" if v else "not measured"))
        rows.append(row)
        print(json.dumps(row), flush=True)

    def in_time(what):
        if time.perf_counter() - t_start > args.deadline_s:
            print(f"{what}: skipped, past --deadline-s {args.deadline_s:g}")
            return False
        return True

    for w, primary in rows_plan:
        if primary and in_time(w[0]):
            do_row(w, True)
    if not args.only and args.rows != "secondary" and in_time("vocal end to end"):
        e2e = vocal_end_to_end(args, vocal_s)
        ways = [("", "one file per process")] + [
            (f"_corpus{j}", f"a corpus of {VOCAL_CORPUS_FILES} files in one process, --jobs {j}, per file")
            for j in VOCAL_CORPUS_JOBS]
        for suffix, how in ways:
            cpu, gpu = e2e.get("cpu" + suffix, (None, "")), e2e.get("cuda" + suffix, (None, ""))
            print(f"vocal end to end, stereo {vocal_s} s, {how}: cpu {fmt(cpu[0])} ms, cuda {fmt(gpu[0])} ms"
                  f"{'' if cpu[0] else ' (cpu: ' + cpu[1] + ')'}{'' if gpu[0] else ' (cuda: ' + gpu[1] + ')'}")
            verdicts.append(f"vocal example end to end ({how}), cuda at least 5x faster than cpu: " + (
                f"{cpu[0] / gpu[0]:.2f}x, {'met' if cpu[0] / gpu[0] >= 5 else 'MISSED'}" if cpu[0] and gpu[0]
                else "not measured"))
        print(f"vocal outputs: cuda against cpu differ by {fmt(e2e.get('max_abs_diff'))}; a corpus file against "
              f"the single run: cpu {fmt(e2e.get('cpu_corpus_diff'))}, cuda {fmt(e2e.get('cuda_corpus_diff'))}")
    for w, primary in rows_plan:
        if not primary and in_time(w[0]):
            do_row(w, False)

    print()
    keys = ["workload", "C x N", "MB", "floor_us", "host_ms", "device_ms", "device_src", "device_vs_host", "x floor",
            "x copy floor", "device_err",
            "host_err", "torchaudio_ms", "torchaudio / fxc", "torchaudio run", "cupyx_ms", "cupyx / fxc", "cupyx run",
            "torchfx_ms", "torchfx / fxc", "torchfx run"]
    keys = [k for k in keys if any(k in r for r in rows)]
    print(" | ".join(keys))
    for r in rows:
        print(" | ".join(fmt(r.get(k), width=60) for k in keys))
    print("\nhost_ms: fxc bench (host memory, copies and staging included); device_ms: program(CUDA tensor), "
          "CUDA events; x floor: device_ms / floor; peer / fxc: peer time / device_ms ('~': extrapolated)")
    print("\ntargets (design/performance.md):")
    for v in verdicts:
        print("  " + v)
    if not any(isinstance(r.get("host_ms"), float) or isinstance(r.get("device_ms"), float) for r in rows):
        sys.exit("no workload ran on the GPU (see the messages above)")


if __name__ == "__main__":
    main()
