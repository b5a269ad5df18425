# SPDX-License-Identifier: Apache-2.0
"""Whole corpora on a Dask cluster: ``fxc.dask.process_files``.

Each worker process compiles the graph once (per sample rate and channel count) and runs its
files through the same code as ``fxc run --out-dir`` (corpus/ in the C++ library), so the
outputs are the command's bytes. Outputs are written atomically (a pending name, then a
rename): a worker killed mid-file leaves no partial output, and Dask runs its files again
elsewhere. See docs/corpora.md.
"""
import atexit
import math
import numbers
import os
import socket
import threading

from . import _core
from .errors import Error
from .program import Program, _anchored, _check_whole, _sample_type, _source_of, _setting

_runners = {}
_runners_lock = threading.Lock()


def _runner(key):
    """This process's CorpusRunner for a graph and its options: made once per worker."""
    with _runners_lock:
        runner = _runners.get(key)
        if runner is None:
            source, name, fs, dtype, settings, cache_dir, subtype, skip_existing, block = key
            runner = _core.CorpusRunner(source, name, fs, dtype, list(settings), cache_dir, subtype, skip_existing,
                                        block)
            _runners[key] = runner
        return runner


def _row(path, outputs, status, message):
    """A row of a file no worker finished; "worker" is "" where the task failed as a whole."""
    return {"input": path, "outputs": list(outputs), "status": status, "message": message, "warnings": "",
            "frames": 0, "sample_rate": 0.0, "channels": 0, "peak": 0.0, "seconds": 0.0, "worker": ""}


def _absolute(path):
    """`path` from the client's working directory, not normalised: `{dir}/..` in a pattern
    must go up from the filled-in directory, as ``fxc run -o PATTERN`` takes it."""
    path = os.fsdecode(path)
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _decoded(row):
    """A manifest row from the native runner: its paths and messages arrive as bytes."""
    row["input"] = os.fsdecode(row["input"])
    row["outputs"] = [os.fsdecode(o) for o in row["outputs"]]
    row["message"] = row["message"].decode("utf-8", "replace")
    row["warnings"] = row["warnings"].decode("utf-8", "replace")
    return row


def _process(key, files):
    """Runs on a worker: one row per file, whatever happens to any one of them."""
    runner = _runner(key)
    rows = []
    for path, relative_dir, outputs in files:
        try:
            row = _decoded(runner.process(os.fsencode(path), os.fsencode(relative_dir),
                                          [os.fsencode(o) for o in outputs]))
        except Exception as e:  # an fxc bug or no memory: this file fails, the others go on
            row = _row(path, outputs, "failed", f"{type(e).__name__}: {e}")
        row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
        rows.append(row)
    return rows


@atexit.register
def _forget_runners():
    with _runners_lock:
        _runners.clear()


def process_files(graph, files, out_dir=None, pattern=None, client=None, *, fs=None, dtype="float64",
                  subtype=None, skip_existing=False, files_per_task=8, cache_dir="", block=None, **params):
    """Runs every file through `graph` on a Dask cluster and returns the manifest: one dict per
    input with ``input``, ``outputs``, ``status`` ("written", "skipped" or "failed"),
    ``message``, ``warnings``, ``frames``, ``sample_rate``, ``channels``, ``peak``, ``seconds`` and ``worker``.

    graph: a Program (its source and current parameter values), .fx text or a .fx path.
    files: paths, directories and glob patterns, as ``fxc run -i`` takes them (expanded here,
    on the client: the workers must see the same paths, e.g. a shared file system).
    out_dir / pattern: where outputs go, as ``fxc run --out-dir`` / ``-o PATTERN``.
    Paths are made absolute here, since the workers' working directories are not the client's.
    client: a ``distributed.Client``; None: the current one (``distributed.get_client()``).
    fs: force a sample rate (None: each file's own); dtype: the computation's sample type
    ("float64" as ``fxc run`` computes by default). block: None runs each file whole; N runs it
    through a Processor in blocks of N frames, read and written a chunk at a time, as
    ``fxc run --block N`` does (the same bytes), so that a worker's memory does not grow with
    its file. A file's failure is a row with status
    "failed"; it does not stop the others, nor does a task that fails as a whole (its files
    are rows with status "failed"). Rows come in the order of the sorted file list.
    """
    import distributed

    if (out_dir is None) == (pattern is None):
        raise Error("give exactly one of out_dir and pattern", code="fxc-usage")
    # Checked here, once: on the workers each file would fail with the same message.
    if fs is not None and (isinstance(fs, bool) or not isinstance(fs, numbers.Real)
                           or not (math.isfinite(fs) and fs > 0)):
        raise Error(f"fs must be a positive number of Hz (or None: each file's own rate), got {fs!r}",
                    code="fxc-usage")
    dtype = _sample_type(dtype, code="fxc-usage")
    _check_whole("files_per_task", files_per_task, 1, 2**31)
    if block is not None:
        _check_whole("block", block, 1, 2**31)
    if isinstance(graph, Program):
        values = {p["name"]: p["value"] for p in graph.params}
        params = {**values, **params}
        source, name = graph.source, graph._import_name
    else:
        source, name = _source_of(graph)
        name = _anchored(name)  # the workers' directories are not the client's
    settings = tuple(_setting(k, v) for k, v in params.items())
    if isinstance(files, (str, bytes, os.PathLike)):
        files = [files]
    # Absolute paths: the workers' working directories are not the client's. An out_dir inside
    # an input directory holds outputs, not inputs (as for fxc run --out-dir).
    within = [os.fsencode(os.path.abspath(out_dir))] if out_dir is not None else []
    listed = [(os.fsdecode(p), os.fsdecode(d))
              for p, d in _core.list_inputs([os.fsencode(os.path.abspath(f)) for f in files], within)]
    info = _core.inspect_source(source, name, list(settings))
    if len(info["inputs"]) != 1:
        raise Error(f"a corpus run takes a graph with one input; this one has {len(info['inputs'])}", code="fxc-usage")
    output_names = [n for n, _ in info["outputs"]]
    out_dir = os.fsencode(_absolute(out_dir)) if out_dir is not None else b""
    pattern = os.fsencode(_absolute(pattern)) if pattern is not None else b""
    # Every output named before anything runs, with fxc run's checks (two inputs to one
    # output, an output over its input).
    named = _core.all_output_paths(out_dir, pattern, [(os.fsencode(p), os.fsencode(d)) for p, d in listed],
                                   output_names)
    jobs = [(p, d, [os.fsdecode(o) for o in outs]) for (p, d), outs in zip(listed, named)]

    key = (source, name, float(fs or 0), dtype, settings, os.fspath(cache_dir), subtype, bool(skip_existing),
           int(block or 0))
    client = client or distributed.get_client()
    step = int(files_per_task)
    chunks = [jobs[i:i + step] for i in range(0, len(jobs), step)]
    futures = client.map(_process, [key] * len(chunks), chunks, pure=False)
    index = {f.key: k for k, f in enumerate(futures)}
    results = [None] * len(chunks)
    try:
        for future in distributed.as_completed(futures):
            k = index[future.key]
            try:
                results[k] = future.result()
            except Exception as e:  # the task itself failed (a worker killed again and again)
                results[k] = [_row(p, outs, "failed", f"{type(e).__name__}: {e}") for p, _, outs in chunks[k]]
    finally:
        # What killed workers left beside this run's outputs (corpus/abandoned_pending.h).
        _core.remove_abandoned_pending([os.fsencode(o) for _, _, outs in jobs for o in outs])
    return [row for rows in results for row in rows]
