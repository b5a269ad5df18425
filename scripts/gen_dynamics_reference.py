#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the inputs and reference outputs of fxc's dynamics tests (envelope, compressor,
expander, gate, limiter: "Dynamics (version 2)" in docs/fx-language.md).

Run with Debian's Python, which has NumPy:

    /usr/bin/python3 scripts/gen_dynamics_reference.py

The stages are written here from the contract's equations alone (after D. Giannoulis, M.
Massberg and J. D. Reiss, "Digital Dynamic Range Compressor Design: A Tutorial and Analysis",
JAES 60(6), 2012), as plain per-sample loops in float64, each channel on its own and all state
starting at zero: the level xG in dB, the gain computer's reduction target xL >= 0 dB, the
branching peak detector that smooths it, and the gain 10^((makeup - y) / 20). Nothing here is
taken from fxc's code; python/tests/test_dynamics_reference.py imports these functions (by
path) to check fxc's Python package against them.

It writes, at 48 kHz:

  tests/e2e/dynamics/<case>.fx        one graph per case: `input x : 2`, `output x | <stage>`
  tests/data/dynamics/<input>.npy     the inputs, float64 [2, 4800]; every sample is a float32
                                      value, so float32 programs see exactly the same signal
      tone_step    1 kHz sine at -30, -6, -30 dBFS (left); 250 Hz at -40, -12, -40 (right)
      bursts       10 ms noise bursts of several levels between silences (left: exact zeros,
                   right: a -70 dBFS noise floor)
      noise        seeded Gaussian noise (np.random.default_rng(1234)): steady (left), and
                   with a slowly swelling level (right)
  tests/data/dynamics/<case>_<input>.npy   the case's output for the input (float64 [2, 4800])
  tests/data/dynamics/cases.txt       one line per (case, input):
                                      `<case>.fx <input>.npy <case>_<input>.npy` (the .fx in
                                      tests/e2e/dynamics/, the .npy files in tests/data/dynamics/;
                                      every graph runs at fs = 48000)
  tests/data/dynamics/static_<case>.npy    the gain computer's static curve of each compressor
                                      and expander case: float64 [2, 91], row 0 the input level
                                      xG (-90 to 0 dB in 1 dB steps), row 1 yG = xG - xL in dB
                                      (makeup not included)

and the side-chain and link cases (`key=SIGNAL`, `link=max|mean`: "Side-chains and linking"):

  tests/e2e/dynamics/<case>.fx        `input x : 2`, then `input key : 1` or `: 2` when the case
                                      has a key (inputs bind in declaration order: x first),
                                      `output x | <stage>(..., key=key, link=...)`
  tests/data/dynamics/key_stereo.npy  float64 [2, 4800]: noise bursts between exact zeros (left),
                                      a 500 Hz tone at -45, -10, -26, -50 dBFS (right)
  tests/data/dynamics/key_mono.npy    float64 [1, 4800]: three 220 Hz syllables (sin^2 windows,
                                      peaks -6, -18, -3 dBFS) between exact zeros
                                      (np.random.default_rng(4321), apart from the inputs above)
  tests/data/dynamics/<case>_<x>[_<key>].npy   the case's output (float64 [2, 4800])
  tests/data/dynamics/sidechain_cases.txt   one line per case:
                                      `<case>.fx <x>.npy <key>.npy <reference>.npy`, with `-`
                                      for the key when the case has none (link only)

The level of a keyed stage is the key's (|k_c[n]| for channel c, or |k_0[n]| on every channel
for a one-channel key); linked, it is max_c |k_c[n]| or (1/C) sum_c |k_c[n]| over the C channels
of the key (of the input without a key), one reduction for all channels. The gain multiplies
the input; for the limiter the input delayed by the lookahead, while the key is not delayed
(step 1 reads k[n]; the window of step 3 and out[n] = c[n] x[n - L] are unchanged).

Before writing it checks its own consistency and stops on an AssertionError otherwise: the
soft knees are continuous with a continuous slope at both edges, the static curves have the
slopes the ratios say, a level step's gain reduction reaches 1 - 1/e of its final value after
the attack (or release) time constant to within a sample, the gate closes exactly H + 1 samples
after the level falls below its threshold, no gate input comes within 1e-3 dB of the gate's
threshold (so float32 rounding cannot flip the gate), and no limiter output exceeds its ceiling.
For the side-chains: a key equal to the input, `link=none`, a one-channel key against the same
key on every channel, linking over one key channel or over identical channels all give the plain
stage bit for bit; a keyed limiter's reduction starts at the key's step, on the input L samples
late; every case acts (over 1 dB), its key or link changes the result by over 1 dB (and max
against mean, and a stereo key against its channels swapped), linked channels share one
reduction and out / in is the same on every channel, no gate key comes within 1e-3 dB of the
threshold, and the unkeyed `link=max` limiter stays within its ceiling on every channel.

