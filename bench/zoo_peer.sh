#!/bin/bash
# The zoo's ImageNet-style nets beside torchvision's models under torch 2.x eager (issue 42, beyond
# its peer nets): a train step (SGD-momentum, 1000 classes) or an inference call (eval mode under
# torch.inference_mode()) of the same architecture, netspec and torch alternating per round, each
# side with its own defaults (as bench/peer2.sh). Prints both sides' ms per round and the median
# of the per-round ratios.
#   bench/zoo_peer.sh [BUILD_DIR] [train|infer] [ZOO:TORCHVISION ...]
#   env: VENV (torch 2 venv, ../shared/peers/torch2_install.sh), ROUNDS=2, STEPS=6,
#        train: B=16 R=96 (batch, input R x R; swin-tiny:swin_t needs R=224, its windows of 7
#        must tile the maps); infer: BATCHES="1 16" (224x224)
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
what=${2:-train}
shift 2 2>/dev/null || shift $#
venv=${VENV:-$HOME/.cache/netspec-torch2}
[ -x "$build/netspec" ] || { echo "no $build/netspec (build it first)" >&2; exit 2; }
[ -x "$venv/bin/python" ] || { echo "no torch 2 venv at $venv (../shared/peers/torch2_install.sh)" >&2; exit 2; }
rounds=${ROUNDS:-2} steps=${STEPS:-6}
pairs=${*:-mobilenet-v2:mobilenet_v2 efficientnet-b0:efficientnet_b0 shufflenet-v2:shufflenet_v2_x1_0
  mobilenet-v3-large:mobilenet_v3_large mobilenet-v3-small:mobilenet_v3_small densenet121:densenet121
  convnext-tiny:convnext_tiny resnet18:resnet18 squeezenet:squeezenet1_0
  efficientnet-v2-s:efficientnet_v2_s}
num() { sed -n "s/.*$1 \([0-9.]*\).*/\1/p" | head -1; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
if grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX; fi
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cpus);" \
  "$(date -u '+%Y-%m-%d %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $pairs; do
  ns=${p%%:*} tv=${p##*:}
  for b in $([ "$what" = infer ] && echo "${BATCHES:-1 16}" || echo "${B:-16}"); do
    a=() t=() r=()
    for ((i = 0; i < rounds; i++)); do
      if [ "$what" = infer ]; then
        a+=("$("$build/netspec" bench "$ns" --module eval --batch "$b" --steps "$steps" \
          --warmup 2 2>&1 | num 'eval ms\/call median')")
        t+=("$("$venv/bin/python" "$here/torch2_infer_peer.py" "torchvision.$tv" --batch "$b" \
          --steps "$steps" --warmup 2 2>/dev/null | num 'ms\/call median')")
      else
        in=3x${R:-96}x${R:-96}
        a+=("$("$build/netspec" bench "$ns" --batch "$b" --input "$in" --optimizer sgd \
          --steps "$steps" --warmup 2 2>&1 | num 'ms\/step median')")
        t+=("$("$venv/bin/python" "$here/torchvision_peer.py" "$tv" --input "$in" --batch "$b" \
          --steps "$steps" --warmup 2 --threads "$(nproc)" 2>&1 | num 'ms\/step median')")
      fi
      r+=("$(awk -v x="${a[i]}" -v y="${t[i]}" 'BEGIN {print (y > 0 ? x / y : "nan")}')")
    done
    printf '%-20s %-4s netspec %-16s torch %-16s %s\n' "$ns" "b$b" "${a[*]}" "${t[*]}" \
      "$(printf '%s\n' "${r[@]}" | median | awk '{printf "%.2fx", $1}')"
  done
done
