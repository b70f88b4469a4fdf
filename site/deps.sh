#!/usr/bin/env bash
# deps.sh — install what the native and WebAssembly builds and their tests need from Debian's
# packages (idempotent, quick when everything is there). Used by site/build.sh.
set -euo pipefail

packages=(cmake ninja-build g++ python3 nlohmann-json3-dev libcli11-dev doctest-dev nodejs emscripten)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "meshfit: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
