# SPDX-License-Identifier: Apache-2.0
"""fxc: a compiler for audio signal-processing graphs, from Python.

    import fxc, numpy as np
    eq = fxc.compile("input x\\noutput x | butter(4, 80 Hz, highpass) | peaking(3 kHz, 1, 4 dB)", fs=48000)
    y = eq(np.random.randn(2, 48000).astype(np.float32))

See docs/python.md.
"""
from .errors import Error, InternalError
from . import _core
from .program import Program, Processor, compile, info, set_threads, stats, threads
from .dsl import (Chain, Flow, Param, input, param, butter, cheby1, cheby2, ellip, bessel, lowpass,
                  highpass, bandpass, notch, allpass, peaking, lowshelf, highshelf, sos, tf, fir,
                  firwin, gain, delay, tanh, clip)

__version__ = _core.version()

__all__ = [
    "Error", "InternalError", "Program", "Processor", "compile", "info", "set_threads", "stats", "threads",
    "Chain", "Flow", "Param", "input", "param", "butter", "cheby1", "cheby2", "ellip", "bessel",
    "lowpass", "highpass", "bandpass", "notch", "allpass", "peaking", "lowshelf", "highshelf",
    "sos", "tf", "fir", "firwin", "gain", "delay", "tanh", "clip",
]
