#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Packs what scripts/gpu-check.sh runs on a GPU machine that has the NVIDIA driver and CUDA but
# neither LLVM nor this project's other libraries (the device tool's image): fxc and the test
# binaries built with FXC_STATIC_LLVM=ON in build-dev/, stripped, and every shared library they
# need beyond glibc and libstdc++, as .devbundle/bundle.tar.xz (about 22 MB).
#
#   bash scripts/make-gpu-bundle.sh     # then run scripts/gpu-check.sh there (docs/cuda.md)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DFXC_STATIC_LLVM=ON -DFXC_BUILD_BENCH=OFF \
  ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
cmake --build build-dev -j2 --target fxc fxc_unit_tests fxc_e2e_tests
stage=$(mktemp -d)
mkdir -p "$stage/bundle/bin" "$stage/bundle/lib"
cp build-dev/tools/fxc/fxc build-dev/tests/fxc_unit_tests build-dev/tests/e2e/fxc_e2e_tests "$stage/bundle/bin/"
strip "$stage/bundle/bin/"*
for binary in "$stage/bundle/bin/"*; do ldd "$binary" | awk '/=>/ {print $3}'; done | sort -u |
  grep -v -E '/(libc|libm|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' | xargs -I{} cp -L {} "$stage/bundle/lib/"
mkdir -p .devbundle
tar -C "$stage" -cf - bundle | xz -9 > .devbundle/bundle.tar.xz
rm -rf "$stage"
ls -l .devbundle/bundle.tar.xz