The outputs may differ from the committed ones in the last bits with the CPU's libm (log10,
exp), far below the tests' tolerances. Rounding a time to samples: halves round up, as `delay`
does (the contract says only "the nearest sample"; no case here lands on a half).
"""

import math
import pathlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "tests" / "data" / "dynamics"
FX_DIR = ROOT / "tests" / "e2e" / "dynamics"

FS = 48000.0
N = 4800          # 100 ms per input
LEVEL_FLOOR = 1e-10  # xG >= -200 dB


# --- the contract's building blocks ---------------------------------------------------------

def smoothing_coefficient(tau, fs):
    """alpha(tau) = exp(-1 / (tau fs)); alpha(0) = 0 (no smoothing)."""
    return 0.0 if tau == 0 else math.exp(-1.0 / (tau * fs))


def time_in_samples(seconds, fs):
    """A time rounded to the nearest sample (halves up, as `delay` rounds)."""
    return int(math.floor(seconds * fs + 0.5))


def level_db(x):
    """xG = 20 log10(max(|x|, 10^-10))."""
    return 20.0 * math.log10(max(abs(x), LEVEL_FLOOR))


def db_to_gain(g_db):
    return 10.0 ** (g_db / 20.0)


def compressor_reduction(xg, threshold, ratio, knee):
    """The compressor's gain reduction target xL (dB, >= 0) for a level xG."""
    d = xg - threshold
    if 2.0 * d > knee:
        return (1.0 - 1.0 / ratio) * d
    if knee > 0 and abs(2.0 * d) <= knee:
        return (1.0 - 1.0 / ratio) * (d + knee / 2.0) ** 2 / (2.0 * knee)
    return 0.0


def expander_reduction(xg, threshold, ratio, knee):
    """The expander's gain reduction target xL (dB, >= 0) for a level xG."""
    d = xg - threshold
    if 2.0 * d < -knee:
        return (ratio - 1.0) * (-d)
    if knee > 0 and abs(2.0 * d) <= knee:
        return (ratio - 1.0) * (d - knee / 2.0) ** 2 / (2.0 * knee)
    return 0.0


def static_curve(kind, threshold, ratio, knee=0.0, levels=None):
    """[2, K]: the input levels xG (default -90..0 dB in 1 dB steps) and yG = xG - xL."""
    if levels is None:
        levels = np.arange(-90.0, 0.5, 1.0)
    reduction = compressor_reduction if kind == "compressor" else expander_reduction
    yg = [xg - reduction(float(xg), threshold, ratio, knee) for xg in levels]
    return np.array([np.asarray(levels, dtype=np.float64), np.array(yg)])


def _per_channel(stage):
    """Applies a one-channel stage to a [T] or [C, T] array (each channel on its own)."""
    def run(x, *args, **kwargs):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim == 1:
            return stage(x, *args, **kwargs)
        return np.stack([stage(channel, *args, **kwargs) for channel in x])
    run.__name__ = stage.__name__
    run.__doc__ = stage.__doc__
    return run


# --- the stages -------------------------------------------------------------------------------

@_per_channel
def envelope(x, fs, attack, release, detector="peak"):
    """envelope(attack, release, detector): the branching peak detector on |x| (peak) or on
    x^2 followed by a square root (rms). Times in seconds."""
    a_att = smoothing_coefficient(attack, fs)
    a_rel = smoothing_coefficient(release, fs)
    y = np.empty(len(x))
    e = 0.0
    for n, xn in enumerate(x):
        v = abs(xn) if detector == "peak" else xn * xn
        a = a_att if v > e else a_rel
        e = a * e + (1.0 - a) * v
        y[n] = e if detector == "peak" else math.sqrt(e)
    return y


def _reduce(x, fs, target, attack, release, reduction_grows_on_attack, makeup):
    """Steps 3 and 4 for the compressor, expander and gate: the branching peak detector on the
    targets xL[n] (attack when the reduction grows for a compressor, when it shrinks for the
    expander and the gate), then out = 10^((M - y) / 20) x. Returns (out, y)."""
    a_att = smoothing_coefficient(attack, fs)
    a_rel = smoothing_coefficient(release, fs)
    out = np.empty(len(x))
    ys = np.empty(len(x))
    y = 0.0
    for n, xn in enumerate(x):
        xl = target[n]
        attacking = xl > y if reduction_grows_on_attack else xl < y
        a = a_att if attacking else a_rel
        y = a * y + (1.0 - a) * xl
        ys[n] = y
        out[n] = db_to_gain(makeup - y) * xn
    return out, ys


def _compressor(x, fs, threshold, ratio, attack, release, knee=0.0, makeup=0.0, level=None):
    level = x if level is None else level
    target = [compressor_reduction(level_db(kn), threshold, ratio, knee) for kn in level]
    return _reduce(x, fs, target, attack, release, True, makeup)


def _expander(x, fs, threshold, ratio, attack, release, knee=0.0, makeup=0.0, level=None):
    level = x if level is None else level
    target = [expander_reduction(level_db(kn), threshold, ratio, knee) for kn in level]
    return _reduce(x, fs, target, attack, release, False, makeup)


def _gate(x, fs, threshold, attack, release, hold=0.0, range=-80.0, level=None):
    level = x if level is None else level
    hold_n = time_in_samples(hold, fs)
    target = []
    h = 0
    for kn in level:
        h = 0 if level_db(kn) >= threshold else min(h + 1, hold_n + 1)
        target.append(0.0 if h <= hold_n else -range)
    return _reduce(x, fs, target, attack, release, False, 0.0)


