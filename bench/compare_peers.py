#!/usr/bin/env python3
"""Same-run comparison of fxc against SciPy on the standard workloads (performance.md).

Runs `fxc bench --json` on each workload's .fx file and, on the same machine in the same run,
scipy.signal.sosfilt (float64 and float32) on the same chain and signal size, then prints the
medians and the ratios. Use Debian's /usr/bin/python3 (python3-scipy):

    /usr/bin/python3 bench/compare_peers.py [--fxc build/tools/fxc/fxc] [--quick]

--quick shortens the signals (the ratios are per-sample throughputs, so they compare).
"""
import argparse, json, subprocess, sys, time
import numpy as np
from scipy import signal

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

# (id, .fx, sos builder (or FIR taps list), channels, seconds, quick seconds, fs)
WORKLOADS = [
    ("W1 api 8 ch", "w1_api.fx", w1, 8, 120, 10, 44100),
    ("W2 iir 8 ch x 60 s", "w2_iir.fx", w2, 8, 60, 10, 44100),
    ("W2 iir 1 ch x 300 s", "w2_iir.fx", w2, 1, 300, 30, 44100),
    ("W4 profile 2 ch x 10 s", "w4_profile.fx", w4, 2, 10, 10, 48000),
    ("W5 long mono 600 s", "w5_long_mono.fx", w4, 1, 600, 60, 44100),
    ("W3 fir 1 ch x 60 s", "w3_fir.fx", w3, 1, 60, 10, 44100),
]

def median_ms(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter(); fn(); times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[len(times) // 2]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fxc", default="build/tools/fxc/fxc")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    for name, fx, sos_of, ch, secs, quick_secs, fs in WORKLOADS:
        secs = quick_secs if args.quick else secs
        out = subprocess.run([args.fxc, "bench", "bench/workloads/" + fx, "--channels", str(ch),
                              "--seconds", str(secs), "--fs", str(fs), "--dtype", "f32",
                              "--repeat", str(args.repeat), "--json", "--no-check"],
                             check=True, capture_output=True, text=True).stdout
        fxc = json.loads(out)
        x = np.random.default_rng(1234).uniform(-1, 1, (ch, int(secs * fs)))
        coefficients = sos_of(fs)
        if isinstance(coefficients, list):  # FIR stages: lfilter, stage by stage, as the peers run them
            def chain(data, taps):
                for h in taps:
                    data = signal.lfilter(h, [1.0], data, axis=-1)
                return data
            taps32 = [h.astype(np.float32) for h in coefficients]
            x32 = x.astype(np.float32)
            scipy64 = median_ms(lambda: chain(x, coefficients), args.repeat)
            scipy32 = median_ms(lambda: chain(x32, taps32), args.repeat)
        else:
            sos = coefficients
            scipy64 = median_ms(lambda: signal.sosfilt(sos, x, axis=-1), args.repeat)
            x32, sos32 = x.astype(np.float32), sos.astype(np.float32)
            scipy32 = median_ms(lambda: signal.sosfilt(sos32, x32, axis=-1), args.repeat)
        f = fxc["fused"]["median_ms"]
        rows.append((name, f, fxc["unfused"]["median_ms"], scipy64, scipy32, min(scipy64, scipy32) / f,
                     fxc["compile_ms"]["cold"]))
    print(f"{'workload':26} {'fxc f32':>9} {'unfused':>9} {'scipy f64':>10} {'scipy f32':>10} {'x best':>7} {'compile':>8}")
    for r in rows:
        print(f"{r[0]:26} {r[1]:9.1f} {r[2]:9.1f} {r[3]:10.1f} {r[4]:10.1f} {r[5]:7.2f} {r[6]:8.1f}")
    print("times in ms (medians); scipy = sosfilt (lfilter per stage for W3); 'x best' = fastest SciPy time / fxc fused time")

if __name__ == "__main__":
    sys.exit(main())
