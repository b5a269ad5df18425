# SPDX-License-Identifier: Apache-2.0
"""Every ```python block of docs/python.md and the README runs as written (in a directory
holding a small corpus/ of WAV files for the Dask example)."""
import os
import re

import numpy as np
import pytest
import scipy.io.wavfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BLOCKS = [block for doc in ("docs/python.md", "README.md")
          for block in re.findall(r"```python\n(.*?)```", open(os.path.join(ROOT, doc), encoding="utf-8").read(), re.S)]


def test_the_doc_has_examples():
    assert len(BLOCKS) >= 9


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_example_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.makedirs("corpus/a")
    rng = np.random.default_rng(index)
    for name in ("corpus/one.wav", "corpus/a/two.wav"):
        scipy.io.wavfile.write(name, 48000, (0.1 * rng.standard_normal((4800, 2))).astype(np.float32))
    exec(compile(BLOCKS[index], f"python block {index}", "exec"), {"__name__": "__main__"})  # as a script runs
    if "process_files" in BLOCKS[index]:
        assert sorted(os.listdir("out")) == ["a", "one.wav"]
