# SPDX-License-Identifier: Apache-2.0
"""fxc.compile and Program: results, shapes, sample types, threads and errors."""
import concurrent.futures
import pickle
import subprocess

import numpy as np
import pytest
import scipy.signal

import fxc
from conftest import EQ


def peaking_sos(f0, q, gain_db, fs):
    """The Audio EQ Cookbook's peaking biquad, written from the cookbook, as one SOS row."""
    a = 10 ** (gain_db / 40)
    w0 = 2 * np.pi * f0 / fs
    alpha = np.sin(w0) / (2 * q)
    b = [1 + alpha * a, -2 * np.cos(w0), 1 - alpha * a]
    den = [1 + alpha / a, -2 * np.cos(w0), 1 - alpha / a]
    return np.array([b + den]) / den[0]


def reference_eq(x, fs=48000, fc=80):
    sos = np.vstack([scipy.signal.butter(4, fc, "highpass", fs=fs, output="sos"), peaking_sos(3000, 1.0, 4, fs)])
    return scipy.signal.sosfilt(sos, x, axis=-1)


def test_float64_matches_scipy_sosfilt(noise):
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    y = p(noise)
    assert y.dtype == np.float64 and y.shape == noise.shape
    np.testing.assert_allclose(y, reference_eq(noise), rtol=0, atol=1e-9)


def test_float32_matches_scipy_within_its_bound(noise):
    p = fxc.compile(EQ, fs=48000, dtype="float32")
    y = p(noise.astype(np.float32))
    assert y.dtype == np.float32
    # float32 samples with float64 state where the design needs it (docs/performance.md).
    np.testing.assert_allclose(y, reference_eq(noise.astype(np.float32).astype(np.float64)), rtol=0, atol=2e-5)


@pytest.mark.parametrize("dtype,flag", [("float32", "f32"), ("float64", "f64")])
def test_results_equal_the_command_line_bit_for_bit(tmp_path, noise, fxc_cli, dtype, flag):
    graph = tmp_path / "eq.fx"
    graph.write_text(EQ)
    x = noise.astype(dtype)
    np.save(tmp_path / "x.npy", x)
    subprocess.run([fxc_cli, "run", str(graph), "-i", str(tmp_path / "x.npy"), "--fs", "48000", "--dtype", flag,
                    "-o", str(tmp_path / "y.npy")], check=True)
    # The command compiles constants without a range in (live=False); fc is ranged either way.
    y = fxc.compile(graph, fs=48000, dtype=dtype, live=False)(x)
    assert np.array_equal(y, np.load(tmp_path / "y.npy"))


def test_shapes_mono_channels_and_batches(noise):
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    mono = p(noise[0])
    assert mono.shape == (48000,)
    both = p(noise)
    assert np.array_equal(mono, both[0])
    batch = np.stack([noise, noise[::-1].copy()])
    out = p(batch)
    assert out.shape == (2, 2, 48000)
    assert np.array_equal(out[0], both)
    assert np.array_equal(out[1], p(noise[::-1].copy()))
    # float32 programs: a float32 batch runs on the array's memory, a float64 one is converted.
    p32 = fxc.compile(EQ, fs=48000, dtype="float32")
    for b in (batch.astype(np.float32), batch):
        got = p32(b)
        assert got.dtype == b.dtype
        for k in range(2):
            assert np.array_equal(got[k], p32(b[k]))


def test_sample_types_follow_the_input_and_others_are_converted_or_refused(noise):
    p = fxc.compile(EQ, fs=48000, dtype="float32")
    x32 = noise.astype(np.float32)
    assert p(noise).dtype == np.float64  # computed in float32, returned as given
    assert p(x32).dtype == np.float32
    half = p(x32.astype(np.float16))
    assert half.dtype == np.float32  # other floats: converted to the program's type
    for bad in (np.zeros(64, np.int16), np.zeros(64, np.complex64), np.zeros(64, bool)):
        with pytest.raises(fxc.Error, match="floating point"):
            p(bad)


