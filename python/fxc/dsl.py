# SPDX-License-Identifier: Apache-2.0
"""The pipe DSL: C++'s ``fxc::butter(...) | fxc::peaking(...)`` in Python.

Stages are values; ``|`` chains them; a chain applied to an input is a signal (a Flow);
signals mix with ``+`` and ``-`` and scale with ``*``. ``fxc.compile`` takes a chain (one
input ``x``, one output), a Flow, or a list or dict of Flows (several outputs). The DSL writes
.fx text (``program.source`` shows it), so a Python graph means exactly what the same .fx file
means (docs/fx-language.md). Frequencies are in Hz, levels in dB, unless a string gives a
unit (``"1.5 kHz"``, ``"20 ms"``); ``fxc.param`` makes a live parameter.
"""
import math
import numbers
import re

from . import _core
from .errors import Error

_UNIT_TEXT = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*(Hz|kHz|dB|s|ms|samples)?\s*$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _number(v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise Error(f"expected a number, got {v!r}", code="fx-stage")
    v = float(v) if not isinstance(v, int) else v
    if isinstance(v, float) and not math.isfinite(v):
        raise Error(f"expected a finite number, got {v!r}", code="fx-stage")
    return repr(v) if isinstance(v, float) else str(v)


class Param:
    """A live parameter (``fxc.param("fc", 80, "Hz", range=(20, 500))``): a named constant of
    the graph, which ``program.set(fc=...)`` changes without recompiling."""

    def __init__(self, name, value, unit="", range=None):
        if not isinstance(name, str) or not _IDENT.fullmatch(name):
            raise Error(f"a parameter name must be an identifier, got {name!r}", code="fx-parse")
        if unit not in ("", "Hz", "kHz", "dB", "s", "ms", "samples"):
            raise Error(f"unknown unit {unit!r} (Hz, kHz, dB, s, ms, samples or none)", code="fx-lex")
        self.name, self.value, self.unit, self.range = name, value, unit, range

    def binding(self):
        u = f" {self.unit}" if self.unit else ""
        text = f"{self.name} = {_number(self.value)}{u}"
        if self.range is not None:
            lo, hi = self.range
            text += f" in [{_number(lo)}{u}, {_number(hi)}{u}]"
        return text


def param(name, value, unit="", range=None):
    return Param(name, value, unit, range)


class _Text:
    """Text of an expression and the parameters it names."""

    def __init__(self, text, params):
        self.text, self.params = text, params

    @staticmethod
    def merge(*parts):
        params = {}
        for p in parts:
            for name, binding in p.params.items():
                if params.setdefault(name, binding) != binding:
                    raise Error(f"two different parameters are named '{name}'", code="fx-lower")
        return params


def _arg(v, unit, params):
    """One argument as .fx text: a number in `unit`, a string with its own unit, a Param."""
    if isinstance(v, Param):
        params[v.name] = v.binding()
        return v.name
    if isinstance(v, str):
        if not _UNIT_TEXT.fullmatch(v):
            raise Error(f"expected a number with a unit such as \"1.5 kHz\", got {v!r}", code="fx-lex")
        return v.strip()
    if hasattr(v, "tolist") and not isinstance(v, numbers.Real):  # a NumPy array: its values
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_arg(x, unit, params) for x in v) + "]"
    return _number(v) + (f" {unit}" if unit else "")


def _word(v, choices, what):
    if v not in choices:
        hint = ""
        # SciPy's and NumPy's words for fxc's, as the .fx frontend says them.
        name = _core.scipy_word(v) if isinstance(v, str) else None
        if name in choices:
            hint = f" ({v!r} is SciPy's or NumPy's word for {name!r})"
        raise Error(f"unknown {what} {v!r}: one of {', '.join(choices)}{hint}", code="fx-stage")
    return v


class Chain(_Text):
    """Stages in series, not yet applied to a signal."""

    def __or__(self, other):
        if not isinstance(other, Chain):
            return NotImplemented
        return Chain(f"{self.text} | {other.text}", _Text.merge(self, other))

    def __rmul__(self, g):
        return self | gain(g)


class Flow(_Text):
    """A signal: an input, or a chain applied to one."""

    def __init__(self, text, params, inputs):
        super().__init__(text, params)
        self.inputs = inputs  # name -> declaration

    def _join(self, other, op):
        if not isinstance(other, Flow):
            return NotImplemented
        inputs = dict(self.inputs)
        for k, v in other.inputs.items():
            if inputs.setdefault(k, v) != v:
                raise Error(f"two different inputs are named '{k}'", code="fx-lower")
        return Flow(f"({self.text}) {op} ({other.text})", _Text.merge(self, other), inputs)

    def __or__(self, chain):
        if not isinstance(chain, Chain):
            return NotImplemented
        return Flow(f"({self.text}) | {chain.text}", _Text.merge(self, chain), self.inputs)

    def __add__(self, other):
        return self._join(other, "+")

    def __sub__(self, other):
        return self._join(other, "-")

    def __mul__(self, g):
        params = dict(self.params)
        return Flow(f"{_arg(g, '', params)} * ({self.text})", _Text.merge(self, _Text("", params)), self.inputs)

    __rmul__ = __mul__


