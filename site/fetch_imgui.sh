#!/usr/bin/env bash
# fetch_imgui.sh — Dear ImGui 1.90.1 from Debian's source package (never committed; see
# ../shared/TOOLCHAIN.md): downloads the orig tarball of trixie's imgui source package through a
# private apt state (its own sources list and index folder under .cache/, so the system's apt
# sources are left as they were), checks its sha256 and unpacks it into .cache/imgui (ignored by
# git). Idempotent. MESHFIT_IMGUI_DIR=/path/to/imgui (a folder holding imgui.cpp) skips all of this.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/site/lib.sh"
if [ -n "${MESHFIT_IMGUI_DIR:-}" ]; then
  [ -f "$MESHFIT_IMGUI_DIR/imgui.cpp" ] ||
    fail "MESHFIT_IMGUI_DIR=$MESHFIT_IMGUI_DIR holds no imgui.cpp: point it at an ImGui source folder or unset it."
  exit 0
fi
target="$root/.cache/imgui"
[ -f "$target/imgui.cpp" ] && exit 0
sha256=ecce377df0f90b292f15dcbd83d438bddc162b2388c881132bde18c787572a1c
tarball=imgui_1.90.1+ds.orig.tar.xz
cache="$root/.cache/downloads"
mkdir -p "$cache"
if [ ! -f "$cache/$tarball" ]; then
  phase "downloading Dear ImGui's source from Debian's archive (trixie source package, ~1.5 MB of files after ~50 MB of indexes, about a minute, once)"
  # The archive address this machine already uses for its binary packages.
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$uri" ] || fail "found no Debian archive address in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list; set MESHFIT_IMGUI_DIR to an ImGui 1.90.1 source folder instead."
  private="$root/.cache/apt"
  rm -rf "$private" && mkdir -p "$private/lists/partial" "$private/archives/partial"
  mkdir -p "$private/sources.list.d"
  printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" >"$private/sources.list.d/imgui-src.sources"
  apt_private=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$private/sources.list.d"
               -o "Dir::State::Lists=$private/lists" -o "Dir::Cache=$private"
               -o "APT::Sandbox::User=$(id -un)" -o "Debug::NoLocking=1")
  apt-get "${apt_private[@]}" update -qq >"$private/update.log" 2>&1 ||
    fail "could not read trixie's source index from $uri (see $private/update.log): check the network, or set MESHFIT_IMGUI_DIR to an ImGui 1.90.1 source folder."
  (cd "$cache" && apt-get "${apt_private[@]}" source --download-only -qq imgui/trixie >"$private/source.log" 2>&1) ||
    fail "could not download imgui's source package from $uri (see $private/source.log): check the network, or set MESHFIT_IMGUI_DIR."
  rm -rf "$private/lists"
fi
echo "$sha256  $cache/$tarball" | sha256sum -c --quiet >/dev/null 2>&1 ||
  fail "$cache/$tarball does not have the pinned sha256 $sha256: delete it and run again (a changed or truncated download)."
rm -rf "$target.tmp" && mkdir -p "$target.tmp"
tar -xJf "$cache/$tarball" -C "$target.tmp" --strip-components=1 ||
  fail "could not unpack $cache/$tarball (is xz-utils installed?)."
mv "$target.tmp" "$target"
phase "Dear ImGui 1.90.1 unpacked into $target"
