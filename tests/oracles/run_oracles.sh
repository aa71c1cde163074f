#!/usr/bin/env bash
# ctest's `oracles` test: generates the case modules and judges them with XLA and IREE.
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
rm -rf "$cases"
"$gen" "$cases"
exec "$py" "$here/compare.py" --cases "$cases" --netspec "$netspec" --work "$build/oracles/work" \
  --skip-code 77 "$@"
