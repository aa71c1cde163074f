#!/bin/bash
# netspec beside current PyTorch (issue 42): torch 2.x eager AND torch.compile, the same model,
# batch and optimizer, in one run. Each round runs netspec, eager and compile back to back; the
# table shows the medians, the median of the per-round ratios (steadier than a ratio of medians
# on a shared machine), max RSS of each, the first-step latency (netspec: spec to the first
# finished step; torch: the first call, where torch.compile compiles: cold in round 1, from a fresh
# inductor cache made for this run, and warm from that cache in the last round) and netspec's achieved
# GFLOP/s as a share of the machine's FMA peak (bench_peak, measured in the same run).
#   bench/peer2.sh [BUILD_DIR] [train|infer|all] [MODEL ...]
#   train models: mlp cnn resnet18 vit resnet50 mamba (default: all); infer: resnet18 resnet50 vit-tiny
#   env: VENV (torch 2 venv; default $HOME/.cache/netspec-torch2, made by
#        ../shared/peers/torch2_install.sh), ROUNDS=3, STEPS=20 (STEPS_R50=6, STEPS_MAMBA=8)
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
what=${2:-all}
shift 2 2>/dev/null || shift $#
venv=${VENV:-$HOME/.cache/netspec-torch2}
peers=$root/../shared/peers
[ -d "$peers" ] || peers=/work/shared/peers
[ -x "$build/netspec" ] || { echo "no $build/netspec (build it first)" >&2; exit 2; }
[ -x "$venv/bin/python" ] || { echo "no torch 2 venv at $venv: bash $peers/torch2_install.sh $venv" >&2; exit 2; }
rounds=${ROUNDS:-3}
steps=${STEPS:-20}

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
timed() { if [ -x /usr/bin/time ]; then /usr/bin/time -f 'maxrss %M' "$@" 2>&1; else "$@" 2>&1; echo "maxrss ?"; fi; }
mib() { sed -n 's/^maxrss \([0-9]*\)$/\1/p' | tail -1 | awk '{printf "%.0f", $1 / 1024}'; }
num() { sed -n "s/.*$1 \([0-9.]*\).*/\1/p" | tail -1; }
# Each side runs with its own defaults, as a user gets them: netspec picks its OpenMP wait policy
# by the machine's load at start (src/core/process_env.h), torch keeps libgomp's default spin.
# Exporting OMP_WAIT_POLICY before the run pins both (passive cost vit-cifar-tiny ~20 ms a step on
# each side on the Intel host: netspec 52 -> 75 ms, eager 57 -> 85, compile 49 -> 73).
# A fresh inductor cache: round 1's torch.compile compiles cold, as a user's first run does.
inductor_cache=$(mktemp -d)
trap 'rm -rf "$inductor_cache"' EXIT
export TORCHINDUCTOR_CACHE_DIR=$inductor_cache
if grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX; fi

field() { grep -m1 "^$1[[:space:]]*:" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'; }
grep -qw avx512f /proc/cpuinfo && isa=avx512 || isa=avx2
grep -qw amx_tile /proc/cpuinfo && isa="$isa+amx"
tv=$("$venv/bin/python" -c 'import torch; print(torch.__version__)')
peak_line=$("$build/bench/bench_peak" 2>/dev/null || echo "peak ? GFLOP/s")
peak=$(sed -n 's/.* threads \([0-9.]*\) GFLOP\/s.*/\1/p' <<<"$peak_line")
echo "cpu: $(field 'model name') ($isa, $(nproc) cpus); torch $tv; $(date -u '+%Y-%m-%d %H:%M UTC');" \
  "load $(cut -d' ' -f1-3 /proc/loadavg); OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-default}"
echo "$peak_line"

train_spec() {
  case $1 in
    mlp) echo "mlp 128 adam" ;; cnn) echo "mnist-cnn 128 adam" ;;
    resnet18) echo "resnet18-cifar 32 sgd" ;; vit) echo "vit-cifar-tiny 32 adamw" ;;
    resnet50) echo "resnet50 16 sgd" ;; mamba) echo "mamba-lm 32 adam" ;;
  esac
}
# One torch run of a train step: prints its output (ms/step median, first step) and maxrss.
torch_train() {  # MODEL MODE STEPS
  if [ "$1" = mamba ]; then
    [ "$2" = eager ] || { echo "ms/step median nan"; return; }
    OPENBLAS_NUM_THREADS=1 timed "$venv/bin/python" "$here/torch_mamba_peer.py" --batch 32 \
      --steps "$3" --warmup 2 --threads "$(nproc)"
  else
    timed "$venv/bin/python" "$peers/torch2_peer.py" "$1" --mode "$2" --steps "$3" \
      --warmup "$([ "$1" = resnet50 ] && echo 2 || echo 5)"
  fi
}

