#!/usr/bin/env bash
# test.sh: the README's second command. Installs what is missing, builds strata,
# and runs every test: the Check suites (ctest), the layer probes again
# compiled by Clang, then the suites again built with AddressSanitizer +
# UndefinedBehaviorSanitizer, then the CLI's end-to-end cases under valgrind.
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test
# Builds before the outfile fix renamed their outputs over /dev/null when run
# as root, leaving a plain file there; every later '>/dev/null' then fills it.
# Put the device back on such a machine (root only; a no-op elsewhere).
if [ ! -c /dev/null ] && [ "$(id -u)" -eq 0 ]; then
  echo "test.sh: /dev/null is not a device here; recreating it"
  rm -f /dev/null && mknod -m 666 /dev/null c 1 3
fi
jobs=$(nproc)

echo "== build and test (RelWithDebInfo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== the layer probes under Clang (an upward or private include fails with either compiler)"
cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_CUDA=OFF \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
ctest --test-dir build-clang --output-on-failure -R '^layers_'

if [ "${STRATA_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
  echo "   (slow data-driven cases, whole real snapshots and traces, run in the plain build only: they print SKIP here)"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSTRATA_SANITIZE=ON -DSTRATA_CUDA=OFF >/dev/null
  cmake --build build-asan -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
  LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE no-sanitize
fi

if [ "${STRATA_SKIP_VALGRIND:-0}" != "1" ] && [ -x tests/valgrind-cli.sh ]; then
  echo "== end-to-end CLI cases under valgrind"
  bash tests/valgrind-cli.sh build/strata
fi
echo "== all tests passed"
