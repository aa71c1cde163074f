#!/usr/bin/env bash
# ms/step of the same emitted train step on netspec's cpu executor, XLA's CPU compiler (PJRT
# plugin) and IREE llvm-cpu, side by side (docs/performance.md, "Engines"). Needs
# scripts/install-engines.sh. Usage: bench/engines.sh [NETSPEC] [STEPS]  (default build/netspec, 10)
set -uo pipefail
ns=${1:-build/netspec}
steps=${2:-10}
printf '%-16s %10s %10s %10s\n' net cpu xla iree
for net in mlp mnist-cnn resnet18-cifar vit-cifar-tiny; do
  row=$(printf '%-16s' "$net")
  for b in cpu xla iree; do
    ms=$("$ns" bench "$net" --backend "$b" --steps "$steps" --warmup 2 2>/dev/null |
      sed -n 's/^ms\/step median \([0-9.]*\).*/\1/p')
    row+=$(printf ' %10s' "${ms:-fail}")
  done
  echo "$row"
done
