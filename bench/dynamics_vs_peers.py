#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Same-run comparison of fxc's dynamics stages against Faust (and TorchFX where it installs).

  D1 vocal: bench/workloads/dyn_vocal.fx, 8 ch x 60 s at 48 kHz: butter(2, 80 Hz, highpass),
            compressor(-18 dB, 4, 5 ms, 80 ms, knee=6 dB, makeup=4 dB), lowshelf(200 Hz, -2 dB),
            peaking(3 kHz, 1.0, 3 dB), highshelf(10 kHz, 1.5 dB), limiter(-1 dB, 50 ms);
            Faust: bench/peers/faust/dyn_vocal.dsp, the contract's equations written by hand, and,
            as an informative row, dyn_vocal_lib.dsp (co.compressor_mono in place of the compressor).
  D2 bank:  bench/workloads/dyn_bank.fx, compressor(-20 dB, 4, 10 ms, 100 ms) on each of 64 channels,
            64 ch x 60 s at 48 kHz; Faust: dyn_bank.dsp (by hand) and dyn_bank_lib.dsp (co.compressor_mono).

The contract is docs/fx-language.md, "Dynamics (version 2)": the gain computer in dB with the
quadratic knee, the smooth branching peak detector on the gain reduction, c = 10^((M - y) / 20).
The hand-written Faust programs compute the same equations; co.compressor_mono (Julius Smith's:
a linear attack/release follower before the gain computer, then a one-pole on the dB gain) and
TorchFX (a decoupled linear peak detector before the gain computer; its limiter a linear gain
recurrence) do not, so their rows time other arithmetic and are informative.

