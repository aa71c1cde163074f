#!/usr/bin/env bash
# Installs what netspec needs on Debian 12 (docs/install.md says what each package is for).
#   scripts/install-deps.sh                    the product: compiler, CMake, Ninja, the libraries
#                                              netspec links and the Fashion-MNIST package
#   scripts/install-deps.sh --test [BUILD_DIR] also the test-only packages (gtest, OpenBLAS for
#                                              the benches, ccache, Debian's python3 with torch +
#                                              torchvision as reference oracles) and the PyPI
#                                              oracles (jax/jaxlib, IREE, timm) in BUILD_DIR/venv
#                                              (default build; NETSPEC_ORACLES=0 skips them)
# apt-get runs as root or through sudo, with --no-install-recommends: every package a step needs
# is named here (a fresh root proves it: scripts/fresh-check.sh). Idempotent, quiet on success.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
test_deps=no
if [[ ${1:-} == --test ]]; then
  test_deps=yes
  shift
fi
build_dir=${1:-build}

# The product: g++ (not build-essential: no make or dpkg-dev needed), CMake + Ninja, the
# libraries netspec links (oneDNN, Eigen, CLI11, nlohmann-json, fmt, Xbyak, zlib, libpng, libjpeg, Gloo,
# NIfTI, libxml2 for VOC annotations, cairo + fontconfig with the DejaVu fonts for the pictures)
# and the dataset the README's main job trains on.
packages=(
  g++ cmake ninja-build
  libdnnl-dev libeigen3-dev libcli11-dev nlohmann-json3-dev libfmt-dev libxbyak-dev
  zlib1g-dev libpng-dev libjpeg62-turbo-dev libgloo-dev libnifti2-dev libxml2-dev
  pkg-config libcairo2-dev libfontconfig-dev fonts-dejavu-core
  dataset-fashion-mnist
)
# Tests and benchmarks only: gtest, OpenBLAS (the benches compare against its sgemm), ccache
# (rebuilds), Debian's python3 with torch/torchvision/PIL/numpy (reference architectures and
# image resizing), python3-venv for the PyPI oracles' venv, chromium (headless: renders
# report.html in tests/report).
if [[ $test_deps == yes ]]; then
  packages+=(
    libgtest-dev libopenblas-dev ccache
    python3 python3-venv python3-numpy python3-pil python3-torchvision
    chromium
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-deps: run as root (no sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  log=$(mktemp)
  if ! { "${sudo[@]}" apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
           --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    echo "install-deps: apt-get install failed for: ${missing[*]} (log: $log)" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  rm -f "$log"
  # CI machines are fresh and short of disk: drop the downloaded .deb files (~1.6 GB with torch).
  if [[ ${CI:-} == true ]]; then "${sudo[@]}" apt-get clean; fi
fi

if [[ $test_deps == yes && ${NETSPEC_ORACLES:-1} != 0 ]]; then
  "$here/install-oracles.sh" "$build_dir"
fi

# Optional engines (PJRT CPU plugin + header, IREE tools) for the xla/iree backend tests, with
# --test only (users opt in with scripts/install-engines.sh); a failure only means those tests
# skip. NETSPEC_ENGINES=0 leaves them out.
if [[ $test_deps == yes && ${NETSPEC_ENGINES:-1} != 0 ]]; then
  "$here/install-engines.sh" "$build_dir" ||
    echo "install-deps: engines not installed (xla/iree tests will skip)" >&2
fi
