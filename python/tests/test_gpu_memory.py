# SPDX-License-Identifier: Apache-2.0
"""Signals in GPU memory (CUDA torch tensors, CuPy arrays, anything with
__cuda_array_interface__): run by Program.run_device on that memory, on the array's stream.

Without a GPU these tests reach every check before the device and the device's own refusal;
with one (FXC_REQUIRE_CUDA_DEVICE=1), the last test runs torch CUDA tensors against the CPU."""
import os

import numpy as np
import pytest

import fxc
from conftest import EQ


class GpuArray:
    """What CuPy or Numba would hand over: only the interface (the pointer is never read here
    unless a GPU runs the program)."""

    def __init__(self, shape, typestr="<f4", strides=None, pointer=0x7F0000000000, stream=None):
        self.shape = shape
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (pointer, False),
                                         "strides": strides, "version": 3, "stream": stream}


def test_torch_default_stream_is_named_as_the_legacy_stream():
    # 0 would be fxc's own stream, which does not wait for torch's work on the default stream.
    from fxc.program import _torch_stream
    assert _torch_stream(0) == 1
    assert _torch_stream(0x5EED) == 0x5EED


def test_a_cpu_program_says_to_compile_for_cuda():
    p = fxc.compile(EQ, fs=48000, dtype="float32")
    with pytest.raises(fxc.Error, match='compile with target="cuda"'):
        p(GpuArray((2, 100)))


def test_gpu_arrays_are_checked_before_the_device():
    p = fxc.compile(EQ, fs=48000, dtype="float32", target="cuda")
    with pytest.raises(fxc.Error, match="holds float64, the program computes in float32"):
        p(GpuArray((2, 100), "<f8"))
    with pytest.raises(fxc.Error, match="not C-contiguous"):
        p(GpuArray((2, 100), strides=(4, 8)))
    with pytest.raises(fxc.Error, match=r"shaped \(T,\), \(C, T\) or \(B, C, T\), got 4 dimensions"):
        p(GpuArray((1, 3, 2, 100)))
    with pytest.raises(fxc.Error, match=r"a batch \(B, C, T\) of the same B, or none"):
        fxc.compile("input a\ninput b\noutput y = a + b\n", fs=48000, target="cuda")(
            GpuArray((3, 1, 10)), GpuArray((1, 10)))
    with pytest.raises(fxc.Error, match=r"for another array type pass out= \(one C-contiguous \(B, C, T\)"):
        p(GpuArray((3, 2, 100)))
    with pytest.raises(fxc.Error, match="allocates GPU outputs as torch tensors or CuPy arrays"):
        p(GpuArray((2, 100)))
    with pytest.raises(fxc.Error, match="every input must be in GPU memory, or every one in CPU memory"):
        fxc.compile("input a\ninput b\noutput y = a + b\n", fs=48000, target="cuda")(
            GpuArray((1, 10)), np.zeros((1, 10), np.float32))
    with pytest.raises(fxc.Error, match="out= array 0 has 99 frames; the inputs have 100"):
        p(GpuArray((2, 100)), out=GpuArray((2, 99)))
    with pytest.raises(fxc.Error, match="out= takes GPU arrays"):
        p(GpuArray((2, 100)), out=np.zeros((2, 100), np.float32))
    with pytest.raises(fxc.Error, match=r"out= array 0 must be a batch \(B, C, T\) with B = 3, as the inputs"):
        p(GpuArray((3, 2, 100)), out=GpuArray((2, 100)))
    with pytest.raises(fxc.Error, match=r"out= array 0 must be \(C, T\) or \(T,\), as the inputs"):
        p(GpuArray((2, 100)), out=GpuArray((3, 2, 100)))


@pytest.mark.skipif(os.environ.get("FXC_REQUIRE_CUDA_DEVICE") == "1", reason="a GPU is here: see the next test")
def test_without_a_gpu_the_device_says_why():
    p = fxc.compile(EQ, fs=48000, dtype="float32", target="cuda")
    with pytest.raises(fxc.Error, match="CUDA"):
        p(GpuArray((2, 100)), out=GpuArray((2, 100), pointer=0x7F0000100000))
    with pytest.raises(fxc.Error, match="CUDA"):  # a batch reaches the device too
        p(GpuArray((3, 2, 100)), out=GpuArray((3, 2, 100), pointer=0x7F0000100000))


@pytest.mark.skipif(os.environ.get("FXC_REQUIRE_CUDA_DEVICE") != "1", reason="needs an NVIDIA GPU")
def test_cuda_tensors_run_in_place_on_the_gpu_and_equal_the_cpu():
    torch = pytest.importorskip("torch")
    assert torch.cuda.is_available()
    p = fxc.compile(EQ, fs=48000, dtype="float32", target="cuda")
    x = torch.randn(2, 48000, device="cuda")
    y = p(x)
    assert y.is_cuda and y.shape == x.shape and y.dtype == torch.float32
    want = fxc.compile(EQ, fs=48000, dtype="float32")(x.cpu().numpy())
    assert np.max(np.abs(y.cpu().numpy() - want)) <= 1e-5 * max(1.0, np.max(np.abs(want)))
    assert p(x[0]).shape == (48000,)
    # out= must be written as it is: a tensor that would need converting is refused.
    with pytest.raises(fxc.Error, match="out= needs a C-contiguous float32 tensor"):
        p(x, out=torch.empty(2, 48000, dtype=torch.float64, device="cuda"))
    with pytest.raises(fxc.Error, match="out= needs a C-contiguous float32 tensor, got a non-contiguous"):
        p(x, out=torch.empty(48000, 2, device="cuda").t())
    # A batch (B, C, T): one launch per kernel for the items, each equal to its own run.
    xs = torch.randn(5, 2, 48000, device="cuda")
    ys = p(xs)
    assert ys.is_cuda and ys.shape == xs.shape
    for b in range(5):
        alone = p(xs[b]).cpu().numpy()
        assert np.max(np.abs(ys[b].cpu().numpy() - alone)) <= 1e-6 * max(1.0, np.max(np.abs(alone)))