def test_non_contiguous_input_equals_its_contiguous_copy(noise):
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    strided = noise[:, ::2]
    assert not strided.flags.c_contiguous
    assert np.array_equal(p(strided), p(np.ascontiguousarray(strided)))
    fortran = np.asfortranarray(noise)
    assert np.array_equal(p(fortran), p(noise))


def test_out_writes_into_caller_memory_and_may_be_the_input(noise):
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    want = p(noise)
    out = np.empty_like(noise)
    assert p(noise, out=out) is out and np.array_equal(out, want)
    x = noise.copy()
    p(x, out=x)  # in place
    assert np.array_equal(x, want)
    mono = np.empty(48000)
    p(noise[0], out=mono)
    assert np.array_equal(mono, want[0])
    with pytest.raises(fxc.Error, match="out="):
        p(noise, out=np.empty((2, 10)))
    with pytest.raises(fxc.Error, match="out="):
        p(noise, out=np.empty((2, 48000), np.float32))


def test_contiguous_input_is_read_in_place():
    # An output may alias nothing the caller holds; the input is left untouched.
    p = fxc.compile(EQ, fs=48000, dtype="float32")
    x = np.random.default_rng(1).standard_normal((2, 4096)).astype(np.float32)
    before = x.copy()
    p(x)
    assert np.array_equal(x, before)


def test_threads_calling_one_program_at_once(noise):
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    inputs = [np.roll(noise, k, axis=1) for k in range(16)]
    expected = [p(x) for x in inputs]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(p, inputs))
    for got, want in zip(results, expected):
        assert np.array_equal(got, want)


def test_set_changes_values_without_recompiling_and_refuses_out_of_range(noise):
    p = fxc.compile(EQ, fs=48000, dtype="float64", channels=2)
    p(noise)
    compiles = fxc.stats()["compiles"]
    p.set(fc=120)
    assert p.get("fc") == 120
    np.testing.assert_allclose(p(noise), reference_eq(noise, fc=120), atol=1e-9)
    p.set("fc", "0.2 kHz")
    assert p.get("fc") == 200
    with pytest.raises(fxc.Error) as e:
        p.set(fc=1000)
    assert e.value.code == "fxc-param" and p.get("fc") == 200
    assert fxc.stats()["compiles"] == compiles  # new values are kernel arguments
    fresh = fxc.compile(EQ, fs=48000, dtype="float64", fc=200)
    assert np.array_equal(p(noise), fresh(noise))


def test_parse_errors_carry_code_location_and_caret():
    with pytest.raises(fxc.Error) as e:
        fxc.compile("input x\noutput x | butter(4, 80 Hz, highpas)\n", fs=48000)
    err = e.value
    assert isinstance(err, ValueError)
    assert (err.code, err.line, err.column) == ("fx-stage", 2, 29)
    assert "^" in err.report and "did you mean 'highpass'" in err.report


def test_a_rate_the_graph_cannot_be_designed_for_fails_at_compile():
    with pytest.raises(fxc.Error) as e:
        fxc.compile("input x\noutput x | lowpass(30 kHz)\n", fs=48000)
    assert e.value.code == "fx-design" and "Nyquist" in e.value.message


def test_bad_calls_are_clear_errors(noise, tmp_path):
    p = fxc.compile("input x : 2\noutput x | lowpass(1 kHz)\n", fs=48000)
    with pytest.raises(fxc.Error, match="declared with 2 channel"):
        p(noise[:1])
    with pytest.raises(fxc.Error, match="1 input"):
        p(noise, noise)
    with pytest.raises(fxc.Error, match="dimensions"):
        p(np.zeros((1, 1, 1, 8)))
    with pytest.raises(fxc.Error, match="no channels"):
        fxc.compile(EQ, fs=48000)(np.zeros((0, 8)))
    with pytest.raises(fxc.Error, match="at least one item"):
        p(np.zeros((0, 2, 8)))
    assert p(np.zeros((2, 0))).shape == (2, 0)
    with pytest.raises(fxc.Error, match="cannot read"):
        fxc.compile(tmp_path / "missing.fx", fs=48000)
    with pytest.raises(fxc.Error, match="dtype"):
        fxc.compile(EQ, fs=48000, dtype="int16")


