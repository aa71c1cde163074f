#!/bin/bash
# bf16 mixed precision beside f32, netspec and PyTorch CPU autocast(bfloat16), in one run (the
# machine is shared and noisy: only ratios measured side by side mean anything). Per model:
# netspec f32, netspec bf16 (vit: bf16=true; resnet18: + bf16Conv=true), PyTorch f32 and
# PyTorch autocast bf16 (bench/torch_autocast_peer.py on ../shared/peers' models and settings).
#   bench/bf16_peer.sh [BUILD_DIR] [vit|resnet18|mlp|cnn|all]   (env: STEPS=20)
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
which=${2:-all}
steps=${STEPS:-20}
peers=${PEERS:-$root/../shared/peers}
[ -d "$peers" ] || peers=/work/shared/peers
[ -x "$build/netspec" ] || { echo "no $build/netspec (build it first)" >&2; exit 2; }
# The peer's fair settings (../shared/peers/run.sh): OpenBLAS kernels, glibc malloc tunables.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX; fi
export OPENBLAS_NUM_THREADS=1
tun=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296

spec_for() {
  case $1 in
    mlp) echo "mlp 128 adam bf16=true" ;;
    cnn) echo "mnist-cnn 128 adam bf16=true,bf16Conv=true" ;;
    resnet18) echo "resnet18-cifar 32 sgd bf16=true,bf16Conv=true" ;;
    vit) echo "vit-cifar-tiny 32 adamw bf16=true" ;;
  esac
}
ns_ms() { sed -n 's/.*ms\/step median \([0-9.]*\).*/\1/p'; }
pt_ms() { sed -n 's/.*ms\/step median *\([0-9.]*\).*/\1/p'; }

models=$which
[ "$which" = all ] && models="vit resnet18"
lscpu | sed -n 's/^Model name: *//p'
printf '%-9s %-30s %9s %9s %7s %9s %9s %7s\n' model netspec-spec ns-f32 ns-bf16 ratio pt-f32 pt-bf16 ratio
for m in $models; do
  read -r spec batch opt sets <<<"$(spec_for "$m")"
  setargs=()
  for s in ${sets//,/ }; do setargs+=(--set "$s"); done
  common=(bench "$spec" --batch "$batch" --optimizer "$opt" --steps "$steps" --warmup 3)
  a=$("$build/netspec" "${common[@]}" | ns_ms)
  b=$("$build/netspec" "${common[@]}" "${setargs[@]}" | ns_ms)
  c=$(GLIBC_TUNABLES=$tun /usr/bin/python3 "$here/torch_autocast_peer.py" "$m" --f32 --steps "$steps" \
        --threads "$(nproc)" --peer-dir "$peers" | pt_ms)
  d=$(GLIBC_TUNABLES=$tun /usr/bin/python3 "$here/torch_autocast_peer.py" "$m" --steps "$steps" \
        --threads "$(nproc)" --peer-dir "$peers" | pt_ms)
  r1=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2fx", a / b}')
  r2=$(awk -v a="$c" -v b="$d" 'BEGIN {printf "%.2fx", a / b}')
  printf '%-9s %-30s %9s %9s %7s %9s %9s %7s\n' "$m" "$spec b$batch $opt" "$a" "$b" "$r1" "$c" "$d" "$r2"
done
