# SPDX-License-Identifier: Apache-2.0
"""Programs and Processors: compiled graphs run on NumPy arrays and torch tensors."""
import math
import numbers
import os
import warnings

import numpy as np

from . import _core
from .errors import Error

_DTYPES = {"float32": "float32", "f32": "float32", "float64": "float64", "f64": "float64"}


def _refuse(message, code="fxc-python"):
    return Error(message, code=code)


def _torch_module():
    import torch
    return torch


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _warn_if_channels_last(a, name):
    """A (T, C) array (as soundfile and scipy.io.wavfile return audio) runs as T channels of C
    samples: a stereo minute through a long FIR took 76 s and 6 GB instead of 0.04 s."""
    if a.ndim == 2 and a.shape[1] <= 8 and a.shape[0] >= 1000:
        warnings.warn(f"input '{name}' is shaped {a.shape}: {a.shape[0]} channels of {a.shape[1]} samples each; "
                      f"fxc takes (channels, samples): audio from soundfile or scipy.io.wavfile is (samples, "
                      f"channels), pass x.T", stacklevel=3)


def _as_samples(x, program_dtype, what):
    """`x` as a C-contiguous float32 or float64 NumPy array (without a copy where it already is
    one), and whether it came as a torch tensor. The rule (docs/python.md): float32 and float64
    are kept; other floating types are converted to the program's sample type; integers,
    booleans and complex numbers are refused (their scale is the caller's to choose)."""
    torch = _is_torch(x)
    if torch:
        if x.layout != _torch_module().strided:
            raise _refuse(f"{what}: the tensor has the {x.layout} layout; pass a dense one (x.to_dense())")
        if x.requires_grad:
            raise _refuse(f"{what}: the tensor requires grad, and fxc computes no gradients; "
                          "pass x.detach() (fxc.torch.Module is for inference)")
        if x.device.type != "cpu":
            raise _refuse(f"{what}: the tensor is on {x.device}; a Program with target=\"cuda\" runs on GPU "
                          "tensors (Processor blocks are CPU memory): pass x.cpu()")
        if x.dtype.is_floating_point and x.dtype not in (_torch_module().float32, _torch_module().float64):
            x = x.to(_torch_module().float32 if program_dtype == "float32" else _torch_module().float64)
        # resolve_neg: a view with torch's negative bit (x._neg_view()) has no NumPy form.
        x = x.detach().resolve_neg().contiguous().numpy() if x.dtype.is_floating_point else x.numpy()
    elif not isinstance(x, np.ndarray):
        x = np.asarray(x)
    kind = x.dtype.kind
    if kind != "f":
        raise _refuse(f"{what}: samples must be floating point, got {x.dtype} (convert and scale them "
                      "yourself, e.g. x.astype(np.float32) / 32768 for 16-bit PCM)")
    if x.dtype not in (np.float32, np.float64):
        # Another byte order keeps its width (as a native array would run); other floats
        # (float16, longdouble) become the program's type.
        x = x.astype(x.dtype.newbyteorder("=") if x.dtype.itemsize in (4, 8) else program_dtype)
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    return x, torch


_MAX_FREQZ_POINTS = 1 << 24  # 16 Mi frequencies: 256 MiB of complex results


def _check_writable(arrays):
    """out= arrays fxc can write: a read-only one (a memory-mapped file opened "r", a
    broadcast view) is refused by name, not by the binding's signature mismatch."""
    for k, a in enumerate(arrays):
        if not a.flags.writeable:
            raise _refuse(f"out= array {k} is read-only (a broadcast view, a file mapped read-only, or "
                          "setflags(write=False)); pass a writable array")


def _in_gpu_memory(x):
    """True for a CUDA torch tensor or any array exposing ``__cuda_array_interface__`` (CuPy,
    Numba, JAX): fxc then runs on that memory (Program.run_device)."""
    if _is_torch(x):
        return x.device.type == "cuda"
    return hasattr(x, "__cuda_array_interface__")


CU_STREAM_LEGACY = 1  # the driver's name for the legacy default stream


def _torch_stream(handle):
    """The CUstream fxc runs on for torch's current stream `handle`. torch's default stream is
    the legacy stream, handle 0; to fxc 0 means its own stream, which does not wait for work on
    the legacy one, so that one goes as CU_STREAM_LEGACY."""
    return handle or CU_STREAM_LEGACY