def test_setting_errors_name_the_setting_not_a_command_line_flag():
    # A keyword of fxc.compile is a setting; the message must not send a Python user to --set.
    with pytest.raises(fxc.Error) as e:
        fxc.compile("fc = 1 kHz\ninput x\noutput x | lowpass(fc)\n", fs=48000, fx=2)
    assert e.value.code == "fx-set"
    assert "the setting fx=2: the graph binds no constant 'fx'" in str(e.value)
    assert "--set" not in str(e.value)


def test_freqz_equals_scipy_sosfreqz():
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    f, h = p.freqz(256)
    sos = np.vstack([scipy.signal.butter(4, 80, "highpass", fs=48000, output="sos"), peaking_sos(3000, 1.0, 4, 48000)])
    w, want = scipy.signal.sosfreqz(sos, worN=256, fs=48000)
    np.testing.assert_allclose(f, w)
    np.testing.assert_allclose(h, want, atol=1e-10)


def test_dumps_at_every_stage():
    p = fxc.compile(EQ, fs=48000, channels=2)
    assert "chain" in p.ir("ir-opt") and "strategy=" in p.ir("ir-opt")
    assert p.dot().startswith("digraph")
    assert '"nodes"' in p.json()
    assert "define" in p.ir("llvm")


def test_pickled_programs_keep_their_settings_and_values(noise):
    shaped = fxc.compile("input x\nn = 4\noutput x | butter(n, 80 Hz, highpass)\n", fs=48000, n=6)
    assert pickle.loads(pickle.dumps(shaped)).get("n") == 6
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    p.set(fc=150)
    q = pickle.loads(pickle.dumps(p))
    assert q.get("fc") == 150 and np.array_equal(q(noise), p(noise))


def test_pickled_programs_find_their_files_imports_from_elsewhere(tmp_path, monkeypatch, noise):
    # A relative import is relative to the file, not to where the copy is made: a Dask worker
    # runs in another directory, and a file of the same name there must not be taken instead.
    (tmp_path / "graphs").mkdir()
    (tmp_path / "graphs" / "lib.fx").write_text("fn half() {\n  return 0.5 * in\n}\n")
    (tmp_path / "graphs" / "main.fx").write_text('import "lib.fx"\ninput x\noutput x | half()\n')
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "lib.fx").write_text("fn half() {\n  return 3 * in\n}\n")
    monkeypatch.chdir(tmp_path)
    p = fxc.compile("graphs/main.fx", fs=48000, dtype="float64")
    monkeypatch.chdir(tmp_path / "elsewhere")
    q = pickle.loads(pickle.dumps(p))
    assert np.array_equal(q(noise), 0.5 * noise)


def test_parameter_names_that_are_not_strings_or_not_unicode_are_refused_plainly():
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    with pytest.raises(TypeError, match="name is a string"):
        p.get(3)
    with pytest.raises(fxc.Error, match="no parameter") as e:
        p.get("fc\ud800")
    assert e.value.code == "fxc-param"
    with pytest.raises(fxc.Error, match="no parameter"):
        p.set("\udcff", 100)
    with pytest.raises(fxc.Error, match="no parameter"):
        p.processor(block=64, channels=1).set(**{"f\ud800": 100})
    assert p.get("fc") == 80


def test_reference_target_outputs_follow_the_arrays(noise):
    # An input declared without a count: the outputs have the array's channels (they were
    # sized 0 and the run wrote through no memory: a crash).
    p = fxc.compile("input x\noutput 0.5 * x\n", fs=48000, target="reference")
    for x in (noise.astype(np.float32), noise[0].astype(np.float32)):
        assert np.array_equal(p(x), 0.5 * x)
    q = fxc.compile("input x\noutput 0.5 * x\n", fs=48000, target="reference", channels=2)
    assert q(noise.astype(np.float32)).shape == noise.shape


def test_a_binary_file_is_not_a_program(tmp_path):
    path = tmp_path / "take.fx"
    path.write_bytes(b"RIFF\xff\xfe\x00\x01WAVE")
    with pytest.raises(fxc.Error, match="not UTF-8 text"):
        fxc.compile(path, fs=48000)
    with pytest.raises(fxc.Error, match="it is a WAV audio file, not a .fx program"):
        fxc.compile("RIFF\x01\x00\x00\x00WAVE\n", fs=48000)


