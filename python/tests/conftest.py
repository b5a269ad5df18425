# SPDX-License-Identifier: Apache-2.0
import os
import shutil

import numpy as np
import pytest

import fxc

EQ = """input x
fc = 80 Hz in [20 Hz, 500 Hz]
output x | butter(4, fc, highpass) | peaking(3 kHz, 1.0, 4 dB)
"""


def optional_module(name):
    """`name` imported, or the calling test module skipped, unless FXC_PYTHON_TESTS_STRICT is set
    (CI: scripts/test-python.sh), where a missing module fails instead of hiding the tests."""
    if os.environ.get("FXC_PYTHON_TESTS_STRICT"):
        return __import__(name)
    return pytest.importorskip(name)


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    # Each test session compiles into its own kernel cache, not the user's.
    monkeypatch.setenv("FXC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture
def noise():
    return np.random.default_rng(7).standard_normal((2, 48000))


@pytest.fixture(scope="session")
def fxc_cli():
    """The fxc command `pip install .` put beside this Python (or $FXC_CLI)."""
    path = os.environ.get("FXC_CLI") or shutil.which("fxc")
    if not path:
        pytest.fail("the fxc command is not installed (pip install . installs it; or set FXC_CLI)")
    return path
