#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Wheels for the GPU machine's Python (3.12, torch 2.11 there: docs/cuda.md), which cannot
# fetch anything: TorchFX, a peer of bench/gpu_bench.py, and what it imports. They go to .whl/
# (ignored by git: add `/.whl/` to .git/info/exclude), carried with the bundle; scripts/gpu-check.sh
# installs them where it finds them. TorchFX 0.8.0's native kernels are built against torch
# 2.11: with another torch every call fails ("CUDA extension not compiled"), and the row says so.
#
#   bash scripts/fetch-gpu-wheels.sh     # then carry [".devbundle", ".whl"]
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
for package in torchfx==0.8.0 annotated-types==0.7.0; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform any -d .whl "$package"
done
ls -l .whl
