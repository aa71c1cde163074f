#!/usr/bin/env bash
# Installs the test oracles into BUILD_DIR/venv from PyPI: XLA's CPU compiler (jax/jaxlib), IREE
# (iree-base-compiler: iree-compile; iree-base-runtime: iree-run-module), numpy and pycocotools
# (the COCO mAP oracle of tests/train/detection_test.cpp), tensorboard (its event reader checks
# the run dir's events.out.tfevents.* files, tests/train/tb_events_test.cpp); plus timm for
# reference architectures when Debian's python3-torch/python3-torchvision are installed (the venv
# sees them through --system-site-packages, so no multi-GB CUDA torch is downloaded).
# Usage: scripts/install-oracles.sh BUILD_DIR   (idempotent; quiet on success; ~30 s from scratch)
# Needs Debian packages: python3-venv (and, for timm, python3-torch python3-torchvision).
# Note: numpy 2 (which jax needs) shadows Debian's numpy 1.24 in the venv, so Debian's torch 1.13
# cannot convert to/from numpy there; move tensors through safetensors (both sides load it).
set -euo pipefail

die() { echo "install-oracles: $*" >&2; exit 1; }
[[ $# -eq 1 ]] || die "usage: $0 BUILD_DIR"
build_dir=$1
venv="$build_dir/venv"
log="$build_dir/install-oracles.log"

# Versions verified together (Debian 12, Python 3.11): jax 0.10.2 is the newest for Python 3.11.
oracle_pins=(jax==0.10.2 jaxlib==0.10.2 ml_dtypes==0.6.0 scipy==1.17.1 opt_einsum==3.4.0
  numpy==2.4.6 iree-base-compiler==3.13.0 iree-base-runtime==3.13.0 pycocotools==2.0.11
  tensorboard==2.21.0 tensorboard-data-server==0.7.2 protobuf==7.36.2 grpcio==1.85.3 absl-py==2.5.1
  Markdown==3.11.3 Werkzeug==3.1.9)
timm_pins=(timm==1.0.31 safetensors==0.8.0 huggingface_hub==2.4.0 pyyaml)

python=/usr/bin/python3
[[ -x $python ]] || die "Debian's /usr/bin/python3 is missing (apt-get install python3 python3-venv)"

have_torch=no
if "$python" -c 'import importlib.util as u, sys
sys.exit(not (u.find_spec("torch") and u.find_spec("torchvision")))' >/dev/null 2>&1; then
  have_torch=yes
fi
stamp_text="oracles: ${oracle_pins[*]}; torch=$have_torch; timm: ${timm_pins[*]}"
stamp="$venv/.oracles-stamp"
if [[ -f $stamp && "$(cat "$stamp")" == "$stamp_text" && -x $venv/bin/python ]]; then
  exit 0
fi

mkdir -p "$build_dir"
: >"$log"
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
  rm -rf "$venv"
  "$python" -m venv --system-site-packages "$venv" >>"$log" 2>&1 ||
    die "could not create $venv (apt-get install python3-venv); see $log"
fi
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input)
"${pip[@]}" "${oracle_pins[@]}" >>"$log" 2>&1 || die "pip install of jax/iree/numpy failed; see $log"
if [[ $have_torch == yes ]]; then
  # timm's own dependency list names torch/torchvision: --no-deps keeps pip off the CUDA wheels.
  "${pip[@]}" --no-deps "${timm_pins[0]}" >>"$log" 2>&1 || die "pip install timm failed; see $log"
  "${pip[@]}" "${timm_pins[@]:1}" >>"$log" 2>&1 || die "pip install timm's deps failed; see $log"
fi

# Smoke checks: each engine must import and answer.
"$venv/bin/python" -c 'import jax, jaxlib, numpy; jax.devices("cpu")' >>"$log" 2>&1 ||
  die "jax does not import in $venv; see $log"
"$venv/bin/python" -c 'import pycocotools.cocoeval' >>"$log" 2>&1 ||
  die "pycocotools does not import in $venv; see $log"
"$venv/bin/python" -c 'from tensorboard.backend.event_processing import event_accumulator' \
  >>"$log" 2>&1 || die "tensorboard does not import in $venv; see $log"
"$venv/bin/iree-compile" --version >>"$log" 2>&1 || die "iree-compile does not run; see $log"
"$venv/bin/iree-run-module" --help >>"$log" 2>&1 || die "iree-run-module does not run; see $log"
if [[ $have_torch == yes ]]; then
  "$venv/bin/python" -W ignore -c 'import timm; timm.create_model("resnet18")' >>"$log" 2>&1 ||
    die "timm does not import in $venv; see $log"
fi
echo "$stamp_text" >"$stamp"
