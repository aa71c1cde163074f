#!/usr/bin/env bash
# Regenerates the golden StableHLO of tests/golden/ (checked by tests/emit/golden_test.cpp):
# the train_step module of linear, mlp and mnist-cnn at batch 8, 10 classes, each net's default
# training settings, written by the built `netspec emit` with its manifest beside it.
# Usage: scripts/regen-golden.sh BUILD_DIR   (then review `git diff tests/golden`)
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR (the build dir holding the netspec binary)" >&2
  exit 2
fi
bin="$1/netspec"
[[ -x "$bin" ]] || { echo "$0: $bin not found (build the netspec target first)" >&2; exit 2; }
here="$(cd "$(dirname "$0")/.." && pwd)"
out="$here/tests/golden"
mkdir -p "$out"
for net in linear mlp mnist-cnn; do
  "$bin" emit "$net" --module train_step --batch 8 --classes 10 -o "$out/$net.train_step.mlir"
done
ls -l "$out"
echo "review the changes with: git diff --stat tests/golden && git diff tests/golden"
