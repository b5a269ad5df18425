#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Same-run comparison of fxc against its peers on the standard workloads (performance.md).

For each workload, on the same machine and in the same run:
  - fxc:   `fxc bench --json` on the workload's .fx file (fused and unfused kernels, float32);
  - SciPy: scipy.signal.sosfilt in float64 and float32 (lfilter per stage for W3's FIR chain);
  - TorchFX (with --torchfx-python PYTHON, a Python that has torchfx: it needs torch >= 2.6 and
           NumPy 2, so a venv of its own): TorchFX's own chains on the CPU, one thread, the faster
           of its pipe and its fused SOS cascade (bench/peers/torchfx/torchfx_bench.py);
  - Faust: the same chain as Faust C++ (bench/peers/faust/*.dsp, written from SciPy's own SOS
           coefficients and FIR taps by gen_dsp.py), compiled with `faust -lang cpp` in float
           and with -double, wrapped in bench/peers/faust/harness.cpp and built with
           g++ -O3 -march=native. Several channels run both as one `par(i, C, chain)` program
           and as one instance of the mono chain per channel, and the faster counts
           (--faust-layout par|instances: only one). Built in --peers-build (build-peers/,
           ignored by git through /build*/). Without faust or g++, the Faust columns are left
           out with a note; a Faust build or run that fails leaves its cell empty, with a note.
Then it prints the medians, each peer's float32 max error against the float64 reference, and
"x best": the fastest peer's time over fxc's fused time. Use Debian's /usr/bin/python3
(python3-scipy), from anywhere:

    /usr/bin/python3 bench/compare_peers.py [--fxc build/tools/fxc/fxc] [--quick] [--repeat 5]
                                            [--no-faust] [--no-check] [--markdown] [--only W2]
                                            [--torchfx-python VENV/bin/python]

--quick shortens the signals (the ratios are per-sample throughputs, so they compare).
SciPy and Faust run on the same float32 noise (uniform in [-1, 1], seed 1234); fxc bench makes
its own noise of the same kind (same distribution, length and channels, another generator).
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time
import numpy as np
from scipy import signal

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FAUST_DIR = os.path.join(ROOT, "bench", "peers", "faust")


def w1(fs):
    return np.vstack([signal.cheby1(4, 0.1, f, 'highpass', fs=fs, output='sos') for f in (20, 60, 65)] +
                     [signal.butter(5, f, fs=fs, output='sos') for f in (5000, 4900, 4850)])
def w2(fs):
    return np.vstack([signal.butter(2, 1000, 'highpass', fs=fs, output='sos'),
                      signal.butter(2, 5000, fs=fs, output='sos'),
                      signal.cheby1(2, 0.1, 1500, 'highpass', fs=fs, output='sos'),
                      signal.cheby1(2, 0.1, 1800, fs=fs, output='sos')])
def w4(fs):
    return np.vstack([signal.butter(4, 80, 'highpass', fs=fs, output='sos'),
                      signal.butter(8, 12000, fs=fs, output='sos')])

def w3(fs):
    return [signal.firwin(n, f, fs=fs) for n, f in ((101, 1000), (102, 5000), (103, 1500), (104, 1800), (105, 1850))]

# (id, .fx, chain name, sos builder (or FIR taps list), channels, seconds, quick seconds, fs)
WORKLOADS = [
    ("W1 api", "w1_api.fx", "w1_api", w1, 8, 120, 10, 44100),
    ("W2 iir", "w2_iir.fx", "w2_iir", w2, 8, 60, 10, 44100),
    ("W2 iir", "w2_iir.fx", "w2_iir", w2, 1, 300, 30, 44100),
    ("W4 profile", "w4_profile.fx", "w4_profile", w4, 2, 10, 10, 48000),
    ("W5 long mono", "w5_long_mono.fx", "w4_profile", w4, 1, 600, 60, 44100),
    ("W3 fir", "w3_fir.fx", "w3_fir", w3, 1, 60, 10, 44100),
]

# The distinct (chain, sample rate) pairs: one Faust program each (gen_dsp.py writes them).
CHAINS = {(chain, fs): builder for _, _, chain, builder, _, _, _, fs in WORKLOADS}


def faust_dsp_name(chain, fs):
    return f"{chain}_{fs}.dsp"


def median_ms(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter(); fn(); times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[len(times) // 2]


def max_abs_error(got, want):
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - want)))