def test_sizes_and_out_arrays_are_checked_by_name(noise):
    for key, bad in (("channels", -2), ("channels", 10**10), ("channels", 2.7), ("max_block", -1),
                     ("signal_length", -5)):
        with pytest.raises(fxc.Error, match=f"{key} must be a whole number"):
            fxc.compile(EQ, fs=48000, **{key: bad})
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    for out in (np.broadcast_to(np.zeros(noise.shape[1]), noise.shape), noise.copy()):
        out.setflags(write=False) if out.flags.writeable else None
        with pytest.raises(fxc.Error, match="read-only"):
            p(noise, out=out)


def test_freqz_set_and_state_take_only_what_they_mean(noise):
    p = fxc.compile(EQ, fs=48000)
    for bad in (0, 10**9, 2.5, True):
        with pytest.raises(fxc.Error, match="n must be a whole number of frequencies"):
            p.freqz(bad)
    assert p.freqz(np.int64(16))[0].shape == (16,)
    with pytest.raises(TypeError, match="must be a number or a string with a unit"):
        p.set(fc=True)
    proc = p.processor(block=64, channels=2)
    with pytest.raises(fxc.Error, match="takes the bytes save_state returned"):
        proc.load_state(5)


def test_info():
    i = fxc.info()
    assert i["version"] == fxc.__version__
    # Which NVRTC and why, as `fxc info` says: a path with its reason, or why none loads.
    assert (i["nvrtc"] is None) == (i["nvrtc_path"] is None)
    assert i["nvrtc_reason"] and (i["nvrtc_path"] is not None or "NVRTC not found" in i["nvrtc_reason"])
    assert i["llvm"].startswith("LLVM 19")
    assert i["threads"] >= 1


def test_a_refused_set_keeps_every_value_for_inputs_without_a_channel_count():
    # The lowpass's cutoff above Nyquist is refused, before the first call and after it, and
    # the value reported stays the one the kernels use.
    src = "input x\nfc = 1 kHz\nq = 0.7\noutput x | lowpass(fc, q)\n"
    x = np.zeros(8)
    p = fxc.compile(src, fs=48000, dtype="float64")
    with pytest.raises(fxc.Error) as before_call:
        p.set(fc=30000)
    assert before_call.value.code == "fx-design" and p.get("fc") == 1000
    p(x)
    with pytest.raises(fxc.Error):
        p.set(fc=30000)
    assert p.get("fc") == 1000 and [v["value"] for v in p.params if v["name"] == "fc"] == [1000]
    p(np.zeros((2, 8)))  # a new channel count still compiles at the kept value
    p.freqz(4)
    assert pickle.loads(pickle.dumps(p))(x).shape == (8,)
    # Several values: all or none.
    with pytest.raises(fxc.Error):
        p.set(q=2.0, fc=30000)
    assert (p.get("q"), p.get("fc")) == (0.7, 1000)
    # A constant that shapes the graph is refused before the first call too.
    order = fxc.compile("input x\nn = 4\noutput x | butter(n, 1 kHz)\n", fs=48000)
    with pytest.raises(fxc.Error, match="shapes the compiled graph"):
        order.set(n=6)
    assert order.get("n") == 4


def test_a_range_past_nyquist_is_an_error_at_compile_for_inputs_without_a_count():
    with pytest.raises(fxc.Error) as e:
        fxc.compile("input x\nfc = 1 kHz in [20 Hz, 30 kHz]\noutput x | lowpass(fc)\n", fs=48000)
    assert e.value.code == "fxc-param-range"


def test_warnings_come_from_the_compiled_graph_for_inputs_without_a_count():
    p = fxc.compile("input x\nd = 10 ms\noutput x | delay(d)\n", fs=48000)
    assert "has no declared range" in p.warnings()
    p(np.zeros(8))
    assert "has no declared range" in p.warnings()


