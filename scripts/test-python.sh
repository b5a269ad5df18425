#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python package as a user installs it (docs/python.md): `pip install .` from this checkout
# into a fresh venv (build/pyenv) that sees Debian's numpy, scipy, torch and dask, then its
# pytest suite against the installed package and the `fxc` command pip put beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-python-deps.sh
# Debian's own Python, whose site packages the apt packages above went into (another python3
# first on PATH, such as pyenv's, would not see them).
python=${PYTHON:-/usr/bin/python3}
rm -rf build/pyenv
"$python" -m venv --system-site-packages build/pyenv
build/pyenv/bin/pip install --quiet pytest
build/pyenv/bin/pip install --quiet .
# From python/tests, so that `import fxc` finds the installed package, not python/fxc.
cd python/tests
# FXC_PYTHON_TESTS_STRICT: a missing torch or distributed fails the tests instead of skipping them.
FXC_PYTHON_TESTS_STRICT=1 PATH="$PWD/../../build/pyenv/bin:$PATH" ../../build/pyenv/bin/python -m pytest -q -p no:cacheprovider
