#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every system dependency of fxc from Debian 12's packages. Idempotent: safe to re-run.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  llvm-19-dev                      # CPU backend: IRBuilder, ORC LLJIT (shared libLLVM)
  libboost-graph-dev               # IR edges and graph algorithms
  doctest-dev libbenchmark-dev     # tests, benchmarks
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libsndfile1-dev                  # audio files
  libssl-dev                       # SHA-256 (libcrypto)
  libcairo2-dev                    # fxc freqz plots
  python3 python3-scipy python3-numpy  # reference-vector generation only
)

bash "$(dirname "$0")/install-packages.sh" "${packages[@]}"
echo "fxc dependencies: all installed"
