# SPDX-License-Identifier: Apache-2.0
"""Whole corpora on a Dask cluster: ``fxc.dask.process_files``.

Each worker process compiles the graph once (per sample rate and channel count) and runs its
files through the same code as ``fxc run --out-dir`` (corpus/ in the C++ library), so the
outputs are the command's bytes. Outputs are written atomically (a pending name, then a
rename): a worker killed mid-file leaves no partial output, and Dask runs its files again
elsewhere. See docs/corpora.md.
"""
import glob
import os
import socket
import threading

from . import _core
from .errors import Error
from .program import Program, _source_of, _setting

_runners = {}
_runners_lock = threading.Lock()


def _runner(key):
    """This process's CorpusRunner for a graph and its options: made once per worker."""
    with _runners_lock:
        runner = _runners.get(key)
        if runner is None:
            source, name, fs, dtype, settings, cache_dir, subtype, skip_existing = key
            runner = _core.CorpusRunner(source, name, fs, dtype, list(settings), cache_dir, subtype, skip_existing)
            _runners[key] = runner
        return runner


def _process(key, files):
    runner = _runner(key)
    rows = []
    for path, relative_dir, outputs in files:
        row = runner.process(path, relative_dir, outputs)
        row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
        rows.append(row)
    return rows


def _remove_stale_pending(outputs):
    """Pending files a killed worker left beside outputs that are now complete."""
    for out in outputs:
        directory, name = os.path.split(out)
        for stale in glob.glob(os.path.join(glob.escape(directory or "."), ".fxc-pending-*-" + glob.escape(name))):
            try:
                os.remove(stale)
            except OSError:
                pass


def process_files(graph, files, out_dir=None, pattern=None, client=None, *, fs=None, dtype="float64",
                  subtype=None, skip_existing=False, files_per_task=8, cache_dir="", **params):
    """Runs every file through `graph` on a Dask cluster and returns the manifest: one dict per
    input with ``input``, ``outputs``, ``status`` ("written", "skipped" or "failed"),
    ``message``, ``warnings``, ``frames``, ``sample_rate``, ``channels``, ``peak``, ``seconds`` and ``worker``.

    graph: a Program (its source and current parameter values), .fx text or a .fx path.
    files: paths, directories and glob patterns, as ``fxc run -i`` takes them (expanded here,
    on the client: the workers must see the same paths, e.g. a shared file system).
    out_dir / pattern: where outputs go, as ``fxc run --out-dir`` / ``-o PATTERN``.
    client: a ``distributed.Client``; None: the current one (``distributed.get_client()``).
    fs: force a sample rate (None: each file's own); dtype: the computation's sample type
    ("float64" as ``fxc run`` computes by default). A file's failure is a row with status
    "failed"; it does not stop the others.
    """
    import distributed

    if (out_dir is None) == (pattern is None):
        raise Error("give exactly one of out_dir and pattern", code="fxc-usage")
    if isinstance(graph, Program):
        values = {p["name"]: p["value"] for p in graph.params}
        params = {**values, **params}
        source, name = graph.source, "<program>"
    else:
        source, name = _source_of(graph)
    settings = tuple(_setting(k, v) for k, v in params.items())
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    listed = _core.list_inputs([os.fspath(f) for f in files])
    info = _core.inspect_source(source, name, list(settings))
    if len(info["inputs"]) != 1:
        raise Error(f"a corpus run takes a graph with one input; this one has {len(info['inputs'])}", code="fxc-usage")
    output_names = [n for n, _ in info["outputs"]]
    jobs, seen = [], {}
    for path, relative_dir in listed:
        outs = _core.output_paths(os.fspath(out_dir or ""), pattern or "", path, relative_dir, output_names)
        for o in outs:
            key = os.path.abspath(o)
            if key in seen:
                raise Error(f"'{seen[key]}' and '{path}' would both be written to '{o}'", code="fxc-usage")
            seen[key] = path
        jobs.append((path, relative_dir, outs))

    key = (source, name, float(fs or 0), dtype, settings, os.fspath(cache_dir), subtype, bool(skip_existing))
    client = client or distributed.get_client()
    step = max(1, int(files_per_task))
    chunks = [jobs[i:i + step] for i in range(0, len(jobs), step)]
    futures = client.map(_process, [key] * len(chunks), chunks, pure=False)
    manifest = [row for rows in client.gather(futures) for row in rows]
    _remove_stale_pending([o for _, _, outs in jobs for o in outs])
    return manifest
