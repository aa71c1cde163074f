#!/usr/bin/env bash
# ctest's `install`: `cmake --install BUILD --prefix TMP` gives TMP/bin/netspec and the zoo in
# TMP/share/netspec/models, and the installed binary, run from another directory, reads that zoo
# (a net that exists only there is listed and summarised), unless $NETSPEC_MODELS_DIR says otherwise.
#   install_check.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
zoo="$prefix/share/netspec/models"
[[ -x $prefix/bin/netspec && -f $zoo/mlp.json ]] || { echo "FAIL: install layout"; exit 1; }
sed 's/"name": *"linear"/"name": "only-installed"/' "$zoo/linear.json" >"$zoo/only-installed.json"
cd /
# (into a file: `list | grep -q` would end list with SIGPIPE at the first match, failing pipefail)
"$prefix/bin/netspec" list >"$prefix/installed.txt"
grep -q only-installed "$prefix/installed.txt" || { echo "FAIL: installed zoo not read"; exit 1; }
"$prefix/bin/netspec" summary only-installed >/dev/null
mkdir "$prefix/other"
cp "$zoo/mlp.json" "$prefix/other/"
NETSPEC_MODELS_DIR="$prefix/other" "$prefix/bin/netspec" list >"$prefix/list.txt"
[[ "$(cat "$prefix/list.txt")" == *mlp* && "$(cat "$prefix/list.txt")" != *only-installed* ]] ||
  { echo "FAIL: NETSPEC_MODELS_DIR ignored"; cat "$prefix/list.txt"; exit 1; }
echo "install: ok ($prefix)"
