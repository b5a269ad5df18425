# SPDX-License-Identifier: Apache-2.0
"""The dynamics stages (envelope, compressor, expander, gate, limiter: "Dynamics (version 2)" in
docs/fx-language.md) against an independent reference.

The reference is scripts/gen_dynamics_reference.py, imported here by path: plain per-sample
float64 loops written from the contract's equations (Giannoulis, Massberg and Reiss, JAES
2012), not from fxc's code. It also wrote the committed cases this module runs: the graphs in
tests/e2e/dynamics/, their inputs and outputs in tests/data/dynamics/ (listed in cases.txt, and
the side-chain and link cases, `key=` and `link=`, in sidechain_cases.txt).
Errors are measured relative to the reference's peak (`rel_err`), as in
test_stdlib_reference.py.

Tolerances:
- float64 programs: 1e-9 of the peak. Both sides compute the same float64 recursion; they
  differ by the last bits of log10/exp/pow and of alpha = exp(-1 / (tau fs)) (a relative error
  of 1e-16 in alpha moves a 100 ms time constant by about 1e-12 of itself), so 1e-9 leaves a
  wide margin and still catches any wrong branch, coefficient or sample offset. The gate's
  threshold test is the one discontinuity; the script asserts that no gate input comes within
  1e-3 dB of its threshold, so rounding cannot flip it.
- float32 programs: 1e-4 of the peak, on float32 inputs (the committed inputs are float32
  values, so the reference is the same). The smoothing coefficient alpha is the sensitive
  part: an error delta in alpha changes the time constant by delta / (1 - alpha) of itself
  (2^-25 / (1 - alpha) = 1.4e-4 for 100 ms at 48 kHz). Running the float64 reference with
  alpha moved by 2^-25 (half a float32 ulp: the most that correct rounding moves it) gives up
  to 2.7e-5 of the peak on these signals (the worst: limiter(-1 dB, 50 ms) on loud noise), by
  one ulp (a float32 exp that is not correctly rounded) 5.3e-5; two emulations of an
  all-float32 implementation (coefficients rounded to float32; level, knee, recursion and gain
  in float32) gave up to 8e-6. 1e-4 covers an alpha off by up to ~1.8 float32 ulps plus the
  arithmetic's rounding; a float32 program with float64 state does far better (~1e-7). Real
  mistakes stay well above it: a time constant off by one sample gives ~1e-3, a hold or a
  lookahead off by one sample ~1e-1. (2e-5 would fail a correct float32 implementation whose
  coefficients happen to round badly.)
"""
import importlib.util
import math
import pathlib

import numpy as np
import pytest

import fxc

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "tests" / "data" / "dynamics"
GRAPHS = ROOT / "tests" / "e2e" / "dynamics"


