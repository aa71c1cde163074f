#!/usr/bin/env bash
# ctest's jax_random: the random programs (tests/jax/random_cases.cpp) translated to JAX and
# run under jax.jit against ref (tests/jax/check_random.py).
#   run_random.sh JAX_RANDOM_CASES BUILD_DIR [N]
# Exit 77 (ctest SKIP) when BUILD_DIR/venv or its jax is missing (scripts/install-oracles.sh).
set -euo pipefail
gen=$1 build=$2 n=${3:-40}
here=$(cd "$(dirname "$0")" && pwd)
py="$build/venv/bin/python"
if [[ ! -x $py ]] || ! "$py" -c "import jax" 2>/dev/null; then
  echo "SKIP: no oracle venv with jax at $build/venv (run scripts/install-oracles.sh $build)"
  exit 77
fi
work="$build/jax_random"
rm -rf "$work"
"$gen" "$work" "$n"
exec "$py" "$here/check_random.py" "$work"