def _limiter(x, fs, ceiling, release, lookahead=0.0, level=None):
    level = x if level is None else level
    look = time_in_samples(lookahead, fs)
    a_rel = smoothing_coefficient(release, fs)
    target = [max(level_db(kn) - ceiling, 0.0) for kn in level]  # the key's level: not delayed
    out = np.empty(len(x))
    ys = np.empty(len(x))
    y = 0.0
    for n in range(len(x)):
        z = max(target[max(n - look, 0):n + 1])  # xL before the start is 0
        z = max(z, 0.0)
        y = z if z > y else a_rel * y + (1.0 - a_rel) * z
        ys[n] = y
        delayed = x[n - look] if n >= look else 0.0
        out[n] = db_to_gain(-y) * delayed
    return out, ys


@_per_channel
def compressor(x, fs, threshold, ratio, attack, release, knee=0.0, makeup=0.0):
    """compressor(threshold, ratio, attack, release, knee, makeup); levels in dB, times in s."""
    return _compressor(x, fs, threshold, ratio, attack, release, knee, makeup)[0]


@_per_channel
def expander(x, fs, threshold, ratio, attack, release, knee=0.0, makeup=0.0):
    """expander(threshold, ratio, attack, release, knee, makeup); levels in dB, times in s."""
    return _expander(x, fs, threshold, ratio, attack, release, knee, makeup)[0]


@_per_channel
def gate(x, fs, threshold, attack, release, hold=0.0, range=-80.0):
    """gate(threshold, attack, release, hold, range); levels in dB, times in s."""
    return _gate(x, fs, threshold, attack, release, hold, range)[0]


@_per_channel
def limiter(x, fs, ceiling, release, lookahead=0.0):
    """limiter(ceiling, release, lookahead); the output is the input `lookahead` late."""
    return _limiter(x, fs, ceiling, release, lookahead)[0]


@_per_channel
def gain_reduction(x, fs, kind, **params):
    """The smoothed reduction y[n] in dB (step 3) of a compressor, expander, gate or limiter."""
    run = {"compressor": _compressor, "expander": _expander, "gate": _gate, "limiter": _limiter}
    return run[kind](x, fs, **params)[1]


STAGES = {"envelope": envelope, "compressor": compressor, "expander": expander, "gate": gate,
          "limiter": limiter}


# --- side-chains and linking ------------------------------------------------------------------

_RUNS = {"compressor": _compressor, "expander": _expander, "gate": _gate, "limiter": _limiter}
LINKS = ("none", "max", "mean")


