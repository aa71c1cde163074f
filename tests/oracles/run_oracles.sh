#!/usr/bin/env bash
# ctest's `oracles` test: checks the comparison rules, runs the hand-written cases (spellings
# found in real StableHLO files), then generates the case modules and judges them all on
# netspec's ref and cpu executors, XLA and IREE.
#   run_oracles.sh ORACLE_CASES_BIN NETSPEC_BIN BUILD_DIR [compare.py args...]
# Exit 77 (ctest SKIP) when BUILD_DIR/venv is missing (scripts/install-oracles.sh makes it).
set -euo pipefail
gen=$1 netspec=$2 build=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
py="$build/venv/bin/python"
if [[ ! -x $py ]]; then
  echo "SKIP: no oracle venv at $build/venv (run scripts/install-oracles.sh $build)"
  exit 77
fi
cases="$build/oracles/cases"
rm -rf "$cases" "$build/oracles/work"
"$gen" "$cases"
"$py" "$here/compare.py" --self-test
common=(--netspec "$netspec" --skip-code 77 "$@")
status=0
"$py" "$here/compare.py" --cases "$here/handwritten" --work "$build/oracles/work/handwritten" \
  "${common[@]}" || status=$?
"$py" "$here/compare.py" --cases "$cases" --work "$build/oracles/work/generated" \
  "${common[@]}" || status=$((status ? status : $?))
exit "$status"
