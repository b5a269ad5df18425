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

Before writing it checks its own consistency and stops on an AssertionError otherwise: the
soft knees are continuous with a continuous slope at both edges, the static curves have the
slopes the ratios say, a level step's gain reduction reaches 1 - 1/e of its final value after
the attack (or release) time constant to within a sample, the gate closes exactly H + 1 samples
after the level falls below its threshold, no gate input comes within 1e-3 dB of the gate's
threshold (so float32 rounding cannot flip the gate), and no limiter output exceeds its ceiling.

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


def _compressor(x, fs, threshold, ratio, attack, release, knee=0.0, makeup=0.0):
    target = [compressor_reduction(level_db(xn), threshold, ratio, knee) for xn in x]
    return _reduce(x, fs, target, attack, release, True, makeup)


def _expander(x, fs, threshold, ratio, attack, release, knee=0.0, makeup=0.0):
    target = [expander_reduction(level_db(xn), threshold, ratio, knee) for xn in x]
    return _reduce(x, fs, target, attack, release, False, makeup)


def _gate(x, fs, threshold, attack, release, hold=0.0, range=-80.0):
    hold_n = time_in_samples(hold, fs)
    target = []
    h = 0
    for xn in x:
        h = 0 if level_db(xn) >= threshold else min(h + 1, hold_n + 1)
        target.append(0.0 if h <= hold_n else -range)
    return _reduce(x, fs, target, attack, release, False, 0.0)


def _limiter(x, fs, ceiling, release, lookahead=0.0):
    look = time_in_samples(lookahead, fs)
    a_rel = smoothing_coefficient(release, fs)
    target = [max(level_db(xn) - ceiling, 0.0) for xn in x]
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

    total = sum(p.stat().st_size for p in OUT_DIR.iterdir())
    print(f"wrote {len(CASES)} graphs to {FX_DIR}, {len(lines)} reference outputs and "
          f"{len(list(OUT_DIR.iterdir()))} files, {total / 1024:.0f} KiB, to {OUT_DIR}")


if __name__ == "__main__":
    main()
