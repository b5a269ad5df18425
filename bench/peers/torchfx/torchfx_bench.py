#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One standard workload through TorchFX on the CPU, timed as its users call it, for
bench/compare_peers.py (--torchfx-python PYTHON). Runs in a Python that has torchfx (it needs
torch >= 2.6 and NumPy 2, which Debian's packages are not: a venv of its own, see
docs/performance.md); prints one JSON line.

    PYTHON torchfx_bench.py --workload W1 --fs 44100 --channels 8 --samples N --repeat 3 \
        --noise x.f32 [--out y.f32]

The chains are TorchFX's own benchmark chains (its benchmark/api_bench.py, iir_bench.py and
fir_bench.py), which performance.md's workloads are: W1 = HiChebyshev1(20, 60, 65) and
LoButterworth(5000, 4900, 4850) at their default orders and ripple; W2 = HiButterworth(1000),
LoButterworth(5000), HiChebyshev1(1500), LoChebyshev1(1800), order 2; W4/W5 =
HiButterworth(80, 4), LoButterworth(12000, 8); W3 = DesignableFIR lowpass, 101..105 taps (FFT
convolution, TorchFX's default). Two paths, both timed, the faster reported: the pipe (`wave |
chain`, one filter after another) and, for IIR chains, FusedSOSCascade.from_chain (one native
call over all sections). Coefficients are designed before the timing, as fxc compiles before
its. torch runs on one thread (torch.set_num_threads(1)), as the other peers do.
"""
import argparse, importlib.metadata, json, sys, time

import numpy as np
import torch
import torchfx as fx
from torchfx.filter import (DesignableFIR, HiButterworth, HiChebyshev1, LoButterworth, LoChebyshev1)


def chain_for(workload, fs):
    if workload == "W1":
        return [HiChebyshev1(20, fs=fs), HiChebyshev1(60, fs=fs), HiChebyshev1(65, fs=fs),
                LoButterworth(5000, fs=fs), LoButterworth(4900, fs=fs), LoButterworth(4850, fs=fs)]
    if workload == "W2":
        return [HiButterworth(1000, order=2, fs=fs), LoButterworth(5000, order=2, fs=fs),
                HiChebyshev1(1500, order=2, fs=fs), LoChebyshev1(1800, order=2, fs=fs)]
    if workload in ("W4", "W5"):
        return [HiButterworth(80, order=4, fs=fs), LoButterworth(12000, order=8, fs=fs)]
    if workload == "W3":
        return [DesignableFIR(f, n, fs=fs) for n, f in ((101, 1000), (102, 5000), (103, 1500), (104, 1800), (105, 1850))]
    raise SystemExit(f"unknown workload {workload}")


def torchfx_paths(workload, fs, device):
    """{path name: fn(x) -> y} on filters made now, on `device`: the pipe (`wave | chain`) and,
    for IIR chains, the fused SOS cascade. TorchFX's filters keep their state from call to
    call (a stream): make them again for an output to check."""
    filters = chain_for(workload, fs)
    for f in filters:
        if hasattr(f, "compute_coefficients"):
            f.compute_coefficients()
    chain = torch.nn.Sequential(*filters).to(device)
    made = {"pipe": lambda x: (fx.Wave(x, fs) | chain).ys}
    if workload != "W3":
        fused = fx.filter.fused.FusedSOSCascade.from_chain(chain).to(device)
        made["fused"] = lambda x: fused(x)
    return made


def median_ms(fn, repeat):
    fn()  # warm-up (first-call allocation and dispatch)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", required=True)
    ap.add_argument("--fs", type=int, required=True)
    ap.add_argument("--channels", type=int, required=True)
    ap.add_argument("--samples", type=int, required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--noise", required=True, help="float32 samples, channels x samples, C order")
    ap.add_argument("--out", help="write the faster path's output here (float32, same layout)")
    args = ap.parse_args()
    torch.set_num_threads(1)

    x = np.fromfile(args.noise, dtype=np.float32).reshape(args.channels, args.samples)
    xt = torch.from_numpy(x)
    with torch.inference_mode():
        times = {name: median_ms(lambda: fn(xt), args.repeat) for name, fn in torchfx_paths(args.workload, args.fs, "cpu").items()}
        best = min(times, key=times.get)
        if args.out:
            torchfx_paths(args.workload, args.fs, "cpu")[best](xt).to(torch.float32).numpy().tofile(args.out)
    print(json.dumps({"median_ms": times[best], "path": best, "times": times,
                      "torchfx": importlib.metadata.version("torchfx"), "torch": torch.__version__,
                      "native": bool(fx.is_native_available())}))


if __name__ == "__main__":
    sys.exit(main())
