#!/usr/bin/env bash
# Installs everything netspec needs on Debian 12: build and runtime libraries from Debian's
# packages (apt-get; python3-torchvision only as a reference oracle for tests), then the test oracles (jax/jaxlib, IREE, timm) from PyPI into a venv in
# the build tree (scripts/install-oracles.sh). Idempotent and quiet on success.
#   scripts/install-deps.sh [BUILD_DIR]      (default: build)
#   NETSPEC_ORACLES=0 skips the PyPI oracles.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build_dir=${1:-build}

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libeigen3-dev libdnnl-dev libopenblas-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  zlib1g-dev libgtest-dev libpng-dev libjpeg62-turbo-dev libgloo-dev
  python3 python3-venv python3-numpy
  python3-torchvision
  dataset-fashion-mnist
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  log=$(mktemp)
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    echo "install-deps: apt-get install failed for: ${missing[*]} (log: $log)" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  rm -f "$log"
fi

if [ "${NETSPEC_ORACLES:-1}" != "0" ] && [ -x "$here/install-oracles.sh" ]; then
  "$here/install-oracles.sh" "$build_dir"
fi