def detector_levels(x, key=None, link="none"):
    """What step 1 takes the level of, one row per channel of x ([C, T]): |x_c| without a key,
    |k_c| with a key of C channels, |k_0| on every channel with a key of one channel. With
    link=max or link=mean, one row for all channels: max_c |k_c[n]| or (1/C_k) sum_c |k_c[n]|
    over the C_k channels of the key (of the input without a key)."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    src = x if key is None else np.atleast_2d(np.asarray(key, dtype=np.float64))
    channels = x.shape[0]
    assert src.shape[1] == x.shape[1], "the key has as many samples as the input"
    assert src.shape[0] in (channels, 1), "the key has the input's channel count or one"
    assert link in LINKS, link
    mag = np.abs(src)
    if link == "none":
        return mag if src.shape[0] == channels else np.repeat(mag, channels, axis=0)
    if link == "max":
        one = np.max(mag, axis=0)
    else:
        one = (1.0 / src.shape[0]) * np.sum(mag, axis=0)
    return np.repeat(one[None, :], channels, axis=0)


def _sidechain(kind, x, fs, key, link, params):
    x2 = np.atleast_2d(np.asarray(x, dtype=np.float64))
    levels = detector_levels(x2, key, link)
    runs = [_RUNS[kind](xc, fs, **params, level=lc) for xc, lc in zip(x2, levels)]
    out = np.stack([r[0] for r in runs])
    red = np.stack([r[1] for r in runs])
    return (out[0], red[0]) if np.ndim(x) == 1 else (out, red)


def sidechain(kind, x, fs, key=None, link="none", **params):
    """A compressor, expander, gate or limiter with `key=` (None, or [T] / [C_k, T] with C_k the
    input's channel count or 1) and `link=` ("none", "max" or "mean"): steps 1-3 on the levels of
    detector_levels(), the gain multiplying x (the limiter's x delayed by the lookahead; the key
    is not delayed). With key=None and link="none", exactly the stage itself."""
    return _sidechain(kind, x, fs, key, link, params)[0]


def sidechain_reduction(kind, x, fs, key=None, link="none", **params):
    """The smoothed reduction y[n] in dB (step 3), [C, T], of sidechain()."""
    return _sidechain(kind, x, fs, key, link, params)[1]


# --- the cases --------------------------------------------------------------------------------

# Parameters as the stage functions take them: levels in dB, times in seconds. The order of
# each dict is the stage's positional order; KEYWORDS are written as keywords in the .fx call.
CASES = {
    "envelope_peak": ("envelope", dict(attack=1e-3, release=20e-3), ["tone_step", "bursts"]),
    "envelope_rms": ("envelope", dict(attack=5e-3, release=50e-3, detector="rms"),
                     ["tone_step", "noise"]),
    "compressor_hard": ("compressor", dict(threshold=-20.0, ratio=4.0, attack=5e-3, release=50e-3),
                        ["tone_step", "bursts", "noise"]),
    "compressor_knee": ("compressor", dict(threshold=-20.0, ratio=4.0, attack=5e-3, release=50e-3,
                                           knee=6.0, makeup=2.0),
                        ["tone_step", "bursts", "noise"]),
    "compressor_makeup": ("compressor", dict(threshold=-24.0, ratio=2.5, attack=2e-3,
                                             release=100e-3, makeup=6.0),
                          ["tone_step", "noise"]),
    "compressor_attack0": ("compressor", dict(threshold=-18.0, ratio=8.0, attack=0.0,
                                              release=30e-3, knee=12.0),
                           ["bursts", "noise"]),
    "compressor_release0": ("compressor", dict(threshold=-30.0, ratio=3.0, attack=3e-3,
                                               release=0.0),
                            ["tone_step", "bursts"]),
    "expander_hard": ("expander", dict(threshold=-34.0, ratio=2.0, attack=1e-3, release=50e-3),
                      ["tone_step", "bursts"]),
    "expander_knee": ("expander", dict(threshold=-35.0, ratio=3.0, attack=2e-3, release=40e-3,
                                       knee=10.0, makeup=1.0),
                      ["tone_step", "bursts", "noise"]),
    "gate_hold": ("gate", dict(threshold=-36.0, attack=0.5e-3, release=20e-3, hold=5e-3,
                               range=-60.0),
                  ["tone_step", "bursts"]),
    "gate_default": ("gate", dict(threshold=-30.0, attack=1e-3, release=10e-3),
                     ["bursts", "noise"]),
    "limiter": ("limiter", dict(ceiling=-10.0, release=50e-3), ["tone_step", "noise"]),
    "limiter_lookahead": ("limiter", dict(ceiling=-9.0, release=20e-3, lookahead=1e-3),
                          ["tone_step", "bursts", "noise"]),
}

KEYWORDS = {"knee", "makeup", "hold", "range", "lookahead", "detector"}
LEVELS = {"threshold", "ceiling", "knee", "makeup", "range"}
TIMES = {"attack", "release", "hold", "lookahead"}

STATIC_CASES = ["compressor_hard", "compressor_knee", "compressor_makeup", "compressor_attack0",
                "compressor_release0", "expander_hard", "expander_knee"]


def fx_value(name, value):
    if name in LEVELS:
        return f"{value:g} dB"
    if name in TIMES:
        return f"{value * 1e3:g} ms"
    return f"{value:g}" if isinstance(value, float) else str(value)


def fx_call(kind, params):
    """The .fx call of a stage: `compressor(-20 dB, 4, 5 ms, 50 ms, knee=6 dB, makeup=2 dB)`."""
    args = [f"{k}={fx_value(k, v)}" if k in KEYWORDS else fx_value(k, v) for k, v in params.items()]
    return f"{kind}({', '.join(args)})"


def fx_source(case):
    kind, params, _ = CASES[case]
    return (f"# A {kind} case of the dynamics reference tests: scripts/gen_dynamics_reference.py writes\n"
            f"# this file and its expected outputs, tests/data/dynamics/{case}_*.npy (fs = 48 kHz).\n"
            f"graph {case}\ninput x : 2\noutput x | {fx_call(kind, params)}\n")


def run_case(case, x, fs=FS):
    kind, params, _ = CASES[case]
    return STAGES[kind](x, fs, **params)


# Side-chain and link cases: (stage, parameters, x input, key input or None, link). Each graph has
# `input x : 2`, then `input key : <the key's channel count>` when it has a key (inputs bind in
# declaration order: x first), and `output x | <stage>(..., key=key, link=...)`.
SIDECHAIN_CASES = {
    # A stereo key: channel c's key drives channel c's gain (noise ducked under the key).
    "sc_compressor": ("compressor", dict(threshold=-30.0, ratio=4.0, attack=2e-3, release=80e-3),
                      "noise", "key_stereo", "none"),
    # A mono key drives both channels.
    "sc_compressor_mono_key": ("compressor", dict(threshold=-36.0, ratio=6.0, attack=1e-3,
                                                  release=120e-3, knee=6.0),
                               "tone_step", "key_mono", "none"),
    # Linked without a key: the louder channel's level sets both gains.
    "link_max_compressor": ("compressor", dict(threshold=-20.0, ratio=4.0, attack=5e-3,
                                               release=50e-3),
                            "tone_step", None, "max"),
    "link_mean_expander": ("expander", dict(threshold=-35.0, ratio=3.0, attack=2e-3,
                                            release=40e-3, knee=6.0),
                           "bursts", None, "mean"),
    # A stereo key, linked: the mean of the key's two channels.
    "sc_link_mean_compressor": ("compressor", dict(threshold=-28.0, ratio=3.0, attack=1e-3,
                                                   release=60e-3, makeup=2.0),
                                "noise", "key_stereo", "mean"),
    "sc_gate": ("gate", dict(threshold=-30.0, attack=0.5e-3, release=15e-3, hold=3e-3,
                             range=-50.0),
                "noise", "key_stereo", "none"),
    # A mono key, linked by the mean over the key's one channel (C = 1, not the input's 2): the
    # key's own level. The gain multiplies the input 48 samples late; the key is not delayed.
    "sc_limiter_mono_key_mean": ("limiter", dict(ceiling=-12.0, release=30e-3, lookahead=1e-3),
                                 "tone_step", "key_mono", "mean"),
    # Linked by the max, the limiter's promise holds on every channel.
    "link_max_limiter": ("limiter", dict(ceiling=-9.0, release=20e-3, lookahead=1e-3),
                         "noise", None, "max"),
}


def sidechain_fx_call(case):
    kind, params, _, key, link = SIDECHAIN_CASES[case]
    call = fx_call(kind, params)
    extra = ([] if key is None else ["key=key"]) + ([] if link == "none" else [f"link={link}"])
    return call[:-1] + "".join(f", {e}" for e in extra) + ")"


def sidechain_fx_source(case, key_channels):
    kind, _, _, key, _ = SIDECHAIN_CASES[case]
    inputs = "input x : 2\n" + ("" if key is None else f"input key : {key_channels}\n")
    return (f"# A side-chain/link {kind} case of the dynamics reference tests:\n"
            f"# scripts/gen_dynamics_reference.py writes this file and its expected output,\n"
            f"# tests/data/dynamics/{case}_*.npy (fs = 48 kHz; the inputs bind in order, x first).\n"
            f"graph {case}\n{inputs}output x | {sidechain_fx_call(case)}\n")


def sidechain_reference_name(case):
    _, _, name, key, _ = SIDECHAIN_CASES[case]
    return f"{case}_{name}.npy" if key is None else f"{case}_{name}_{key}.npy"


def run_sidechain_case(case, x, key=None, fs=FS):
    kind, params, _, key_name, link = SIDECHAIN_CASES[case]
    assert (key is None) == (key_name is None), case
    return sidechain(kind, x, fs, key=key, link=link, **params)


# --- inputs -----------------------------------------------------------------------------------

def _f32(x):
    """Rounded to float32 values (kept as float64)."""
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def make_inputs(rng):
    t = np.arange(N) / FS
    inputs = {}

    def stepped(f0, phase, levels_db, edges):
        amp = np.full(N, db_to_gain(levels_db[0]))
        for level, start in zip(levels_db[1:], edges):
            amp[start:] = db_to_gain(level)
        return amp * np.sin(2 * np.pi * f0 * t + phase)

    inputs["tone_step"] = _f32([stepped(1000.0, 0.3, [-30.0, -6.0, -30.0], [1200, 3000]),
                                stepped(250.0, 1.1, [-40.0, -12.0, -40.0], [1600, 3400])])

    bursts = np.zeros((2, N))
    burst = 480  # 10 ms
    for c, levels in enumerate([[-6.0, -26.0, -14.0, -40.0, -3.0], [-20.0, -8.0, -32.0, -50.0, -16.0]]):
        if c == 1:
            bursts[c] = db_to_gain(-70.0) * rng.standard_normal(N)
        for k, level in enumerate(levels):
            start = 2 * k * burst + (240 if c == 1 else 0) + 200
            bursts[c, start:start + burst] = db_to_gain(level) * rng.standard_normal(burst)
    inputs["bursts"] = _f32(bursts)

    swell = 0.02 + 0.4 * (0.5 - 0.5 * np.cos(2 * np.pi * t / (N / FS)))
    inputs["noise"] = _f32([0.25 * rng.standard_normal(N), swell * rng.standard_normal(N)])
    return inputs


def make_key_inputs(rng):
    """The side-chain keys (their own generator, so the inputs above stay as they were)."""
    t = np.arange(N) / FS
    keys = {}
    stereo = np.zeros((2, N))
    for start, length, level in [(300, 600, -8.0), (1500, 400, -22.0), (2400, 900, -4.0),
                                 (3800, 300, -16.0)]:
        stereo[0, start:start + length] = db_to_gain(level) * rng.standard_normal(length)
    amp = np.full(N, db_to_gain(-45.0))
    for start, level in [(1000, -10.0), (2600, -26.0), (3900, -50.0)]:
        amp[start:] = db_to_gain(level)
    stereo[1] = amp * np.sin(2 * np.pi * 500.0 * t + 0.7)
    keys["key_stereo"] = _f32(stereo)

    mono = np.zeros((1, N))
    for start, length, level in [(400, 900, -6.0), (1800, 700, -18.0), (3000, 1200, -3.0)]:
        window = np.sin(np.pi * (np.arange(length) + 0.5) / length) ** 2
        mono[0, start:start + length] = (db_to_gain(level) * window
                                         * np.sin(2 * np.pi * 220.0 * t[start:start + length]))
    keys["key_mono"] = _f32(mono)
    return keys


# --- self-checks ------------------------------------------------------------------------------

def step_times(reduction, step, final, fs):
    """Seconds, counted from the step's sample inclusive, until the reduction (dB, one value a
    sample) has covered 1 - 1/e of its way from its value just before the step to `final`."""
    start = reduction[step - 1]
    goal = start + (1.0 - math.exp(-1.0)) * (final - start)
    after = reduction[step:]
    reached = np.nonzero(after >= goal if final > start else after <= goal)[0]
    assert len(reached), "the reduction never covered 1 - 1/e of its way"
    return (reached[0] + 1) / fs


def within_a_sample(measured, tau, fs=FS):
    """The 1 - 1/e point lies exactly on sample tau fs when that is whole (alpha^(tau fs) = 1/e),
    so rounding may put the measured time one sample after it: one sample of tolerance."""
    return abs(measured - tau) * fs <= 1.0 + 1e-6


def dc_steps(levels_db, lengths, fs=FS):
    """A DC signal at each level in turn, for each length (seconds); and the step indices."""
    parts = [np.full(time_in_samples(s, fs), db_to_gain(l)) for l, s in zip(levels_db, lengths)]
    steps = np.cumsum([len(p) for p in parts])[:-1]
    return np.concatenate(parts), steps


def check_knees():
    for kind, reduction in [("compressor", compressor_reduction), ("expander", expander_reduction)]:
        for threshold, ratio, knee in [(-20.0, 4.0, 6.0), (-35.0, 3.0, 10.0), (-18.0, 8.0, 12.0),
                                       (-10.0, 1.5, 0.5)]:
            slope_outside = (1.0 - 1.0 / ratio) if kind == "compressor" else -(ratio - 1.0)
            for edge in (threshold - knee / 2, threshold + knee / 2):
                eps = 1e-7
                below, at, above = (reduction(edge + s, threshold, ratio, knee) for s in (-eps, 0.0, eps))
                assert abs(above - below) < 1e-5 and abs(at - below) < 1e-5, (kind, edge)
                slope_below = (at - below) / eps
                slope_above = (above - at) / eps
                assert abs(slope_below - slope_above) < 1e-4, (kind, edge, slope_below, slope_above)
                outer = slope_outside if (edge > threshold) == (kind == "compressor") else 0.0
                assert abs(slope_below - outer) < 1e-4, (kind, edge, slope_below, outer)
            # The knee's quadratic reaches its outer values exactly at the edges.
            w = knee
            if kind == "compressor":
                inner = (1 - 1 / ratio) * (w / 2 + w / 2) ** 2 / (2 * w)
                assert abs(inner - (1 - 1 / ratio) * w / 2) < 1e-12
            else:
                inner = (ratio - 1) * (-w / 2 - w / 2) ** 2 / (2 * w)
                assert abs(inner - (ratio - 1) * w / 2) < 1e-12


def check_static_curves():
    for case in STATIC_CASES:
        kind, p, _ = CASES[case]
        curve = static_curve(kind, p["threshold"], p["ratio"], p.get("knee", 0.0))
        xg, yg = curve
        slope = np.diff(yg)
        assert np.all(slope > 0), case  # monotonic
        far_below = xg < p["threshold"] - p.get("knee", 0.0) / 2 - 1
        far_above = xg > p["threshold"] + p.get("knee", 0.0) / 2 + 1
        if kind == "compressor":
            assert np.allclose(yg[far_below], xg[far_below], atol=1e-12)
            assert np.allclose(slope[far_above[1:] & far_above[:-1]], 1 / p["ratio"], atol=1e-12)
            assert np.all(yg <= xg + 1e-12)
        else:
            assert np.allclose(yg[far_above], xg[far_above], atol=1e-12)
            assert np.allclose(slope[far_below[1:] & far_below[:-1]], p["ratio"], atol=1e-12)
            assert np.all(yg <= xg + 1e-12)


def check_step_responses():
    # Compressor: DC at -40 dBFS (below -20 dB), then -6 dBFS, then -40 again: the reduction
    # grows with the attack time constant and falls back with the release time constant.
    params = CASES["compressor_hard"][1]
    x, steps = dc_steps([-40.0, -6.0, -40.0], [0.05, 0.3, 0.6])
    y = gain_reduction(x, FS, "compressor", **params)
    final = compressor_reduction(-6.0, params["threshold"], params["ratio"], 0.0)
    assert abs(y[steps[1] - 1] - final) < 1e-9
    t_att = step_times(y, steps[0], final, FS)
    t_rel = step_times(y, steps[1], 0.0, FS)
    assert within_a_sample(t_att, params["attack"]), t_att
    assert within_a_sample(t_rel, params["release"]), t_rel
    # The same measured on the output, as a test does (out / x, in dB).
    out = compressor(x, FS, **params)
    measured = -20 * np.log10(out / x)
    assert within_a_sample(step_times(measured, steps[0], final, FS), params["attack"])
    assert within_a_sample(step_times(measured, steps[1], 0.0, FS), params["release"])
    # Expander: DC at -20 dBFS (above -40), -70 (closing: release), -20 (opening: attack).
    params = CASES["expander_hard"][1]
    x, steps = dc_steps([-20.0, -70.0, -20.0], [0.05, 0.6, 0.3])
    y = gain_reduction(x, FS, "expander", **params)
    final = expander_reduction(-70.0, params["threshold"], params["ratio"], 0.0)
    assert within_a_sample(step_times(y, steps[0], final, FS), params["release"])
    assert within_a_sample(step_times(y, steps[1], 0.0, FS), params["attack"])
    # Limiter with lookahead: the reduction starts L samples before the loud part reaches the
    # output, at once, and lets go L samples after it passed, then with the release.
    params = CASES["limiter_lookahead"][1]
    look = time_in_samples(params["lookahead"], FS)
    x, steps = dc_steps([-20.0, 0.0, -20.0], [0.05, 0.05, 0.4])
    y = gain_reduction(x, FS, "limiter", **params)
    assert y[steps[0] - 1] == 0.0 and y[steps[0]] == -params["ceiling"]
    assert np.all(y[steps[0]:steps[1] + look] == -params["ceiling"])
    assert within_a_sample(step_times(y, steps[1] + look, 0.0, FS), params["release"])
    out = limiter(x, FS, **params)
    assert np.all(out[:look] == 0.0)
    assert np.allclose(out[look:steps[0]], x[:steps[0] - look], rtol=1e-15, atol=0)


def check_gate_hold():
    params = dict(threshold=-40.0, attack=0.0, release=0.0, hold=5e-3, range=-60.0)
    hold = time_in_samples(params["hold"], FS)
    x, steps = dc_steps([-30.0, -50.0, -30.0], [0.01, 0.02, 0.01])
    y = gain_reduction(x, FS, "gate", **params)
    closed = np.nonzero(y > 0)[0]
    # Open for the H samples after the fall (h = 1..H), closed from the (H + 1)-th on.
    assert closed[0] == steps[0] + hold, (closed[0], steps[0], hold)
    assert closed[-1] == steps[1] - 1 and np.all(y[closed] == 60.0)


def check_gate_margins(inputs):
    for case, (kind, params, names) in CASES.items():
        if kind != "gate":
            continue
        for name in names:
            xg = 20 * np.log10(np.maximum(np.abs(inputs[name]), LEVEL_FLOOR))
            margin = np.min(np.abs(xg - params["threshold"]))
            assert margin > 1e-3, (case, name, margin)


def check_outputs(case, name, x, y):
    kind, params, _ = CASES[case]
    assert y.shape == x.shape and np.all(np.isfinite(y)) and np.max(np.abs(y)) > 1e-3
    if kind == "limiter":
        ceiling = db_to_gain(params["ceiling"])
        assert np.max(np.abs(y)) <= ceiling * (1 + 1e-12), (case, name)
        assert np.max(np.abs(x)) > ceiling, (case, name)  # the case limits something
    if kind == "envelope":
        assert np.all(y >= 0)
    if kind in ("compressor", "expander", "gate", "limiter"):
        red = gain_reduction(x, FS, kind, **params)
        assert np.all(red >= 0) and np.max(red) > 1.0, (case, name)  # the stage acts


def check_sidechain_identities(x):
    """The side-chain path reduces to the plain stages where the contract says it must, for
    each kind, on a stereo input x (bit for bit: the same operations)."""
    params = {kind: SIDECHAIN_CASES[case][1] for case, kind in
              [("sc_compressor", "compressor"), ("link_mean_expander", "expander"),
               ("sc_gate", "gate"), ("link_max_limiter", "limiter")]}
    mono_key = x[1:] * 0.5
    for kind, p in params.items():
        plain = STAGES[kind](x, FS, **p)
        assert np.array_equal(sidechain(kind, x, FS, **p), plain), kind
        assert np.array_equal(sidechain(kind, x, FS, key=x, **p), plain), kind  # key = input
        # link=none is the default.
        assert np.array_equal(sidechain(kind, x, FS, key=x, link="none", **p), plain), kind
        # A mono key drives every channel as that key copied to each channel does.
        by_mono = sidechain(kind, x, FS, key=mono_key, **p)
        assert np.array_equal(by_mono, sidechain(kind, x, FS, key=np.repeat(mono_key, 2, 0), **p))
        # Linking over one key channel is that channel's own level (C is the key's count).
        for link in ("max", "mean"):
            assert np.array_equal(sidechain(kind, x, FS, key=mono_key, link=link, **p), by_mono)
        # Linking identical channels changes nothing.
        same = np.repeat(x[:1], 2, axis=0)
        for link in ("max", "mean"):
            assert np.array_equal(sidechain(kind, same, FS, link=link, **p),
                                  STAGES[kind](same, FS, **p)), (kind, link)
        # A key channel drives its own channel: the left key alone does not touch the right.
        keyed = sidechain(kind, x, FS, key=np.stack([x[1], x[1]]), **p)
        assert np.array_equal(keyed[1], plain[1]), kind
    # max and mean as the contract writes them, at a few samples.
    k = np.array([[0.5, -0.25, 0.0], [-0.125, 0.75, 0.0]])
    assert np.array_equal(detector_levels(k, link="max")[1], [0.5, 0.75, 0.0])
    assert np.array_equal(detector_levels(k, link="mean")[0], [0.3125, 0.5, 0.0])


def check_keyed_limiter_alignment():
    """The limiter's key is not delayed: with the input at -20 dBFS DC and the key stepping from
    silence to 0 dBFS at sample m, the reduction starts at output sample m, which carries the
    input's sample m - L; the key's loud part ends at sample e, the full reduction holds through
    output sample e + L - 1, then the release follows."""
    p = SIDECHAIN_CASES["sc_limiter_mono_key_mean"][1]
    look = time_in_samples(p["lookahead"], FS)
    x = np.full((2, 2000), db_to_gain(-20.0))
    key = np.zeros((1, 2000))
    m, e = 500, 900
    key[0, m:e] = 1.0
    red = sidechain_reduction("limiter", x, FS, key=key, link="mean", **p)
    out = sidechain("limiter", x, FS, key=key, link="mean", **p)
    assert np.all(red[:, :m] == 0.0) and np.all(red[:, m:e + look] == -p["ceiling"])
    assert red[0, e + look] < -p["ceiling"]
    assert np.all(out[:, :look] == 0.0)
    assert np.array_equal(out[:, look:m], x[:, :m - look])
    assert np.allclose(out[:, m:e + look], db_to_gain(p["ceiling"] - 20.0), rtol=1e-14, atol=0)


def check_sidechain_outputs(case, x, key, y):
    """A case's output: the stage acts, the key (or the link) changes what it does, linked
    channels share one gain, a gate's level keeps clear of its threshold, and the limiter's
    latency and (without a key, linked by max) its ceiling."""
    kind, params, _, _, link = SIDECHAIN_CASES[case]
    assert y.shape == x.shape and np.all(np.isfinite(y)) and np.max(np.abs(y)) > 1e-3, case
    red = sidechain_reduction(kind, x, FS, key=key, link=link, **params)
    assert np.all(red >= 0) and np.max(red) > 1.0, case
    plain = gain_reduction(x, FS, kind, **params)
    assert np.max(np.abs(red - plain)) > 1.0, case  # the key or the link matters here
    if link != "none":
        assert np.all(red == red[0]), case  # one reduction for all channels
    if link != "none" and (key is None or key.shape[0] > 1):  # (one key channel: max = mean)
        other = "max" if link == "mean" else "mean"
        assert np.max(np.abs(red - sidechain_reduction(kind, x, FS, key=key, link=other,
                                                       **params))) > 1.0, case
    if key is not None and key.shape[0] == 2 and link == "none":
        swapped = sidechain_reduction(kind, x, FS, key=key[::-1], **params)
        assert np.max(np.abs(red - swapped)) > 1.0, case  # channel c's key drives channel c
    look = time_in_samples(params.get("lookahead", 0.0), FS) if kind == "limiter" else 0
    carried = np.zeros_like(x)
    carried[:, look:] = x[:, :x.shape[1] - look]
    both = np.all(carried != 0, axis=0)
    gains = y[:, both] / carried[:, both]
    if link != "none":
        assert np.allclose(gains, gains[0], rtol=1e-12, atol=0), case  # out / in, every channel
    if kind == "limiter":
        assert np.all(y[:, :look] == 0.0), case
        if key is None and link in ("none", "max"):
            ceiling = db_to_gain(params["ceiling"])
            assert np.max(np.abs(y)) <= ceiling * (1 + 1e-12), case
            assert np.max(np.abs(x)) > ceiling, case
    if kind == "gate":
        levels = 20 * np.log10(np.maximum(detector_levels(x, key, link), LEVEL_FLOOR))
        margin = np.min(np.abs(levels - params["threshold"]))
        assert margin > 1e-3, (case, margin)


# --- writing ----------------------------------------------------------------------------------

def save(name, array):
    array = np.ascontiguousarray(np.asarray(array, dtype=np.float64))
    np.save(OUT_DIR / name, array)


def main():
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    FX_DIR.mkdir(parents=True, exist_ok=True)
    check_knees()
    check_static_curves()
    check_step_responses()
    check_gate_hold()

    inputs = make_inputs(np.random.default_rng(1234))
    check_gate_margins(inputs)
    for name, x in inputs.items():
        assert x.shape == (2, N) and np.array_equal(_f32(x), x)
        save(f"{name}.npy", x)

    lines = []
    for case, (kind, params, names) in CASES.items():
        (FX_DIR / f"{case}.fx").write_text(fx_source(case))
        for name in names:
            y = run_case(case, inputs[name])
            check_outputs(case, name, inputs[name], y)
            save(f"{case}_{name}.npy", y)
            lines.append(f"{case}.fx {name}.npy {case}_{name}.npy")
        if case in STATIC_CASES:
            save(f"static_{case}.npy",
                 static_curve(kind, params["threshold"], params["ratio"], params.get("knee", 0.0)))
    (OUT_DIR / "cases.txt").write_text("\n".join(lines) + "\n")

    check_sidechain_identities(inputs["noise"])
    check_keyed_limiter_alignment()
    keys = make_key_inputs(np.random.default_rng(4321))
    for name, k in keys.items():
        assert k.shape[1] == N and k.shape[0] in (1, 2) and np.array_equal(_f32(k), k)
        save(f"{name}.npy", k)
    sc_lines = []
    for case, (kind, params, name, key_name, link) in SIDECHAIN_CASES.items():
        key = None if key_name is None else keys[key_name]
        source = sidechain_fx_source(case, None if key is None else key.shape[0])
        (FX_DIR / f"{case}.fx").write_text(source)
        y = run_sidechain_case(case, inputs[name], key)
        check_sidechain_outputs(case, inputs[name], key, y)
        out = sidechain_reference_name(case)
        save(out, y)
        sc_lines.append(f"{case}.fx {name}.npy {'-' if key is None else key_name + '.npy'} {out}")
    (OUT_DIR / "sidechain_cases.txt").write_text("\n".join(sc_lines) + "\n")

    total = sum(p.stat().st_size for p in OUT_DIR.iterdir())
    print(f"wrote {len(CASES) + len(SIDECHAIN_CASES)} graphs to {FX_DIR}, "
          f"{len(lines) + len(sc_lines)} reference outputs and "
          f"{len(list(OUT_DIR.iterdir()))} files, {total / 1024:.0f} KiB, to {OUT_DIR}")


if __name__ == "__main__":
    main()
