# SPDX-License-Identifier: Apache-2.0
"""fxc.torch.Module: a compiled graph as a ``torch.nn.Module`` for inference pipelines.

    eq = fxc.torch.Module(fxc.compile(fxc.butter(4, 80, "highpass"), fs=48000))
    y = eq(waveform)            # (T,), (C, T) or (B, C, T) CPU tensor, float32 or float64

CPU tensors are read without a copy. CUDA tensors run on the GPU, in their own memory and on
torch's current stream, when the program was compiled with target="cuda" (outputs are new
CUDA tensors). Tensors that require grad are refused: fxc computes no gradients.
"""
import torch

from .program import Program, compile as _compile


class Module(torch.nn.Module):
    def __init__(self, program, **compile_options):
        super().__init__()
        self.program = program if isinstance(program, Program) else _compile(program, **compile_options)

    def forward(self, *signals):
        return self.program(*signals)

    def extra_repr(self):
        p = self.program
        return f"fs={p.fs:g}, dtype={p.dtype}, target={p.target}"
