#!/usr/bin/env bash
# sanitize.sh — the native suite (doctest, CLI tests, fuzz replay) built with AddressSanitizer and
# UndefinedBehaviorSanitizer (-DMESHFIT_SANITIZE=ON, clang if present, else g++) in build-asan/,
# run through ctest: any memory error, leak or undefined behaviour fails the run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
compiler=$(command -v clang++ || command -v g++)
cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$compiler" \
  -DMESHFIT_SANITIZE=ON >/dev/null
cmake --build "$root/build-asan" -j"${MESHFIT_JOBS:-2}"
cd "$root/build-asan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j"${MESHFIT_JOBS:-2}"