def _device_view(x, program_dtype, what, output=False):
    """(array, (pointer, rows, frames), stream, items) of a signal in GPU memory: planar rows of
    the program's sample type, C-contiguous, 1-D, 2-D or a batch (B, C, T), whose rows are the
    items' channels one item after another (items: B, else 0). A torch tensor is converted on the
    GPU where it is another floating type or not contiguous; its stream is torch's current
    one (the default one as CU_STREAM_LEGACY). Another array must already be C-contiguous in the program's type; its stream is its
    interface's (0: fxc's own)."""
    np_dtype = np.dtype(program_dtype)
    if _is_torch(x):
        torch = _torch_module()
        if x.requires_grad:
            raise _refuse(f"{what}: the tensor requires grad, and fxc computes no gradients; "
                          "pass x.detach() (fxc.torch.Module is for inference)")
        if (x.device.index or 0) != 0:
            raise _refuse(f"{what}: the tensor is on {x.device}; fxc runs on cuda:0")
        if not x.dtype.is_floating_point:
            raise _refuse(f"{what}: samples must be floating point, got {x.dtype}")
        want = torch.float32 if np_dtype == np.float32 else torch.float64
        if output and (x.dtype != want or not x.is_contiguous() or x.is_neg()):
            # A converted copy would be written, not the caller's tensor.
            raise _refuse(f"{what}: out= needs a C-contiguous {np_dtype} tensor, got "
                          f"{'a non-contiguous ' if not x.is_contiguous() else ''}"
                          f"{'negated view of ' if x.is_neg() else ''}{x.dtype}")
        # resolve_neg: the memory of a view with torch's negative bit holds the values' negatives.
        x = x.to(want).resolve_neg().contiguous()
        stream = _torch_stream(torch.cuda.current_stream(x.device).cuda_stream)
        shape, pointer = tuple(x.shape), x.data_ptr()
    else:
        cai = x.__cuda_array_interface__
        shape = tuple(cai["shape"])
        if np.dtype(cai["typestr"]) != np_dtype:
            raise _refuse(f"{what}: the GPU array holds {np.dtype(cai['typestr'])}, the program computes in "
                          f"{np_dtype}: convert it on the GPU first")
        strides = cai.get("strides")
        if strides is not None and tuple(strides) != tuple(
                int(np.prod(shape[i + 1:], dtype=np.int64)) * np_dtype.itemsize for i in range(len(shape))):
            raise _refuse(f"{what}: the GPU array is not C-contiguous; fxc reads planar (channels, frames) rows")
        pointer, stream = cai["data"][0], cai.get("stream") or 0
    if len(shape) not in (1, 2, 3):
        raise _refuse(f"{what}: expected a GPU array shaped (T,), (C, T) or (B, C, T), got {len(shape)} dimensions")
    if len(shape) == 3:
        return x, (pointer, shape[0] * shape[1], shape[2]), stream, shape[0]
    channels, frames = (1, shape[0]) if len(shape) == 1 else shape
    return x, (pointer, channels, frames), stream, 0


def _source_of(graph):
    """(source text, name for messages) of a .fx path, .fx text or a DSL graph."""
    from .dsl import Chain, Flow, graph_source
    if isinstance(graph, (Chain, Flow, list, tuple, dict)):
        return graph_source(graph), "<dsl>"
    if isinstance(graph, os.PathLike) or (isinstance(graph, str) and "\n" not in graph and graph.endswith(".fx")):
        path = os.fspath(graph)
        try:
            with open(path, encoding="utf-8") as f:
                return f.read(), path
        except OSError as e:
            raise _refuse(f"cannot read '{path}': {e.strerror}", code="fxc-io") from None
        except UnicodeDecodeError:
            raise _refuse(f"cannot read '{path}': it is not UTF-8 text (a binary file?), not a .fx program",
                          code="fxc-io") from None
    if isinstance(graph, str):
        return graph, "<source>"
    raise TypeError(f"compile() takes .fx text, a path to a .fx file or a DSL graph, not {type(graph).__name__}")


