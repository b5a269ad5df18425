# SPDX-License-Identifier: Apache-2.0
"""Processor: blocks of any length give the whole run; state save/load; live values."""
import numpy as np
import pytest

import fxc
from conftest import EQ


def blocks_of(x, rng, longest):
    i = 0
    while i < x.shape[-1]:
        n = int(rng.integers(1, longest + 1))
        yield np.ascontiguousarray(x[..., i:i + n])
        i += n


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random_blocks_equal_the_whole_run(noise, dtype):
    p = fxc.compile(EQ, fs=48000, dtype=dtype)
    x = noise.astype(dtype)
    proc = p.processor(block=256, channels=2)
    rng = np.random.default_rng(3)
    y = np.concatenate([proc(b) for b in blocks_of(x, rng, 256)], axis=-1)
    assert y.dtype == x.dtype
    assert np.array_equal(y, p(x))


def test_mono_blocks_out_and_reset():
    p = fxc.compile(EQ, fs=48000, dtype="float32")
    proc = p.processor(block=64, channels=1)
    x = np.random.default_rng(5).standard_normal(640).astype(np.float32)
    out = np.empty(64, np.float32)
    first = [proc(x[i:i + 64], out=out).copy() for i in range(0, 640, 64)]
    assert np.array_equal(np.concatenate(first), p(x))
    proc.reset()
    assert np.array_equal(proc(x[:64]), first[0])
    with pytest.raises(fxc.Error, match="out="):
        proc(x[:64], out=np.empty(32, np.float32))
    proc.reset()
    strided = np.repeat(x[:64], 2)[::2]  # not contiguous: copied, as whole runs do
    assert not strided.flags.c_contiguous
    assert np.array_equal(proc(strided), first[0])


def test_state_bytes_continue_a_stream(noise):
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    x = noise[:, :4096].copy()
    a = p.processor(block=512, channels=2)
    head = a(x[:, :2048].copy())
    state = a.save_state()
    b = p.processor(block=512, channels=2)
    b.load_state(state)
    tail = b(x[:, 2048:].copy())
    assert np.array_equal(np.concatenate([head, tail], axis=1), p(x))
    with pytest.raises(fxc.Error):
        b.load_state(b"not a state")


def test_live_values_take_effect_at_the_next_block(noise):
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    proc = p.processor(block=1024, channels=2)
    proc.set(fc=300)
    moved = fxc.compile(EQ, fs=48000, dtype="float64", fc=300)
    x = noise[:, :1024].copy()
    assert np.array_equal(proc(x), moved(x))
    with pytest.raises(fxc.Error):
        proc.set(fc=5000)


def test_an_undeclared_channel_count_must_be_given(noise):
    p = fxc.compile(EQ, fs=48000)
    with pytest.raises(fxc.Error, match="channels="):
        p.processor(block=64)
    proc = p.processor(block=64, channels=2)
    with pytest.raises(fxc.Error, match="channel"):
        proc(np.zeros((1, 64), np.float32))


def test_several_inputs_and_outputs():
    src = "input a : 1\ninput b : 1\noutput lo = (a + b) | lowpass(1 kHz)\noutput hi = a | highpass(1 kHz)\n"
    p = fxc.compile(src, fs=48000, dtype="float64")
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((1, 512)), rng.standard_normal((1, 512))
    lo, hi = p(a, b)
    proc = p.processor(block=512)
    got = proc.process_many([a, b])
    assert np.array_equal(got[0], lo) and np.array_equal(got[1], hi)
    with pytest.raises(fxc.Error, match="process_many"):
        proc(a)


