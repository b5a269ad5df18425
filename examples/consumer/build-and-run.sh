#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs examples/consumer against an installed fxc, both ways a user would:
# (a) CMake's find_package(fxc), (b) a plain compiler command with pkg-config.
#
#   examples/consumer/build-and-run.sh PREFIX      e.g. PREFIX=$PWD/build/prefix
#
# PREFIX is what `cmake --install build --prefix PREFIX` was given. Fails on any error.
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 PREFIX" >&2
  exit 2
fi
prefix=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== find_package(fxc) with CMAKE_PREFIX_PATH=$prefix"
cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cmake"
"$work/cmake/fxc_consumer"   # CMake gives it an rpath to $prefix/lib

echo "== pkg-config fxc"
libdir=$prefix/lib
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs fxc)
echo "c++ -std=c++20 main.cpp $flags"
c++ -std=c++20 "$here/main.cpp" $flags -o "$work/fxc_consumer_pc"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/fxc_consumer_pc"
echo "consumer: OK"
