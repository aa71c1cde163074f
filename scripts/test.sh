#!/usr/bin/env bash
# Installs the test-only dependencies (scripts/install-deps.sh --test: gtest, Debian's torch, the
# PyPI oracles), builds netspec, its tests and benches with warnings as errors, runs the whole
# test suite in parallel, then builds the parser/fuzz tests under ASan+UBSan and runs them.
# Exit status 0 = all passed.
#   scripts/test.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
jobs=$(nproc)

# A full run needs ~10 GB (packages, the oracle/engine venvs, two builds); a full disk shows up
# later as an unrelated-looking link or write error, so say it first.
free_gb=$(df -Pk . | awk 'NR == 2 {printf "%d", $4 / 1048576}')
if ((free_gb < 10)); then
  echo "test.sh: warning: only ${free_gb} GB free here; a full run needs about 10 GB" >&2
fi
echo "== test dependencies"
scripts/install-deps.sh --test "$build_dir"
echo "== build ($build_dir)"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNETSPEC_WERROR=ON \
  -DNETSPEC_TESTS=ON >/dev/null
cmake --build "$build_dir" -j "$jobs"
echo "== tests"
# Parallel tests share the cores: libgomp workers sleep at once instead of spinning. Each test
# process makes its own scratch dir under TMPDIR and removes it when it passes
# (tests/support/scratch_tmp.cpp); whatever is left in test-tmp afterwards is a leak.
test_tmp=$(cd "$build_dir" && pwd)/test-tmp
rm -rf "$test_tmp" && mkdir -p "$test_tmp"
TMPDIR=$test_tmp OMP_WAIT_POLICY=passive \
  ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure --timeout 900
if [[ -n $(ls -A "$test_tmp") ]]; then
  echo "test.sh: the tests left files in $test_tmp (a test writes outside its scratch dir):" >&2
  du -sh "$test_tmp"/* >&2
  exit 1
fi
rmdir "$test_tmp"

echo "== sanitizers: parser and fuzz tests under ASan+UBSan"
san_dir="$build_dir-asan"
cmake -S . -B "$san_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETSPEC_SANITIZE=ON \
  -DNETSPEC_WERROR=ON -DNETSPEC_NATIVE=ON -DNETSPEC_TESTS=ON >/dev/null
cmake --build "$san_dir" -j "$jobs" --target test_hlo test_fuzz
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$san_dir/tests/test_hlo" --gtest_filter='Parse*:Print*:RoundTrip*:Fuzz*' --gtest_brief=1
# The fuzz targets (NETSPEC_FUZZ_SECONDS each): spec files, safetensors, PNG/JPEG, IDX, the
# pickle machine, .pth files, zip archives, COCO and VOC annotations, run records (config.json)
# and the rendezvous store's wire parser and server.
"$san_dir/tests/test_fuzz" --gtest_brief=1
echo "== all tests passed"
