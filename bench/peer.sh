#!/bin/bash
# netspec's train step beside the PyTorch peer (../shared/peers/run.sh), same model, batch and
# optimizer, in the same run; prints both medians and their ratio. The machine is shared and
# noisy: only ratios measured back to back mean anything, so each pair is run ROUNDS times
# (netspec, then the peer) and the medians of the per-round medians are compared. resnet50 (224x224,
# batch 16, SGD-momentum) runs beside torchvision's resnet50 (bench/torchvision_peer.py, the same
# fair settings as run.sh) with STEPS_R50 steps. Max RSS of both sides comes from /usr/bin/time
# (Debian's `time`; "?" without it). With ROUNDS > 1 each round's netspec/PyTorch ratio and their
# median are printed too (the pair of one round runs back to back, free of drift between rounds).
# mamba-lm (batch 32, Adam) runs beside bench/torch_mamba_peer.py with STEPS_MAMBA steps.
#   bench/peer.sh [BUILD_DIR] [mlp|cnn|resnet18|vit|resnet50|mamba|all]
#   (env: STEPS=30 STEPS_R50=8 STEPS_MAMBA=8 ROUNDS=1)
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
    resnet50) echo "resnet50 16 sgd" ;;  # torchvision's resnet50, 224x224, momentum 0.9 both
    mamba) echo "mamba-lm 32 adam" ;;    # bench/torch_mamba_peer.py (mamba_ssm's CPU scan)
  esac
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# The peer of a model, run with run.sh's fair settings; prints its own "ms/step median" line.
run_peer() {
  if [ "$1" = resnet50 ]; then
    if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo; then
      export OPENBLAS_CORETYPE=SkylakeX  # never on AVX2-only CPUs (SIGILL): see run.sh
    fi
    OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive \
      GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296 \
      /usr/bin/python3 "$here/torchvision_peer.py" resnet50 --input 3x224x224 --batch 16 \
      --steps "$2" --warmup 2 --threads "$(nproc)"
  elif [ "$1" = mamba ]; then
    if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo; then
      export OPENBLAS_CORETYPE=SkylakeX
    fi
    OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive \
      GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296 \
      /usr/bin/python3 "$here/torch_mamba_peer.py" --batch 32 --steps "$2" --warmup 2 \
      --threads "$(nproc)"
  else
    STEPS=$2 bash "$peer" "$1"
  fi
}
# Runs "$@" under /usr/bin/time when it exists; the last line of the output is then "maxrss KiB".
timed() {
  if [ -x /usr/bin/time ]; then /usr/bin/time -f 'maxrss %M' "$@"; else "$@"; echo "maxrss ?"; fi
}

models=$which
[ "$which" = all ] && models="mlp cnn resnet18 vit resnet50 mamba"
# Which CPU this table is from (issue 23: every row names its CPU), and any ISA caps in effect.
field() { grep -m1 "^$1[[:space:]]*:" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'; }
cpu_model="$(field 'model name'), family $(field 'cpu family') model $(field model)"
grep -qw avx512f /proc/cpuinfo && isa=avx512 || isa=avx2
echo "cpu: $cpu_model ($isa, $(nproc) cpus); caps: ONEDNN_MAX_CPU_ISA=${ONEDNN_MAX_CPU_ISA:-none}" \
  "ATEN_CPU_CAPABILITY=${ATEN_CPU_CAPABILITY:-none}; $(date -u '+%Y-%m-%d %H:%M UTC')"
printf '%-9s %-28s %10s %10s %7s %9s %9s\n' model netspec-spec "netspec" "pytorch" ratio \
  "RSS MiB" "peer RSS"
for m in $models; do
  read -r spec batch opt <<<"$(spec_for "$m")"
  if ! "$build/netspec" bench "$spec" --steps 1 --warmup 0 --batch 1 >/dev/null 2>&1; then
    printf '%-9s %-28s skipped (netspec cannot build it yet)\n' "$m" "$(basename "$spec")"
    continue
  fi
  ns=() pt=() rss="" prss=""
  n=$steps w=5
  [ "$m" = resnet50 ] && n=${STEPS_R50:-8} w=2
  [ "$m" = mamba ] && n=${STEPS_MAMBA:-8} w=2
  for ((r = 0; r < rounds; r++)); do
    out=$("$build/netspec" bench "$spec" --batch "$batch" --optimizer "$opt" --steps "$n" --warmup "$w")
    ns+=("$(sed -n 's/.*ms\/step median \([0-9.]*\).*/\1/p' <<<"$out")")
    rss=$(sed -n 's/.*max RSS \([0-9.]*\) MiB.*/\1/p' <<<"$out")
    pout=$(timed bash -c "$(declare -f run_peer); here=$here peer=$peer run_peer $m $n" 2>&1)
    pt+=("$(sed -n 's/.*ms\/step median *\([0-9.]*\).*/\1/p' <<<"$pout")")
    prss=$(sed -n 's/^maxrss \([0-9?]*\)$/\1/p' <<<"$pout" | awk '{print $1 == "?" ? "?" : sprintf("%.1f", $1 / 1024)}')
  done
  a=$(printf '%s\n' "${ns[@]}" | median)
  b=$(printf '%s\n' "${pt[@]}" | median)
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2fx", a / b}')
  printf '%-9s %-28s %10s %10s %7s %9s %9s\n' "$m" "$(basename "$spec") b$batch $opt" "$a" "$b" "$ratio" "$rss" "$prss"
  if [ "$rounds" -gt 1 ]; then
    # Each round's pair runs back to back, so its ratio is free of the host's drift between
    # rounds; their median is the steadier number on a noisy machine.
    per=$(for ((r = 0; r < rounds; r++)); do awk -v a="${ns[r]}" -v b="${pt[r]}" 'BEGIN {print a / b}'; done)
    echo "          rounds netspec: ${ns[*]}  pytorch: ${pt[*]}  ratio per round:" \
      "$(printf '%s\n' "$per" | awk '{printf "%.2f ", $1}')median $(printf '%s\n' "$per" | median | awk '{printf "%.2fx", $1}')"
  fi
done