if [ "$what" = train ] || [ "$what" = all ]; then
  models=${*:-mlp cnn resnet18 vit resnet50 mamba}
  [ "$what" = all ] && models="mlp cnn resnet18 vit resnet50 mamba"
  echo
  printf '%-9s %9s %9s %9s %8s %9s %8s %18s %17s\n' model "ns ms" "eager ms" "comp ms" \
    "vs eager" "vs comp" "%peak" "first s ns/cold/c" "RSS MiB ns/e/c"
  for m in $models; do
    read -r spec batch opt <<<"$(train_spec "$m")"
    n=$steps; [ "$m" = resnet50 ] && n=${STEPS_R50:-6}; [ "$m" = mamba ] && n=${STEPS_MAMBA:-8}
    ns=() ea=() co=() re=() rc=()
    for ((r = 0; r < rounds; r++)); do
      out=$(timed "$build/netspec" bench "$spec" --batch "$batch" --optimizer "$opt" --steps "$n" --warmup 3)
      ns+=("$(num 'ms\/step median' <<<"$out")"); gf=$(num 'GFLOP\/s' <<<"$out")
      nfirst=$(num 'first step' <<<"$out"); nrss=$(mib <<<"$out")
      e=$(torch_train "$m" eager "$n"); ea+=("$(num 'ms\/step median' <<<"$e")"); erss=$(mib <<<"$e")
      c=$(torch_train "$m" compile "$n"); co+=("$(num 'ms\/step median' <<<"$c")"); crss=$(mib <<<"$c")
      if [ "$r" = 0 ]; then ccold=$(num 'first step' <<<"$c"); fi
      cfirst=$(num 'first step' <<<"$c")
      re+=("$(awk -v a="${ns[r]}" -v b="${ea[r]}" 'BEGIN {print (b > 0 ? a / b : "nan")}')")
      rc+=("$(awk -v a="${ns[r]}" -v b="${co[r]}" 'BEGIN {print (b > 0 ? a / b : "nan")}')")
    done
    share=$(awk -v g="$gf" -v p="$peak" 'BEGIN {if (p > 0) printf "%.0f%%", 100 * g / p; else print "?"}')
    printf '%-9s %9s %9s %9s %8s %9s %8s %18s %17s\n' "$m" \
      "$(printf '%s\n' "${ns[@]}" | median)" "$(printf '%s\n' "${ea[@]}" | median)" \
      "$(printf '%s\n' "${co[@]}" | median)" \
      "$(printf '%s\n' "${re[@]}" | median | awk '{printf "%.2fx", $1}')" \
      "$(printf '%s\n' "${rc[@]}" | median | awk '{printf "%.2fx", $1}')" "$share" \
      "${nfirst:-?}/${ccold:-?}/${cfirst:-?}" "${nrss:-?}/${erss:-?}/${crss:-?}"
    echo "          per round vs eager: ${re[*]}  vs compile: ${rc[*]}  (netspec $gf GFLOP/s)"
  done
fi

if [ "$what" = infer ] || [ "$what" = all ]; then
  echo
  printf '%-16s %9s %9s %9s %8s %9s %10s %18s\n' "model batch" "ns ms" "eager ms" "comp ms" \
    "vs eager" "vs comp" "ns img/s" "first s ns/cold/c"
  infer_models=${*:-resnet18 resnet50 vit-tiny}
  [ "$what" = all ] && infer_models="resnet18 resnet50 vit-tiny"
  for m in $infer_models; do
    spec=$m; [ "$m" = resnet18 ] && spec=resnet18-cifar
    for b in 1 64; do
      ns=() ea=() co=() re=() rc=()
      for ((r = 0; r < rounds; r++)); do
        out=$("$build/netspec" bench "$spec" --module eval --batch "$b" --steps "$steps" --warmup 3)
        ns+=("$(num 'eval ms\/call median' <<<"$out")"); ips=$(num 'images\/s' <<<"$out")
        nfirst=$(num 'first step' <<<"$out")
        e=$("$venv/bin/python" "$here/torch2_infer_peer.py" "$m" --batch "$b" --mode eager --steps "$steps" 2>/dev/null)
        c=$("$venv/bin/python" "$here/torch2_infer_peer.py" "$m" --batch "$b" --mode compile --steps "$steps" 2>/dev/null)
        ea+=("$(num 'ms\/call median' <<<"$e")"); co+=("$(num 'ms\/call median' <<<"$c")")
        if [ "$r" = 0 ]; then ccold=$(num 'first call' <<<"$c"); fi
        cfirst=$(num 'first call' <<<"$c")
        re+=("$(awk -v a="${ns[r]}" -v b="${ea[r]}" 'BEGIN {print a / b}')")
        rc+=("$(awk -v a="${ns[r]}" -v b="${co[r]}" 'BEGIN {print a / b}')")
      done
      printf '%-16s %9s %9s %9s %8s %9s %10s %18s\n' "$m b$b" \
        "$(printf '%s\n' "${ns[@]}" | median)" "$(printf '%s\n' "${ea[@]}" | median)" \
        "$(printf '%s\n' "${co[@]}" | median)" \
        "$(printf '%s\n' "${re[@]}" | median | awk '{printf "%.2fx", $1}')" \
        "$(printf '%s\n' "${rc[@]}" | median | awk '{printf "%.2fx", $1}')" "$ips" \
        "${nfirst:-?}/${ccold:-?}/${cfirst:-?}"
    done
  done
fi
