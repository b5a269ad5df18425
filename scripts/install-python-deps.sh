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

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "fxc Python dependencies: all installed"
