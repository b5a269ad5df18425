#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python package as a user installs it (docs/python.md): `pip install .` from this checkout
# into a fresh venv (build/pyenv) that sees Debian's numpy, scipy, torch and dask, then its
# pytest suite against the installed package and the `fxc` command pip put beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-python-deps.sh
rm -rf build/pyenv
python3 -m venv --system-site-packages build/pyenv
build/pyenv/bin/pip install --quiet pytest
build/pyenv/bin/pip install --quiet .
# From python/tests, so that `import fxc` finds the installed package, not python/fxc.
cd python/tests
PATH="$PWD/../../build/pyenv/bin:$PATH" ../../build/pyenv/bin/python -m pytest -q -p no:cacheprovider