def test_a_processor_refuses_a_second_thread_instead_of_sharing_its_state():
    import threading
    p = fxc.compile(EQ, fs=48000, dtype="float64")
    proc = p.processor(block=1 << 16, channels=1)
    long = np.random.default_rng(4).standard_normal(1 << 23)  # the GIL is released while it runs
    result, refused = {}, []
    worker = threading.Thread(target=lambda: result.update(y=proc(long)))
    worker.start()
    while worker.is_alive():
        try:
            proc(np.zeros(64))
        except fxc.Error as e:
            refused.append(str(e))
    worker.join()
    assert refused and "one thread at a time" in refused[0]
    # The first caller's stream was not disturbed: it gives a fresh stream's samples. (Not the
    # whole run's: a run this long takes the chunked scan, within rounding of the stream.)
    assert np.array_equal(result["y"], p.processor(block=1 << 16, channels=1)(long))


def test_blocks_are_two_dimensional_at_most():
    proc = fxc.compile(EQ, fs=48000).processor(block=64, channels=2)
    with pytest.raises(fxc.Error, match="channels, frames"):
        proc(np.ones((3, 2, 64), np.float32))


def test_blocks_of_other_float_types_convert_whatever_their_layout(noise):
    # A C-contiguous float16 or big-endian block took a fast path that refused it (or raised
    # the binding's TypeError); a strided one was converted. Both convert now, as documented.
    p = fxc.compile(EQ, fs=48000, dtype="float32", channels=2)
    block = noise[:, :256]
    want = p.processor(block=256)(block.astype(np.float32))
    got = p.processor(block=256)(block.astype(">f4"))
    assert got.dtype == np.float32 and np.array_equal(got, want)
    half = block.astype(np.float16)
    assert np.array_equal(p.processor(block=256)(half), p.processor(block=256)(half.astype(np.float32)))


def test_processor_sizes_are_whole_numbers():
    p = fxc.compile(EQ, fs=48000, channels=2)
    for bad in (-1, 0, 64.7, True):
        with pytest.raises(fxc.Error, match="block must be a whole number"):
            p.processor(block=bad)
    ro = np.zeros((2, 64), np.float32)
    ro.setflags(write=False)
    with pytest.raises(fxc.Error, match="read-only"):
        p.processor(block=64)(np.zeros((2, 64), np.float32), out=ro)


def test_process_many_answers_torch_blocks_with_tensors():
    torch = pytest.importorskip("torch")
    src = "input a : 1\ninput b : 1\noutput lo = (a + b) | lowpass(1 kHz)\noutput hi = a | highpass(1 kHz)\n"
    proc = fxc.compile(src, fs=48000, dtype="float32").processor(block=256)
    a, b = torch.randn(1, 256), torch.randn(1, 256)
    lo, hi = proc.process_many([a, b])
    assert isinstance(lo, torch.Tensor) and isinstance(hi, torch.Tensor)
    again = fxc.compile(src, fs=48000, dtype="float32").processor(block=256).process_many([a.numpy(), b.numpy()])
    assert isinstance(again[0], np.ndarray) and np.array_equal(lo.numpy(), again[0])


def test_channels_for_a_graph_whose_inputs_all_have_counts_is_refused_unless_it_agrees():
    # It was ignored without a word, and the first block then refused.
    p = fxc.compile("input x : 2\noutput x | lowpass(1 kHz)\n", fs=48000)
    with pytest.raises(fxc.Error, match=r"no input of this program has that count \(x: 2\)"):
        p.processor(block=64, channels=3)
    assert p.processor(block=64, channels=2).max_block == 64
    # With a key of its own count, channels= still names the count of the signal without one.
    keyed = fxc.compile("input x\ninput k : 1\noutput x | gain(2)\n", fs=48000, channels=2)
    assert keyed.processor(block=64, channels=2).max_block == 64
    with pytest.raises(fxc.Error, match=r"no input of this program has that count \(x: 2, k: 1\)"):
        keyed.processor(block=64, channels=3)


def test_a_mono_key_beside_a_stereo_signal_runs_whole_as_in_blocks():
    p = fxc.compile("input x : 2\ninput k : 1\noutput a = x | gain(2)\noutput b = k | gain(3)\n", fs=48000)
    x = np.ones((2, 32))
    k = np.ones(32)
    a, b = p(x, k)
    assert a.shape == (2, 32) and b.shape == (1, 32)
    assert np.all(a == 2) and np.all(b == 3)
