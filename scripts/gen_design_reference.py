#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the SciPy reference data for fxc's filter-design and interpreter tests.

Run with Debian's Python, which has python3-scipy (SciPy 1.10):

    /usr/bin/python3 scripts/gen_design_reference.py

It writes small JSON files (floats printed with repr, so they read back exactly):

  tests/data/design/iir.json      SOS from scipy.signal.{butter,cheby1,cheby2,ellip,bessel}
  tests/data/design/biquad.json   Audio EQ Cookbook biquads, computed here from the formulas
  tests/data/design/firwin.json   taps from scipy.signal.firwin
  tests/data/design/tf2sos.json   SOS from scipy.signal.tf2sos
  tests/data/interp/filters.json  an input signal and sosfilt / lfilter outputs

The grid is fixed (a seeded generator picks among listed values), so re-running gives the
same files up to SciPy's own rounding, which varies slightly with the CPU: numpy's exp, log,
tan, ... use SIMD code on AVX-512 machines that can differ from glibc in the last bit.
"""

import json
import math
import pathlib
import sys

import warnings

import numpy as np
import scipy
from scipy import signal

ROOT = pathlib.Path(__file__).resolve().parent.parent
DESIGN_DIR = ROOT / "tests" / "data" / "design"
INTERP_DIR = ROOT / "tests" / "data" / "interp"

FAMILIES = ["butter", "cheby1", "cheby2", "ellip", "bessel"]
BTYPES = ["lowpass", "highpass", "bandpass", "bandstop"]
REQUIRED_ORDERS = [1, 2, 3, 4, 5, 8, 12]
EXTRA_ORDERS = [6, 7, 9, 10, 11]
HIGH_ORDERS = [16, 24]
SAMPLE_RATES = [44100.0, 48000.0]
RP_VALUES = [0.1, 0.5, 1.0, 3.0]
RS_VALUES = [40.0, 60.0, 80.0, 100.0]
BESSEL_NORMS = ["phase", "delay", "mag"]


def single_cutoffs(fs):
    return [20.0, 50.0, 100.0, 250.0, 440.0, 1000.0, 2500.0, 5000.0, 10000.0, 15000.0,
            0.45 * fs]


def band_edges(fs):
    return [[20.0, 200.0], [20.0, 0.45 * fs], [100.0, 1000.0], [300.0, 3400.0],
            [1000.0, 1200.0], [2000.0, 8000.0], [5000.0, 15000.0], [0.3 * fs, 0.45 * fs],
            [50.0, 60.0]]


def ellip_degree_complement(order, rp, rs):
    """1 - m of SciPy's degree equation: how close the elliptic design is to ill-conditioned."""
    from scipy.signal._filter_design import _ellipdeg, _pow10m1
    if order == 1:
        return 1.0
    ck1_sq = _pow10m1(0.1 * rp) / _pow10m1(0.1 * rs)
    return 1.0 - _ellipdeg(order, ck1_sq)


def design_sos(case):
    fam, n, btype, fs = case["family"], case["order"], case["btype"], case["fs"]
    wn = case["cutoff_hz"]
    wn = wn[0] if len(wn) == 1 else wn
    if fam == "butter":
        return signal.butter(n, wn, btype, fs=fs, output="sos")
    if fam == "cheby1":
        return signal.cheby1(n, case["rp"], wn, btype, fs=fs, output="sos")
    if fam == "cheby2":
        return signal.cheby2(n, case["rs"], wn, btype, fs=fs, output="sos")
    if fam == "ellip":
        return signal.ellip(n, case["rp"], case["rs"], wn, btype, fs=fs, output="sos")
    return signal.bessel(n, wn, btype, norm=case["norm"], fs=fs, output="sos")


RESPONSE_FLOOR = 1e-6  # relative to the peak; the same floor as tests/unit/design_iir_test.cpp


def response_at_test_frequencies(sos, fs):
    """H at the 64 frequencies the C++ test uses: log-spaced from 1 Hz to Nyquist."""
    f = np.minimum(np.geomspace(1.0, fs / 2, 64), fs / 2)
    _, h = signal.sosfreqz(sos, worN=2 * np.pi * f / fs)
    return h


