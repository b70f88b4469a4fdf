#!/usr/bin/env bash
# deps.sh page|tests — install what a build needs, from Debian 12's own packages (idempotent; prints
# nothing when everything is there). `page`: what serving the calculator needs (Emscripten, CMake,
# Ninja, the JSON header, the font, xz for ImGui's tarball) and Dear ImGui's source. `tests`: that,
# plus the native toolchain and test libraries, Chromium, and playwright-core from the npm registry.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/site/lib.sh"
mode=${1:-tests}

# Emscripten pulls clang/lld 14, binaryen and Node with it: the bulk of the first run.
apt_install "Emscripten and the page's build tools (~300 MB download, 3-8 minutes, once)" \
  cmake ninja-build python3 xz-utils nlohmann-json3-dev libtomlplusplus-dev emscripten fonts-roboto-unhinted
"$root/site/fetch_imgui.sh"
[ "$mode" = page ] && exit 0

# Debian packages npm apart from nodejs (NodeSource's nodejs bundles it: then it is already there).
tests_packages=(g++ libcli11-dev doctest-dev chromium nodejs)
command -v npm >/dev/null 2>&1 || tests_packages+=(npm)
apt_install "the native compiler, test libraries and Chromium (~250 MB download, 2-5 minutes, once)" "${tests_packages[@]}"

# playwright-core drives /usr/bin/chromium and downloads no browser of its own; pinned in the lockfile.
if [ ! -f "$root/tests/e2e/node_modules/playwright-core/package.json" ]; then
  phase "installing playwright-core from the npm registry (pinned in tests/e2e/package-lock.json, ~8 MB, once)"
  log=$(mktemp /tmp/meshfit-npm.XXXXXX)
  (cd "$root/tests/e2e" && npm ci --no-audit --no-fund >"$log" 2>&1) ||
    { tail -5 "$log" >&2; fail "npm ci in tests/e2e failed (log: $log): the npm registry did not answer or refused; check the network or npm's registry/proxy settings (npm config get registry)."; }
  rm -f "$log"
fi