class Faust:
    """Builds and runs the Faust harness; `note` says why it is unavailable when it is."""
    PRECISIONS = ("f32", "f64")

    def __init__(self, build_dir, enabled):
        self.build_dir, self.note, self.version, self.failures = build_dir, None, None, []
        if not enabled:
            self.note = "Faust left out (--no-faust)"
            return
        self.faust, self.cxx = shutil.which("faust"), shutil.which("g++")
        if not self.faust or not self.cxx:
            self.note = "Faust columns left out: " + ("faust" if not self.faust else "g++") + " not found (apt-get install faust)"
            return
        try:
            self.version = subprocess.run([self.faust, "--version"], capture_output=True, text=True,
                                          check=True).stdout.split("\n")[0].strip()
        except (OSError, subprocess.CalledProcessError) as e:
            self.note = f"Faust columns left out: `faust --version` failed ({e})"
            return
        os.makedirs(build_dir, exist_ok=True)

    @property
    def available(self):
        return self.note is None

    def program(self, chain, fs, channels, layout):
        """The .dsp to compile: the mono chain, or (layout 'par', several channels) the chain
        under par(i, C, chain), written next to the harnesses."""
        dsp = os.path.join(FAUST_DIR, faust_dsp_name(chain, fs))
        if channels == 1 or layout != "par":
            return dsp, f"{chain}_{fs}"
        stem = f"{chain}_{fs}_x{channels}"
        with open(dsp) as f:
            text = f.read()
        if "process = chain;" not in text:
            raise RuntimeError(f"{dsp} has no 'process = chain;' line (rerun gen_dsp.py)")
        text = text.replace("process = chain;", f"process = par(i, {channels}, chain);")
        path = os.path.join(self.build_dir, stem + ".dsp")
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            with open(path, "w") as f:
                f.write(text)
        return path, stem

    def binary(self, chain, fs, channels, layout, precision):
        """Builds (when missing or older than its sources) and returns the harness binary."""
        dsp, stem = self.program(chain, fs, channels, layout)
        harness = os.path.join(FAUST_DIR, "harness.cpp")
        stem += "_" + precision
        header = os.path.join(self.build_dir, stem + ".h")
        exe = os.path.join(self.build_dir, stem)
        newest = max(os.path.getmtime(dsp), os.path.getmtime(harness), os.path.getmtime(__file__))
        if os.path.exists(exe) and os.path.getmtime(exe) >= newest:
            return exe
        subprocess.run([self.faust, "-lang", "cpp", "-cn", "FaustChain"] + (["-double"] if precision == "f64" else []) +
                       ["-o", header, dsp], check=True, capture_output=True, text=True)
        subprocess.run([self.cxx, "-std=c++17", "-O3", "-march=native", f'-DFAUST_HEADER="{header}"',
                        f'-DFAUST_PRECISION="{precision}"', harness, "-o", exe],
                       check=True, capture_output=True, text=True)
        return exe

    def run(self, chain, fs, layout, precision, noise_path, channels, samples, repeat, output_path):
        exe = self.binary(chain, fs, channels, layout, precision)
        cmd = [exe, "--input", noise_path, "--channels", str(channels), "--samples", str(samples),
               "--repeat", str(repeat)] + (["--output", output_path] if output_path else [])
        return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fxc", default=os.path.join(ROOT, "build", "tools", "fxc", "fxc"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-faust", action="store_true", help="leave the Faust columns out")
    ap.add_argument("--no-check", action="store_true", help="skip the accuracy columns")
    ap.add_argument("--peers-build", default=os.path.join(ROOT, "build-peers"),
                    help="where the Faust harnesses are built (default build-peers/, git-ignored)")
    ap.add_argument("--faust-layout", choices=("best", "par", "instances"), default="best",
                    help="several channels as one par(i, C, chain) program, as one instance of the "
                         "mono chain per channel, or (default) both, keeping the faster")
    ap.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    ap.add_argument("--only", default="", help="run only workloads whose id starts with this (e.g. W3)")
    ap.add_argument("--torchfx-python", default=os.environ.get("FXC_TORCHFX_PYTHON", ""),
                    help="a Python with torchfx installed: adds the TorchFX column (default: $FXC_TORCHFX_PYTHON)")
    args = ap.parse_args()
    torchfx_note = ""

    faust = Faust(args.peers_build, not args.no_faust)
    scratch = tempfile.mkdtemp(prefix="fxc-peers-")
    rows = []
    try:
        for name, fx, chain, coeffs_of, ch, secs, quick_secs, fs in WORKLOADS:
            if args.only and not name.startswith(args.only):
                continue
            secs = quick_secs if args.quick else secs
            n = int(secs * fs)
            name = f"{name} {ch} ch x {secs:g} s"  # the signal as run (--quick shortens it)
            cmd = [args.fxc, "bench", os.path.join(ROOT, "bench", "workloads", fx), "--channels", str(ch),
                   "--seconds", str(secs), "--fs", str(fs), "--dtype", "f32", "--repeat", str(args.repeat), "--json"]
            if args.no_check:
                cmd.append("--no-check")
            fxc = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)

            # The peers' signal: float32 noise in [-1, 1]; float64 paths get it upcast (exact).
            x32 = np.random.default_rng(1234).uniform(-1, 1, (ch, n)).astype(np.float32)
            x64 = x32.astype(np.float64)
            coefficients = coeffs_of(fs)
            if isinstance(coefficients, list):  # FIR stages: lfilter, stage by stage, as the peers run them
                def chain_fn(data, taps):
                    for h in taps:
                        data = signal.lfilter(h, [1.0], data, axis=-1)
                    return data
                taps32 = [h.astype(np.float32) for h in coefficients]
                run64 = lambda: chain_fn(x64, coefficients)
                run32 = lambda: chain_fn(x32, taps32)
            else:
                sos, sos32 = coefficients, coefficients.astype(np.float32)
                run64 = lambda: signal.sosfilt(sos, x64, axis=-1)
                run32 = lambda: signal.sosfilt(sos32, x32, axis=-1)
            scipy64 = median_ms(run64, args.repeat)
            scipy32 = median_ms(run32, args.repeat)
            reference = None if args.no_check else run64()  # float64 reference, outside any timing
            err = {"fxc": fxc.get("max_abs_error_vs_f64_reference"),
                   "scipy32": None if reference is None else max_abs_error(run32(), reference)}

            times = {"scipy f64": scipy64, "scipy f32": scipy32}
            faust_layout = {}
            if faust.available:
                noise_path = os.path.join(scratch, "noise.f32")
                out_path = None if args.no_check else os.path.join(scratch, "faust_out.f32")
                x32.tofile(noise_path)
                layouts = ["par", "instances"] if args.faust_layout == "best" else [args.faust_layout]
                for p in Faust.PRECISIONS:
                    for layout in (layouts if ch > 1 else ["instances"]):
                        try:
                            r = faust.run(chain, fs, layout, p, noise_path, ch, n, args.repeat, out_path)
                        except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
                            detail = getattr(e, "stderr", None) or str(e)
                            faust.failures.append(f"{name} {p} {layout}: {detail.strip().splitlines()[-1] if detail.strip() else e}")
                            continue
                        if "faust " + p in times and times["faust " + p] <= r["median_ms"]:
                            continue
                        times["faust " + p] = r["median_ms"]
                        faust_layout[p] = layout if ch > 1 else "mono"
                        if out_path:
                            got = np.fromfile(out_path, dtype=np.float32).reshape(ch, n)
                            err["faust" + p[1:]] = max_abs_error(got, reference)
                    if out_path and os.path.exists(out_path):
                        os.remove(out_path)
                os.remove(noise_path)
            if args.torchfx_python:
                noise_path = os.path.join(scratch, "noise.f32")
                out_path = None if args.no_check else os.path.join(scratch, "torchfx_out.f32")
                x32.tofile(noise_path)
                cmd = [args.torchfx_python, os.path.join(ROOT, "bench", "peers", "torchfx", "torchfx_bench.py"),
                       "--workload", name.split()[0], "--fs", str(fs), "--channels", str(ch), "--samples", str(n),
                       "--repeat", str(args.repeat), "--noise", noise_path] + (["--out", out_path] if out_path else [])
                try:
                    t = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
                    times["torchfx"] = t["median_ms"]
                    torchfx_note = (f"TorchFX {t['torchfx']} (torch {t['torch']}, native kernels: {t['native']}); "
                                    f"path per workload: ")
                    faust_layout["torchfx"] = t["path"]
                    if out_path:
                        got = np.fromfile(out_path, dtype=np.float32).reshape(ch, n)
                        err["torchfx"] = max_abs_error(got, reference)
                        os.remove(out_path)
                except (OSError, subprocess.CalledProcessError, ValueError, KeyError) as e:
                    detail = getattr(e, "stderr", None) or str(e)
                    torchfx_note = "TorchFX failed: " + (detail.strip().splitlines()[-1] if detail.strip() else str(e))
                os.remove(noise_path)
            best_peer = min(times, key=times.get)
            f = fxc["fused"]["median_ms"]
            rows.append(dict(name=name, fxc=f, unfused=fxc["unfused"]["median_ms"], times=times,
                             best_peer=best_peer, x_best=times[best_peer] / f,
                             compile=fxc["compile_ms"]["cold"], err=err, faust_layout=faust_layout))
            del x32, x64, reference
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    peers = ["scipy f64", "scipy f32"] + (["faust f32", "faust f64"] if faust.available else []) + \
            (["torchfx"] if args.torchfx_python else [])
    head = f"{'workload':26} {'fxc f32':>8} {'unfused':>8} " + " ".join(f"{p:>9}" for p in peers) + \
           f" {'x best':>7} {'best peer':>10} {'compile':>8}" + (f" {'faust layout f32/f64':>21}" if faust.available else "")
    if not args.no_check:
        head += f" {'err fxc':>8} {'err scipy32':>11}" + (f" {'err faust32':>11}" if faust.available else "")
    print(head)
    for r in rows:
        line = f"{r['name']:26} {r['fxc']:8.1f} {r['unfused']:8.1f} " + \
               " ".join(f"{r['times'][p]:9.1f}" if p in r['times'] else f"{'-':>9}" for p in peers) + \
               f" {r['x_best']:7.2f} {r['best_peer']:>10} {r['compile']:8.1f}" + \
               (f" {r['faust_layout'].get('f32', '') + '/' + r['faust_layout'].get('f64', ''):>21}" if faust.available else "") + \
               (f" torchfx {r['faust_layout'].get('torchfx', '-')}" if args.torchfx_python else "")
        if not args.no_check:
            e = r["err"]
            line += f" {e['fxc'] if e['fxc'] is not None else float('nan'):8.1e} {e['scipy32']:11.1e}"
            if faust.available:
                line += f" {e['faust32']:11.1e}" if "faust32" in e else f" {'-':>11}"
            if args.torchfx_python:
                line += f" torchfx err {e['torchfx']:.1e}" if "torchfx" in e else ""
        print(line)
    print("times in ms (medians of --repeat runs after a warm-up); scipy = sosfilt (lfilter per stage for W3);")
    if args.torchfx_python:
        print("torchfx = TorchFX's chains on the CPU, one thread, the faster of its pipe and its fused SOS cascade;")
    if faust.available:
        print("faust = Faust C++ (float / -double internally, float32 in and out), g++ -O3 -march=native; several channels as",
              {"best": "par(i, C, chain) or one instance per channel, whichever was faster;",
               "par": "par(i, C, chain);", "instances": "one instance per channel;"}[args.faust_layout])
    print("'x best' = fastest peer's time / fxc fused time; compile = fxc's cold compile; err = max |error| of the float32 path")
    print("against the float64 reference (fxc: its reference interpreter on its noise; peers: SciPy f64 on the same noise)")
    if faust.version:
        print(faust.version)
    if torchfx_note:
        print(torchfx_note + ("pipe = `wave | chain`, fused = FusedSOSCascade.from_chain" if "failed" not in torchfx_note else ""))
    if faust.note:
        print("note:", faust.note)
    for failure in faust.failures:
        print("note: Faust run failed, its cell left empty:", failure)
    if args.markdown:
        print()
        cols = ["workload", "fxc f32", "fxc unfused"] + [p.replace("scipy", "SciPy").replace("faust", "Faust") for p in peers] + \
               ["x best", "fastest peer"] + ([] if args.no_check else ["max err fxc", "max err SciPy f32"] +
                                             (["max err Faust f32"] if faust.available else []) +
                                             (["max err TorchFX"] if args.torchfx_python else []))
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for r in rows:
            cells = [r["name"], f"{r['fxc']:.1f}", f"{r['unfused']:.1f}"] + [f"{r['times'][p]:.1f}" if p in r["times"] else "-" for p in peers] + \
                    [f"**{r['x_best']:.1f}x**", r["best_peer"].replace("scipy", "SciPy").replace("faust", "Faust")]
            if not args.no_check:
                e = r["err"]
                cells += [f"{e['fxc']:.1e}" if e["fxc"] is not None else "", f"{e['scipy32']:.1e}"]
                if faust.available:
                    cells.append(f"{e['faust32']:.1e}" if "faust32" in e else "-")
                if args.torchfx_python:
                    cells.append(f"{e['torchfx']:.1e}" if "torchfx" in e else "-")
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
