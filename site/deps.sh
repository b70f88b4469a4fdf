#!/usr/bin/env bash
# deps.sh — install what the native and WebAssembly builds and their tests need from Debian's
# packages (idempotent, quick when everything is there). Used by site/build.sh.
set -euo pipefail

packages=(cmake ninja-build g++ python3 nlohmann-json3-dev libcli11-dev doctest-dev nodejs emscripten
          fonts-roboto-unhinted chromium)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
# npm ships inside some nodejs builds (NodeSource); Debian packages it apart.
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "meshfit: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Dear ImGui's source (Debian source package, never committed) for the page.
"$root/site/fetch_imgui.sh"
# playwright-core for the browser tests (drives /usr/bin/chromium; downloads no browser of its own).
if [ ! -d "$root/tests/e2e/node_modules/playwright-core" ]; then
  (cd "$root/tests/e2e" && npm ci --no-audit --no-fund --silent)
fi
