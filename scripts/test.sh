#!/usr/bin/env bash
# Builds netspec with warnings as errors and runs the whole test suite in parallel, then
# builds the parser/fuzz tests under ASan+UBSan and runs them. Exit status 0 = all passed.
#   scripts/test.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
jobs=$(nproc)
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}

echo "== build ($build_dir)"
scripts/build.sh "$build_dir" -DNETSPEC_WERROR=ON
echo "== tests"
ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure --timeout 900

echo "== sanitizers: parser and fuzz tests under ASan+UBSan"
san_dir="$build_dir-asan"
cmake -S . -B "$san_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETSPEC_SANITIZE=ON \
  -DNETSPEC_WERROR=ON -DNETSPEC_NATIVE=ON >/dev/null
cmake --build "$san_dir" -j "$jobs" --target test_hlo
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$san_dir/tests/test_hlo" --gtest_filter='Parse*:Print*:RoundTrip*:Fuzz*' --gtest_brief=1
echo "== all tests passed"
