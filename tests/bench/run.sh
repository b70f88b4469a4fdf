#!/usr/bin/env bash
# run.sh — build (Release) and run the benchmarks; prints figures, asserts nothing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
"$root/site/build.sh"
"$root/build/meshfit_bench_search"