def ulp_sensitivity(case, sos):
    """How far SciPy's own response moves when an input, or the elliptic modulus, moves by one ulp.

    SciPy's result is only defined up to such last-bit effects (its exp, log, sinh, ... come
    from numpy's SIMD code or from glibc depending on the CPU), so the C++ test cannot ask for
    a closer match than this. For nearly every design it is below 1e-12. For elliptic filters
    the modulus m from the degree equation is perturbed too: when 1 - m is tiny, one ulp of m
    (which depends on numpy's exp and power) moves the poles by ~1e-16 / (1 - m).
    """
    from scipy.signal import _filter_design as fd
    h0 = response_at_test_frequencies(sos, case["fs"])
    scale = np.maximum(np.abs(h0), RESPONSE_FLOOR * np.abs(h0).max())
    worst = 0.0

    def deviation(moved_case):
        h1 = response_at_test_frequencies(design_sos(moved_case), case["fs"])
        return float(np.max(np.abs(h1 - h0) / scale))

    for key, factor in [("cutoff_hz", 1 + 2.0**-52), ("cutoff_hz", 1 - 2.0**-53),
                        ("rp", 1 + 2.0**-52), ("rs", 1 + 2.0**-52)]:
        if key not in case:
            continue
        moved = dict(case)
        moved[key] = [v * factor for v in case[key]] if key == "cutoff_hz" else case[key] * factor
        worst = max(worst, deviation(moved))
    if case["family"] == "ellip" and case["order"] > 1:
        original = fd._ellipdeg
        for direction in (0.0, 2.0):
            fd._ellipdeg = lambda n, m1, d=direction: np.nextafter(original(n, m1), d)
            try:
                worst = max(worst, deviation(case))
            finally:
                fd._ellipdeg = original
    return worst


def sos_rows(sos):
    return [[float(v) for v in row] for row in sos]


def iir_cases():
    rng = np.random.default_rng(20240611)
    cases = []
    counter = 0
    for fam in FAMILIES:
        for norm in (BESSEL_NORMS if fam == "bessel" else [None]):
            for btype in BTYPES:
                plan = [(n, fs) for n in REQUIRED_ORDERS for fs in SAMPLE_RATES]
                plan += [(n, SAMPLE_RATES[i % 2]) for i, n in enumerate(EXTRA_ORDERS)]
                if norm in (None, "phase"):
                    plan += [(n, 48000.0) for n in HIGH_ORDERS]
                for n, fs in plan:
                    # Cycle through the frequency lists so that every edge value is used.
                    if btype in ("lowpass", "highpass"):
                        options = single_cutoffs(fs)
                        wn = [options[counter % len(options)]]
                    else:
                        options = band_edges(fs)
                        wn = list(options[counter % len(options)])
                    counter += 1
                    case = {"family": fam, "order": n, "btype": btype, "fs": fs,
                            "cutoff_hz": wn}
                    if fam in ("cheby1", "ellip"):
                        case["rp"] = float(rng.choice(RP_VALUES))
                    if fam in ("cheby2", "ellip"):
                        case["rs"] = float(rng.choice(RS_VALUES))
                    if fam == "ellip":
                        # Keep to designs whose degree equation is well conditioned: with
                        # 1 - m tiny, last-bit differences in exp/log (which differ between
                        # numpy builds and CPUs) move the poles by ~1e-16 / (1 - m).
                        while ellip_degree_complement(n, case["rp"], case["rs"]) < 1e-6:
                            case["rs"] += 20.0
                    if fam == "bessel":
                        case["norm"] = norm
                    sos = design_sos(case)
                    case["sos"] = sos_rows(sos)
                    case["ulp_sensitivity"] = float(f"{ulp_sensitivity(case, sos):.3g}")
                    cases.append(case)
    # A few elliptic designs on purpose outside that guard: high orders with loose ripple
    # specifications, where 1 - m is below 1e-10 and SciPy itself is only reproducible to
    # about 1e-6 (the test then holds us to ten times that sensitivity).
    for n, rp, rs, btype, wn in [(10, 3.0, 6.0, "lowpass", [1000.0]),
                                 (20, 1.0, 10.0, "bandpass", [300.0, 3000.0]),
                                 (33, 2.0, 40.0, "highpass", [5000.0])]:
        case = {"family": "ellip", "order": n, "btype": btype, "fs": 48000.0, "cutoff_hz": wn,
                "rp": rp, "rs": rs}
        sos = design_sos(case)
        case["sos"] = sos_rows(sos)
        case["ulp_sensitivity"] = float(f"{ulp_sensitivity(case, sos):.3g}")
        cases.append(case)
    return cases


