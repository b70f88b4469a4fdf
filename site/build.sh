#!/usr/bin/env bash
# build.sh — configure and build everything: native tools into build/, the WebAssembly module and
# the WASM test suite into build-wasm/ (Release; build-wasm/dist holds the JS API).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/site/deps.sh"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" -- -j"$(nproc)"
# Debian's emcc needs Debian's acorn module, which Node does not look for on its own (TOOLCHAIN.md).
export NODE_PATH=/usr/share/nodejs
emcmake cmake -S "$root" -B "$root/build-wasm" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMESHFIT_NATIVE_CLI="$root/build/meshfit" >/dev/null
cmake --build "$root/build-wasm" -- -j"$(nproc)"
