#!/usr/bin/env bash
# serve.sh — the README's main command: install what serving needs (once), build the calculator page
# (WebAssembly) and serve the static site on localhost, printing its URL. Builds no tests and no native
# tools. MESHFIT_PORT picks the port (default 8080). The same page works opened straight from disk:
# build-wasm/site/meshfit.html is one self-contained file.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/site/lib.sh"
"$root/site/build.sh" page
site="$root/build-wasm/site"
[ -f "$site/meshfit.html" ] || fail "the page was not built ($site/meshfit.html is missing; see the messages above)."
port="${MESHFIT_PORT:-8080}"
phase "serving $site"
echo
echo "meshfit is served at:  http://127.0.0.1:${port}/"
echo "single-file page:      file://${site}/meshfit.html (works offline, can be saved and shared)"
echo "formulas and sources:  http://127.0.0.1:${port}/docs.html"
echo "command line and tests: ./tests/run.sh builds build/meshfit and runs every test"
echo "(Ctrl+C stops the server)"
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site"
