#!/usr/bin/env bash
# Configures netspec (Release, -O3 -march=native unless -DNETSPEC_NATIVE=OFF) into BUILD_DIR
# (default: build) and builds the `netspec` binary and its libraries; scripts/test.sh builds the
# tests. Extra arguments go to cmake's configure step.
#   scripts/build.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target netspec
