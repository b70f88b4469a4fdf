#!/usr/bin/env bash
# run.sh — the README's test command: install, build, and run every test through ctest: the native
# doctest suite and CLI tests, then the same doctest suite as WebAssembly under node, the JavaScript
# API tests and the page's browser tests (node's test runner, Chromium). Screenshots of the page
# land in build-wasm/e2e-artifacts. The last ctest line is the summary CI reads.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/site/lib.sh"
"$root/site/build.sh" tests
# The tables against published data are part of what the tests report: print them in full
# (memory vs memory_measured.csv and the framework mechanisms' reference estimates, fine-tuning runs and
# the method ranking, throughput per published run and the error bands, Megatron-LM throughput
# anchors, Hagemann ranking and memory filter).
phase "printing predicted vs measured tables"
"$root/build/meshfit_core_tests" --no-version \
  --test-case="*memory_measured*,*framework mechanisms*,finetune_measured*,fine-tuning methods*,throughput validation*,error bands*,*Megatron-LM throughput*,ranking*,memory filter*"
phase "running the native tests (doctest suite, CLI)"
(cd "$root/build" && ctest --output-on-failure)
phase "building and running the native suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/, ~5 minutes)"
"$root/tests/sanitize.sh" 2>&1 | grep --line-buffered -E 'tests passed|tests failed|Failed|ERROR|runtime error|Sanitizer' ||
  fail "the sanitizer run failed (rerun tests/sanitize.sh for its full output)."
phase "running the WebAssembly tests (doctest under node, JS API vs CLI, the page in Chromium; ~2 minutes)"
(cd "$root/build-wasm" && ctest --output-on-failure)
