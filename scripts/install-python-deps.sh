#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the Python package's tests and peers use, from Debian 12's packages (docs/python.md):
# a venv with --system-site-packages then sees numpy, scipy, torch, dask and distributed.
# Needs scripts/install-deps.sh first (the C++ build's dependencies). Idempotent.
set -euo pipefail

packages=(
  python3-venv python3-numpy python3-scipy
  python3-torch                    # fxc.torch and the tensor tests
  python3-dask python3-distributed # fxc.dask and its LocalCluster tests
)

bash "$(dirname "$0")/install-packages.sh" "${packages[@]}"
echo "fxc Python dependencies: all installed"
