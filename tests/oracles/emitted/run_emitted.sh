#!/usr/bin/env bash
# ctest's `oracles_emitted` test: emits every module (forward, eval, cam, train_step, vjp,
# optimizer) of the zoo's core nets (linear, mlp, mnist-cnn, cifar-bn) plus mlp's optimizer and
# train_step under each optimizer, with deterministic inputs from the manifests
# (gen_emitted.py), and checks that ref, XLA (jaxlib) and IREE (llvm-cpu) agree with netspec's
# cpu executor within f32 rtol = atol = 1e-4 (compare.py).
#   run_emitted.sh NETSPEC_BIN BUILD_DIR [compare.py args...]
# Exit 77 (ctest SKIP) when BUILD_DIR/venv is missing (scripts/install-oracles.sh makes it).
set -euo pipefail
netspec=$1 build=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
py="$build/venv/bin/python"
if [[ ! -x $py ]]; then
  echo "SKIP: no oracle venv at $build/venv (run scripts/install-oracles.sh $build)"
  exit 77
fi
cases="$build/oracles/emitted/cases"
rm -rf "$cases" "$build/oracles/emitted/work"
status=0
"$py" "$here/gen_emitted.py" --self-test || status=$?
"$py" "$here/gen_emitted.py" --netspec "$netspec" --out "$cases" || status=$?
# cpu first: it is the baseline every other engine is judged against.
"$py" "$here/../compare.py" --cases "$cases" --work "$build/oracles/emitted/work" \
  --netspec "$netspec" --engines cpu,ref,xla,iree --skip-code 77 "$@" ||
  status=$((status ? status : $?))
exit "$status"
