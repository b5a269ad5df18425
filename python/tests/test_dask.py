# SPDX-License-Identifier: Apache-2.0
"""fxc.dask.process_files on a real LocalCluster of worker processes."""
import filecmp
import os
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

from conftest import optional_module  # noqa: E402

distributed = optional_module("distributed")

import fxc  # noqa: E402
import fxc.dask  # noqa: E402

GRAPH = "input x\noutput x | butter(4, 100 Hz, highpass) | peaking(2 kHz, 1.0, 3 dB)\n"


def write_corpus(root, count, frames=4000, fs=16000):
    """`count` WAV files (16-bit PCM, mono and stereo) in nested directories, written with
    the fxc command itself from .npy noise."""
    rng = np.random.default_rng(11)
    os.makedirs(root, exist_ok=True)
    for k in range(count):
        d = os.path.join(root, f"set{k % 3}", f"part{k % 2}")
        os.makedirs(d, exist_ok=True)
        channels = 1 + k % 2
        np.save(os.path.join(d, f"take{k:03d}.npy"), 0.3 * rng.standard_normal((channels, frames)))
    return root


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        with distributed.Client(c) as client:
            yield client


def cli_outputs(fxc_cli, graph, corpus, out, *extra):
    subprocess.run([fxc_cli, "run", str(graph), "-i", str(corpus), "--out-dir", str(out), "--fs", "16000", *extra],
                   check=True, capture_output=True)


def same_tree(a, b):
    files = []
    for root, _, names in os.walk(a):
        for n in names:
            rel = os.path.relpath(os.path.join(root, n), a)
            assert filecmp.cmp(os.path.join(a, rel), os.path.join(b, rel), shallow=False), rel
            files.append(rel)
    return sorted(files)


def test_outputs_are_the_command_lines_bytes(tmp_path, cluster, fxc_cli):
    corpus = write_corpus(tmp_path / "corpus", 240)
    graph = tmp_path / "g.fx"
    graph.write_text(GRAPH)
    manifest = fxc.dask.process_files(graph, [corpus], out_dir=tmp_path / "out", client=cluster, fs=16000)
    assert len(manifest) == 240 and {m["status"] for m in manifest} == {"written"}
    assert len({m["worker"] for m in manifest}) == 2  # both workers took files
    assert all(m["frames"] == 4000 and m["peak"] > 0 for m in manifest)
    cli_outputs(fxc_cli, graph, corpus, tmp_path / "cli")
    assert len(same_tree(tmp_path / "cli", tmp_path / "out")) == 240


def test_block_streams_each_file_to_the_command_lines_block_bytes(tmp_path, cluster, fxc_cli):
    corpus = write_corpus(tmp_path / "corpus", 6, frames=70000)
    graph = tmp_path / "g.fx"
    graph.write_text(GRAPH)
    manifest = fxc.dask.process_files(graph, [corpus], out_dir=tmp_path / "out", client=cluster, fs=16000, block=777)
    assert {m["status"] for m in manifest} == {"written"}
    assert all(m["frames"] == 70000 and m["peak"] > 0 for m in manifest)
    cli_outputs(fxc_cli, graph, corpus, tmp_path / "cli", "--block", "777")
    assert len(same_tree(tmp_path / "cli", tmp_path / "out")) == 6
    # Both ran the corpus runner: each output is also a Processor's in blocks of 777, called
    # from here (another path through the library), and one whole call's within rounding.
    program = fxc.compile(GRAPH, fs=16000, dtype="float64")  # process_files' dtype, as fxc run's
    for m in manifest:
        x = np.load(m["input"])
        x = x.reshape(1, -1) if x.ndim == 1 else x
        p = program.processor(block=777, channels=x.shape[0])
        blocks = np.concatenate([p(np.ascontiguousarray(x[:, k:k + 777])) for k in range(0, x.shape[1], 777)], axis=1)
        got = np.load(m["outputs"][0])
        np.testing.assert_array_equal(got, blocks)
        whole = program(x)
        assert np.max(np.abs(got - whole)) <= 1e-12 * np.max(np.abs(whole))