def _load_reference():
    path = ROOT / "scripts" / "gen_dynamics_reference.py"
    spec = importlib.util.spec_from_file_location("gen_dynamics_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _load_reference()
FS = int(ref.FS)
TOL = {"float64": 1e-9, "float32": 1e-4}


def rel_err(got, want):
    """max |got - want| / max |want|, with the shapes checked."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


def check(got, want, tol, what):
    err = rel_err(got, want)
    print(f"{what}: max error {err:.3g} (relative to the peak; tolerance {tol:g})")
    assert err <= tol, f"{what}: max error {err:.3g} > {tol:g}"
    return err


def program(call, dtype="float64", target="cpu"):
    """`input x` (any channel count) through one stage call."""
    return fxc.compile(f"input x\noutput x | {call}\n", fs=FS, dtype=dtype, target=target)


def manifest():
    lines = (DATA / "cases.txt").read_text().split("\n")
    return [tuple(line.split()) for line in lines if line.strip()]


CASE_LINES = manifest()


def case_id(line):
    return line[2][:-len(".npy")]


# ---------------------------------------------------------------------------------------------
# 1. The committed data: consistent with the reference functions
# ---------------------------------------------------------------------------------------------

def test_manifest_lists_every_case_once():
    expected = [(f"{case}.fx", f"{name}.npy", f"{case}_{name}.npy")
                for case, (_, _, names) in ref.CASES.items() for name in names]
    assert CASE_LINES == expected
    for graph, inp, out in CASE_LINES:
        assert (GRAPHS / graph).is_file() and (DATA / inp).is_file() and (DATA / out).is_file()


def test_reference_checks_itself():
    # The script's own consistency checks: knees continuous with a continuous slope, static
    # slopes, step-response time constants, the gate's hold count, the limiter's lookahead.
    ref.check_knees()
    ref.check_static_curves()
    ref.check_step_responses()
    ref.check_gate_hold()
    ref.check_gate_margins({name: np.load(DATA / f"{name}.npy") for name in ("tone_step", "bursts", "noise")})


@pytest.mark.parametrize("line", CASE_LINES, ids=case_id)
def test_committed_outputs_are_the_references(line):
    # The .fx text is what the script writes for the case, and the committed output what the
    # reference computes now (1e-12: libm differences only).
    graph, inp, out = line
    case = graph[:-len(".fx")]
    assert (GRAPHS / graph).read_text() == ref.fx_source(case)
    x = np.load(DATA / inp)
    assert x.dtype == np.float64 and x.shape == (2, ref.N)
    assert np.array_equal(x.astype(np.float32).astype(np.float64), x)  # float32 values
    check(np.load(DATA / out), ref.run_case(case, x), 1e-12, f"{out} vs the reference")


@pytest.mark.parametrize("case", ref.STATIC_CASES)
def test_committed_static_curves(case):
    kind, p, _ = ref.CASES[case]
    curve = np.load(DATA / f"static_{case}.npy")
    assert curve.shape == (2, 91)
    assert np.array_equal(curve[0], np.arange(-90.0, 1.0))
    expected = ref.static_curve(kind, p["threshold"], p["ratio"], p.get("knee", 0.0))
    np.testing.assert_allclose(curve, expected, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# 2. fxc on the committed cases
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["cpu", "reference"])
@pytest.mark.parametrize("line", CASE_LINES, ids=case_id)
def test_case_float64(line, target):
    graph, inp, out = line
    p = fxc.compile(GRAPHS / graph, fs=FS, dtype="float64", target=target)
    x = np.load(DATA / inp)
    y = p(x)
    assert y.dtype == np.float64
    check(y, np.load(DATA / out), TOL["float64"], f"{case_id(line)} float64 {target}")


@pytest.mark.parametrize("line", CASE_LINES, ids=case_id)
def test_case_float32(line):
    graph, inp, out = line
    p = fxc.compile(GRAPHS / graph, fs=FS, dtype="float32")
    x = np.load(DATA / inp).astype(np.float32)  # exact: the inputs are float32 values
    y = p(x)
    assert y.dtype == np.float32
    check(y, np.load(DATA / out), TOL["float32"], f"{case_id(line)} float32")


@pytest.mark.parametrize("case", ["compressor_knee", "gate_hold", "limiter_lookahead", "envelope_rms"])
def test_blocks_carry_the_state(case):
    # A Processor fed blocks of 1 to 300 frames gives the reference (float64, 1e-9): the
    # detector's state, the gate's hold counter and the limiter's window cross block edges.
    p = fxc.compile(GRAPHS / f"{case}.fx", fs=FS, dtype="float64")
    name = ref.CASES[case][2][-1]
    x = np.load(DATA / f"{name}.npy")
    proc = p.processor(block=300, channels=2)
    rng = np.random.default_rng(11)
    parts, i = [], 0
    while i < x.shape[1]:
        n = int(rng.integers(1, 301))
        parts.append(proc(np.ascontiguousarray(x[:, i:i + n])))
        i += n
    check(np.concatenate(parts, axis=1), np.load(DATA / f"{case}_{name}.npy"), TOL["float64"],
          f"{case} {name} in blocks")


def test_channels_are_independent():
    # Each channel on its own: the left channel alone gives the stereo run's left channel
    # (1e-9: the same recursion, perhaps through other libm calls).
    x = np.load(DATA / "bursts.npy")
    p = program(ref.fx_call(*ref.CASES["compressor_knee"][:2]))
    check(p(x[0].copy()), p(x)[0], TOL["float64"], "compressor_knee mono vs stereo left")


# ---------------------------------------------------------------------------------------------
# 3. Static curves: attack = release = 0, so the reduction is the gain computer's target
# ---------------------------------------------------------------------------------------------

STATIC_LEVELS = np.arange(-60.0, 1.0)  # dB
HOLD = 8  # samples per level


def staircase(dtype):
    """DC at each level of STATIC_LEVELS for HOLD samples, the sign alternating per level (the
    level is |x|); and the input levels in dB as the program sees them (after float32)."""
    amp = 10.0 ** (STATIC_LEVELS / 20.0)
    sign = np.where(np.arange(len(amp)) % 2 == 0, 1.0, -1.0)
    x = np.repeat(sign * amp, HOLD).astype(dtype)
    return x, 20.0 * np.log10(np.abs(x.astype(np.float64)))


def instant(params):
    return dict(params, attack=0.0, release=0.0)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", ref.STATIC_CASES)
def test_static_curve(case, dtype):
    # The output level 20 log10|out| is yG + makeup, yG from static_<case>.npy at each 1 dB
    # step from -60 to 0 dB (and from the gain computer at the exact float32 level for
    # float32). Tolerance in dB: 1e-9 (float64), 1e-4 (float32: a few float32 roundings of
    # levels up to 90 dB, ~1e-5 dB).
    kind, params, _ = ref.CASES[case]
    p = program(ref.fx_call(kind, instant(params)), dtype=dtype)
    x, xg = staircase(dtype)
    y = p(x)
    assert np.all(np.sign(y) == np.sign(x))
    out_db = 20.0 * np.log10(np.abs(y.astype(np.float64)))
    makeup = params.get("makeup", 0.0)
    if dtype == "float64":
        curve = np.load(DATA / f"static_{case}.npy")
        yg = dict(zip(curve[0], curve[1]))
        expected = np.repeat([yg[level] for level in STATIC_LEVELS], HOLD) + makeup
        tol = 1e-9
    else:
        expected = ref.static_curve(kind, params["threshold"], params["ratio"],
                                    params.get("knee", 0.0), levels=xg)[1] + makeup
        tol = 1e-4
    dev = float(np.max(np.abs(out_db - expected)))
    print(f"{case} {dtype}: max |out dB - (yG + makeup)| = {dev:.3g} dB (tolerance {tol:g})")
    assert dev <= tol
    # The curve bends: not the identity (the check can fail).
    assert np.max(np.abs(out_db - xg - makeup)) > 3.0


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_limiter_and_gate_static(dtype):
    # Release (and attack) 0, no hold, no lookahead: the limiter clamps |x| to the ceiling, the
    # gate multiplies by 10^(range / 20) below its threshold and passes x at or above it.
    x, xg = staircase(dtype)
    x64 = x.astype(np.float64)
    tol = 1e-9 if dtype == "float64" else 1e-4
    lim = program("limiter(-12 dB, 0 ms)", dtype=dtype)(x).astype(np.float64)
    want = np.sign(x64) * np.minimum(np.abs(x64), 10.0 ** (-12.0 / 20.0))
    check(lim, want, tol, f"limiter static {dtype}")
    gate = program("gate(-20.5 dB, 0 ms, 0 ms, range=-30 dB)", dtype=dtype)(x).astype(np.float64)
    want = np.where(xg >= -20.5, x64, x64 * 10.0 ** (-30.0 / 20.0))
    check(gate, want, tol, f"gate static {dtype}")


@pytest.mark.parametrize("call,expected", [
    ("compressor(-30 dB, 1, 5 ms, 50 ms)", "x"),          # ratio 1: no reduction
    ("expander(-30 dB, 1, 5 ms, 50 ms, knee=6 dB)", "x"),
    ("gate(-30 dB, 1 ms, 10 ms, range=0 dB)", "x"),          # range 0: no attenuation
    ("limiter(6 dB, 50 ms)", "x"),                            # ceiling above every sample
    ("envelope(0 ms, 0 ms)", "abs"),                          # alpha(0) = 0: no smoothing
    ("envelope(0 ms, 0 ms, detector=rms)", "abs"),
])
def test_settings_that_do_nothing(call, expected):
    x = np.load(DATA / "noise.npy")
    assert np.max(np.abs(x)) < 10.0 ** (6.0 / 20.0)
    want = x if expected == "x" else np.abs(x)
    check(program(call)(x), want, 1e-15, call)


# ---------------------------------------------------------------------------------------------
# 4. Step responses: the time constants
# ---------------------------------------------------------------------------------------------

def measured_reduction(x, y, makeup=0.0):
    """The reduction in dB read from the output: makeup - 20 log10(out / x) (x is DC)."""
    return makeup - 20.0 * np.log10(y.astype(np.float64) / x.astype(np.float64))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_compressor_step_response(dtype):
    # DC at -40 dBFS, -6 dBFS, -40 dBFS through compressor(-20 dB, 4, 5 ms, 50 ms, makeup=3 dB):
    # the reduction covers 1 - 1/e of its way to 10.5 dB in the attack time and 1 - 1/e of
    # its way back to 0 in the release time, to within a sample (the smooth peak detector's
    # time constant); it settles at the static curve's value.
    params = dict(ref.CASES["compressor_hard"][1], makeup=3.0)
    x, steps = ref.dc_steps([-40.0, -6.0, -40.0], [0.05, 0.3, 0.6])
    x = x.astype(dtype)
    red = measured_reduction(x, program(ref.fx_call("compressor", params), dtype=dtype)(x), 3.0)
    final = ref.compressor_reduction(ref.level_db(float(x[steps[0]])), params["threshold"],
                                     params["ratio"], 0.0)
    assert abs(final - 10.5) < 1e-5
    assert np.max(np.abs(red[:steps[0]])) < 1e-5
    # Settled (after 60 attack time constants). float32: 1e-3 dB, as coefficients alpha and
    # 1 - alpha rounded to float32 separately need not sum to 1, which biases the settled value
    # by up to ~2^-24 / (1 - alpha) of it (1e-4 dB here).
    assert abs(red[steps[1] - 1] - final) < (1e-9 if dtype == "float64" else 1e-3)
    t_att = ref.step_times(red, steps[0], final, FS)
    t_rel = ref.step_times(red, steps[1], 0.0, FS)
    print(f"compressor {dtype}: attack {t_att * 1e3:.4f} ms (5 ms), release {t_rel * 1e3:.4f} ms (50 ms)")
    assert ref.within_a_sample(t_att, params["attack"], FS)
    assert ref.within_a_sample(t_rel, params["release"], FS)
    # And the whole reduction is the reference's.
    want = ref.gain_reduction(x.astype(np.float64), FS, "compressor", **params)
    assert np.max(np.abs(red - want)) < (1e-9 if dtype == "float64" else 1e-3)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_expander_and_gate_step_response(dtype):
    # DC at -20, -70, -20 dBFS. The expander (-34 dB, 2, 1 ms, 50 ms) closes (its reduction
    # grows to 36 dB) with the release time and opens with the attack time; the gate
    # (-40 dB, 2 ms, 30 ms, hold=4 ms, range=-50 dB) waits H = 192 samples, then closes with
    # the release time, and opens with the attack time.
    x, steps = ref.dc_steps([-20.0, -70.0, -20.0], [0.05, 0.6, 0.3])
    x = x.astype(dtype)
    params = ref.CASES["expander_hard"][1]
    red = measured_reduction(x, program(ref.fx_call("expander", params), dtype=dtype)(x))
    final = ref.expander_reduction(ref.level_db(float(x[steps[0]])), params["threshold"],
                                   params["ratio"], 0.0)
    assert abs(final - 36.0) < 1e-5
    t_close = ref.step_times(red, steps[0], final, FS)
    t_open = ref.step_times(red, steps[1], 0.0, FS)
    print(f"expander {dtype}: closing {t_close * 1e3:.4f} ms (50 ms), opening {t_open * 1e3:.4f} ms (1 ms)")
    assert ref.within_a_sample(t_close, params["release"], FS)
    assert ref.within_a_sample(t_open, params["attack"], FS)

    gate = dict(threshold=-40.0, attack=2e-3, release=30e-3, hold=4e-3, range=-50.0)
    hold = ref.time_in_samples(gate["hold"], FS)
    assert hold == 192
    red = measured_reduction(x, program(ref.fx_call("gate", gate), dtype=dtype)(x))
    # Open (no reduction at all) through the hold: h = 1 .. H after the fall.
    assert np.all(red[:steps[0] + hold] == 0.0)
    assert red[steps[0] + hold] > 0.01  # (1 - alpha_R) 50 dB = 0.035 dB
    t_close = ref.step_times(red, steps[0] + hold, 50.0, FS)
    t_open = ref.step_times(red, steps[1], 0.0, FS)
    print(f"gate {dtype}: closing {t_close * 1e3:.4f} ms (30 ms) after the hold, opening "
          f"{t_open * 1e3:.4f} ms (2 ms)")
    assert ref.within_a_sample(t_close, gate["release"], FS)
    assert ref.within_a_sample(t_open, gate["attack"], FS)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_limiter_lookahead_step_response(dtype):
    # DC at -20, 0, -20 dBFS through limiter(-9 dB, 20 ms, lookahead=1 ms): the output is the
    # input 48 samples late; the full 9 dB reduction starts with the output's last 48 quiet
    # samples (no sample of the loud part passes unreduced), holds until 48 samples after the
    # loud part, then the release time constant follows.
    params = ref.CASES["limiter_lookahead"][1]
    look = ref.time_in_samples(params["lookahead"], FS)
    assert look == 48
    x, steps = ref.dc_steps([-20.0, 0.0, -20.0], [0.05, 0.05, 0.4])
    x = x.astype(dtype)
    y = program(ref.fx_call("limiter", params), dtype=dtype)(x).astype(np.float64)
    x64 = x.astype(np.float64)
    assert np.all(y[:look] == 0.0)
    check(y[look:steps[0]], x64[:steps[0] - look], 1e-15 if dtype == "float64" else 1e-7,
          "limiter: the quiet start, late")
    ceiling = 10.0 ** (-9.0 / 20.0)
    assert np.max(np.abs(y)) <= ceiling * (1 + (1e-12 if dtype == "float64" else 1e-6))
    red = -20.0 * np.log10(y[look:] / x64[:-look])  # output against the input it carries
    red = np.concatenate([np.zeros(look), red])      # indexed by output sample
    tol = 1e-9 if dtype == "float64" else 1e-4
    assert np.all(np.abs(red[look:steps[0]]) < tol)
    assert np.all(np.abs(red[steps[0]:steps[1] + look] - 9.0) < tol)
    t_rel = ref.step_times(red, steps[1] + look, 0.0, FS)
    print(f"limiter {dtype}: release {t_rel * 1e3:.4f} ms (20 ms) after the window")
    assert ref.within_a_sample(t_rel, params["release"], FS)


# ---------------------------------------------------------------------------------------------
# 5. The limiter's promise on loud noise
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("call,ceiling_db", [("limiter(-1 dB, 50 ms)", -1.0),
                                              ("limiter(-6 dB, 5 ms, lookahead=2 ms)", -6.0),
                                              ("limiter(0 dB, 0 ms, lookahead=0.5 ms)", 0.0)])
def test_limiter_never_exceeds_its_ceiling(call, ceiling_db, dtype):
    x = (2.0 * np.random.default_rng(1234).standard_normal((2, 9600))).astype(dtype)
    y = program(call, dtype=dtype)(x).astype(np.float64)
    ceiling = 10.0 ** (ceiling_db / 20.0)
    peak = float(np.max(np.abs(y)))
    print(f"{call} {dtype}: peak {20 * math.log10(peak):.9f} dB")
    assert peak <= ceiling * (1 + (1e-12 if dtype == "float64" else 1e-6))
    check(y, ref.limiter(x.astype(np.float64), FS, **_limiter_params(call)), TOL[dtype], call)


def _limiter_params(call):
    return {"limiter(-1 dB, 50 ms)": dict(ceiling=-1.0, release=50e-3),
            "limiter(-6 dB, 5 ms, lookahead=2 ms)": dict(ceiling=-6.0, release=5e-3, lookahead=2e-3),
            "limiter(0 dB, 0 ms, lookahead=0.5 ms)": dict(ceiling=0.0, release=0.0,
                                                          lookahead=0.5e-3)}[call]


# ---------------------------------------------------------------------------------------------
# 6. Side-chains and linking: `key=SIGNAL`, `link=max|mean`
# ---------------------------------------------------------------------------------------------

def sidechain_manifest():
    """(graph, x input, key input or "-", reference) per line of sidechain_cases.txt."""
    lines = (DATA / "sidechain_cases.txt").read_text().split("\n")
    return [tuple(line.split()) for line in lines if line.strip()]


SC_LINES = sidechain_manifest()


def sc_id(line):
    return line[0][:-len(".fx")]


def sc_signals(line, dtype="float64"):
    """The case's input arrays in the graph's declaration order: [x] or [x, key]."""
    _, inp, key, _ = line
    signals = [np.load(DATA / inp)] + ([] if key == "-" else [np.load(DATA / key)])
    return [s.astype(dtype) for s in signals]  # exact: float32 values


def test_sidechain_manifest_lists_every_case_once():
    expected = [(f"{case}.fx", f"{name}.npy", "-" if key is None else f"{key}.npy",
                 ref.sidechain_reference_name(case))
                for case, (_, _, name, key, _) in ref.SIDECHAIN_CASES.items()]
    assert SC_LINES == expected
    for graph, inp, key, out in SC_LINES:
        assert (GRAPHS / graph).is_file() and (DATA / inp).is_file() and (DATA / out).is_file()
        assert key == "-" or (DATA / key).is_file()


def test_sidechain_reference_checks_itself():
    # A key equal to the input, link=none, a mono key against the same key on every channel,
    # linking one key channel or identical channels: the plain stage, bit for bit; the limiter's
    # key is not delayed (its reduction starts at the key's step, on the input L samples late).
    ref.check_sidechain_identities(np.load(DATA / "noise.npy"))
    ref.check_keyed_limiter_alignment()


@pytest.mark.parametrize("line", SC_LINES, ids=sc_id)
def test_sidechain_committed_outputs_are_the_references(line):
    graph, _, key, out = line
    case = graph[:-len(".fx")]
    signals = sc_signals(line)
    for s in signals:
        assert s.ndim == 2 and s.shape[1] == ref.N
        assert np.array_equal(s.astype(np.float32).astype(np.float64), s)  # float32 values
    assert signals[0].shape[0] == 2 and (key == "-" or signals[1].shape[0] in (1, 2))
    key_channels = None if key == "-" else signals[1].shape[0]
    assert (GRAPHS / graph).read_text() == ref.sidechain_fx_source(case, key_channels)
    want = ref.run_sidechain_case(case, *signals)
    ref.check_sidechain_outputs(case, signals[0], None if key == "-" else signals[1], want)
    check(np.load(DATA / out), want, 1e-12, f"{out} vs the reference")


@pytest.mark.parametrize("target", ["cpu", "reference"])
@pytest.mark.parametrize("line", SC_LINES, ids=sc_id)
def test_sidechain_case_float64(line, target):
    # The inputs bind in declaration order: p(x) or p(x, key).
    p = fxc.compile(GRAPHS / line[0], fs=FS, dtype="float64", target=target)
    y = p(*sc_signals(line))
    assert y.dtype == np.float64
    check(y, np.load(DATA / line[3]), TOL["float64"], f"{sc_id(line)} float64 {target}")


@pytest.mark.parametrize("line", SC_LINES, ids=sc_id)
def test_sidechain_case_float32(line):
    p = fxc.compile(GRAPHS / line[0], fs=FS, dtype="float32")
    y = p(*sc_signals(line, "float32"))
    assert y.dtype == np.float32
    check(y, np.load(DATA / line[3]), TOL["float32"], f"{sc_id(line)} float32")


LINKED = [line for line in SC_LINES if ref.SIDECHAIN_CASES[sc_id(line)][4] != "none"]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("line", LINKED, ids=sc_id)
def test_linked_channels_share_one_gain(line, dtype):
    # One gain for all channels: out / in (the limiter's input L samples late) is the same on
    # every channel at every sample where no channel's input is zero (to the last bit of the
    # product: 1e-12 float64, 1e-6 float32).
    kind, params, _, _, _ = ref.SIDECHAIN_CASES[sc_id(line)]
    signals = sc_signals(line, dtype)
    y = fxc.compile(GRAPHS / line[0], fs=FS, dtype=dtype)(*signals).astype(np.float64)
    x = signals[0].astype(np.float64)
    look = ref.time_in_samples(params.get("lookahead", 0.0), FS) if kind == "limiter" else 0
    carried = np.zeros_like(x)
    carried[:, look:] = x[:, :x.shape[1] - look]
    both = np.all(carried != 0, axis=0)
    assert np.count_nonzero(both) >= ref.N // 4
    gains = y[:, both] / carried[:, both]
    spread = float(np.max(np.abs(gains - gains[0]) / gains[0]))
    print(f"{sc_id(line)} {dtype}: gains differ between channels by {spread:.3g} (relative)")
    assert spread <= (1e-12 if dtype == "float64" else 1e-6)
    assert np.max(gains) / np.min(gains) > 1.1  # the gain moves (the check can fail)


@pytest.mark.parametrize("case", ["sc_gate", "sc_limiter_mono_key_mean", "link_max_limiter"])
def test_sidechain_blocks_carry_the_state(case):
    # A Processor fed blocks of 1 to 300 frames (x and key cut at the same places; a graph with
    # a key streams through process_many) gives the reference (float64, 1e-9).
    line = next(line for line in SC_LINES if sc_id(line) == case)
    p = fxc.compile(GRAPHS / line[0], fs=FS, dtype="float64")
    signals = sc_signals(line)
    keyed = len(signals) == 2
    proc = p.processor(block=300) if keyed else p.processor(block=300, channels=2)
    rng = np.random.default_rng(12)
    parts, i = [], 0
    while i < ref.N:
        n = int(rng.integers(1, 301))
        blocks = [np.ascontiguousarray(s[:, i:i + n]) for s in signals]
        parts.append(proc.process_many(blocks)[0] if keyed else proc(blocks[0]))
        i += n
    check(np.concatenate(parts, axis=1), np.load(DATA / line[3]), TOL["float64"],
          f"{case} in blocks")


SC_STAGES = {kind: ref.SIDECHAIN_CASES[case][1] for case, kind in
             [("sc_compressor", "compressor"), ("link_mean_expander", "expander"),
              ("sc_gate", "gate"), ("link_max_limiter", "limiter")]}


def keyed_program(call, key_channels, dtype="float64"):
    """`input x : 2`, `input k : key_channels`, then x through one stage call."""
    return fxc.compile(f"input x : 2\ninput k : {key_channels}\noutput x | {call}\n", fs=FS,
                       dtype=dtype)


def with_keywords(call, *keywords):
    return call[:-1] + "".join(f", {k}" for k in keywords) + ")"


@pytest.mark.parametrize("kind", list(SC_STAGES))
def test_sidechain_identities(kind):
    # float64, 1e-9 against the plain stage (the same recursion, perhaps other libm calls):
    # - key=x (the input as its own key) and link=none (the default) change nothing;
    # - a mono key drives both channels as the same key on both channels does;
    # - link=max and link=mean over a one-channel key are that key's own level (C is the key's
    #   channel count, not the input's).
    params = SC_STAGES[kind]
    call = ref.fx_call(kind, params)
    x = np.load(DATA / "noise.npy")
    key = np.load(DATA / "key_mono.npy")
    plain = program(call)(x)
    check(plain, ref.STAGES[kind](x, FS, **params), TOL["float64"], f"{kind} plain")
    check(fxc.compile(f"input x : 2\noutput x | {with_keywords(call, 'key=x')}\n", fs=FS,
                      dtype="float64")(x), plain, TOL["float64"], f"{kind} key=x")
    check(program(with_keywords(call, "link=none"))(x), plain, TOL["float64"], f"{kind} link=none")
    by_mono = keyed_program(with_keywords(call, "key=k"), 1)(x, key)
    check(by_mono, ref.sidechain(kind, x, FS, key=key, **params), TOL["float64"], f"{kind} mono key")
    check(keyed_program(with_keywords(call, "key=k"), 2)(x, np.repeat(key, 2, axis=0)), by_mono,
          TOL["float64"], f"{kind} mono key vs the same key twice")
    for link in ("max", "mean"):
        check(keyed_program(with_keywords(call, "key=k", f"link={link}"), 1)(x, key), by_mono,
              TOL["float64"], f"{kind} mono key, link={link}")
    assert rel_err(by_mono, plain) > 1e-2  # the key matters (the checks can fail)


def test_the_key_can_be_any_signal():
    # The key is a signal like any other: here the stereo key through a 6 dB gain, bound to a
    # name (an argument's value is a name, not an expression); and the docs' example, a music
    # bus ducked under a mono voice, then a linked bus compressor.
    x = np.load(DATA / "noise.npy")
    key = np.load(DATA / "key_stereo.npy")
    params = SC_STAGES["compressor"]
    call = with_keywords(ref.fx_call("compressor", params), "key=loud")
    y = fxc.compile(f"input x : 2\ninput k : 2\nloud = k | gain(6 dB)\noutput x | {call}\n",
                    fs=FS, dtype="float64")(x, key)
    check(y, ref.sidechain("compressor", x, FS, key=ref.db_to_gain(6.0) * key, **params),
          TOL["float64"], "compressor keyed by a gained key")

    voice = np.load(DATA / "key_mono.npy")
    for dtype in ("float64", "float32"):
        p = fxc.compile("input x : 2\ninput voice : 1\n"
                        "music = x | compressor(-30 dB, 4, 1 ms, 200 ms, key=voice)\n"
                        "output music | compressor(-12 dB, 2, 10 ms, 100 ms, link=max)\n",
                        fs=FS, dtype=dtype)
        got = p(x.astype(dtype), voice.astype(dtype))
        music = ref.sidechain("compressor", x, FS, key=voice, threshold=-30.0, ratio=4.0,
                              attack=1e-3, release=200e-3)
        want = ref.sidechain("compressor", music, FS, link="max", threshold=-12.0, ratio=2.0,
                             attack=10e-3, release=100e-3)
        check(got, want, TOL[dtype], f"the docs' ducking example {dtype}")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_keyed_limiter_is_not_delayed(dtype):
    # The input at -20 dBFS DC, a mono key silent but for 0 dBFS at samples m to e - 1, through
    # limiter(-12 dB, 30 ms, lookahead=1 ms, key=k): the key's level is not delayed, the input
    # is (L = 48), so the full 12 dB reduction covers output samples m to e + L - 1 (carrying the
    # input's m - L to e - 1), then the release follows.
    params = ref.SIDECHAIN_CASES["sc_limiter_mono_key_mean"][1]
    look = ref.time_in_samples(params["lookahead"], FS)
    assert look == 48
    x = np.full((2, 2000), ref.db_to_gain(-20.0)).astype(dtype)
    key = np.zeros((1, 2000), dtype)
    m, e = 500, 900
    key[0, m:e] = 1.0
    y = keyed_program(with_keywords(ref.fx_call("limiter", params), "key=k"), 1, dtype)(x, key)
    y = y.astype(np.float64)
    x64 = x.astype(np.float64)
    assert np.all(y[:, :look] == 0.0)
    red = np.zeros_like(y)
    red[:, look:] = -20.0 * np.log10(y[:, look:] / x64[:, :-look])  # indexed by output sample
    tol = 1e-9 if dtype == "float64" else 1e-4
    assert np.all(np.abs(red[:, :m]) < tol)
    assert np.all(np.abs(red[:, m:e + look] - 12.0) < tol)
    assert np.all(red[:, e + look] < 12.0 - 5e-3)  # (1 - alpha_R) 12 dB = 0.008 dB
    check(y, ref.sidechain("limiter", x64, FS, key=key.astype(np.float64), **params), TOL[dtype],
          f"keyed limiter step {dtype}")


@pytest.mark.parametrize("source,channels", [
    # The key has the input's channel count or one.
    ("input x : 3\ninput k : 2\noutput x | compressor(-20 dB, 4, 5 ms, 50 ms, key=k)\n", (3, 2)),
    # link is max, mean or none.
    ("input x : 2\noutput x | compressor(-20 dB, 4, 5 ms, 50 ms, link=sum)\n", (2,)),
    # Only compressor, expander, gate and limiter take key and link.
    ("input x : 2\noutput x | envelope(1 ms, 20 ms, link=max)\n", (2,)),
    ("input x : 2\ninput k : 2\noutput x | envelope(1 ms, 20 ms, key=k)\n", (2, 2)),
    # key and link are keywords only.
    ("input x : 2\ninput k : 2\noutput x | limiter(-1 dB, 50 ms, 0 ms, k)\n", (2, 2)),
])
def test_sidechain_misuse_is_refused(source, channels):
    # Refused when compiled (the channel counts are declared) or at the latest when run on
    # inputs of the declared shapes.
    with pytest.raises(fxc.Error):
        fxc.compile(source, fs=FS, dtype="float64")(*[np.zeros((c, 64)) for c in channels])