def input(name="x", channels=None):
    """A graph input; ``channels`` None: each call's arrays say it."""
    if not isinstance(name, str) or not _IDENT.fullmatch(name):
        raise Error(f"an input name must be an identifier, got {name!r}", code="fx-parse")
    if channels is not None and (isinstance(channels, bool) or not isinstance(channels, numbers.Integral) or channels < 1):
        raise Error(f"an input's channel count is a whole number of at least 1, got {channels!r}", code="fx-parse")
    decl = f"input {name}" + (f" : {int(channels)}" if channels else "")
    return Flow(name, {}, {name: decl})


def graph_source(graph):
    """The .fx text of a Chain (input x, one output), a Flow, or a list or dict of Flows."""
    if isinstance(graph, Chain):
        graph = input("x") | graph
    if isinstance(graph, Flow):
        outputs = [(None, graph)]
    elif isinstance(graph, dict):
        outputs = list(graph.items())
    else:
        outputs = [(None, g) for g in graph]
    lines, inputs, params = [], {}, {}
    for _, flow in outputs:
        if not isinstance(flow, Flow):
            raise Error("a graph's outputs must be signals (an input piped through stages)", code="fx-lower")
        for k, v in flow.inputs.items():
            if inputs.setdefault(k, v) != v:
                raise Error(f"two different inputs are named '{k}'", code="fx-lower")
    for name, _ in outputs:
        if name is not None and (not isinstance(name, str) or not _IDENT.fullmatch(name)):
            raise Error(f"an output name must be an identifier, got {name!r}", code="fx-parse")
    params = _Text.merge(*[f for _, f in outputs])
    lines += list(inputs.values()) + list(params.values())
    for name, flow in outputs:
        lines.append(f"output {name} = {flow.text}" if name else f"output {flow.text}")
    return "\n".join(lines) + "\n"


def _stage(name, *args):
    """args: (value, unit) pairs, or already-rendered ("=text") words."""
    params = {}
    parts = []
    for a in args:
        if isinstance(a, tuple) and len(a) == 3:  # keyword
            key, value, unit = a
            parts.append(f"{key}={_arg(value, unit, params)}")
        elif isinstance(a, tuple):
            parts.append(_arg(a[0], a[1], params))
        else:
            parts.append(a)
    return Chain(f"{name}({', '.join(parts)})", params)


_BTYPES = ("lowpass", "highpass", "bandpass", "bandstop")


def butter(order, cutoff, btype="lowpass"):
    return _stage("butter", (order, ""), (cutoff, "Hz"), _word(btype, _BTYPES, "btype"))


def cheby1(order, rp, cutoff, btype="lowpass"):
    return _stage("cheby1", (order, ""), (rp, "dB"), (cutoff, "Hz"), _word(btype, _BTYPES, "btype"))


def cheby2(order, rs, cutoff, btype="lowpass"):
    return _stage("cheby2", (order, ""), (rs, "dB"), (cutoff, "Hz"), _word(btype, _BTYPES, "btype"))


def ellip(order, rp, rs, cutoff, btype="lowpass"):
    return _stage("ellip", (order, ""), (rp, "dB"), (rs, "dB"), (cutoff, "Hz"), _word(btype, _BTYPES, "btype"))


def bessel(order, cutoff, btype="lowpass", norm="phase"):
    return _stage("bessel", (order, ""), (cutoff, "Hz"), _word(btype, _BTYPES, "btype"),
                  "norm=" + _word(norm, ("phase", "delay", "mag"), "norm"))


def _biquad(name, f0, q):
    return _stage(name, (f0, "Hz")) if q is None else _stage(name, (f0, "Hz"), (q, ""))


def lowpass(f0, q=None):
    return _biquad("lowpass", f0, q)


def highpass(f0, q=None):
    return _biquad("highpass", f0, q)


def bandpass(f0, q=None):
    return _biquad("bandpass", f0, q)


def notch(f0, q=None):
    return _biquad("notch", f0, q)


def allpass(f0, q=None):
    return _biquad("allpass", f0, q)


def peaking(f0, q, gain):
    return _stage("peaking", (f0, "Hz"), (q, ""), (gain, "dB"))


def lowshelf(f0, gain, q=None):
    return _stage("lowshelf", (f0, "Hz"), (gain, "dB")) if q is None else _stage("lowshelf", (f0, "Hz"), (gain, "dB"), (q, ""))


def highshelf(f0, gain, q=None):
    return _stage("highshelf", (f0, "Hz"), (gain, "dB")) if q is None else _stage("highshelf", (f0, "Hz"), (gain, "dB"), (q, ""))


def _bool_or_complex(dtype):
    """A NumPy or torch sample type of booleans or complex numbers."""
    kind = getattr(dtype, "kind", None)
    if isinstance(kind, str):
        return kind in ("b", "c")
    return bool(getattr(dtype, "is_complex", False)) or str(dtype) == "torch.bool"