def test_processor_set_is_all_or_none_and_get_reads_it_back():
    p = fxc.compile("input x : 1\nfc = 1 kHz in [100 Hz, 5 kHz]\ng = 1 in [0, 2]\noutput x | lowpass(fc) | gain(g)\n",
                    fs=48000, dtype="float32")
    live = p.processor(block=64)
    live.set(fc=2000)
    assert live.get("fc") == 2000
    with pytest.raises(fxc.Error):
        live.set(fc=3000, g=5)
    assert (live.get("fc"), live.get("g")) == (2000, 1)


def test_set_of_several_values_is_seen_whole_by_runs_on_other_threads():
    # Set one after another, runs between them used pairs that were never set (the hunt saw
    # about 6,000 in 5 s).
    import threading
    p = fxc.compile("input x : 1\nfc = 1 kHz in [100 Hz, 5 kHz]\ng = 1 in [0, 2]\noutput x | lowpass(fc) | gain(g)\n",
                    fs=48000)
    x = np.random.default_rng(2).standard_normal(512)
    p.set(fc=1000, g=0)
    quiet = p(x)
    p.set(fc=3000, g=2)
    loud = p(x)
    done = threading.Event()

    def flip():
        k = 0
        while not done.is_set():
            p.set(**({"fc": 1000, "g": 0} if k % 2 else {"fc": "3 kHz", "g": 2}))
            k += 1

    t = threading.Thread(target=flip)
    t.start()
    try:
        mixed = sum(not (np.array_equal(y, quiet) or np.array_equal(y, loud)) for y in (p(x) for _ in range(400)))
    finally:
        done.set()
        t.join()
    assert mixed == 0


def test_bad_fs_out_and_thread_counts_are_fxc_errors():
    for fs in ("48 kHz", "48000", None, float("nan"), 0, -1, True):
        with pytest.raises(fxc.Error, match="fs must be a positive number of Hz"):
            fxc.compile("input x\noutput x\n", fs=fs)
    p = fxc.compile("input x : 1\noutput a = x | gain(2)\noutput b = x | gain(3)\n", fs=48000, dtype="float32")
    x = np.ones(8, np.float32)
    y = np.empty(8, np.float32)
    with pytest.raises(fxc.Error, match="share memory"):
        p(x, out=(y, y))
    with pytest.raises(fxc.Error, match="other byte order"):
        p(x, out=(np.empty(8, ">f4"), np.empty(8, np.float32)))
    live = fxc.compile("input x : 1\noutput x | gain(2)\n", fs=48000, dtype="float32").processor(block=8)
    with pytest.raises(fxc.Error, match="other byte order"):
        live(np.ones(8, np.float32), out=np.empty(8, ">f4"))
    for n in (-1, 10**12, 1.5):
        with pytest.raises(fxc.Error, match="n must be a whole number"):
            fxc.set_threads(n)


def test_text_that_is_not_valid_unicode_is_an_fxc_error():
    with pytest.raises(fxc.Error, match="not valid Unicode"):
        fxc.compile("input x\noutput x | gain(1)\n# \udcff\n", fs=48000)
    with pytest.raises(fxc.Error, match="not valid Unicode"):
        fxc.compile("input x\nfc = 1 kHz\noutput x | lowpass(fc)\n", fs=48000, fc="1\udcff kHz")
    p = fxc.compile("input x\nfc = 1 kHz in [100 Hz, 5 kHz]\noutput x | lowpass(fc)\n", fs=48000)
    with pytest.raises(fxc.Error, match="not valid Unicode"):
        p.set(fc="1\udcff")
    assert p.get("fc") == 1000


def test_an_array_shaped_samples_by_channels_gets_a_warning():
    # soundfile and scipy.io.wavfile give (T, C): read as T channels of C samples, a minute of
    # stereo through a long FIR took 76 s and 6 GB without a word.
    p = fxc.compile("input x\noutput x | gain(2)\n", fs=48000)
    with pytest.warns(UserWarning, match=r"pass x\.T"):
        p(np.zeros((4800, 2)))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p(np.zeros((2, 4800)))
        p(np.zeros((64, 32)))