def _unicode(text, what):
    """`text` if UTF-8 can encode it; a lone surrogate (from os.fsdecode of a bad file name, or
    a bad escape) is refused by name rather than as the binding's TypeError."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse(f"{what} is not valid Unicode (it holds a lone surrogate): {text!r}") from None
    return text


def _setting(name, value):
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise TypeError(f"the value of {name} must be a number or a string with a unit, got {value!r}")
    if isinstance(value, str):
        return _unicode(f"{name}={value}", "a setting")
    # Plain Python numbers: repr of a NumPy 2 scalar is "np.float64(120.0)".
    return f"{name}={int(value)}" if isinstance(value, numbers.Integral) else f"{name}={float(value)!r}"


def compile(graph, fs, dtype="float32", target="cpu", channels=None, *, max_block=0, cache_dir="",
            live=True, fuse=True, signal_length=0, cuda_architecture="", **params):
    """Compiles a graph into a Program.

    graph: .fx text, a path to a .fx file (``os.PathLike``, or a one-line string ending in
    ``.fx``), or a DSL graph (``fxc.butter(4, 80, "highpass") | fxc.peaking(3000, 1, 4)``).
    fs: the sample rate in Hz. dtype: the computation's sample type, ``"float32"`` (float64
    state where a filter needs it) or ``"float64"``. target: ``"cpu"``, ``"cuda"`` or
    ``"reference"`` (the float64 interpreter). channels: the channel count of inputs declared
    without one; None: each call's arrays say it. params: starting values of the graph's
    constants, numbers in their units or strings with units (``fc=120``, ``fc="0.12 kHz"``);
    they may also set what cannot change live (a filter order).
    """
    source, name = _source_of(graph)
    return _compile_source(source, name, fs, dtype, target, channels, max_block=max_block, cache_dir=cache_dir,
                           live=live, fuse=fuse, signal_length=signal_length, cuda_architecture=cuda_architecture,
                           **params)


def _anchored(name):
    """The name a copy of a Program compiles its text under: a file's absolute path, so that
    its relative imports are found beside it from any directory (pickle, a Dask worker)."""
    return name if name in ("<dsl>", "<source>") else os.path.abspath(name)


def _check_whole(key, value, low, limit, none_ok=False, of=""):
    """`value` as a count (`of` what): an integer (not a bool) in [low, limit), or None where
    allowed."""
    if value is None and none_ok:
        return
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or not low <= value < limit:
        raise _refuse(f"{key} must be a whole number{of} from {low} to {limit - 1}"
                      f"{' (or None)' if none_ok else ''}, got {value!r}")


def _sample_type(dtype, code="fxc-python"):
    """The canonical name of a computation's sample type ("f32" is "float32")."""
    if dtype not in _DTYPES:
        raise _refuse(f'dtype must be "float32" or "float64", got {dtype!r}', code=code)
    return _DTYPES[dtype]


def _compile_source(source, name, fs, dtype="float32", target="cpu", channels=None, *, max_block=0, cache_dir="",
                    live=True, fuse=True, signal_length=0, cuda_architecture="", **params):
    """compile() on .fx text, `name` naming it in messages and anchoring its imports."""
    if isinstance(fs, bool) or not isinstance(fs, numbers.Real) or not math.isfinite(fs) or fs <= 0:
        raise _refuse(f"fs must be a positive number of Hz, got {fs!r}")
    _check_whole("channels", channels, 0, 2**31, none_ok=True)
    _check_whole("max_block", max_block, 0, 2**62)
    _check_whole("signal_length", signal_length, 0, 2**62)
    sample_type = _sample_type(dtype)
    _unicode(source, "the graph's text")
    _unicode(name, "the graph's name")
    _unicode(os.fspath(cache_dir), "cache_dir")
    settings = [_setting(_unicode(k, "a setting's name"), v) for k, v in params.items()]
    core = _core.Program(source, name, float(fs), sample_type, target, int(channels or 0), int(max_block),
                         os.fspath(cache_dir), settings, bool(live), bool(fuse), int(signal_length),
                         cuda_architecture)
    program = Program(core, dict(fs=fs, dtype=dtype, target=target, channels=channels, max_block=max_block,
                                 cache_dir=cache_dir, live=live, fuse=fuse, signal_length=signal_length,
                                 cuda_architecture=cuda_architecture, **params))
    program._import_name = _anchored(name)
    return program


