#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the inputs and SciPy reference outputs of fxc's end-to-end tests (tests/e2e).

Run with Debian's Python, which has python3-scipy (SciPy 1.10) and NumPy:

    /usr/bin/python3 scripts/gen_e2e_reference.py

For each graph in tests/e2e/graphs/ it writes small committed inputs and the outputs SciPy
computes for them to tests/data/e2e/:

  single_chain_in.wav        stereo, 48 kHz, 6000 samples, 32-bit float WAV
  single_chain_y.npy         the output of single_chain.fx for it (float64, [2, 6000])
  multi_io_a.npy             stereo float32 .npy, [2, 4096] (played at 48 kHz)
  multi_io_b.npy             stereo float32 .npy, [2, 4096]
  multi_io_mix.npy           multi_io.fx's output `mix` (float64, [2, 4096])
  multi_io_diff.npy          multi_io.fx's output `diff`
  mono_f64.npy               mono float64 .npy, shape [4096] (played at 48 kHz)
  reused_chain_twice.npy     reused_chain.fx's outputs for mono_f64.npy (float64, [1, 4096])
  reused_chain_delayed.npy
  designs_out.npy            designs.fx's output for mono_f64.npy (float64, [1, 4096])
  vocal_in.wav               stereo, 44.1 kHz, 4410 samples, 32-bit float WAV
  vocal_out.npy              vocal.fx's output for it (float64, [2, 4410])
  crossover_in.wav           mono, 44.1 kHz, 4410 samples, 32-bit float WAV
  crossover_woofer.npy       crossover.fx's outputs for it (float64, [1, 4410])
  crossover_tweeter.npy

The outputs follow the contract of docs/fx-language.md: IIR designs are
`scipy.signal.<family>(..., fs=fs, output='sos')` run with `sosfilt`; the cookbook biquads are
computed here from R. Bristow-Johnson's formulas and run with `lfilter`; `firwin`, `fir` and
`tf` run with `lfilter`; a delay shifts zeros in (a time rounds to the nearest sample, halves
up); a sum adds. Every computation is float64 on the samples exactly as stored in the input
files (a float32 input is widened exactly), so fxc's float64 outputs must match to float64
rounding.

