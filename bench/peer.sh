#!/bin/bash
# netspec's train step beside the PyTorch peer (../shared/peers/run.sh), same model, batch and
# optimizer, in the same run; prints both medians and their ratio. The machine is shared and
# noisy: only ratios measured back to back mean anything, so each pair is run ROUNDS times
# (netspec, then the peer) and the medians of the per-round medians are compared.
#   bench/peer.sh [BUILD_DIR] [mlp|cnn|resnet18|vit|all]     (env: STEPS=30 ROUNDS=1)
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build/cpu}
which=${2:-all}
peer=${PEER:-$root/../shared/peers/run.sh}
[ -x "$build/netspec" ] || { echo "no $build/netspec (build it first)" >&2; exit 2; }
[ -f "$peer" ] || peer=/work/shared/peers/run.sh
steps=${STEPS:-30}
rounds=${ROUNDS:-1}

# peer model -> netspec spec, batch, optimizer (the peer's fixed settings).
spec_for() {
  case $1 in
    mlp) echo "mlp 128 adam" ;;
    cnn) echo "mnist-cnn 128 adam" ;;  # the zoo mnist-cnn is the peer's cnn (conv-BN x4)
    resnet18) echo "resnet18-cifar 32 sgd" ;;
    vit) echo "vit-cifar-tiny 32 adamw" ;;
  esac
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

models=$which
[ "$which" = all ] && models="mlp cnn resnet18 vit"
printf '%-9s %-28s %10s %10s %7s %9s\n' model netspec-spec "netspec" "pytorch" ratio "RSS MiB"
for m in $models; do
  read -r spec batch opt <<<"$(spec_for "$m")"
  if ! "$build/netspec" bench "$spec" --steps 1 --warmup 0 --batch 1 >/dev/null 2>&1; then
    printf '%-9s %-28s skipped (netspec cannot build it yet)\n' "$m" "$(basename "$spec")"
    continue
  fi
  ns=() pt=() rss=""
  for ((r = 0; r < rounds; r++)); do
    out=$("$build/netspec" bench "$spec" --batch "$batch" --optimizer "$opt" --steps "$steps" --warmup 5)
    ns+=("$(sed -n 's/.*ms\/step median \([0-9.]*\).*/\1/p' <<<"$out")")
    rss=$(sed -n 's/.*max RSS \([0-9.]*\) MiB.*/\1/p' <<<"$out")
    pout=$(STEPS=$steps bash "$peer" "$m" 2>&1)
    pt+=("$(sed -n 's/.*ms\/step median *\([0-9.]*\).*/\1/p' <<<"$pout")")
  done
  a=$(printf '%s\n' "${ns[@]}" | median)
  b=$(printf '%s\n' "${pt[@]}" | median)
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2fx", a / b}')
  printf '%-9s %-28s %10s %10s %7s %9s\n' "$m" "$(basename "$spec") b$batch $opt" "$a" "$b" "$ratio" "$rss"
  [ "$rounds" -gt 1 ] && echo "          rounds netspec: ${ns[*]}  pytorch: ${pt[*]}"
done