def cookbook_biquad(kind, f0, q, gain_db, fs):
    """The Audio EQ Cookbook formulas, written out independently of the C++ code."""
    a_lin = 10.0 ** (gain_db / 40.0)
    w0 = 2.0 * math.pi * f0 / fs
    cw, sw = math.cos(w0), math.sin(w0)
    alpha = sw / (2.0 * q)
    sa = 2.0 * math.sqrt(a_lin) * alpha
    if kind == "lowpass":
        b = [(1 - cw) / 2, 1 - cw, (1 - cw) / 2]; a = [1 + alpha, -2 * cw, 1 - alpha]
    elif kind == "highpass":
        b = [(1 + cw) / 2, -(1 + cw), (1 + cw) / 2]; a = [1 + alpha, -2 * cw, 1 - alpha]
    elif kind == "bandpass":
        b = [alpha, 0.0, -alpha]; a = [1 + alpha, -2 * cw, 1 - alpha]
    elif kind == "notch":
        b = [1.0, -2 * cw, 1.0]; a = [1 + alpha, -2 * cw, 1 - alpha]
    elif kind == "allpass":
        b = [1 - alpha, -2 * cw, 1 + alpha]; a = [1 + alpha, -2 * cw, 1 - alpha]
    elif kind == "peaking":
        b = [1 + alpha * a_lin, -2 * cw, 1 - alpha * a_lin]
        a = [1 + alpha / a_lin, -2 * cw, 1 - alpha / a_lin]
    elif kind == "lowshelf":
        A = a_lin
        b = [A * ((A + 1) - (A - 1) * cw + sa), 2 * A * ((A - 1) - (A + 1) * cw),
             A * ((A + 1) - (A - 1) * cw - sa)]
        a = [(A + 1) + (A - 1) * cw + sa, -2 * ((A - 1) + (A + 1) * cw),
             (A + 1) + (A - 1) * cw - sa]
    elif kind == "highshelf":
        A = a_lin
        b = [A * ((A + 1) + (A - 1) * cw + sa), -2 * A * ((A - 1) + (A + 1) * cw),
             A * ((A + 1) + (A - 1) * cw - sa)]
        a = [(A + 1) - (A - 1) * cw + sa, 2 * ((A - 1) - (A + 1) * cw),
             (A + 1) - (A - 1) * cw - sa]
    else:
        raise ValueError(kind)
    return [b[0] / a[0], b[1] / a[0], b[2] / a[0], 1.0, a[1] / a[0], a[2] / a[0]]


BIQUAD_TYPES = ["lowpass", "highpass", "bandpass", "notch", "allpass", "peaking", "lowshelf",
                "highshelf"]
GAIN_TYPES = {"peaking", "lowshelf", "highshelf"}


def biquad_cases():
    cases = []
    for fs in SAMPLE_RATES:
        f0s = [30.0, 1000.0, 12000.0, 0.49 * fs] if fs == 48000.0 else [100.0, 5000.0]
        qs = [0.1, 0.7071067811865476, 4.0, 30.0] if fs == 48000.0 else [0.5, 2.0]
        gains = [-24.0, -6.0, 3.0, 18.0] if fs == 48000.0 else [-3.0, 12.0]
        for kind in BIQUAD_TYPES:
            for f0 in f0s:
                for q in qs:
                    for gain in (gains if kind in GAIN_TYPES else [0.0]):
                        cases.append({"type": kind, "f0_hz": f0, "q": q, "gain_db": gain,
                                      "fs": fs, "sos": cookbook_biquad(kind, f0, q, gain, fs)})
    return cases