The signals come from a seeded generator, so re-running gives the same inputs; the outputs
may differ from the committed ones in the last bits with the CPU (NumPy's SIMD math), far
below the tests' tolerances.
"""

import math
import pathlib

import numpy as np
from scipy import signal
from scipy.io import wavfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "tests" / "data" / "e2e"

Q_DEFAULT = 1.0 / math.sqrt(2.0)


# --- the stages, as the language reference defines them --------------------------------------

def cookbook(kind, fs, f0, q=Q_DEFAULT, gain_db=0.0):
    """(b, a) of an Audio EQ Cookbook biquad; `q` is the cookbook's Q also for the shelves."""
    w0 = 2.0 * math.pi * f0 / fs
    cw, sw = math.cos(w0), math.sin(w0)
    alpha = sw / (2.0 * q)
    big_a = 10.0 ** (gain_db / 40.0)
    if kind == "lowpass":
        b = [(1 - cw) / 2, 1 - cw, (1 - cw) / 2]
        a = [1 + alpha, -2 * cw, 1 - alpha]
    elif kind == "highpass":
        b = [(1 + cw) / 2, -(1 + cw), (1 + cw) / 2]
        a = [1 + alpha, -2 * cw, 1 - alpha]
    elif kind == "bandpass":  # constant 0 dB peak gain
        b = [alpha, 0.0, -alpha]
        a = [1 + alpha, -2 * cw, 1 - alpha]
    elif kind == "notch":
        b = [1.0, -2 * cw, 1.0]
        a = [1 + alpha, -2 * cw, 1 - alpha]
    elif kind == "allpass":
        b = [1 - alpha, -2 * cw, 1 + alpha]
        a = [1 + alpha, -2 * cw, 1 - alpha]
    elif kind == "peaking":
        b = [1 + alpha * big_a, -2 * cw, 1 - alpha * big_a]
        a = [1 + alpha / big_a, -2 * cw, 1 - alpha / big_a]
    elif kind == "lowshelf":
        s = 2 * math.sqrt(big_a) * alpha
        b = [big_a * ((big_a + 1) - (big_a - 1) * cw + s),
             2 * big_a * ((big_a - 1) - (big_a + 1) * cw),
             big_a * ((big_a + 1) - (big_a - 1) * cw - s)]
        a = [(big_a + 1) + (big_a - 1) * cw + s,
             -2 * ((big_a - 1) + (big_a + 1) * cw),
             (big_a + 1) + (big_a - 1) * cw - s]
    elif kind == "highshelf":
        s = 2 * math.sqrt(big_a) * alpha
        b = [big_a * ((big_a + 1) + (big_a - 1) * cw + s),
             -2 * big_a * ((big_a - 1) + (big_a + 1) * cw),
             big_a * ((big_a + 1) + (big_a - 1) * cw - s)]
        a = [(big_a + 1) - (big_a - 1) * cw + s,
             2 * ((big_a - 1) - (big_a + 1) * cw),
             (big_a + 1) - (big_a - 1) * cw - s]
    else:
        raise ValueError(kind)
    return np.array(b), np.array(a)


def biquad(x, kind, fs, f0, q=Q_DEFAULT, gain_db=0.0):
    b, a = cookbook(kind, fs, f0, q, gain_db)
    return signal.lfilter(b / a[0], a / a[0], x, axis=-1)


def sos_design(x, sos):
    return signal.sosfilt(sos, x, axis=-1)


def fir(x, taps):
    return signal.lfilter(taps, [1.0], x, axis=-1)


def delay_samples(x, d):
    y = np.zeros_like(x)
    if d < x.shape[-1]:
        y[..., d:] = x[..., :x.shape[-1] - d]
    return y


def delay_time(x, seconds, fs):
    return delay_samples(x, int(math.floor(seconds * fs + 0.5)))  # halves round up


def db(gain_db):
    return 10.0 ** (gain_db / 20.0)


# --- the graphs of tests/e2e/graphs ----------------------------------------------------------

def single_chain(x, fs):
    y = biquad(x, "highpass", fs, 40.0)
    y = biquad(y, "lowshelf", fs, 150.0, 0.8, 3.0)
    y = biquad(y, "peaking", fs, 1000.0, 1.5, -4.0)
    y = biquad(y, "highshelf", fs, 9000.0, 0.6, 2.5)
    y = biquad(y, "lowpass", fs, 16000.0, 0.9)
    y = biquad(y, "notch", fs, 50.0, 8.0)
    y = biquad(y, "allpass", fs, 700.0, 0.5)
    y = biquad(y, "bandpass", fs, 2000.0, 0.3)
    y = db(6.0) * y
    return np.clip(y, -0.5, 0.5)


def multi_io(a, b, fs):
    low = sos_design(a, signal.butter(3, 5000.0, fs=fs, output="sos"))
    band = sos_design(b, signal.cheby1(4, 1.0, [500.0, 4000.0], "bandpass", fs=fs, output="sos"))
    mix = low + 0.5 * band
    diff = a - sos_design(b, signal.ellip(3, 0.5, 60.0, 2000.0, "highpass", fs=fs, output="sos"))
    return mix, diff


def reused_chain(x, fs):
    def tone(s):
        return db(-6.0) * biquad(s, "lowpass", fs, 2000.0, 0.9)
    twice = tone(np.tanh(tone(x)))
    delayed = tone(delay_samples(x, 7))
    return twice, delayed


def designs(x, fs):
    iir = sos_design(x, signal.cheby2(4, 50.0, 6000.0, fs=fs, output="sos"))
    iir = sos_design(iir, signal.bessel(3, 2000.0, "highpass", norm="mag", fs=fs, output="sos"))
    iir = sos_design(iir, signal.ellip(2, 1.0, 40.0, [1000.0, 1500.0], "bandstop", fs=fs,
                                       output="sos"))
    f = fir(x, signal.firwin(31, [1000.0, 5000.0], window="blackman", pass_zero=False, fs=fs))
    f = fir(f, signal.firwin(21, 3000.0, window=("kaiser", 6.0), fs=fs))
    f = fir(f, signal.firwin(101, 8000.0, window="hann", fs=fs))
    raw_sos = np.array([[0.5, 0.2, 0.1, 2.0, -0.4, 0.1]])
    raw = sos_design(x, raw_sos / raw_sos[:, 3:4])  # each section normalized by its a0
    raw = signal.lfilter([0.2, 0.3], [1.0, -0.5, 0.1], raw, axis=-1)
    raw = fir(raw, [0.25, 0.5, 0.25])
    raw = delay_samples(raw, 3)
    return iir + 0.5 * f - raw


def vocal(x, fs):
    clean = sos_design(x, signal.butter(4, 80.0, "highpass", fs=fs, output="sos"))
    tone = biquad(clean, "peaking", fs, 3000.0, 1.0, 4.0)
    tone = biquad(tone, "highshelf", fs, 10000.0, Q_DEFAULT, -2.0)
    wet = db(-3.0) * np.tanh(tone)
    return 0.7 * wet + 0.3 * delay_time(x, 0.005, fs)


def crossover(x, fs):
    low = signal.butter(2, 2000.0, fs=fs, output="sos")
    high = signal.butter(2, 2000.0, "highpass", fs=fs, output="sos")
    woofer = sos_design(sos_design(x, low), low)
    tweeter = sos_design(sos_design(x, high), high)
    tweeter = db(-1.5) * delay_time(tweeter, 0.0001, fs)
    return woofer, tweeter


# --- inputs ----------------------------------------------------------------------------------

def test_signal(rng, channels, samples, fs, dtype):
    """Noise (amplitude ~0.2) plus a few tones, so every filter has something to act on."""
    t = np.arange(samples) / fs
    x = 0.2 * rng.standard_normal((channels, samples))
    for c in range(channels):
        for f0, amp in [(60.0, 0.2), (1000.0 + 300.0 * c, 0.15), (7000.0, 0.05)]:
            x[c] += amp * np.sin(2 * np.pi * f0 * t + rng.uniform(0, 2 * np.pi))
    return x.astype(dtype)


def write_wav(name, x, fs):
    """A 32-bit float WAV; returns the samples as stored, widened to float64."""
    x32 = np.ascontiguousarray(x.astype(np.float32))
    wavfile.write(OUT_DIR / name, int(fs), x32.T if x32.shape[0] > 1 else x32[0])
    rate, back = wavfile.read(OUT_DIR / name)
    assert rate == fs and back.dtype == np.float32
    back = back.T if back.ndim == 2 else back[np.newaxis, :]
    assert np.array_equal(back, x32)
    return back.astype(np.float64)


def save(name, array):
    np.save(OUT_DIR / name, array)


def save_output(name, y):
    """Expected outputs are float64 [channels, samples], as fxc writes .npy outputs."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 1:
        y = y[np.newaxis, :]
    assert np.all(np.isfinite(y)) and np.max(np.abs(y)) > 1e-3
    save(name, np.ascontiguousarray(y))


def main():
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20240611)

    fs = 48000.0
    x = write_wav("single_chain_in.wav", test_signal(rng, 2, 6000, fs, np.float32), fs)
    save_output("single_chain_y.npy", single_chain(x, fs))

    a = test_signal(rng, 2, 4096, fs, np.float32)
    b = test_signal(rng, 2, 4096, fs, np.float32)
    save("multi_io_a.npy", a)
    save("multi_io_b.npy", b)
    mix, diff = multi_io(a.astype(np.float64), b.astype(np.float64), fs)
    save_output("multi_io_mix.npy", mix)
    save_output("multi_io_diff.npy", diff)

    mono = test_signal(rng, 1, 4096, fs, np.float64)[0]  # shape [samples]
    save("mono_f64.npy", mono)
    twice, delayed = reused_chain(mono, fs)
    save_output("reused_chain_twice.npy", twice)
    save_output("reused_chain_delayed.npy", delayed)
    save_output("designs_out.npy", designs(mono, fs))

    fs = 44100.0
    x = write_wav("vocal_in.wav", test_signal(rng, 2, 4410, fs, np.float32), fs)
    save_output("vocal_out.npy", vocal(x, fs))

    x = write_wav("crossover_in.wav", test_signal(rng, 1, 4410, fs, np.float32), fs)
    woofer, tweeter = crossover(x, fs)
    save_output("crossover_woofer.npy", woofer)
    save_output("crossover_tweeter.npy", tweeter)

    total = sum(p.stat().st_size for p in OUT_DIR.iterdir())
    print(f"wrote {len(list(OUT_DIR.iterdir()))} files, {total / 1024:.0f} KiB, to {OUT_DIR}")


if __name__ == "__main__":
    main()
