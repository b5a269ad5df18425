#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Same-run comparison of fxc against Faust on two looped workloads (feedback through delays).

  L1 echo:     bench/workloads/loop_echo.fx, a stereo echo (250 ms, feedback 0.5, the cookbook
               lowpass at 3 kHz inside the loop), 2 ch x 60 s at 48 kHz;
               Faust: bench/peers/faust/loop_echo.dsp, `+ ~ (fi.tf2(...) : @(11999) : *(0.5))`.
  L2 freeverb: bench/workloads/loop_freeverb.fx, Jezar's Freeverb mono bank (std/reverb.fx's
               freeverb_mono()) on each of 8 channels, 8 ch x 60 s at 44.1 kHz;
               Faust: bench/peers/faust/loop_freeverb.dsp, the same bank written by hand after
               Jezar's C++ (same arithmetic), and, as an informative row,
               bench/peers/faust/loop_freeverb_lib.dsp, Faust's own re.mono_freeverb (not the
               same arithmetic: see that file).

The method is bench/compare_peers.py's: fxc is timed by `fxc bench --json` at float32 (with its
default threads and with --threads 1); each Faust program is compiled with `faust -lang cpp`
(float), wrapped in bench/peers/faust/harness.cpp and built with g++ -O3 -march=native in
--peers-build (build-peers/loops/, ignored by git), then timed on float32 noise of the same
channels and length (uniform in [-1, 1], seed 1234; fxc bench makes its own noise of the same
kind). Several channels run both as one `par(i, C, chain)` program and as one instance of the
mono chain per channel, and the faster counts. All in the same run of this script, in --rounds
rounds that interleave fxc and Faust: each time is the median over the rounds of each round's
median of --repeat runs after a warm-up. Use Debian's /usr/bin/python3 (numpy):

    /usr/bin/python3 bench/loops_vs_faust.py [--fxc build/tools/fxc/fxc] [--quick] [--repeat 5] [--rounds 3]
                                             [--no-check] [--no-lib] [--only L1]