FIR_WINDOWS = [("hamming", None), ("hann", None), ("blackman", None), ("boxcar", None),
               ("kaiser", 0.5), ("kaiser", 5.0), ("kaiser", 8.6), ("kaiser", 14.0),
               ("kaiser", 40.0), ("kaiser", 400.0)]


def firwin_cases():
    cases = []
    fs = 48000.0
    kinds = [
        ("lowpass", True, [[1000.0], [6000.0], [0.45 * fs]]),
        ("highpass", False, [[200.0], [9000.0]]),
        ("bandpass", False, [[500.0, 2000.0], [8000.0, 16000.0]]),
        ("bandstop", True, [[1000.0, 3000.0], [100.0, 20000.0]]),
        ("multiband", False, [[1000.0, 2000.0, 6000.0, 9000.0]]),
    ]
    taps_choices = [1, 2, 11, 32, 63, 101]
    index = 0
    for window, beta in FIR_WINDOWS:
        for kind, pass_zero, cutoff_sets in kinds:
            for numtaps in taps_choices:
                cutoff = cutoff_sets[index % len(cutoff_sets)]
                index += 1
                pass_nyquist = bool(len(cutoff) & 1) ^ pass_zero
                if pass_nyquist and numtaps % 2 == 0:
                    continue  # SciPy rejects this; the C++ error tests cover it
                if numtaps in (1, 2) and window not in ("hamming", "kaiser"):
                    continue  # one or two taps are the same for every window
                win = ("kaiser", beta) if window == "kaiser" else window
                taps = signal.firwin(numtaps, cutoff, window=win, pass_zero=pass_zero, fs=fs)
                case = {"kind": kind, "numtaps": numtaps, "cutoff_hz": cutoff,
                        "window": window, "pass_zero": pass_zero, "fs": fs,
                        "taps": [float(t) for t in taps]}
                if beta is not None:
                    case["beta"] = beta
                cases.append(case)
    return cases


def tf2sos_cases():
    pairs = []
    b, a = signal.butter(4, 0.2)
    pairs.append(("butter4_ba", b, a))
    b, a = signal.cheby1(5, 1.0, [0.2, 0.4], "bandpass")
    pairs.append(("cheby1_bandpass_ba", b, a))
    b, a = signal.ellip(3, 0.5, 50.0, 0.3, "highpass")
    pairs.append(("ellip3_highpass_ba", b, a))
    pairs.append(("biquad", [1.0, 2.0, 1.0], [1.0, -0.5, 0.25]))
    pairs.append(("one_pole", [0.5], [1.0, -0.9]))
    pairs.append(("fir", list(signal.firwin(7, 0.3)), [1.0]))
    pairs.append(("b_shorter_than_a", [0.25, 0.5], [1.0, -1.2, 0.5, -0.1]))
    pairs.append(("a_leading_zero", [1.0, -0.3], [0.0, 2.0, -1.0, 0.5]))
    pairs.append(("b_leading_tiny", [1e-16, 1.0, 0.5], [1.0, 0.1, 0.2]))
    pairs.append(("unnormalized_a0", [2.0, 1.0, 0.5, 0.25], [4.0, -2.0, 1.2, -0.3]))
    pairs.append(("repeated_poles", [1.0, 0.0, 0.0], [1.0, -1.6, 0.64]))
    pairs.append(("gain_only", [3.0], [2.0]))
    pairs.append(("trailing_zero_b", [1.0, 0.5, 0.0], [1.0, -0.25, 0.0]))
    cases = []
    for name, b, a in pairs:
        sos = signal.tf2sos(b, a)
        cases.append({"name": name, "b": [float(v) for v in b], "a": [float(v) for v in a],
                      "sos": sos_rows(sos)})
    return cases


