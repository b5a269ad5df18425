# SPDX-License-Identifier: Apache-2.0
"""torch tensors in and out, and fxc.torch.Module."""
import numpy as np
import pytest

from conftest import optional_module  # noqa: E402

torch = optional_module("torch")

import fxc  # noqa: E402
import fxc.torch  # noqa: E402
from conftest import EQ  # noqa: E402


def test_tensors_come_back_as_tensors_of_the_same_shape_and_values():
    p = fxc.compile(EQ, fs=48000, dtype="float32")
    t = torch.randn(3, 2, 4800)
    y = p(t)
    assert isinstance(y, torch.Tensor) and y.shape == t.shape and y.dtype == torch.float32
    assert np.array_equal(y.numpy(), p(t.numpy()))
    assert p(t[0, 0]).shape == (4800,)
    assert np.array_equal(p(t.transpose(1, 2).contiguous().transpose(1, 2)).numpy(), y.numpy())


def test_module_runs_in_inference_and_refuses_gradients():
    m = fxc.torch.Module(fxc.compile(EQ, fs=48000))
    assert isinstance(m, torch.nn.Module) and "fs=48000" in repr(m)
    x = torch.randn(2, 1000)
    with torch.inference_mode():
        y = m(x)
    assert y.shape == x.shape
    with pytest.raises(fxc.Error, match="requires grad"):
        m(torch.randn(2, 100, requires_grad=True))
    with pytest.raises(fxc.Error, match="floating point"):
        m(torch.zeros(10, dtype=torch.int16))
    assert m(torch.zeros(10, dtype=torch.bfloat16)).dtype == torch.float32  # converted to the program's type


def test_processor_takes_tensors():
    p = fxc.compile(EQ, fs=48000, dtype="float32")
    proc = p.processor(block=64, channels=1)
    x = torch.randn(1, 64)
    assert isinstance(proc(x), torch.Tensor)


def test_a_view_with_the_negative_bit_runs_on_its_values_and_is_refused_as_out():
    p = fxc.compile(EQ, fs=48000, dtype="float32")
    t = torch.randn(2, 4800)
    negated = (-t)._neg_view()  # the values of t, in memory holding -t
    assert negated.is_neg() and negated.is_contiguous()
    assert np.array_equal(p(negated).numpy(), p(t).numpy())
    proc = p.processor(block=64, channels=2)
    assert np.array_equal(proc(negated[:, :64]).numpy(), p.processor(block=64, channels=2)(t[:, :64]).numpy())
    with pytest.raises(fxc.Error, match="negative bit"):
        p(t, out=torch.zeros(2, 4800)._neg_view())
    with pytest.raises(fxc.Error, match="negative bit"):
        proc(t[:, :64], out=torch.zeros(2, 64)._neg_view())


def test_tensors_fxc_cannot_take_are_fxc_errors():
    # Torch's own RuntimeError and TypeError came out before 2026-11-29.
    p = fxc.compile("input x\noutput x | lowpass(1 kHz)\n", fs=48000)
    with pytest.raises(fxc.Error, match="layout"):
        p(torch.zeros(2, 64).to_sparse())
    with pytest.raises(fxc.Error, match="requires grad"):
        p(torch.zeros(2, 64), out=torch.zeros(2, 64, requires_grad=True))
    live = p.processor(block=64, channels=1)
    with pytest.raises(fxc.Error, match="requires grad"):
        live(torch.zeros(64), out=torch.zeros(64, requires_grad=True))
    with pytest.raises(fxc.Error, match="out= takes a NumPy array or a CPU tensor"):
        live(np.zeros(64, np.float32), out=[0.0] * 64)
    # Coefficients as tensors are numbers like any others (not refused as a "kind" torch lacks).
    assert fxc.fir(torch.tensor([0.5, 0.25])).text == fxc.fir([0.5, 0.25]).text
    with pytest.raises(fxc.Error, match="real numbers"):
        fxc.fir(torch.tensor([True, False]))
