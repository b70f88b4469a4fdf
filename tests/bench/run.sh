#!/usr/bin/env bash
# run.sh — build (Release) and run the benchmarks natively and as WebAssembly under node; prints
# figures (times, their ratio, module sizes), asserts nothing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
"$root/site/build.sh"
echo "== native"
"$root/build/meshfit_bench_search" | tee /tmp/meshfit_bench_native.txt
echo "== WebAssembly under node ($(node --version))"
node "$root/build-wasm/meshfit_bench_search.js" | tee /tmp/meshfit_bench_wasm.txt
native_ms=$(awk '/wall time median/ {print $4}' /tmp/meshfit_bench_native.txt)
wasm_ms=$(awk '/wall time median/ {print $4}' /tmp/meshfit_bench_wasm.txt)
echo "== search wall time: native ${native_ms} ms, WASM ${wasm_ms} ms, ratio $(python3 -c "print(f'{$wasm_ms / $native_ms:.2f}')")x"
echo "== module size (build-wasm/dist)"
for file in "$root"/build-wasm/dist/meshfit_wasm.wasm "$root"/build-wasm/dist/meshfit_wasm.mjs "$root"/build-wasm/dist/meshfit.mjs; do
  printf '  %-20s %8d bytes raw, %8d bytes gzip -9\n' "$(basename "$file")" "$(stat -c %s "$file")" "$(gzip -9c "$file" | wc -c)"
done