--quick shortens the signals to 10 s (the ratios are per-sample throughputs, so they compare).
The accuracy check (skip with --no-check) runs each program on a short signal (an impulse on
every channel, then noise from the second second on) through fxc (float32 kernels and its float64
reference interpreter, `fxc run --target ref`) and through the Faust harness (float, and -double
inside with float32 in and out), and prints the largest differences.
"""
import argparse, math, os, re, shutil, subprocess, sys, tempfile
import numpy as np

from peer_support import FAUST_DIR, ROOT, WORKLOAD_DIR, Faust, fxc_bench, max_diff

# (id, .fx, [(Faust .dsp, label, same arithmetic?)], channels, seconds, quick seconds, fs)
WORKLOADS = [
    ("L1 echo", "loop_echo.fx", [("loop_echo.dsp", "hand-written", True)], 2, 60, 10, 48000),
    ("L2 freeverb", "loop_freeverb.fx", [("loop_freeverb.dsp", "hand-written (Jezar)", True),
                                         ("loop_freeverb_lib.dsp", "re.mono_freeverb", False)], 8, 60, 10, 44100),
]
CHECK_SECONDS = 2.0  # the accuracy check's signal


def cookbook_lowpass(f0, fs, q=1 / math.sqrt(2)):
    """The Audio EQ Cookbook low-pass biquad, normalised: b0, b1, b2, a1, a2."""
    w0 = 2 * math.pi * f0 / fs
    alpha, c = math.sin(w0) / (2 * q), math.cos(w0)
    a0 = 1 + alpha
    return ((1 - c) / 2 / a0, (1 - c) / a0, (1 - c) / 2 / a0, -2 * c / a0, (1 - alpha) / a0)


def check_echo_coefficients(fxc):
    """The .dsp's numeric biquad against the cookbook formulas and against fxc's IR (one line)."""
    text = open(os.path.join(FAUST_DIR, "loop_echo.dsp")).read()
    dsp = [float(re.search(rf"^{k} = ([-0-9.e]+);", text, re.M).group(1)) for k in ("b0", "b1", "b2", "a1", "a2")]
    want = cookbook_lowpass(3000.0, 48000.0)
    ir = subprocess.run([fxc, "dump", os.path.join(WORKLOAD_DIR, "loop_echo.fx"), "--emit", "ir", "--fs", "48000"],
                        check=True, capture_output=True, text=True).stdout
    m = re.search(r"sections=\[\[([^\]]*)\]\]", ir)
    fx = [float(v) for v in m.group(1).split(",")] if m else None
    d_dsp = max_diff(dsp, want)  # NaN-aware, where the builtin max() drops a NaN after the first item
    d_fx = max_diff(fx, want) if fx else float("nan")
    ok = d_dsp < 1e-15 and d_fx < 1e-15
    return ok, f"echo biquad: loop_echo.dsp vs cookbook formulas {d_dsp:.1e}, fxc IR vs formulas {d_fx:.1e}"


def accuracy(fxc, faust, fx, dsps, channels, fs, scratch):
    """Max differences on a short signal: an impulse on every channel, then noise from 1 s on."""
    n = int(CHECK_SECONDS * fs)
    x = np.zeros((channels, n), np.float32)
    x[:, 0] = 1.0
    x[:, int(fs):] = np.random.default_rng(99).uniform(-1, 1, (channels, n - int(fs))).astype(np.float32)
    npy, raw = os.path.join(scratch, "check_in.npy"), os.path.join(scratch, "check_in.f32")
    np.save(npy, x)
    x.tofile(raw)
    graph = os.path.join(WORKLOAD_DIR, fx)
    out32, out64 = os.path.join(scratch, "fxc32.npy"), os.path.join(scratch, "fxc64.npy")
    subprocess.run([fxc, "run", graph, "-i", npy, "--fs", str(fs), "-o", out32, "--dtype", "f32"],
                   check=True, capture_output=True, text=True)
    subprocess.run([fxc, "run", graph, "-i", npy, "--fs", str(fs), "-o", out64, "--target", "ref"],
                   check=True, capture_output=True, text=True)
    fx32, ref = np.load(out32), np.load(out64)
    result = {"fxc32_vs_ref64": max_diff(fx32, ref), "peak": float(np.max(np.abs(ref)))}
    for dsp, _, _ in dsps:
        got = {}
        for p in ("f32", "f64"):
            path = os.path.join(scratch, f"faust_{p}.f32")
            faust.run(dsp, channels, "par", p, raw, n, fs, 1, path)
            got[p] = np.fromfile(path, dtype=np.float32).reshape(channels, n)
        result[dsp] = {"faust32_vs_ref64": max_diff(got["f32"], ref), "faust32_vs_fxc32": max_diff(got["f32"], fx32),
                       "faust64_vs_ref64": max_diff(got["f64"], ref)}
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fxc", default=os.path.join(ROOT, "build", "tools", "fxc", "fxc"))
    ap.add_argument("--quick", action="store_true", help="10 s signals instead of 60 s")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per measurement (the median is kept)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds of all the measurements, interleaved (the median over rounds is kept)")
    ap.add_argument("--no-check", action="store_true", help="skip the accuracy check")
    ap.add_argument("--no-lib", action="store_true", help="leave out the informative re.mono_freeverb row")
    ap.add_argument("--peers-build", default=os.path.join(ROOT, "build-peers", "loops"),
                    help="where the Faust harnesses are built (default build-peers/loops/, git-ignored)")
    ap.add_argument("--only", default="", help="run only workloads whose id starts with this (L1 or L2)")
    args = ap.parse_args()

    faust = Faust(args.peers_build)
    notes = []
    ok, line = check_echo_coefficients(args.fxc)
    notes.append(("" if ok else "MISMATCH: ") + line)
    scratch = tempfile.mkdtemp(prefix="fxc-loops-")
    rows = []
    try:
        for name, fx, dsps, ch, secs, quick_secs, fs in WORKLOADS:
            if args.only and not name.startswith(args.only):
                continue
            if args.no_lib:
                dsps = [d for d in dsps if d[2]]
            secs = quick_secs if args.quick else secs
            n = int(secs * fs)
            signal_name = f"{ch} ch x {secs:g} s at {fs / 1000:g} kHz"
            print(f"{name}: {signal_name} ...", file=sys.stderr, flush=True)
            # Build everything first so that no compile runs between the timings.
            for dsp, _, _ in dsps:
                for layout in ("par", "instances"):
                    faust.binary(dsp, ch, layout, "f32")
            noise = os.path.join(scratch, "noise.f32")
            np.random.default_rng(1234).uniform(-1, 1, (ch, n)).astype(np.float32).tofile(noise)
            # Rounds interleave fxc and Faust, so that a slow spell of a shared machine falls on
            # both; each measurement is the median of its rounds' medians.
            fx_mt, fx_1t, faust_ms = [], [], {}
            for _ in range(args.rounds):
                fx_mt.append(fxc_bench(args.fxc, fx, ch, secs, fs, args.repeat))
                fx_1t.append(fxc_bench(args.fxc, fx, ch, secs, fs, args.repeat, threads=1))
                for dsp, _, _ in dsps:
                    for layout in ("par", "instances"):
                        r = faust.run(dsp, ch, layout, "f32", noise, n, fs, args.repeat)
                        faust_ms.setdefault((dsp, layout), []).append(r["median_ms"])
            med = lambda v: float(np.median(v))
            fxc_ms = {k: med([r[k]["median_ms"] for r in fx_mt]) for k in ("fused", "unfused")}
            fxc1_ms = med([r["fused"]["median_ms"] for r in fx_1t])
            faust_times = {}
            for dsp, _, _ in dsps:
                by_layout = {layout: med(faust_ms[(dsp, layout)]) for layout in ("par", "instances")}
                layout = min(by_layout, key=by_layout.get)
                faust_times[dsp] = (by_layout[layout], layout, by_layout, faust_ms[(dsp, layout)])
            spread = dict(fxc=[r["fused"]["median_ms"] for r in fx_mt], fxc1=[r["fused"]["median_ms"] for r in fx_1t])
            os.remove(noise)
            err = None if args.no_check else accuracy(args.fxc, faust, fx, dsps, ch, fs, scratch)
            for dsp, label, same in dsps:
                rows.append(dict(name=name, signal=signal_name, faust_label=label, same=same,
                                 fxc=fxc_ms["fused"], fxc1=fxc1_ms, fxc_unfused=fxc_ms["unfused"],
                                 compile=med([r["compile_ms"]["cold"] for r in fx_mt]),
                                 faust=faust_times[dsp][0], layout=faust_times[dsp][1],
                                 by_layout=faust_times[dsp][2], rounds=dict(spread, faust=faust_times[dsp][3]),
                                 err=None if err is None else dict(err[dsp], fxc32_vs_ref64=err["fxc32_vs_ref64"],
                                                                   peak=err["peak"])))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    threads = os.cpu_count()
    try:
        threads = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    cols = ["workload", "signal", "Faust program", "fxc f32 (ms)", "fxc 1 thread (ms)", "Faust f32 (ms)",
            "Faust layout", "Faust / fxc", "Faust / fxc 1 thread"]
    if not args.no_check:
        cols += ["err fxc f32", "err Faust f32", "fxc f32 vs Faust f32", "Faust -double vs fxc ref"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        cells = [r["name"], r["signal"], r["faust_label"] + ("" if r["same"] else " (other arithmetic)"),
                 f"{r['fxc']:.1f}", f"{r['fxc1']:.1f}", f"{r['faust']:.1f}", r["layout"],
                 f"**{r['faust'] / r['fxc']:.2f}x**", f"**{r['faust'] / r['fxc1']:.2f}x**"]
        if r["err"] is not None:
            e = r["err"]
            cells += [f"{e['fxc32_vs_ref64']:.1e}", f"{e['faust32_vs_ref64']:.1e}", f"{e['faust32_vs_fxc32']:.1e}",
                      f"{e['faust64_vs_ref64']:.1e}"]
        print("| " + " | ".join(cells) + " |")
    print()
    print(f"Times: ms, all in this run: medians over {args.rounds} interleaved rounds of each one's median of "
          f"{args.repeat} runs after a warm-up; fxc = `fxc bench --json --dtype f32` "
          f"fused kernels with its default threads ({threads} usable CPUs here) and with --threads 1; Faust = "
          "`faust -lang cpp` (float) + bench/peers/faust/harness.cpp, g++ -O3 -march=native, one compute() over the "
          "whole signal, the faster of par(i, C, chain) and one instance per channel. Faust / fxc > 1: fxc is faster.")
    if not args.no_check:
        print(f"Errors: max |difference| on a {CHECK_SECONDS:g} s check signal (impulse, then noise from 1 s on); "
              "ref = fxc's float64 reference interpreter (fxc run --target ref); Faust -double has float32 in and out, so "
              "about 1e-7 there means the same arithmetic; 're.mono_freeverb' is another structure, so large there.")
    for r in rows:
        print(f"{r['name']} ({r['faust_label']}): fxc unfused {r['fxc_unfused']:.1f} ms, cold compile "
              f"{r['compile']:.1f} ms; Faust par {r['by_layout']['par']:.1f} ms, instances "
              f"{r['by_layout']['instances']:.1f} ms" + (f"; output peak {r['err']['peak']:.2f}" if r["err"] else ""))
        print("  rounds' medians (ms): " + "; ".join(f"{k} " + ", ".join(f"{v:.1f}" for v in r["rounds"][k])
                                                  for k in ("fxc", "fxc1", "faust")))
    for note in notes:
        print(note)
    print(f"{faust.version}; {faust.gxx}")


if __name__ == "__main__":
    sys.exit(main())