def test_a_failing_file_is_a_row_and_the_others_go_on(tmp_path, cluster):
    corpus = write_corpus(tmp_path / "corpus", 12)
    (tmp_path / "corpus" / "broken.npy").write_bytes(b"not numpy")
    manifest = fxc.dask.process_files(GRAPH, [corpus], out_dir=tmp_path / "out", client=cluster, fs=16000)
    failed = [m for m in manifest if m["status"] == "failed"]
    assert len(failed) == 1 and "broken.npy" in failed[0]["message"]
    assert sum(m["status"] == "written" for m in manifest) == 12
    again = fxc.dask.process_files(GRAPH, [corpus], out_dir=tmp_path / "out", client=cluster, fs=16000,
                                   skip_existing=True)
    assert sum(m["status"] == "skipped" for m in again) == 12


def test_an_out_dir_inside_the_corpus_is_resumed_not_read(tmp_path, cluster):
    # Its outputs were listed as inputs by the run again, which then refused to replace them.
    corpus = write_corpus(tmp_path / "corpus", 6)
    out = tmp_path / "corpus" / "processed"
    first = fxc.dask.process_files(GRAPH, [corpus], out_dir=out, client=cluster, fs=16000)
    assert [m["status"] for m in first] == ["written"] * 6
    again = fxc.dask.process_files(GRAPH, [corpus], out_dir=out, client=cluster, fs=16000, skip_existing=True)
    assert [m["status"] for m in again] == ["skipped"] * 6


def test_a_graph_with_a_relative_import_runs_on_the_workers(tmp_path, cluster, monkeypatch):
    # The workers' directories are not the client's: the import is found beside the file, for
    # a path and for a Program compiled from it (every file failed with "cannot import").
    corpus = write_corpus(tmp_path / "corpus", 4)
    (tmp_path / "graphs").mkdir()
    (tmp_path / "graphs" / "lib.fx").write_text("fn half() {\n  return 0.5 * in\n}\n")
    (tmp_path / "graphs" / "main.fx").write_text('import "lib.fx"\ninput x\noutput x | half()\n')
    monkeypatch.chdir(tmp_path)
    for graph in ("graphs/main.fx", fxc.compile("graphs/main.fx", fs=16000)):
        out = tmp_path / ("out_path" if isinstance(graph, str) else "out_program")
        manifest = fxc.dask.process_files(graph, [corpus], out_dir=out, client=cluster, fs=16000)
        assert {m["status"] for m in manifest} == {"written"}, manifest[0]["message"]


def test_a_killed_worker_leaves_no_partial_output_and_the_run_completes(tmp_path, fxc_cli):
    corpus = write_corpus(tmp_path / "corpus", 300, frames=16000)
    out = tmp_path / "out"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        pids = list(client.run(os.getpid).values())
        result = {}
        run = threading.Thread(target=lambda: result.update(
            rows=fxc.dask.process_files(GRAPH, [corpus], out_dir=out, client=client, fs=16000, files_per_task=2)))
        run.start()
        while sum(len(f) for _, _, f in os.walk(out)) < 20:  # some outputs written: mid-run
            time.sleep(0.01)
        os.kill(pids[0], signal.SIGKILL)
        killed_at = sum(len(f) for _, _, f in os.walk(out))
        run.join(timeout=300)
    assert killed_at < 300, "the run ended before the worker was killed"
    rows = result["rows"]
    assert len(rows) == 300 and {r["status"] for r in rows} == {"written"}
    leftovers = [n for _, _, names in os.walk(out) for n in names if n.startswith(".")]  # pending or temporary
    assert leftovers == []
    graph = tmp_path / "g.fx"
    graph.write_text(GRAPH)
    cli_outputs(fxc_cli, graph, corpus, tmp_path / "cli")
    assert len(same_tree(tmp_path / "cli", out)) == 300


def test_outputs_over_inputs_are_refused_before_anything_runs(tmp_path, cluster):
    corpus = write_corpus(tmp_path / "corpus", 3)
    with pytest.raises(fxc.Error, match="input"):
        fxc.dask.process_files(GRAPH, [corpus], pattern=str(corpus) + "/{dir}/{name}", client=cluster, fs=16000)


def test_file_names_that_are_not_utf8_are_files_too(tmp_path, cluster):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    name = os.fsdecode(b"caf\xe9.npy")
    np.save(os.path.join(corpus, name), np.zeros((1, 100)))
    rows = fxc.dask.process_files(GRAPH, [corpus], out_dir=tmp_path / "out", client=cluster, fs=16000)
    assert [r["status"] for r in rows] == ["written"]
    assert os.path.exists(os.path.join(tmp_path, "out", name))