def _parameter_name(name):
    """`name` as a parameter's name: a string that UTF-8 can encode (a lone surrogate cannot)."""
    if not isinstance(name, str):
        raise TypeError(f"a parameter's name is a string, got {name!r}")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse(f"the graph has no parameter {name!r} (the name is not valid Unicode)", code="fxc-param") from None
    return name


def _set_values(core, name, value, values):
    """set("fc", 120) and set(fc=120) alike: numbers in the parameter's unit, or text with one."""
    if name is not None:
        values = {name: value, **values}
    for key, v in values.items():
        _parameter_name(key)
        if isinstance(v, bool) or not isinstance(v, (numbers.Real, str)):
            raise TypeError(f"the value of {key} must be a number or a string with a unit, got {v!r}")
    for v in values.values():
        if isinstance(v, str):
            _unicode(v, "a parameter's value")
    # All or none, and together: a run (or a Processor's block) on another thread sees all of
    # them or none.
    if len(values) == 1:
        (key, v), = values.items()
        core.set(key, v if isinstance(v, str) else float(v))
    else:
        core.set_many([(key, v if isinstance(v, str) else float(v)) for key, v in values.items()])


def _rebuild(source, name, kwargs, values):
    program = _compile_source(source, name, **kwargs)
    for key, value in values.items():
        if program.get(key) != value:
            program.set(**{key: value})
    return program


