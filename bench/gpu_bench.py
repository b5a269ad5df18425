#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU benchmark: W1..W6 through `fxc bench --target cuda`, and in the same run the GPU peers
that are installed (torchaudio.functional.lfilter on torch CUDA tensors, cupyx.scipy.signal
.sosfilt), with the device's measured copy bandwidth as the memory floor.

One command, on a machine with an NVIDIA GPU and a built fxc:

    python3 bench/gpu_bench.py [--fxc build/tools/fxc/fxc] [--quick] [--dtype f32]

Reports per workload: time (median), achieved bandwidth (signal bytes read + written / time)
against the measured device copy bandwidth, and each peer's time and fxc's ratio to it.
fxc's time includes the host<->device copies of the signal (it runs a whole signal from host
memory through a recorded CUDA graph); the peers' times are device-resident (inputs already on
the GPU), so the ratios favour the peers. W6 (256 files x 1 s stereo) runs as 512 channels,
which is how fxc batches (channels side by side).

Written without access to a GPU: it has never been run (docs/cuda.md).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from compare_peers import w1, w2, w3, w4  # noqa: E402  the same designs as the CPU comparison

# (id, .fx, sos or FIR builder, channels, seconds, quick seconds, fs)
WORKLOADS = [
    ("W1 api 8 ch", "w1_api.fx", w1, 8, 120, 10, 44100),
    ("W1 api 1024 ch", "w1_api.fx", w1, 1024, 10, 2, 44100),
    ("W2 iir 8 ch", "w2_iir.fx", w2, 8, 60, 10, 44100),
    ("W2 iir 1 ch", "w2_iir.fx", w2, 1, 300, 30, 44100),
    ("W3 fir 1 ch", "w3_fir.fx", w3, 1, 60, 10, 44100),
    ("W4 profile 2 ch", "w4_profile.fx", w4, 2, 10, 10, 48000),
    ("W5 long mono", "w5_long_mono.fx", w4, 1, 600, 60, 44100),
    ("W6 256 x 1 s stereo", "w6_many_files.fx", w4, 512, 1, 1, 48000),
]


def median_ms(fn, sync, repeat):
    fn(); sync()
    times = []
    for _ in range(repeat):
        sync(); t = time.perf_counter(); fn(); sync(); times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[len(times) // 2]


def copy_bandwidth(xp_name):
    """Device-to-device copy bandwidth in bytes/s (read + write), 1 GiB buffers."""
    n = 1 << 28
    if xp_name == "torch":
        import torch
        a = torch.empty(n, dtype=torch.float32, device="cuda"); b = torch.empty_like(a)
        ms = median_ms(lambda: b.copy_(a), torch.cuda.synchronize, 10)
    else:
        import cupy as cp
        a = cp.empty(n, dtype=cp.float32); b = cp.empty_like(a)
        ms = median_ms(lambda: cp.copyto(b, a), cp.cuda.Device().synchronize, 10)
    return 2 * 4 * n / (ms / 1e3)


def peers(builder, channels, samples, fs, dtype, repeat):
    out = {}
    design = builder(fs)
    is_fir = isinstance(design, list)
    np_dtype = np.float32 if dtype == "f32" else np.float64
    x = np.random.default_rng(1).uniform(-1, 1, (channels, samples)).astype(np_dtype)
    try:
        import torch
        import torchaudio.functional as F
        t = torch.from_numpy(x).cuda()
        sections = [np.asarray(design)] if not is_fir else []

        def run_torch():
            y = t
            if is_fir:
                for taps in design:
                    b = torch.tensor(taps, dtype=t.dtype, device="cuda")
                    a = torch.zeros_like(b); a[0] = 1
                    y = F.lfilter(y, a, b, clamp=False)
            else:
                for s in sections[0]:
                    b = torch.tensor(s[:3], dtype=t.dtype, device="cuda")
                    a = torch.tensor(s[3:], dtype=t.dtype, device="cuda")
                    y = F.lfilter(y, a, b, clamp=False)
            return y
        out["torchaudio lfilter"] = median_ms(run_torch, torch.cuda.synchronize, repeat)
    except Exception as e:  # not installed, or failed: say so
        out["torchaudio lfilter"] = f"n/a ({type(e).__name__})"
    try:
        import cupy as cp
        import cupyx.scipy.signal as cs
        xc = cp.asarray(x)
        if is_fir:
            fn = lambda: [cs.lfilter(cp.asarray(taps, dtype=xc.dtype), cp.asarray([1.0], dtype=xc.dtype), xc, axis=-1)
                          for taps in design]
        else:
            sos = cp.asarray(design, dtype=xc.dtype)
            fn = lambda: cs.sosfilt(sos, xc, axis=-1)
        out["cupyx sosfilt/lfilter"] = median_ms(fn, cp.cuda.Device().synchronize, repeat)
    except Exception as e:
        out["cupyx sosfilt/lfilter"] = f"n/a ({type(e).__name__})"
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fxc", default=os.path.join(ROOT, "build", "tools", "fxc", "fxc"))
    p.add_argument("--dtype", default="f32", choices=["f32", "f64"])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="short signals")
    p.add_argument("--no-peers", action="store_true")
    args = p.parse_args()
    if not os.path.exists(args.fxc):
        sys.exit(f"{args.fxc} not found: build fxc first (cmake -S . -B build -G Ninja && cmake --build build)")
    info = subprocess.run([args.fxc, "info"], capture_output=True, text=True).stdout
    print(next((l for l in info.splitlines() if l.startswith("CUDA:")), "CUDA: ?"))
    floor = None
    for xp in ("torch", "cupy"):
        try:
            floor = copy_bandwidth(xp); print(f"measured device copy bandwidth ({xp}): {floor / 1e9:.0f} GB/s"); break
        except Exception:
            pass
    if floor is None:
        print("no torch or cupy: the copy bandwidth is not measured")
    rows = []
    for name, fx, builder, ch, seconds, quick, fs in WORKLOADS:
        s = quick if args.quick else seconds
        cmd = [args.fxc, "bench", os.path.join(ROOT, "bench", "workloads", fx), "--target", "cuda", "--channels",
               str(ch), "--seconds", str(s), "--fs", str(fs), "--dtype", args.dtype, "--repeat", str(args.repeat),
               "--json"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name}: fxc failed: {r.stderr.strip()}"); continue
        j = json.loads(r.stdout)
        ms = j["fused"]["median_ms"]
        bw = j["bytes_moved"] / (ms / 1e3)
        row = {"workload": name, "fxc_ms": ms, "GB/s": bw / 1e9,
               "of_copy_bw": (bw / floor) if floor else None, "max_err": j["max_abs_error_vs_f64_reference"]}
        if not args.no_peers:
            for peer, t in peers(builder, ch, int(s * fs), fs, args.dtype, args.repeat).items():
                row[peer] = t
                if isinstance(t, float):
                    row[peer + " / fxc"] = t / ms
        rows.append(row)
        print(json.dumps(row))
    print()
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "workload", k))
    print(" | ".join(keys))
    for r in rows:
        print(" | ".join(f"{r.get(k):.4g}" if isinstance(r.get(k), float) else str(r.get(k, "")) for k in keys))
    if not rows:
        sys.exit("no workload ran on the GPU (see the messages above)")


if __name__ == "__main__":
    main()