The method is bench/loops_vs_faust.py's (helpers in bench/peer_support.py): fxc is timed by
`fxc bench --json` at float32 (default threads, and --threads 1); each Faust program is compiled
with `faust -lang cpp` (float), wrapped in bench/peers/faust/harness.cpp and built with g++ -O3
-march=native in --peers-build (build-peers/dynamics/, ignored by git), then timed on float32
noise of the same channels and length (uniform in [-1, 1], seed 1234; fxc bench makes its own noise
of the same kind), both as one par(i, C, chain) program and as one instance per channel (the faster
counts). TorchFX (its Compressor and Limiter, and for D1 its HiButterworth, LoShelving, Peaking and
HiShelving filters, on CPU float32 tensors, torch's default threads and 1 thread) runs in
--torchfx-python (a venv with torchfx and torch, default /work/bench-venv/bin/python, outside the
repository); when that python is missing or TorchFX fails on a probe, the row is skipped and the
reason printed. All in one run, in --rounds rounds that interleave the implementations: each time
is the median over the rounds of each round's median of --repeat runs after a warm-up. Use
Debian's /usr/bin/python3 (numpy):

    /usr/bin/python3 bench/dynamics_vs_peers.py [--fxc build/tools/fxc/fxc] [--quick] [--repeat 5] [--rounds 3]
                                                [--no-check] [--no-lib] [--no-torchfx] [--only D1]

--quick shortens the signals to 10 s. The accuracy check (skip with --no-check) runs each graph on a
short signal (silence, an impulse, then noise whose level sweeps from -60 dB to 0 dB, each channel
shifted, so that every branch of the gain computers and detectors is taken) through fxc (float32
kernels, and its float64 reference interpreter `fxc run --target ref`) and through the Faust
hand-written programs (float, and -double with float64 out), and prints the largest differences;
Faust -double against fxc's reference should be about 1e-12 or below when the equations match.
"""
import argparse, json, math, os, re, shutil, subprocess, sys, tempfile, time

import numpy as np

from peer_support import (FAUST_DIR, ROOT, WORKLOAD_DIR, Faust, fxc_bench, max_diff, median, output_dtype,
                          usable_cpus)

# (id, .fx, [(Faust .dsp, label, same equations?)], TorchFX chain, channels, seconds, quick seconds, fs)
WORKLOADS = [
    ("D1 vocal", "dyn_vocal.fx", [("dyn_vocal.dsp", "hand-written (contract)", True),
                                  ("dyn_vocal_lib.dsp", "co.compressor_mono in the chain", False)],
     "vocal", 8, 60, 10, 48000),
    ("D2 bank", "dyn_bank.fx", [("dyn_bank.dsp", "hand-written (contract)", True),
                                ("dyn_bank_lib.dsp", "co.compressor_mono", False)],
     "bank", 64, 60, 10, 48000),
]
CHECK_SECONDS = 2.0
DEFAULT_TORCHFX_PYTHON = "/work/bench-venv/bin/python"


# ---- coefficient checks: the .dsp's numeric butter section and the cookbook biquads against fxc's IR ----

def cookbook(kind, f0, fs, gain_db=0.0, q=1 / math.sqrt(2)):
    """The Audio EQ Cookbook biquad in fxc's operation order (design/biquad_design.cpp), normalised."""
    w0 = 2 * math.pi * f0 / fs
    c, alpha, a = math.cos(w0), math.sin(w0) / (2 * q), 10 ** (gain_db / 40)
    s = 2 * math.sqrt(a) * alpha
    if kind == "peaking":
        b0, b1, b2, a0, a1, a2 = 1 + alpha * a, -2 * c, 1 - alpha * a, 1 + alpha / a, -2 * c, 1 - alpha / a
    elif kind == "lowshelf":
        b0, b1, b2 = a * ((a + 1) - (a - 1) * c + s), 2 * a * ((a - 1) - (a + 1) * c), a * ((a + 1) - (a - 1) * c - s)
        a0, a1, a2 = (a + 1) + (a - 1) * c + s, -2 * ((a - 1) + (a + 1) * c), (a + 1) + (a - 1) * c - s
    elif kind == "highshelf":
        b0, b1, b2 = a * ((a + 1) + (a - 1) * c + s), -2 * a * ((a - 1) + (a + 1) * c), a * ((a + 1) + (a - 1) * c - s)
        a0, a1, a2 = (a + 1) - (a - 1) * c + s, 2 * ((a - 1) - (a + 1) * c), (a + 1) - (a - 1) * c - s
    else:
        raise ValueError(kind)
    return (b0 / a0, b1 / a0, b2 / a0, a1 / a0, a2 / a0)


def ir_sections(fxc, fx, fs):
    """Every sos section of the optimised IR, in order."""
    ir = subprocess.run([fxc, "dump", os.path.join(WORKLOAD_DIR, fx), "--emit", "ir-opt", "--fs", str(fs)],
                        check=True, capture_output=True, text=True).stdout
    sections = []
    for m in re.finditer(r"sections=\[\[(.*?)\]\]", ir):
        sections += [[float(v) for v in s.split(",")] for s in m.group(1).split("], [")]
    return sections


def check_vocal_coefficients(fxc, fs):
    sections = ir_sections(fxc, "dyn_vocal.fx", fs)
    text = open(os.path.join(FAUST_DIR, "dyn_vocal.dsp")).read()
    hp = [float(v) for v in re.search(r"^hp80 = tdf2\(([^)]*)\);", text, re.M).group(1).split(",")]
    want = [cookbook("lowshelf", 200, fs, -2), cookbook("peaking", 3000, fs, 3, q=1.0), cookbook("highshelf", 10000, fs, 1.5)]
    if len(sections) != 4:
        return False, f"vocal coefficients: expected 4 sos sections in fxc's IR, found {len(sections)}"
    d_hp = max_diff(hp, sections[0])  # NaN-aware, where the builtin max() drops a NaN after the first item
    d_eq = max_diff(want, sections[1:])
    ok = d_hp == 0 and d_eq < 1e-15
    return ok, (f"vocal coefficients: dyn_vocal.dsp's butter section vs fxc's IR {d_hp:.1e}; "
                f"fxc's lowshelf/peaking/highshelf vs the cookbook formulas {d_eq:.1e}")


# ---- TorchFX, run in its own python (the venv) through this file's --torchfx-worker mode ----

def torchfx_worker(spec):
    """Runs in the TorchFX venv: times the chain on the noise file and prints one JSON object."""
    out = {}
    try:
        import torch
        import torchfx
        from torchfx.effect import Compressor, Limiter
        from torchfx.filter.iir import HiButterworth, HiShelving, LoShelving, Peaking
        out["versions"] = f"torchfx {getattr(torchfx, '__version__', '?')}, torch {torch.__version__}"
        try:
            from importlib.metadata import version
            out["versions"] = f"torchfx {version('torchfx')}, torch {torch.__version__}"
        except Exception:
            pass
        fs = spec["fs"]

        def make():
            if spec["chain"] == "vocal":
                q = 1 / math.sqrt(2)
                return torch.nn.Sequential(
                    HiButterworth(80.0, order=2, fs=fs),
                    Compressor(-18.0, 4.0, 0.005, 0.080, knee=6.0, makeup_gain=4.0, fs=fs),
                    LoShelving(200.0, q, -2.0, gain_scale="db", fs=fs),
                    Peaking(3000.0, 1.0, 3.0, gain_scale="db", fs=fs),
                    HiShelving(10000.0, q, 1.5, gain_scale="db", fs=fs),
                    Limiter(-1.0, lookahead=0.0, release=0.050, fs=fs))
            return Compressor(-20.0, 4.0, 0.010, 0.100, knee=0.0, fs=fs)

        if spec["threads"]:
            torch.set_num_threads(spec["threads"])
        out["threads"] = torch.get_num_threads()
        x = torch.from_numpy(np.fromfile(spec["input"], dtype=np.float32).reshape(spec["channels"], spec["samples"]))
        make()(x[:, :4800].contiguous())  # a probe: fails here if the native kernels do not run
        if spec.get("probe"):
            print(json.dumps(dict(out, probe="ok")))
            return
        ms = []
        for _ in range(spec["repeat"] + 1):  # the first is a warm-up
            chain = make()  # fresh state, coefficients designed on the first call as each timed run's cost
            t0 = time.perf_counter()
            y = chain(x)
            ms.append((time.perf_counter() - t0) * 1e3)
        out.update(median_ms=float(np.median(ms[1:])), min_ms=float(np.min(ms[1:])))
        if spec.get("output"):
            y.numpy().astype(np.float32).tofile(spec["output"])
    except Exception as e:  # reported by the parent, which skips the row
        out["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    print(json.dumps(out))


class TorchFX:
    def __init__(self, python):
        self.python, self.error, self.versions = python, None, None
        if not python or not os.path.exists(python):
            self.error = f"no TorchFX python at {python} (make a venv with `pip install torchfx`)"

    def run(self, chain, channels, input_path, samples, fs, repeat, threads=None, output=None, probe=False):
        spec = dict(chain=chain, channels=channels, input=input_path, samples=samples, fs=fs, repeat=repeat,
                    threads=threads, output=output, probe=probe)
        p = subprocess.run([self.python, os.path.abspath(__file__), "--torchfx-worker", json.dumps(spec)],
                           capture_output=True, text=True)
        try:
            r = json.loads(p.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            r = {"error": f"exit {p.returncode}: " + (p.stderr.strip().splitlines() or ["no output"])[-1]}
        self.versions = r.get("versions", self.versions)
        if "error" in r:
            self.error = r["error"]
            return None
        return r


# ---- accuracy ----

def check_signal(channels, fs):
    """0.1 s of silence, an impulse, then noise whose level sweeps -60 dB -> 0 dB (each channel shifted)."""
    n = int(CHECK_SECONDS * fs)
    rng = np.random.default_rng(99)
    x = np.zeros((channels, n))
    start = int(0.1 * fs)
    x[:, start] = 0.5
    t = np.arange(n - start - 100) / (n - start - 100)
    for c in range(channels):
        level = -60 + 60 * ((t + c / channels) % 1.0)
        x[c, start + 100:] = rng.uniform(-1, 1, t.size) * 10 ** (level / 20)
    return x.astype(np.float32)


def accuracy(fxc, faust, fx, dsps, channels, fs, scratch, torchfx_chain, torchfx):
    x = check_signal(channels, fs)
    n = x.shape[1]
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
    result = {"fxc32_vs_ref64": max_diff(fx32, ref), "peak": float(np.max(np.abs(ref))), "ref_dtype": str(ref.dtype)}
    for dsp, _, _ in dsps:
        got = {}
        for p in ("f32", "f64io"):
            path = os.path.join(scratch, f"faust_{p}.raw")
            faust.run(dsp, channels, "par", p, raw, n, fs, 1, path)
            got[p] = np.fromfile(path, dtype=output_dtype(p)).reshape(channels, n)
        worst = np.unravel_index(np.argmax(np.abs(got["f64io"] - ref)), ref.shape)
        result[dsp] = {"faust32_vs_ref64": max_diff(got["f32"], ref), "faust32_vs_fxc32": max_diff(got["f32"], fx32),
                       "faust64_vs_ref64": max_diff(got["f64io"], ref), "worst": [int(v) for v in worst]}
    if torchfx is not None and torchfx.error is None:
        path = os.path.join(scratch, "torchfx.f32")
        if torchfx.run(torchfx_chain, channels, raw, n, fs, 1, output=path) is not None:
            result["torchfx_vs_ref64"] = max_diff(np.fromfile(path, np.float32).reshape(channels, n), ref)
    return result


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--torchfx-worker":
        return torchfx_worker(json.loads(sys.argv[2]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fxc", default=os.path.join(ROOT, "build", "tools", "fxc", "fxc"))
    ap.add_argument("--quick", action="store_true", help="10 s signals instead of 60 s")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per measurement (the median is kept)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds of all the measurements, interleaved (the median over rounds is kept)")
    ap.add_argument("--no-check", action="store_true", help="skip the accuracy check")
    ap.add_argument("--no-lib", action="store_true", help="leave out the informative co.compressor_mono rows")
    ap.add_argument("--no-torchfx", action="store_true", help="leave out TorchFX")
    ap.add_argument("--torchfx-python", default=DEFAULT_TORCHFX_PYTHON,
                    help=f"a python with torchfx and torch installed (default {DEFAULT_TORCHFX_PYTHON})")
    ap.add_argument("--peers-build", default=os.path.join(ROOT, "build-peers", "dynamics"),
                    help="where the Faust harnesses are built (default build-peers/dynamics/, git-ignored)")
    ap.add_argument("--only", default="", help="run only workloads whose id starts with this (D1 or D2)")
    args = ap.parse_args()

    faust = Faust(args.peers_build)
    torchfx = None if args.no_torchfx else TorchFX(args.torchfx_python)
    notes = []
    ok, line = check_vocal_coefficients(args.fxc, 48000)
    notes.append(("" if ok else "MISMATCH: ") + line)
    scratch = tempfile.mkdtemp(prefix="fxc-dynamics-")
    rows = []
    try:
        for name, fx, dsps, tfx_chain, ch, secs, quick_secs, fs in WORKLOADS:
            if args.only and not name.startswith(args.only):
                continue
            if args.no_lib:
                dsps = [d for d in dsps if d[2]]
            secs = quick_secs if args.quick else secs
            n = int(secs * fs)
            signal_name = f"{ch} ch x {secs:g} s at {fs / 1000:g} kHz"
            print(f"{name}: {signal_name} ...", file=sys.stderr, flush=True)
            for dsp, _, _ in dsps:  # build everything before timing anything
                for layout in ("par", "instances"):
                    faust.binary(dsp, ch, layout, "f32")
            noise = os.path.join(scratch, "noise.f32")
            np.random.default_rng(1234).uniform(-1, 1, (ch, n)).astype(np.float32).tofile(noise)
            use_tfx = torchfx is not None and torchfx.error is None
            if use_tfx and torchfx.run(tfx_chain, ch, noise, n, fs, 1, probe=True) is None:
                use_tfx = False  # the probe failed: torchfx.error says why
            fx_mt, fx_1t, faust_ms, tfx_ms = [], [], {}, {"default": [], "1": []}
            load = []
            for _ in range(args.rounds):
                load.append(os.getloadavg()[0])
                fx_mt.append(fxc_bench(args.fxc, fx, ch, secs, fs, args.repeat))
                fx_1t.append(fxc_bench(args.fxc, fx, ch, secs, fs, args.repeat, threads=1))
                for dsp, _, _ in dsps:
                    for layout in ("par", "instances"):
                        r = faust.run(dsp, ch, layout, "f32", noise, n, fs, args.repeat)
                        faust_ms.setdefault((dsp, layout), []).append(r["median_ms"])
                if use_tfx:
                    for key, threads in (("default", None), ("1", 1)):
                        r = torchfx.run(tfx_chain, ch, noise, n, fs, args.repeat, threads=threads)
                        if r is None:
                            use_tfx = False
                            break
                        tfx_ms[key].append(r["median_ms"])
                        if threads is None:
                            tfx_ms["threads"] = r["threads"]
            os.remove(noise)
            row = dict(name=name, signal=signal_name, samples=ch * n, fxc=median([r["fused"]["median_ms"] for r in fx_mt]),
                       fxc_unfused=median([r["unfused"]["median_ms"] for r in fx_mt]),
                       fxc1=median([r["fused"]["median_ms"] for r in fx_1t]),
                       compile=median([r["compile_ms"]["cold"] for r in fx_mt]), load=load,
                       rounds=dict(fxc=[r["fused"]["median_ms"] for r in fx_mt], fxc1=[r["fused"]["median_ms"] for r in fx_1t]),
                       peers=[])
            for dsp, label, same in dsps:
                by_layout = {layout: median(faust_ms[(dsp, layout)]) for layout in ("par", "instances")}
                layout = min(by_layout, key=by_layout.get)
                row["peers"].append(dict(key=dsp, label=f"Faust {label}", same=same, ms=by_layout[layout],
                                         detail=f"par {by_layout['par']:.1f}, instances {by_layout['instances']:.1f}",
                                         rounds=faust_ms[(dsp, layout)]))
            if use_tfx and tfx_ms["1"]:
                row["peers"].append(dict(key="torchfx", label=f"TorchFX ({tfx_ms['threads']} threads)", same=False,
                                         ms=median(tfx_ms["default"]), detail="", rounds=tfx_ms["default"]))
                row["peers"].append(dict(key="torchfx1", label="TorchFX (1 thread)", same=False,
                                         ms=median(tfx_ms["1"]), detail="", rounds=tfx_ms["1"]))
            row["err"] = None if args.no_check else accuracy(args.fxc, faust, fx, dsps, ch, fs, scratch, tfx_chain,
                                                             torchfx if use_tfx else None)
            rows.append(row)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print("| workload | signal | implementation | same equations | time (ms) | Msamples/s | time / fxc 1 thread |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        impls = [("fxc f32, default threads", True, r["fxc"]), ("fxc f32, 1 thread", True, r["fxc1"])]
        impls += [(p["label"], p["same"], p["ms"]) for p in r["peers"]]
        for label, same, ms in impls:
            print(f"| {r['name']} | {r['signal']} | {label} | {'yes' if same else 'no'} | {ms:.1f} | "
                  f"{r['samples'] / ms / 1e3:.1f} | {ms / r['fxc1']:.2f} |")
    print()
    print("| workload | fastest peer | its time (ms) | **fxc 1 thread / fastest peer** | fxc default threads / fastest peer "
          "| fxc 1 thread / Faust same equations |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        fastest = min(r["peers"], key=lambda p: p["ms"])
        same = min((p for p in r["peers"] if p["same"]), key=lambda p: p["ms"])
        print(f"| {r['name']} | {fastest['label']} | {fastest['ms']:.1f} | **{r['fxc1'] / fastest['ms']:.2f}** | "
              f"{r['fxc'] / fastest['ms']:.2f} | {r['fxc1'] / same['ms']:.2f} |")
    print()
    print(f"Times: ms, all in this run: medians over {args.rounds} interleaved rounds of each one's median of "
          f"{args.repeat} runs after a warm-up. Ratios are time ratios: below 1, fxc is faster. fxc = `fxc bench --json "
          f"--dtype f32` fused kernels, default threads ({usable_cpus()} usable CPUs here) and --threads 1; Faust = "
          "`faust -lang cpp` (float) + bench/peers/faust/harness.cpp, g++ -O3 -march=native, one compute() over the whole "
          "signal, one thread, the faster of par(i, C, chain) and one instance per channel; TorchFX = its modules on a "
          "CPU float32 tensor [C, N], one call over the whole signal. 'same equations: no' rows compute other "
          "compressors (co.compressor_mono: linear attack/release follower before the gain computer, no knee, a second "
          "one-pole on the dB gain; TorchFX: a decoupled linear peak detector before the gain computer) and are "
          "informative only.")
    if torchfx is not None and torchfx.error:
        notes.append(f"TorchFX skipped: {torchfx.error}" + (f" ({torchfx.versions})" if torchfx.versions else ""))
    elif torchfx is not None and torchfx.versions:
        notes.append(f"TorchFX: {torchfx.versions}")
    if not args.no_check:
        print()
        print(f"Accuracy: max |difference| on a {CHECK_SECONDS:g} s check signal (silence, an impulse, then noise whose "
              "level sweeps -60 dB -> 0 dB); ref = fxc's float64 reference interpreter (`fxc run --target ref`), the "
              "contract's equations; Faust -double reads the same float32 input and writes float64.")
        print("| workload | Faust program | Faust -double vs fxc ref | Faust f32 vs fxc ref | Faust f32 vs fxc f32 "
              "| fxc f32 vs fxc ref | output peak |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            e = r["err"]
            for dsp, label, same in next(w[2] for w in WORKLOADS if w[0] == r["name"]):
                if dsp not in e:
                    continue
                d = e[dsp]
                print(f"| {r['name']} | {dsp} ({label}{'' if same else ', other equations'}) | "
                      f"{d['faust64_vs_ref64']:.1e} | {d['faust32_vs_ref64']:.1e} | {d['faust32_vs_fxc32']:.1e} | "
                      f"{e['fxc32_vs_ref64']:.1e} | {e['peak']:.3f} |")
            if "torchfx_vs_ref64" in e:
                print(f"| {r['name']} | TorchFX (other equations) | | {e['torchfx_vs_ref64']:.1e} | | | |")
    print()
    for r in rows:
        print(f"{r['name']}: fxc unfused {r['fxc_unfused']:.1f} ms, cold compile {r['compile']:.1f} ms; "
              + "; ".join(f"{p['label']}: {p['detail']}" for p in r["peers"] if p["detail"])
              + f"; 1-min load average at each round's start: " + ", ".join(f"{v:.2f}" for v in r["load"]))
        print("  rounds' medians (ms): fxc " + ", ".join(f"{v:.1f}" for v in r["rounds"]["fxc"]) + "; fxc1 " +
              ", ".join(f"{v:.1f}" for v in r["rounds"]["fxc1"]) + "; " +
              "; ".join(f"{p['key']} " + ", ".join(f"{v:.1f}" for v in p["rounds"]) for p in r["peers"]))
    for note in notes:
        print(note)
    print(f"{faust.version}; {faust.gxx}")


if __name__ == "__main__":
    sys.exit(main())
