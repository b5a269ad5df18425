# SPDX-License-Identifier: Apache-2.0
"""The pipe DSL writes .fx text that means what the same .fx file means."""
import numpy as np
import pytest
import scipy.signal

import fxc


def test_a_chain_compiles_to_the_same_program_as_its_fx_text():
    chain = fxc.butter(4, 80, "highpass") | fxc.peaking(3000, 1.0, 4) | fxc.tanh()
    dsl = fxc.compile(chain, fs=48000, dtype="float64")
    text = fxc.compile("input x\noutput x | butter(4, 80 Hz, highpass) | peaking(3 kHz, 1.0, 4 dB) | tanh()\n",
                       fs=48000, dtype="float64")
    x = np.random.default_rng(0).standard_normal((2, 8000))
    assert np.array_equal(dsl(x), text(x))


def test_params_inputs_mixes_and_several_outputs():
    fc = fxc.param("fc", 1000, "Hz", range=(100, 4000))
    x = fxc.input("x", 2)
    low = x | fxc.lowpass(fc)
    high = x | fxc.highpass(fc)
    p = fxc.compile({"low": low, "high": high, "sum": 0.5 * (low + high)}, fs=48000, dtype="float64")
    assert [n for n, _ in p.outputs] == ["low", "high", "sum"]
    assert p.params[0]["name"] == "fc" and p.params[0]["max"] == 4000
    p.set(fc=2000)
    s = np.random.default_rng(1).standard_normal((2, 4000))
    lo, hi, mix = p(s)
    np.testing.assert_allclose(mix, 0.5 * (lo + hi), atol=1e-12)
    assert "fc = 1000 Hz in [100 Hz, 4000 Hz]" in p.source


def test_units_lists_and_raw_coefficients():
    chain = (fxc.butter(2, ["300 Hz", "3 kHz"], "bandpass") | fxc.gain(-6, "dB") | fxc.delay("1 ms")
             | fxc.sos([[1, 0, 0, 1, -0.5, 0]]) | fxc.fir([0.5, 0.5]) | fxc.clip(-1, 1)
             | fxc.firwin(31, 2000, window="kaiser", beta=8.6))
    p = fxc.compile(chain, fs=48000)
    assert p(np.zeros(480, np.float32)).shape == (480,)


def test_bad_values_are_refused_before_any_text_is_written():
    with pytest.raises(fxc.Error, match="btype"):
        fxc.butter(4, 80, "highpas")
    with pytest.raises(fxc.Error, match="unit"):
        fxc.lowpass("1 khz; output x")
    with pytest.raises(fxc.Error, match="number"):
        fxc.lowpass(None)
    with pytest.raises(fxc.Error) as e:
        fxc.compile(fxc.lowpass(30000), fs=48000)
    assert e.value.code == "fx-design"
    # SciPy's words for a band type or window are refused with fxc's word, not a near miss
    # ('hanning' is nearer 'hamming').
    with pytest.raises(fxc.Error, match="'hp' is SciPy's or NumPy's word for 'highpass'"):
        fxc.butter(4, 80, "hp")
    with pytest.raises(fxc.Error, match="'hanning' is SciPy's or NumPy's word for 'hann'"):
        fxc.firwin(101, 1000, window="hanning")
    # SciPy's window with its parameter.
    assert fxc.firwin(101, 1000, window=("kaiser", 8.6)).text == fxc.firwin(101, 1000, window="kaiser", beta=8.6).text
    with pytest.raises(fxc.Error, match="beta is given twice"):
        fxc.firwin(101, 1000, window=("kaiser", 8.6), beta=5)
    with pytest.raises(fxc.Error, match=r"\('kaiser', beta\)"):
        fxc.firwin(101, 1000, window=("hann", 1))
    # A channel count is a whole number: 2.7 became 2 without a word.
    for channels in (2.7, 0, -1, True, "2"):
        with pytest.raises(fxc.Error, match="channel count"):
            fxc.input("x", channels)
    assert fxc.compile(fxc.input("x", np.int64(2)) | fxc.tanh(), fs=48000).inputs == [("x", 2)]


def test_names_cannot_carry_fx_text():
    x = fxc.input("x")
    with pytest.raises(fxc.Error, match="output name"):
        fxc.compile({"y = x | gain(100)\noutput z": x | fxc.gain(1)}, fs=48000)
    with pytest.raises(fxc.Error, match="parameter name"):
        fxc.param("fc\n", 1)
    with pytest.raises(fxc.Error, match="input name"):
        fxc.input("x\n")


def test_firwin_takes_scipys_pass_zero_names():
    hp = fxc.compile(fxc.firwin(31, 2000, pass_zero="highpass"), fs=48000, dtype="float64")
    same = fxc.compile(fxc.firwin(31, 2000, pass_zero=False), fs=48000, dtype="float64")
    x = np.random.default_rng(3).standard_normal(1000)
    assert np.array_equal(hp(x), same(x))
    with pytest.raises(fxc.Error, match="pass_zero"):
        fxc.firwin(31, 2000, pass_zero="yes")


def test_firwin_pass_zero_names_check_the_cutoff_count_as_scipy():
    with pytest.raises(fxc.Error, match='one element if pass_zero=="lowpass"'):
        fxc.firwin(101, [1000, 3000], pass_zero="lowpass")
    with pytest.raises(fxc.Error, match='at least two elements if pass_zero=="bandpass"'):
        fxc.firwin(101, 2000, pass_zero="bandpass")
    band = fxc.compile(fxc.firwin(101, np.array([1000, 3000]), pass_zero="bandpass"), fs=48000, dtype="float64")
    want = scipy.signal.firwin(101, [1000, 3000], pass_zero="bandpass", fs=48000)
    impulse = np.zeros(101)
    impulse[0] = 1
    np.testing.assert_allclose(band(impulse), want, atol=1e-12)


def test_non_finite_numbers_and_arrays_in_the_dsl():
    with pytest.raises(fxc.Error, match="expected a finite number, got nan"):
        fxc.lowpass(float("nan"))
    with pytest.raises(fxc.Error, match="finite"):
        fxc.gain(float("inf"))
    bp = fxc.compile(fxc.butter(2, np.array([500, 2000]), "bandpass"), fs=48000, dtype="float64")
    same = fxc.compile(fxc.butter(2, [500, 2000], "bandpass"), fs=48000, dtype="float64")
    x = np.random.default_rng(3).standard_normal(256)
    assert np.array_equal(bp(x), same(x))


def test_coefficients_that_are_not_lists_of_real_numbers_are_fxc_errors():
    # Python's TypeError came out before 2026-11-29 ('float' object is not iterable).
    with pytest.raises(fxc.Error, match=r"one section as \[\[...\]\]"):
        fxc.sos([0.2, 0.4, 0.2, 1, -0.37, 0.2])
    with pytest.raises(fxc.Error, match="fir's taps takes a list of numbers"):
        fxc.fir(0.5)
    with pytest.raises(fxc.Error, match="real numbers"):
        fxc.fir(np.ones((2, 2)))
    with pytest.raises(fxc.Error, match="real numbers"):
        fxc.tf([1j], [1])
    assert fxc.fir(np.array([0.5, 0.5])).text == fxc.fir([0.5, 0.5]).text
    # What float() takes still goes: generators, ranges, 0-d arrays.
    assert fxc.fir(x / 2 for x in range(2)).text == fxc.fir(range(2)).text.replace("1.0", "0.5")
    assert fxc.fir([np.array(0.5), np.float32(0.25)]).text == fxc.fir([0.5, 0.25]).text
