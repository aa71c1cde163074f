#!/usr/bin/env bash
# Installs the optional engines into BUILD_DIR/engines (pinned; nothing outside BUILD_DIR):
#   engines/pjrt/pjrt_c_api_cpu_plugin.so  XLA's CPU PJRT plugin (lammps-jax-pjrt-cpu 0.11.2,
#                                          PJRT C API 0.115, StableHLO 1.20; Apache-2.0)
#   engines/include/xla/pjrt/c/pjrt_c_api.h the PJRT C API header (from xla-cpu-pjrt 0.0.1, API
#                                          0.81; plugins accept a caller header older than theirs)
#   engines/venv/bin/iree-*                IREE 3.13 compiler and runtime tools
# Usage: scripts/install-engines.sh [BUILD_DIR]   (default build; idempotent; ~1 min, ~600 MB)
# Then reconfigure (cmake -S . -B BUILD_DIR) so src/exec/pjrt is built against the header.
# The wheels are unpacked, not installed: the plugin is dlopen'ed by path at run time.
set -euo pipefail

die() { echo "install-engines: $*" >&2; exit 1; }
build_dir=${1:-build}
engines="$build_dir/engines"
log="$engines/install.log"
pjrt_plugin_pin=lammps-jax-pjrt-cpu==0.11.2
pjrt_header_pin=xla-cpu-pjrt==0.0.1
iree_pins=(iree-base-compiler==3.13.0 iree-base-runtime==3.13.0)
stamp_text="engines: $pjrt_plugin_pin $pjrt_header_pin ${iree_pins[*]}"
stamp="$engines/.engines-stamp"
if [[ -f $stamp && "$(cat "$stamp")" == "$stamp_text" ]]; then
  exit 0
fi

python=/usr/bin/python3
[[ -x $python ]] || die "Debian's /usr/bin/python3 is missing (apt-get install python3 python3-venv)"
mkdir -p "$engines/wheels"
: >"$log"

# The venv first: its pip downloads the wheels (Debian's python3 has no pip without python3-pip).
venv="$engines/venv"
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
  rm -rf "$venv"
  "$python" -m venv "$venv" >>"$log" 2>&1 ||
    die "could not create $venv (apt-get install python3-venv); see $log"
fi
"$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
  --only-binary=:all: -d "$engines/wheels" "$pjrt_plugin_pin" "$pjrt_header_pin" >>"$log" 2>&1 ||
  die "pip download of the PJRT wheels failed; see $log"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# unzip WHEEL DIR [MEMBER_PREFIX]: a wheel is a zip; Python's zipfile avoids needing unzip.
unzip_wheel() {
  "$python" - "$@" <<'PY'
import sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
prefix = sys.argv[3] if len(sys.argv) > 3 else ""
with zipfile.ZipFile(whl) as z:
    z.extractall(dest, [n for n in z.namelist() if n.startswith(prefix)])
PY
}
unzip_wheel "$engines"/wheels/lammps_jax_pjrt_cpu-0.11.2-*.whl "$tmp/plugin" ||
  die "could not unpack the PJRT CPU plugin wheel"
unzip_wheel "$engines"/wheels/xla_cpu_pjrt-0.0.1-*.whl "$tmp/header" \
  xla_plugins/xla_cpu_pjrt/include/ || die "could not unpack the PJRT header wheel"
mkdir -p "$engines/pjrt" "$engines/include/xla/pjrt/c"
mv -f "$tmp/plugin/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so" "$engines/pjrt/"
cp "$tmp/plugin"/lammps_jax_pjrt_cpu-0.11.2.dist-info/licenses/* "$engines/pjrt/"
mv -f "$tmp/header/xla_plugins/xla_cpu_pjrt/include/pjrt_c_api.h" "$engines/include/xla/pjrt/c/"
rm -f "$engines"/wheels/*.whl

"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  "${iree_pins[@]}" >>"$log" 2>&1 || die "pip install of IREE failed; see $log"

# Smoke checks: the plugin exports GetPjrtApi; the IREE tools answer.
nm -D --defined-only "$engines/pjrt/pjrt_c_api_cpu_plugin.so" 2>/dev/null | grep -Eq ' GetPjrtApi(@@.*)?$' ||
  die "$engines/pjrt/pjrt_c_api_cpu_plugin.so does not export GetPjrtApi"
"$venv/bin/iree-compile" --version >>"$log" 2>&1 || die "iree-compile does not run; see $log"
"$venv/bin/iree-run-module" --help >>"$log" 2>&1 || die "iree-run-module does not run; see $log"
echo "$stamp_text" >"$stamp"
