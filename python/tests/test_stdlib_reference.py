# SPDX-License-Identifier: Apache-2.0
"""The standard library (lib/*.fx, import "std/NAME.fx") against independent references.

Every reference here is written from the published algorithm (or, for echo and pingpong, from
the definitions in lib/delays.fx's comments), not from the .fx code: plain per-sample Python
loops in float64, SciPy's `butter`/`sosfilt` for the Linkwitz-Riley crossovers, and the Audio
EQ Cookbook's formulas for the lowpass stage. The programs are compiled with dtype="float64";
each test states its tolerance. Errors are measured relative to the reference's peak
(`rel_err`), so one tolerance fits impulses and noise alike.
"""
import math

import numpy as np
import pytest
import scipy.signal

import fxc


def program(lib, body, fs, **kw):
    return fxc.compile(f'import "std/{lib}.fx"\n{body}\n', fs=fs, dtype="float64", **kw)


def rel_err(got, ref):
    """max |got - ref| / max |ref|, with the shapes checked."""
    got = np.asarray(got)
    ref = np.asarray(ref)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    return float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))


def check(got, ref, tol, what):
    err = rel_err(got, ref)
    print(f"{what}: max error {err:.3g} (relative to the peak; tolerance {tol:g})")
    assert err <= tol, f"{what}: max error {err:.3g} > {tol:g}"
    return err


def impulse(n, channels=None, at=0):
    x = np.zeros(n if channels is None else (channels, n))
    x[..., at] = 1.0
    return x


def samples(seconds, fs):
    """A time in samples, rounded to the nearest sample, halves up (docs/fx-language.md)."""
    return int(math.floor(seconds * fs + 0.5))


# ---------------------------------------------------------------------------------------------
# 1. comb and schroeder_allpass (lib/delays.fx)
# ---------------------------------------------------------------------------------------------

def ref_comb(x, d, g):
    """Feedback comb: y[n] = x[n] + g y[n-d]."""
    y = [0.0] * len(x)
    for n, xn in enumerate(x):
        y[n] = xn + (g * y[n - d] if n >= d else 0.0)
    return np.array(y)


def ref_schroeder_allpass(x, d, g):
    """Schroeder's allpass (1962): y[n] = -g x[n] + x[n-d] + g y[n-d]."""
    y = [0.0] * len(x)
    for n, xn in enumerate(x):
        y[n] = -g * xn + ((x[n - d] + g * y[n - d]) if n >= d else 0.0)
    return np.array(y)


COMB_CASES = [(7, 0.7), (37, -0.5), (1, 0.9), (113, 0.95)]


@pytest.mark.parametrize("d,g", COMB_CASES)
def test_comb_matches_its_recursion(d, g):
    # Tolerance: 1e-12 of the peak (float64 recursions; the two differ only by rounding).
    p = program("delays", f"input x\noutput x | comb({d}, {g})", fs=48000)
    n = 6000
    h = p(impulse(n))
    # The impulse response in closed form too: g^k at n = k d, zero elsewhere.
    closed = np.zeros(n)
    closed[::d] = g ** np.arange(len(closed[::d]))
    check(h, closed, 1e-12, f"comb({d}, {g}) impulse vs g^k")
    check(h, ref_comb(impulse(n), d, g), 1e-12, f"comb({d}, {g}) impulse")
    x = np.random.default_rng(d).standard_normal(n)
    check(p(x), ref_comb(x, d, g), 1e-12, f"comb({d}, {g}) noise")


def test_comb_takes_a_time():
    # 2 ms at 48 kHz is 96 samples. Tolerance 1e-12 of the peak.
    p = program("delays", "input x\noutput x | comb(2 ms, 0.6)", fs=48000)
    x = np.random.default_rng(1).standard_normal(3000)
    check(p(x), ref_comb(x, 96, 0.6), 1e-12, "comb(2 ms, 0.6) noise")