class Program:
    """A graph compiled for one sample rate, sample type and target (``fxc.compile``).

    ``program(x)`` runs whole signals from zero state: ``x`` is a NumPy array or a torch tensor
    shaped ``(T,)``, ``(C, T)`` or ``(B, C, T)`` (a batch, one dispatch per kernel), and the
    result has the same type, shape convention and sample type. ``out=`` (an array, or a tuple
    with one per output) writes into caller memory instead of a new array; it may be ``x``. A graph with several inputs
    takes one array each (``program(x, y)``); with several outputs it returns a tuple.
    Calls may come from several threads at once; the GIL is released while compiling and
    running.
    """

    def __init__(self, core, kwargs):
        self._core = core
        self._kwargs = kwargs
        self._import_name = _anchored(core.source_name)

    # ---- what it is ----
    @property
    def source(self):
        """The .fx text it was compiled from (the DSL's, for a DSL graph)."""
        return self._core.source

    @property
    def name(self):
        return self._core.name

    @property
    def fs(self):
        return self._core.fs

    @property
    def dtype(self):
        return self._core.dtype

    @property
    def target(self):
        return self._core.target

    @property
    def inputs(self):
        """[(name, channels)], channels 0 where a call's array says it."""
        return self._core.inputs()

    @property
    def outputs(self):
        return self._core.outputs()

    @property
    def params(self):
        """The live parameters: [{"name", "unit", "value", "min", "max", "has_range"}]."""
        return self._core.params()

    def __repr__(self):
        return (f"<fxc.Program {self.name!r}: {len(self.inputs)} input(s), {len(self.outputs)} output(s), "
                f"fs={self.fs:g}, {self.dtype}, {self.target}>")

    # ---- live parameters ----
    def set(self, name=None, value=None, **values):
        """New values without recompiling: ``set(fc=120)``, ``set(fc="0.12 kHz")`` or
        ``set("fc", 120)``, in each parameter's unit. Raises fxc.Error for a value outside the
        declared range, one a stage refuses (a cutoff above Nyquist) or one that shapes the
        graph; every value is then kept as it was (all or none)."""
        _set_values(self._core, name, value, values)

    def get(self, name):
        """A live parameter's value, in its unit."""
        return self._core.get(_parameter_name(name))

    # ---- running ----
    def __call__(self, *signals, out=None):
        if len(signals) != len(self.inputs):
            raise _refuse(f"the graph has {len(self.inputs)} input(s) but {len(signals)} signal(s) were given")
        if any(_in_gpu_memory(s) for s in signals):
            return self._run_on_gpu(signals, out)
        names = [name for name, _ in self.inputs]
        arrays, torch = [], False
        for s, name in zip(signals, names):
            a, t = _as_samples(s, self.dtype, f"input '{name}'")
            arrays.append(a)
            torch = torch or t
        for a, name in zip(arrays, names):
            _warn_if_channels_last(a, name)
        dims = {a.ndim for a in arrays}
        # A mono (T,) key beside a (C, T) signal is one channel, as Processor.process_many takes
        # it; the outputs are then (C, T).
        if dims == {1, 2}:
            dims = {2}
        if len(dims) != 1:
            raise _refuse("every input must have the same number of dimensions (a batch (B, C, T) for all, or none)")
        nd = dims.pop()
        if len({a.dtype for a in arrays}) > 1:
            arrays = [a.astype(self.dtype) for a in arrays]
        if nd == 3:
            if out is not None:
                raise _refuse("out= is for whole signals shaped (T,) or (C, T), not batches")
            if arrays[0].shape[0] == 0:
                raise _refuse("a batch needs at least one item")
            outs = self._core.run_batch(arrays)
        elif nd in (1, 2):
            targets = None
            if out is not None:
                given = list(out) if isinstance(out, (tuple, list)) else [out]
                if any(_is_torch(o) and o.device.type != "cpu" for o in given):
                    raise _refuse("out= must be CPU memory; fxc writes CPU memory")
                if any(_is_torch(o) and o.is_neg() for o in given):
                    raise _refuse("out= cannot be a tensor view with torch's negative bit set (its memory holds "
                                  "the values' negatives)")
                if any(_is_torch(o) and o.requires_grad for o in given):
                    raise _refuse("out= cannot be a tensor that requires grad: fxc writes it without a gradient; "
                                  "pass one made under torch.no_grad() or detached")
                targets = [(o.numpy() if _is_torch(o) else o) for o in given]
                if not all(isinstance(o, np.ndarray) for o in targets):
                    raise _refuse("out= takes NumPy arrays or CPU tensors, one per output")
                _check_writable(targets)
                for k, o in enumerate(targets):
                    if not o.dtype.isnative:
                        raise _refuse(f"out= array {k} is in the other byte order ({o.dtype.str}); give one in this "
                                      f"machine's ({o.dtype.newbyteorder('=').str})")
                # Outputs must not share memory (an output may share its input's): the second
                # would overwrite the first, or both be half-written.
                for i in range(len(targets)):
                    for j in range(i):
                        if np.shares_memory(targets[i], targets[j]):
                            raise _refuse(f"out= arrays {j} and {i} share memory; each output needs its own")
                targets = [o.reshape(1, -1) if o.ndim == 1 else o for o in targets]
            outs = self._core.run(arrays, targets)
            if out is not None:
                return out
            if nd == 1:
                outs = [o[0] if o.shape[0] == 1 else o for o in outs]
        else:
            raise _refuse(f"expected an array shaped (T,), (C, T) or (B, C, T), got {nd} dimensions")
        if torch:
            import torch as _torch
            outs = [_torch.from_numpy(o) for o in outs]
        return outs[0] if len(outs) == 1 else tuple(outs)

    run = __call__

    def _run_on_gpu(self, signals, out):
        """Signals in GPU memory, run there with no copy through the host (docs/python.md)."""
        if self.target != "cuda":
            raise _refuse("the signals are in GPU memory; compile with target=\"cuda\" to run there, "
                          "or move them to the CPU (x.cpu())")
        names = [name for name, _ in self.inputs]
        if not all(_in_gpu_memory(s) for s in signals):
            raise _refuse("every input must be in GPU memory, or every one in CPU memory")
        views = [_device_view(s, self.dtype, f"input '{name}'") for s, name in zip(signals, names)]
        kept = [v[0] for v in views]  # converted tensors stay alive until the run ends
        inputs = [v[1] for v in views]
        ndims = {len(getattr(s, "shape", ())) for s in signals}
        items = {v[3] for v in views}
        if len(items) > 1:
            raise _refuse("every input must be a batch (B, C, T) of the same B, or none")
        items = items.pop()
        if len({frames for _, _, frames in inputs}) > 1:
            raise _refuse("every input must have the same number of frames")
        frames = inputs[0][2]
        first = signals[0]
        # One item's channel counts (a batch's rows are items x channels).
        per_item = [rows // items if items else rows for _, rows, _ in inputs]
        shape_of = (lambda c: (items, c, frames)) if items else (lambda c: (c, frames))
        shape_text = "(B, C, T)" if items else "(C, T)"
        if out is not None:
            given = list(out) if isinstance(out, (tuple, list)) else [out]
            if not all(_in_gpu_memory(o) for o in given):
                raise _refuse(f"out= takes GPU arrays (one C-contiguous {shape_text} array per output) with GPU inputs")
            out_views = [_device_view(o, self.dtype, f"output {k}", output=True) for k, o in enumerate(given)]
            for k, (_, (_, _, n), _, o_items) in enumerate(out_views):
                if n != frames:
                    raise _refuse(f"out= array {k} has {n} frames; the inputs have {frames}")
                if o_items != items:
                    raise _refuse(f"out= array {k} must be a batch (B, C, T) with B = {items}, as the inputs"
                                  if items else f"out= array {k} must be (C, T) or (T,), as the inputs")
        elif not _is_torch(first) and type(first).__module__.split(".")[0] != "cupy":
            raise _refuse("fxc allocates GPU outputs as torch tensors or CuPy arrays; for another "
                          f"array type pass out= (one C-contiguous {shape_text} GPU array per output)")
        # Compiles the program for these channel counts (on the device) where it has not yet.
        channels = self._core.output_channels(per_item)
        if out is not None:
            if len(out_views) != len(channels):
                raise _refuse(f"out= needs {len(channels)} GPU array(s), one per output")
            for k, ((_, (_, rows, _), _, _), want) in enumerate(zip(out_views, channels)):
                if rows != want * max(items, 1):
                    raise _refuse(f"out= array {k} must be shaped {shape_of(want)}")
            out_views = [v[1] for v in out_views]
        else:
            if _is_torch(first):
                torch = _torch_module()
                dtype = torch.float32 if self.dtype == "float32" else torch.float64
                outs = [torch.empty(shape_of(c), dtype=dtype, device=kept[0].device) for c in channels]
            else:
                import cupy
                outs = [cupy.empty(shape_of(c), dtype=self.dtype) for c in channels]
            out_views = [_device_view(o, self.dtype, f"output {k}")[1] for k, o in enumerate(outs)]
        if items:
            self._core.run_batch_device(inputs, out_views, items, views[0][2])
        else:
            self._core.run_device(inputs, out_views, views[0][2])
        del kept
        if out is not None:
            return out
        if ndims == {1}:
            outs = [o[0] if o.shape[0] == 1 else o for o in outs]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def processor(self, block=512, channels=None):
        """A real-time Processor for blocks of up to ``block`` frames (state carried exactly
        from call to call)."""
        return Processor(self, block, channels)

    # ---- what the compiler made ----
    def ir(self, stage="ir-opt", format="text", passes=None, print_after_all=False, locations=True):
        """The graph at a stage, as ``fxc dump --emit`` prints it: "ir", "ir-opt", "llvm" or
        "cuda"; format "text", "dot" or "json" for the IR stages."""
        return self._core.dump(stage, format, list(passes or []), print_after_all, locations, False)

    def dot(self, stage="ir-opt"):
        """The graph as Graphviz text."""
        return self.ir(stage, "dot")

    def json(self, stage="ir-opt"):
        return self.ir(stage, "json")

    def freqz(self, n=512, whole=False):
        """The exact frequency response at the current values: ``(f, h)`` with ``f`` in Hz
        (``n`` frequencies from 0, up to but not including Nyquist, or the sample rate with
        ``whole``, as ``scipy.signal.sosfreqz(..., worN=n, fs=fs)``; or ``n`` an array of
        frequencies in Hz). ``h`` is complex, shaped (n,) for one input and one output, else
        (outputs, inputs, n) with zeros where an output does not depend on an input."""
        if np.ndim(n) == 0:
            _check_whole("n", n, 1, _MAX_FREQZ_POINTS + 1, of=" of frequencies")
            f = np.linspace(0, self.fs if whole else self.fs / 2, int(n), endpoint=False)
        else:
            f = np.asarray(n, dtype=np.float64)
            if f.ndim != 1 or len(f) > _MAX_FREQZ_POINTS:
                raise _refuse(f"n as frequencies must be one-dimensional, at most {_MAX_FREQZ_POINTS} of them")
        responses = self._core.frequency_response([float(v) for v in f])
        n_out, n_in = len(self.outputs), len(self.inputs)
        if n_out == 1 and n_in == 1:
            return f, (responses[0][2] if responses else np.zeros(len(f), complex))
        h = np.zeros((n_out, n_in, len(f)), complex)
        for out_index, in_index, response in responses:
            h[out_index, in_index] = response
        return f, h

    def warnings(self):
        return self._core.warnings()

    # ---- pickling (Dask ships Programs to workers, which compile them again: once each) ----
    def __reduce__(self):
        # Compiled as it was (settings included: they may shape the graph), then given the
        # values set() changed since.
        values = {p["name"]: p["value"] for p in self.params}
        return (_rebuild, (self.source, self._import_name, dict(self._kwargs), values))


class Processor:
    """A stream of blocks through one Program (``program.processor(block=512)``): call it on
    each block in order; the state (filter memories, delay lines) carries across calls, so the
    blocks give what one call on the whole signal gives. ``out=`` reuses an array."""

    def __init__(self, program, block, channels):
        _check_whole("block", block, 1, 2**31)
        _check_whole("channels", channels, 1, 2**31, none_ok=True)
        self._core = _core.Processor(program._core, int(block), int(channels or 0))
        self._process = self._core.process
        self._dtype = program.dtype

    def __call__(self, x, out=None):
        if out is not None and isinstance(out, np.ndarray):
            _check_writable([out])
            if not out.dtype.isnative:
                raise _refuse(f"out= is in the other byte order ({out.dtype.str}); give one in this machine's "
                              f"({out.dtype.newbyteorder('=').str})")
        if (type(x) is np.ndarray and x.flags.c_contiguous and x.dtype in (np.float32, np.float64)
                and (out is None or type(out) is np.ndarray)):
            return self._process(x, out)  # the fast path: what _as_samples would pass as it is
        a, torch = _as_samples(x, self._dtype, "the block")
        if out is not None and _is_torch(out):
            if out.device.type != "cpu":
                raise _refuse(f"out= is on {out.device}; fxc writes CPU memory")
            if out.is_neg():
                raise _refuse("out= cannot be a tensor view with torch's negative bit set (its memory holds "
                              "the values' negatives)")
            if out.requires_grad:
                raise _refuse("out= cannot be a tensor that requires grad: fxc writes it without a gradient")
            out = out.numpy()
        elif out is not None and not isinstance(out, np.ndarray):
            raise _refuse(f"out= takes a NumPy array or a CPU tensor, got {type(out).__name__}")
        y = self._process(a, out)
        if torch:
            import torch as _torch
            return _torch.from_numpy(y)
        return y

    process = __call__

    def process_many(self, blocks):
        """One block per input of a graph with several inputs or outputs; a list of outputs,
        torch tensors where a block was one (as a call on one block returns)."""
        arrays, torch = [], False
        for b in blocks:
            a, t = _as_samples(b, self._dtype, "a block")
            arrays.append(a)
            torch = torch or t
        outs = self._core.process_many(arrays)
        if torch:
            import torch as _torch
            return [_torch.from_numpy(y) for y in outs]
        return outs

    @property
    def max_block(self):
        return self._core.max_block

    def reset(self):
        """Back to zero state."""
        self._core.reset()

    def set(self, name=None, value=None, **values):
        """New parameter values, taken at the next block's start; all or none, as
        ``Program.set``."""
        _set_values(self._core, name, value, values)

    def get(self, name):
        """A live parameter's value, in its unit: the last ``set``, or the starting value."""
        return self._core.get(_parameter_name(name))

    def save_state(self):
        """The state as bytes (the format of ``fxc run --save-state``)."""
        return self._core.save_state()

    def load_state(self, state):
        # bytes(5) would be five zero bytes: only a bytes-like object is a saved state.
        if not isinstance(state, (bytes, bytearray, memoryview)):
            raise _refuse(f"load_state takes the bytes save_state returned, got {type(state).__name__}")
        self._core.load_state(bytes(state))


def info():
    """Versions, backends, CUDA devices, the cache directory and the thread count."""
    return dict(_core.info())


def stats():
    """This process's counters: kernels compiled, found in memory or on disk, dispatched (as
    ``fxc run --stats`` prints them)."""
    return dict(_core.stats())


def set_threads(n):
    """Caps the threads a whole-signal run uses (0: FXC_THREADS, else the cores available)."""
    _check_whole("n", n, 0, 2**31)
    _core.set_threads(int(n))


def threads():
    return _core.threads()
