#!/usr/bin/env bash
# build.sh page|tests — install what is missing, then build. `page`: only the calculator page
# (build-wasm/site: the single-file meshfit.html, the hosted index.html + meshfit_app.js/.wasm,
# docs.html). `tests` (the default): also the native CLI and doctest suite in build/, the JS API in
# build-wasm/dist and the WASM test suite. Each phase prints one line; compiles print (n/N).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/site/lib.sh"
mode=${1:-tests}
"$root/site/deps.sh" "$mode"
export NINJA_STATUS="meshfit         [%f/%t] "
# Debian's emcc needs Debian's acorn module, which Node does not look for on its own (TOOLCHAIN.md).
export NODE_PATH=/usr/share/nodejs

configure() {  # configure DIR ARGS...: quiet unless it fails
  local dir=$1; shift
  local log
  log=$(mktemp /tmp/meshfit-cmake.XXXXXX)
  "$@" -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1 ||
    { tail -20 "$log" >&2; fail "configuring $dir failed (log: $log)."; }
  rm -f "$log"
}
compile() {  # compile WHAT DIR [cmake --build args]: ninja's "[n/N] step" lines; on failure its errors
  local what=$1 dir=$2; shift 2
  phase "compiling $what"
  local log
  log=$(mktemp /tmp/meshfit-build.XXXXXX)
  if ! cmake --build "$dir" "$@" -- -j"$(nproc)" 2>&1 | tee "$log" | { grep --line-buffered '^meshfit ' || true; }; then
    grep -E -B2 -A8 'error|FAILED' "$log" | head -60 >&2
    fail "compiling $what failed (full log: $log; the compiler's first messages are above)."
  fi
  rm -f "$log"
}

imgui_flag=()
[ -n "${MESHFIT_IMGUI_DIR:-}" ] && imgui_flag=(-DMESHFIT_IMGUI_DIR="$MESHFIT_IMGUI_DIR")
if [ "$mode" = page ]; then
  # Keep an existing configuration (the tests' one builds the same page); a new one builds no tests.
  tests_flag=()
  [ -f "$root/build-wasm/CMakeCache.txt" ] || tests_flag=(-DMESHFIT_BUILD_TESTS=OFF)
  phase "configuring the WebAssembly build (build-wasm/)"
  configure "$root/build-wasm" emcmake cmake "${tests_flag[@]}" "${imgui_flag[@]}"
  compile "the page: core, Dear ImGui and the app as WebAssembly (2-6 minutes the first time on 2 cores)" "$root/build-wasm" --target meshfit_site
  exit 0
fi

phase "configuring the native build (build/)"
configure "$root/build" cmake
compile "the native CLI, test suite and benchmark (2-4 minutes the first time)" "$root/build"
phase "configuring the WebAssembly build (build-wasm/)"
configure "$root/build-wasm" emcmake cmake -DMESHFIT_BUILD_TESTS=ON -DMESHFIT_NATIVE_CLI="$root/build/meshfit" "${imgui_flag[@]}"
compile "the WebAssembly JS API, page and WASM test suite (4-8 minutes the first time)" "$root/build-wasm"