def _real(v, what):
    """One coefficient: anything float() takes but a bool, a complex number or text (a 0-d
    array or tensor by its item)."""
    if hasattr(v, "item") and getattr(v, "ndim", None) == 0:
        v = v.item()
    if isinstance(v, (bool, complex, str, bytes)) or (hasattr(v, "dtype") and _bool_or_complex(v.dtype)):
        raise Error(f"{what} takes real numbers, got {v!r} in it", code="fx-stage")
    try:
        return float(v)
    except (TypeError, ValueError):
        raise Error(f"{what} takes real numbers, got {v!r} in it", code="fx-stage") from None


def _reals(values, what):
    """A sequence of real numbers (a list, a tuple, a range, a generator, a 1-D array), or
    fxc.Error saying what it got."""
    if hasattr(values, "dtype") and _bool_or_complex(values.dtype):
        raise Error(f"{what} takes real numbers, got an array of {values.dtype}", code="fx-stage")
    values = values.tolist() if hasattr(values, "tolist") else values
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise Error(f"{what} takes a list of numbers, got {values!r}", code="fx-stage")
    return [_real(v, what) for v in values]


def _rows(m):
    rows = m.tolist() if hasattr(m, "tolist") else m
    if isinstance(rows, (list, tuple)) and rows and all(isinstance(v, numbers.Real) for v in rows):
        raise Error("sos takes rows [b0, b1, b2, a0, a1, a2], one per section: give one section as [[...]] "
                    "(a 2-D array, as SciPy's)", code="fx-stage")
    if not isinstance(rows, (list, tuple)):
        raise Error(f"sos takes rows [b0, b1, b2, a0, a1, a2], got {rows!r}", code="fx-stage")
    return [_reals(row, "a section of sos") for row in rows]


def sos(sections):
    """Second-order sections, SciPy's layout: rows [b0, b1, b2, a0, a1, a2]."""
    return _stage("sos", (_rows(sections), ""))


def tf(b, a):
    return _stage("tf", (_reals(b, "tf's b"), ""), (_reals(a, "tf's a"), ""))


def fir(taps):
    return _stage("fir", (_reals(taps, "fir's taps"), ""))


def firwin(numtaps, cutoff, window="hamming", pass_zero=True, beta=None):
    """SciPy's firwin: ``pass_zero`` is True or False, or SciPy's names for them ("lowpass" and
    "bandstop" are True, "highpass" and "bandpass" False); ``window=("kaiser", 8.6)`` is
    ``window="kaiser", beta=8.6``, as SciPy writes it."""
    if isinstance(window, tuple):
        if len(window) != 2 or window[0] != "kaiser":
            raise Error(f"a window given with its parameter is ('kaiser', beta), got {window!r}", code="fx-stage")
        if beta is not None:
            raise Error("beta is given twice: in window=('kaiser', beta) and as beta=", code="fx-stage")
        window, beta = window
    names = {"lowpass": True, "bandstop": True, "highpass": False, "bandpass": False}
    if isinstance(pass_zero, str) and pass_zero in names:
        # As SciPy: each name also says how many cutoffs there are (one for a low- or
        # high-pass, two or more for a band), so a name that does not fit is refused rather
        # than read as its True or False.
        values = cutoff.tolist() if hasattr(cutoff, "tolist") else cutoff
        count = len(values) if isinstance(values, (list, tuple)) else 1
        if pass_zero in ("lowpass", "highpass") and count != 1:
            raise Error(f'cutoff must have one element if pass_zero=="{pass_zero}", got {count}', code="fx-stage")
        if pass_zero in ("bandpass", "bandstop") and count < 2:
            raise Error(f'cutoff must have at least two elements if pass_zero=="{pass_zero}", got {count}',
                        code="fx-stage")
        pass_zero = names[pass_zero]
    if not isinstance(pass_zero, bool) and not (hasattr(pass_zero, "dtype") and pass_zero.dtype == bool):
        raise Error(f"pass_zero must be True, False, or one of {', '.join(names)}, got {pass_zero!r}", code="fx-stage")
    args = [(numtaps, ""), (cutoff, "Hz"), "window=" + _word(window, ("hamming", "hann", "blackman", "boxcar", "kaiser"), "window"),
            "pass_zero=" + ("true" if pass_zero else "false")]
    if beta is not None:
        args.append(("beta", beta, ""))
    return _stage("firwin", *args)


def gain(g, unit=""):
    """Multiply by ``g`` (linear), or by 10^(g/20) with ``unit="dB"`` (or ``gain("-3 dB")``)."""
    if unit not in ("", "dB"):
        raise Error(f"a gain's unit is none or dB, got {unit!r}", code="fx-stage")
    return _stage("gain", (g, unit))


def delay(d):
    """Delay by ``d`` samples (an int), or by a time given as a string ("20 ms")."""
    return _stage("delay", (d, ""))


def tanh():
    return Chain("tanh()", {})


def clip(lo, hi):
    return _stage("clip", (lo, ""), (hi, ""))
