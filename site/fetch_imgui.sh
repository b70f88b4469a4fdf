#!/usr/bin/env bash
# fetch_imgui.sh — Dear ImGui 1.90.1 from Debian's source package (never committed; see
# ../shared/TOOLCHAIN.md): adds a deb-src entry for Debian's trixie suite, downloads the orig
# tarball, checks its sha256 and unpacks it into .cache/imgui (ignored by git). Idempotent.
# MESHFIT_IMGUI_DIR=/path/to/imgui skips all of this for users who already have ImGui.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="$root/.cache/imgui"
[ -f "$target/imgui.cpp" ] && exit 0
sha256=ecce377df0f90b292f15dcbd83d438bddc162b2388c881132bde18c787572a1c
tarball=imgui_1.90.1+ds.orig.tar.xz
cache="$root/.cache/downloads"
mkdir -p "$cache"
if [ ! -f "$cache/$tarball" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  sources=/etc/apt/sources.list.d/meshfit-imgui-src.sources
  if [ ! -f "$sources" ]; then
    uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    [ -n "$uri" ] || uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
    [ -n "$uri" ] || uri=http://deb.debian.org/debian
    printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" |
      $sudo tee "$sources" >/dev/null
    $sudo apt-get update -qq
  fi
  (cd "$cache" && apt-get source --download-only -qq imgui/trixie >/dev/null)
fi
echo "$sha256  $cache/$tarball" | sha256sum -c --quiet
rm -rf "$target.tmp" && mkdir -p "$target.tmp"
tar -xJf "$cache/$tarball" -C "$target.tmp" --strip-components=1
mv "$target.tmp" "$target"
echo "meshfit: Dear ImGui unpacked into $target"
