#!/usr/bin/env bash
# Prepares what bench/gpu/check.sh carries to the GPU machine: a portable netspec (no
# -march=native: the GPU host's CPU may lack this machine's AVX-512/AMX) built with the xla
# backend, plus the Debian shared libraries it needs that are not glibc's, in build/gpu-pack
# (bin/netspec, lib/*.so*). Must stay under 64 MiB (what travels with one device call).
# Usage: bench/gpu/pack.sh [BUILD_DIR]   (default build-gpu; reuses build/engines' PJRT header)
set -euo pipefail
cd "$(dirname "$0")/../.."
bdir=${1:-build-gpu}
engines=${NETSPEC_ENGINES_DIR:-$PWD/build/engines}
[[ -f $engines/include/xla/pjrt/c/pjrt_c_api.h ]] ||
  { echo "pack: no PJRT header under $engines (scripts/install-engines.sh first)" >&2; exit 1; }
if [[ ${PACK_REUSE:-0} != 1 ]]; then
  cmake -S . -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNETSPEC_NATIVE=OFF \
    -DNETSPEC_TESTS=OFF -DNETSPEC_ENGINES_DIR="$engines" >/dev/null
  nice cmake --build "$bdir" -j 2 --target netspec
fi
out=build/gpu-pack
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$bdir/netspec" "$out/bin/"
strip "$out/bin/netspec"
# Every resolved dependency except glibc (the GPU host has its own); libstdc++ travels, in case
# the host's is older than Debian 12's.
ldd "$bdir/netspec" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case $(basename "$lib") in
    libc.so.*|libm.so.*|ld-linux*|libdl.so.*|libpthread.so.*|librt.so.*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
size=$(du -sm "$out" | cut -f1)
echo "pack: $out is ${size} MiB ($(ls "$out/lib" | tr '\n' ' '))"
(( size < 64 )) || { echo "pack: over the 64 MiB a device call carries" >&2; exit 1; }
