#!/usr/bin/env bash
# run.sh — the README's test command: install, build, and run every test (doctest suite, CLI
# tests) through ctest, whose closing line is the summary CI reads.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/site/build.sh"
# The measured-data table is part of what the tests report: print it in full.
"$root/build/meshfit_core_tests" --test-case="*memory_measured*" --no-version
cd "$root/build"
ctest --output-on-failure