def interp_cases():
    rng = np.random.default_rng(12345)
    x = 0.5 * rng.standard_normal(300)
    inputs = [float(v) for v in x]
    cases = []

    def add_sos(name, fx, fs, sos):
        sos = np.asarray(sos, dtype=float)
        y = signal.sosfilt(sos, x)
        cases.append({"name": name, "fx": fx, "fs": fs, "sos": sos_rows(sos), "input": inputs,
                      "output": [float(v) for v in y]})

    def add_tf(name, fx, fs, b, a):
        y = signal.lfilter(b, a, x)
        cases.append({"name": name, "fx": fx, "fs": fs, "b": [float(v) for v in b],
                      "a": [float(v) for v in a], "input": inputs,
                      "output": [float(v) for v in y]})

    designs = [
        ("butter4_lowpass_1k", "butter(4, 1 kHz, lowpass)", 48000.0,
         signal.butter(4, 1000.0, "lowpass", fs=48000.0, output="sos")),
        ("butter2_highpass_80", "butter(2, 80 Hz, highpass)", 48000.0,
         signal.butter(2, 80.0, "highpass", fs=48000.0, output="sos")),
        ("butter5_lowpass_10k_44k", "butter(5, 10 kHz)", 44100.0,
         signal.butter(5, 10000.0, fs=44100.0, output="sos")),
        ("butter3_bandpass", "butter(3, [300 Hz, 3 kHz], bandpass)", 48000.0,
         signal.butter(3, [300.0, 3000.0], "bandpass", fs=48000.0, output="sos")),
        ("butter2_bandstop", "butter(2, [900 Hz, 1100 Hz], bandstop)", 48000.0,
         signal.butter(2, [900.0, 1100.0], "bandstop", fs=48000.0, output="sos")),
        ("butter8_lowpass_100", "butter(8, 100 Hz)", 48000.0,
         signal.butter(8, 100.0, fs=48000.0, output="sos")),
        ("cheby1_6_lowpass", "cheby1(6, 1 dB, 2 kHz)", 48000.0,
         signal.cheby1(6, 1.0, 2000.0, fs=48000.0, output="sos")),
        ("cheby1_3_highpass", "cheby1(3, 0.5, 500 Hz, highpass)", 44100.0,
         signal.cheby1(3, 0.5, 500.0, "highpass", fs=44100.0, output="sos")),
        ("cheby2_5_lowpass", "cheby2(5, 60 dB, 4 kHz)", 48000.0,
         signal.cheby2(5, 60.0, 4000.0, fs=48000.0, output="sos")),
        ("cheby2_4_bandpass", "cheby2(4, 40, [1 kHz, 5 kHz], bandpass)", 48000.0,
         signal.cheby2(4, 40.0, [1000.0, 5000.0], "bandpass", fs=48000.0, output="sos")),
        ("ellip4_lowpass", "ellip(4, 0.5 dB, 60 dB, 3 kHz)", 48000.0,
         signal.ellip(4, 0.5, 60.0, 3000.0, fs=48000.0, output="sos")),
        ("ellip5_highpass", "ellip(5, 1, 80, 200 Hz, highpass)", 44100.0,
         signal.ellip(5, 1.0, 80.0, 200.0, "highpass", fs=44100.0, output="sos")),
        ("ellip3_bandstop", "ellip(3, 1, 40, [2 kHz, 4 kHz], bandstop)", 48000.0,
         signal.ellip(3, 1.0, 40.0, [2000.0, 4000.0], "bandstop", fs=48000.0, output="sos")),
        ("bessel4_phase", "bessel(4, 1 kHz)", 48000.0,
         signal.bessel(4, 1000.0, fs=48000.0, output="sos")),
        ("bessel3_delay_highpass", "bessel(3, 500 Hz, highpass, norm=delay)", 48000.0,
         signal.bessel(3, 500.0, "highpass", norm="delay", fs=48000.0, output="sos")),
        ("bessel6_mag_bandpass", "bessel(6, [200 Hz, 2 kHz], bandpass, norm=mag)", 44100.0,
         signal.bessel(6, [200.0, 2000.0], "bandpass", norm="mag", fs=44100.0,
                       output="sos")),
    ]
    for name, fx, fs, sos in designs:
        add_sos(name, fx, fs, sos)
    biquads = [
        ("peaking_3k", "peaking(3 kHz, 1.0, 4 dB)", "peaking", 3000.0, 1.0, 4.0),
        ("highshelf_10k", "highshelf(10 kHz, -2 dB)", "highshelf", 10000.0,
         0.7071067811865476, -2.0),
        ("lowshelf_200", "lowshelf(200 Hz, 6 dB, 0.5)", "lowshelf", 200.0, 0.5, 6.0),
        ("notch_50", "notch(50 Hz, 10)", "notch", 50.0, 10.0, 0.0),
    ]
    for name, fx, kind, f0, q, gain in biquads:
        add_sos(name, fx, 48000.0, [cookbook_biquad(kind, f0, q, gain, 48000.0)])
    cascade = np.vstack([signal.butter(2, 80.0, "highpass", fs=48000.0, output="sos"),
                         [cookbook_biquad("peaking", 3000.0, 1.0, 4.0, 48000.0)],
                         [cookbook_biquad("highshelf", 10000.0, 0.7071067811865476, -2.0,
                                          48000.0)]])
    add_sos("vocal_chain", "butter(2, 80 Hz, highpass) | peaking(3 kHz, 1.0, 4 dB) | "
            "highshelf(10 kHz, -2 dB)", 48000.0, cascade)

    b, a = signal.butter(3, 2000.0, fs=48000.0)
    add_tf("tf_butter3", "tf(butter(3, 2 kHz) as b, a)", 48000.0, b, a)
    add_tf("tf_unnormalized", "tf([2, 1, 0.5], [4, -2, 1.2])", 48000.0, [2.0, 1.0, 0.5],
           [4.0, -2.0, 1.2])
    add_tf("tf_one_pole", "tf([0.1], [1, -0.9])", 48000.0, [0.1], [1.0, -0.9])
    taps = signal.firwin(31, 4000.0, fs=48000.0)
    add_tf("fir_firwin31", "firwin(31, 4 kHz)", 48000.0, taps, [1.0])
    taps = signal.firwin(25, [2000.0, 6000.0], window=("kaiser", 8.6), pass_zero=False,
                         fs=48000.0)
    add_tf("fir_kaiser_bandpass", "firwin(25, [2 kHz, 6 kHz], window=kaiser, beta=8.6, "
           "pass_zero=false)", 48000.0, taps, [1.0])
    add_tf("fir_taps", "fir([0.25, 0.5, 0.25])", 48000.0, [0.25, 0.5, 0.25], [1.0])
    return cases


def write_cases(path, cases, extra=None):
    header = {"generator": "scripts/gen_design_reference.py", "scipy": scipy.__version__,
              "numpy": np.__version__}
    if extra:
        header.update(extra)
    lines = ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases)
    text = ('{"meta":' + json.dumps(header, separators=(",", ":")) + ',\n"cases":[\n' + lines +
            "\n]}\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"{path.relative_to(ROOT)}: {len(cases)} cases, {len(text)} bytes")
    return len(text)


def main():
    # tf2sos of a numerator with a ~0 leading coefficient warns (BadCoefficients); expected.
    warnings.simplefilter("ignore", signal.BadCoefficients)
    total = 0
    total += write_cases(DESIGN_DIR / "iir.json", iir_cases())
    total += write_cases(DESIGN_DIR / "biquad.json", biquad_cases())
    total += write_cases(DESIGN_DIR / "firwin.json", firwin_cases())
    total += write_cases(DESIGN_DIR / "tf2sos.json", tf2sos_cases())
    total += write_cases(INTERP_DIR / "filters.json", interp_cases())
    print(f"total {total} bytes")
    if total > 1_500_000:
        sys.exit("reference data is over the 1.5 MB budget")


if __name__ == "__main__":
    main()