def test_only_this_outputs_stale_pending_files_are_removed(tmp_path):
    out = tmp_path / "a.npy"
    mine, other = tmp_path / ".fxc-pending-99-0-a.npy", tmp_path / ".fxc-pending-99-0-b-a.npy"
    temporary = tmp_path / "..fxc-pending-99-0-a.npy.tmp-Ab12Cd"
    for f in (mine, other, temporary):
        f.write_bytes(b"x")
    out.write_bytes(b"done")  # the output, written after the abandoned pending files
    later = tmp_path / ".fxc-pending-98-1-a.npy"
    later.write_bytes(b"x")  # a concurrent run's file in flight: newer than the output
    os.utime(later, ns=(os.stat(out).st_mtime_ns + 10**9,) * 2)
    assert fxc._core.remove_abandoned_pending([os.fsencode(out)]) == 2
    assert not mine.exists() and not temporary.exists() and other.exists() and later.exists()


@pytest.mark.parametrize("bad", [dict(fs=float("nan")), dict(fs=-1), dict(fs=True), dict(fs="48k"),
                                 dict(dtype="int8"), dict(files_per_task=0), dict(files_per_task=2.5),
                                 dict(block=0), dict(block=1.5)])
def test_bad_options_are_refused_before_any_task_is_sent(tmp_path, cluster, bad):
    corpus = write_corpus(tmp_path / "corpus", 2)
    out = tmp_path / "out"
    with pytest.raises(fxc.Error, match=next(iter(bad))):
        fxc.dask.process_files(GRAPH, [corpus], out_dir=out, client=cluster, **bad)
    assert not out.exists()


def test_a_pattern_with_dotdot_after_a_field_names_outputs_as_the_command_does(tmp_path, cluster, fxc_cli,
                                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    corpus = write_corpus(tmp_path / "corpus", 4)
    graph = tmp_path / "g.fx"
    graph.write_text(GRAPH)
    rows = fxc.dask.process_files(graph, ["corpus"], pattern="py/{dir}/../{stem}.wav", client=cluster, fs=16000)
    subprocess.run([fxc_cli, "run", str(graph), "-i", "corpus", "-o", "cli/{dir}/../{stem}.wav", "--fs", "16000"],
                   check=True, capture_output=True)
    # set0/part0/take000.npy goes to py/set0/take000.wav: up from the filled-in directory.
    assert {r["status"] for r in rows} == {"written"}
    assert sorted(os.path.relpath(r["outputs"][0], tmp_path / "py") for r in rows) == \
        sorted(os.path.relpath(os.path.join(root, n), tmp_path / "cli")
               for root, _, names in os.walk(tmp_path / "cli") for n in names)
    assert os.path.exists(tmp_path / "py" / "set0" / "take000.wav")


def test_files_of_a_task_that_fails_as_a_whole_are_rows_with_every_key(tmp_path):
    import dask
    corpus = write_corpus(tmp_path / "corpus", 200, frames=16000)
    out = tmp_path / "out"
    # No retry: the task of a killed worker fails as a whole (distributed's KilledWorker).
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as c, distributed.Client(c) as client:
        pids = client.run(os.getpid)  # worker address -> process id
        result = {}
        run = threading.Thread(target=lambda: result.update(
            rows=fxc.dask.process_files(GRAPH, [corpus], out_dir=out, client=client, fs=16000,
                                        files_per_task=100)))
        run.start()
        deadline = time.monotonic() + 120
        busy = []
        while run.is_alive() and time.monotonic() < deadline:  # a worker under way with its task
            busy = [w for w, keys in client.processing().items() if keys]
            if busy and sum(len(f) for _, _, f in os.walk(out)) >= 5:
                break
            time.sleep(0.01)
        assert busy and run.is_alive(), "no task was seen running"
        os.kill(pids[busy[0]], signal.SIGKILL)
        run.join(timeout=300)
    assert not run.is_alive()
    rows = result["rows"]
    keys = {"input", "outputs", "status", "message", "warnings", "frames", "sample_rate", "channels", "peak",
            "seconds", "worker"}
    assert len(rows) == 200 and all(set(r) == keys for r in rows)
    failed = [r for r in rows if r["status"] == "failed"]
    assert failed, "the killed worker's task did not fail"
    assert all(r["worker"] == "" and "KilledWorker" in r["message"] for r in failed)
    assert all(r["worker"] for r in rows if r["status"] == "written")