@pytest.mark.parametrize("d,g", COMB_CASES + [(113, None)])
def test_schroeder_allpass_matches_its_recursion(d, g):
    # Tolerance: 1e-12 of the peak. g=None: the default, 0.5.
    call = f"schroeder_allpass({d})" if g is None else f"schroeder_allpass({d}, {g})"
    g = 0.5 if g is None else g
    p = program("delays", f"input x\noutput x | {call}", fs=48000)
    n = 6000
    check(p(impulse(n)), ref_schroeder_allpass(impulse(n), d, g), 1e-12, f"{call} impulse")
    x = np.random.default_rng(d + 1).standard_normal(n)
    check(p(x), ref_schroeder_allpass(x, d, g), 1e-12, f"{call} noise")


@pytest.mark.parametrize("d,g", [(113, 0.7), (29, -0.8), (1, 0.5)])
def test_schroeder_allpass_is_flat_and_the_comb_is_not(d, g):
    # |H| = 1 to 1e-9 at every FFT bin of an impulse response long enough to have decayed
    # (|g|^(n/d) < 1e-15 by its end).
    n = 1 << 16
    assert abs(g) ** (n // d - 1) < 1e-15
    h = program("delays", f"input x\noutput x | schroeder_allpass({d}, {g})", fs=48000)(impulse(n))
    assert np.max(np.abs(h[-256:])) < 1e-12
    dev = float(np.max(np.abs(np.abs(np.fft.rfft(h)) - 1)))
    print(f"schroeder_allpass({d}, {g}): max ||H| - 1| = {dev:.3g} (tolerance 1e-9)")
    assert dev <= 1e-9
    # The same measure on the comb is far from flat: the check can fail.
    hc = program("delays", f"input x\noutput x | comb({d}, {g})", fs=48000)(impulse(n))
    assert np.max(np.abs(np.abs(np.fft.rfft(hc)) - 1)) > 0.1


# ---------------------------------------------------------------------------------------------
# 2. Freeverb (lib/reverb.fx) against Jezar's revmodel (Jezar at Dreampoint, 2000, public
#    domain): comb.hpp, allpass.hpp, revmodel.cpp and tuning.h, transcribed to Python.
# ---------------------------------------------------------------------------------------------

NUMCOMBS = 8
NUMALLPASSES = 4
FIXEDGAIN = 0.015
SCALEWET = 3.0
SCALEDRY = 2.0
SCALEDAMP = 0.4
SCALEROOM = 0.28
OFFSETROOM = 0.7
INITIALROOM = 0.5
INITIALDAMP = 0.5
INITIALWET = 1 / SCALEWET
INITIALDRY = 0.0
INITIALWIDTH = 1.0
STEREOSPREAD = 23
COMBTUNING_L = [1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617]
COMBTUNING_R = [t + STEREOSPREAD for t in COMBTUNING_L]
ALLPASSTUNING_L = [556, 441, 341, 225]
ALLPASSTUNING_R = [t + STEREOSPREAD for t in ALLPASSTUNING_L]


class JezarComb:
    def __init__(self, size):
        self.buffer = [0.0] * size
        self.bufidx = 0
        self.filterstore = 0.0
        self.feedback = 0.0
        self.damp1 = 0.0
        self.damp2 = 1.0

    def setdamp(self, val):
        self.damp1 = val
        self.damp2 = 1 - val

    def process(self, inp):
        output = self.buffer[self.bufidx]
        self.filterstore = output * self.damp2 + self.filterstore * self.damp1
        self.buffer[self.bufidx] = inp + self.filterstore * self.feedback
        self.bufidx += 1
        if self.bufidx >= len(self.buffer):
            self.bufidx = 0
        return output


class JezarAllpass:
    def __init__(self, size):
        self.buffer = [0.0] * size
        self.bufidx = 0
        self.feedback = 0.5

    def process(self, inp):
        bufout = self.buffer[self.bufidx]
        output = -inp + bufout
        self.buffer[self.bufidx] = inp + bufout * self.feedback
        self.bufidx += 1
        if self.bufidx >= len(self.buffer):
            self.bufidx = 0
        return output


class RevModel:
    """revmodel in its normal mode (not frozen), processreplace; float64 instead of float."""

    def __init__(self):
        self.combL = [JezarComb(t) for t in COMBTUNING_L]
        self.combR = [JezarComb(t) for t in COMBTUNING_R]
        self.allpassL = [JezarAllpass(t) for t in ALLPASSTUNING_L]
        self.allpassR = [JezarAllpass(t) for t in ALLPASSTUNING_R]
        for a in self.allpassL + self.allpassR:
            a.feedback = 0.5
        # (Jezar's constructor calls update() before every member is set; the last setter fixes
        # them all, so these starting values do not matter.)
        self.wet = self.roomsize = self.dry = self.damp = self.width = 0.0
        self.setwet(INITIALWET)
        self.setroomsize(INITIALROOM)
        self.setdry(INITIALDRY)
        self.setdamp(INITIALDAMP)
        self.setwidth(INITIALWIDTH)

    def update(self):
        self.wet1 = self.wet * (self.width / 2 + 0.5)
        self.wet2 = self.wet * ((1 - self.width) / 2)
        self.gain = FIXEDGAIN
        for c in self.combL + self.combR:
            c.feedback = self.roomsize
            c.setdamp(self.damp)

    def setroomsize(self, value):
        self.roomsize = value * SCALEROOM + OFFSETROOM
        self.update()

    def setdamp(self, value):
        self.damp = value * SCALEDAMP
        self.update()

    def setwet(self, value):
        self.wet = value * SCALEWET
        self.update()

    def setdry(self, value):
        self.dry = value * SCALEDRY

    def setwidth(self, value):
        self.width = value
        self.update()

    def processreplace(self, inputL, inputR):
        n = len(inputL)
        outputL = np.empty(n)
        outputR = np.empty(n)
        for i in range(n):
            outL = outR = 0.0
            inp = (inputL[i] + inputR[i]) * self.gain
            for j in range(NUMCOMBS):
                outL += self.combL[j].process(inp)
                outR += self.combR[j].process(inp)
            for j in range(NUMALLPASSES):
                outL = self.allpassL[j].process(outL)
                outR = self.allpassR[j].process(outR)
            outputL[i] = outL * self.wet1 + outR * self.wet2 + inputL[i] * self.dry
            outputR[i] = outR * self.wet1 + outL * self.wet2 + inputR[i] * self.dry
        return np.stack([outputL, outputR])


def ref_freeverb(x, room=None, damp=None, wet=None, dry=None, width=None):
    model = RevModel()
    if room is not None:
        model.setroomsize(room)
    if damp is not None:
        model.setdamp(damp)
    if wet is not None:
        model.setwet(wet)
    if dry is not None:
        model.setdry(dry)
    if width is not None:
        model.setwidth(width)
    return model.processreplace(list(x[0]), list(x[1]))


FREEVERB_FS = 44100
FREEVERB_N = 13230  # 0.3 s at 44.1 kHz: past the longest comb (1640 samples) several times over


def freeverb_inputs():
    imp = np.zeros((2, FREEVERB_N))
    imp[0, 0] = 1.0       # distinct left and right impulses: the dry path and width see both
    imp[1, 17] = -0.4
    noise = np.random.default_rng(2000).standard_normal((2, FREEVERB_N))
    return {"impulse": imp, "noise": noise}


@pytest.mark.parametrize("call,settings", [
    ("freeverb()", {}),
    ("freeverb(room=0.8, damp=0.2, width=0.5, dry=0.1)", dict(room=0.8, damp=0.2, width=0.5, dry=0.1)),
    ("freeverb(0.3, 0.9, 0.6, 0.25, 0.0)", dict(room=0.3, damp=0.9, wet=0.6, dry=0.25, width=0.0)),
])
def test_freeverb_matches_jezars_revmodel(call, settings):
    # Tolerance: 1e-11 of the peak (float64 both; the sums are taken in a different order).
    p = program("reverb", f"input x : 2\noutput x | {call}", fs=FREEVERB_FS)
    for name, x in freeverb_inputs().items():
        ref = ref_freeverb(x, **settings)
        got = p(x)
        assert np.max(np.abs(ref[:, 2000:])) > 1e-3  # the tail is there to compare
        check(got, ref, 1e-11, f"{call} {name}")


# ---------------------------------------------------------------------------------------------
# 3. Jot's feedback delay network (lib/reverb.fx fdn4)
# ---------------------------------------------------------------------------------------------

def ref_fdn(x, delays, g):
    """Jot and Chaigne (1991): N delay lines, line k's input s_k[n] = x[n] + g (A o[n])_k with
    the Householder matrix A = I - (2/N) 1 1^T, o_k[n] = s_k[n - d_k]; out = sum_k o_k."""
    nlines = len(delays)
    a = np.eye(nlines) - (2.0 / nlines) * np.ones((nlines, nlines))
    s = np.zeros((nlines, len(x)))
    y = np.zeros(len(x))
    for n in range(len(x)):
        o = np.array([s[k, n - d] if n >= d else 0.0 for k, d in enumerate(delays)])
        s[:, n] = x[n] + g * (a @ o)
        y[n] = o.sum()
    return y


@pytest.mark.parametrize("call,delays,g", [
    ("fdn4()", (1031, 1327, 1523, 1871), 0.9),
    ("fdn4(101, 223, 307, 401, 0.7)", (101, 223, 307, 401), 0.7),
    ("fdn4(g=0.97, d1=1, d2=3, d3=7, d4=11)", (1, 3, 7, 11), 0.97),
])
def test_fdn4_matches_jots_network(call, delays, g):
    # Tolerance: 1e-11 of the peak.
    p = program("reverb", f"input x\noutput x | {call}", fs=48000)
    n = 8000
    for name, x in [("impulse", impulse(n)), ("noise", np.random.default_rng(sum(delays)).standard_normal(n))]:
        ref = ref_fdn(x, delays, g)
        check(p(x), ref, 1e-11, f"{call} {name}")


# ---------------------------------------------------------------------------------------------
# 4. Linkwitz-Riley crossovers (lib/crossover.fx) against SciPy's Butterworth applied twice
# ---------------------------------------------------------------------------------------------

XO_FS = 48000
LR_ORDER = {2: 1, 4: 2, 8: 4}   # LR order -> Butterworth order
LR_SIGN = {2: -1, 4: 1, 8: 1}   # the high band's sign (LR2's is inverted)


def sp_lp(x, f, lr):
    sos = scipy.signal.butter(LR_ORDER[lr], f, "lowpass", fs=XO_FS, output="sos")
    return scipy.signal.sosfilt(sos, scipy.signal.sosfilt(sos, x))


def sp_hp(x, f, lr):
    sos = scipy.signal.butter(LR_ORDER[lr], f, "highpass", fs=XO_FS, output="sos")
    return LR_SIGN[lr] * scipy.signal.sosfilt(sos, scipy.signal.sosfilt(sos, x))


def sp_ap(x, f, lr):
    return sp_lp(x, f, lr) + sp_hp(x, f, lr)


def sp_crossover(x, freqs, lr):
    """Bands, lowest first; each band also goes through the allpasses of the split frequencies
    above the one it was cut at (so that the bands sum to an allpass)."""
    bands = []
    rest = x
    for i, f in enumerate(freqs):
        band = sp_lp(rest, f, lr)
        for f_above in freqs[i + 1:]:
            band = sp_ap(band, f_above, lr)
        bands.append(band)
        rest = sp_hp(rest, f, lr)
    bands.append(rest)
    return bands


def xo_program(call, nbands):
    names = ["b%d" % i for i in range(nbands)]
    body = "input x\n" + (", ".join(names) + f" = x | {call}\n" if nbands > 1 else f"b0 = x | {call}\n")
    body += "".join(f"output {n}\n" for n in names)
    return program("crossover", body, fs=XO_FS)


@pytest.mark.parametrize("lr", [2, 4, 8])
@pytest.mark.parametrize("kind", ["lowpass", "highpass"])
def test_lr_filters_match_butter_twice(lr, kind):
    # Tolerance: 1e-10 of the peak (noise and impulse; same sections, possibly another
    # realisation of them).
    p = xo_program(f"lr{lr}_{kind}(1 kHz)", 1)
    ref = sp_lp if kind == "lowpass" else sp_hp
    n = 8192
    for name, x in [("impulse", impulse(n)), ("noise", np.random.default_rng(lr).standard_normal(n))]:
        check(p(x), ref(x, 1000, lr), 1e-10, f"lr{lr}_{kind}(1 kHz) {name}")


CROSSOVERS = {2: [500], 3: [200, 2000], 4: [100, 1000, 8000]}


def fx_hz(freqs):
    return ", ".join(f"{f} Hz" for f in freqs)


@pytest.mark.parametrize("lr", [2, 4, 8])
@pytest.mark.parametrize("nbands", [2, 3, 4])
def test_crossover_bands_sum_to_a_flat_magnitude(lr, nbands):
    # The bands' sum: |H| = 1 to 1e-9 at every bin of a 2^16-sample impulse response (decayed
    # to < 1e-12 by its end).
    freqs = CROSSOVERS[nbands]
    call = f"lr{lr}_crossover{nbands}({fx_hz(freqs)})"
    n = 1 << 16
    bands = xo_program(call, nbands)(impulse(n))
    assert len(bands) == nbands
    total = np.sum(bands, axis=0)
    assert np.max(np.abs(total[-1024:])) < 1e-12
    dev = float(np.max(np.abs(np.abs(np.fft.rfft(total)) - 1)))
    print(f"{call}: band sum max ||H| - 1| = {dev:.3g} (tolerance 1e-9)")
    assert dev <= 1e-9
    # Not flat without the top band: the check can fail.
    partial = np.abs(np.fft.rfft(np.sum(bands[:-1], axis=0)))
    assert np.max(np.abs(partial - 1)) > 0.5


@pytest.mark.parametrize("lr", [2, 4, 8])
@pytest.mark.parametrize("nbands", [2, 3, 4])
def test_crossover_bands_match_scipy(lr, nbands):
    # Each band against the SciPy construction (sp_crossover); tolerance 1e-10 of its peak.
    freqs = CROSSOVERS[nbands]
    call = f"lr{lr}_crossover{nbands}({fx_hz(freqs)})"
    p = xo_program(call, nbands)
    n = 16384
    for name, x in [("impulse", impulse(n)), ("noise", np.random.default_rng(10 * lr + nbands).standard_normal(n))]:
        got = p(x)
        for k, ref in enumerate(sp_crossover(x, freqs, lr)):
            check(got[k], ref, 1e-10, f"{call} band {k} {name}")


# ---------------------------------------------------------------------------------------------
# 5. echo and pingpong (lib/delays.fx), from the definitions in its comments, with the
#    lowpass stage as the Audio EQ Cookbook's lowpass (Q = 1/sqrt(2)) computed here
# ---------------------------------------------------------------------------------------------

def cookbook_lowpass(f0, fs, q=1 / math.sqrt(2)):
    """R. Bristow-Johnson's Audio EQ Cookbook LPF: (b0, b1, b2, a1, a2), normalised by a0."""
    w0 = 2 * math.pi * f0 / fs
    alpha = math.sin(w0) / (2 * q)
    cw = math.cos(w0)
    b0 = (1 - cw) / 2
    b1 = 1 - cw
    b2 = (1 - cw) / 2
    a0 = 1 + alpha
    a1 = -2 * cw
    a2 = 1 - alpha
    return b0 / a0, b1 / a0, b2 / a0, a1 / a0, a2 / a0


class Biquad:
    """Direct form I, one sample at a time."""

    def __init__(self, coeffs):
        self.b0, self.b1, self.b2, self.a1, self.a2 = coeffs
        self.x1 = self.x2 = self.y1 = self.y2 = 0.0

    def __call__(self, x):
        y = self.b0 * x + self.b1 * self.x1 + self.b2 * self.x2 - self.a1 * self.y1 - self.a2 * self.y2
        self.x2, self.x1 = self.x1, x
        self.y2, self.y1 = self.y1, y
        return y


def ref_echo(x, fs, time, feedback, damping):
    """y = x + feedback * lowpass(y delayed by time): y[n] = x[n] + feedback * v[n - D] with
    v = lowpass(y) (the lowpass and the delay commute)."""
    d = samples(time, fs)
    lp = Biquad(cookbook_lowpass(damping, fs))
    y = [0.0] * len(x)
    v = [0.0] * len(x)
    for n in range(len(x)):
        y[n] = x[n] + (feedback * v[n - d] if n >= d else 0.0)
        v[n] = lp(y[n])
    return np.array(y)


def ref_pingpong(x, fs, time, feedback, damping):
    """The mono mix of the two channels, (L + R) / 2, into the left delay line; the left line
    feeds the right one; the right one's output, through the lowpass and times `feedback`,
    back into the left line. Output: the dry signal plus [left line, right line] outputs."""
    d = samples(time, fs)
    lp = Biquad(cookbook_lowpass(damping, fs))
    n_total = x.shape[1]
    mono = 0.5 * (x[0] + x[1])
    left = [0.0] * n_total
    right = [0.0] * n_total
    into_left = [0.0] * n_total      # what enters the left line at n
    for n in range(n_total):
        left[n] = into_left[n - d] if n >= d else 0.0
        right[n] = left[n - d] if n >= d else 0.0
        into_left[n] = mono[n] + feedback * lp(right[n])
    return x + np.array([left, right])


ECHO_CASES = [
    # (fs, fx call, time in s, feedback, damping in Hz)
    (48000, "echo()", 0.25, 0.5, 5000),
    (44100, "echo(5 ms, 0.8, 2 kHz)", 0.005, 0.8, 2000),          # 220.5 samples: rounds up to 221
    (48000, "echo(time=7 ms, damping=12 kHz, feedback=-0.7)", 0.007, -0.7, 12000),
]


@pytest.mark.parametrize("fs,call,time,feedback,damping", ECHO_CASES)
def test_echo_matches_its_definition(fs, call, time, feedback, damping):
    # Tolerance: 1e-11 of the peak.
    p = program("delays", f"input x\noutput x | {call}", fs=fs)
    n = fs  # 1 s: the default's 250 ms gives three echoes
    for name, x in [("impulse", impulse(n)), ("noise", np.random.default_rng(fs).standard_normal(n))]:
        check(p(x), ref_echo(x, fs, time, feedback, damping), 1e-11, f"{call} at {fs} Hz {name}")


PINGPONG_CASES = [
    (48000, "pingpong()", 0.3, 0.5, 6000),
    (44100, "pingpong(20 ms, 0.7, 2 kHz)", 0.02, 0.7, 2000),
]


@pytest.mark.parametrize("fs,call,time,feedback,damping", PINGPONG_CASES)
def test_pingpong_matches_its_definition(fs, call, time, feedback, damping):
    # Tolerance: 1e-11 of the peak.
    p = program("delays", f"input x : 2\noutput x | {call}", fs=fs)
    n = fs
    imp = np.zeros((2, n))
    imp[0, 0] = 1.0
    imp[1, 3] = 0.5
    for name, x in [("impulse", imp), ("noise", np.random.default_rng(fs + 1).standard_normal((2, n)))]:
        ref = ref_pingpong(x, fs, time, feedback, damping)
        assert np.max(np.abs(ref - x)) > 0.1  # the echoes are there
        check(p(x), ref, 1e-11, f"{call} at {fs} Hz {name}")
