#!/usr/bin/env bash
# serve.sh — the README's main command: install what is missing, build everything (native CLI,
# WebAssembly module, the page) and serve the static site on localhost, printing its URL.
# MESHFIT_PORT picks the port (default 8080). The same page also works opened straight from disk:
# build-wasm/site/meshfit.html is one self-contained file.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/site/build.sh"
site="$root/build-wasm/site"
[ -f "$site/meshfit.html" ] || { echo "meshfit: the page was not built (see the messages above)" >&2; exit 1; }
port="${MESHFIT_PORT:-8080}"
echo
echo "meshfit is served at:  http://127.0.0.1:${port}/"
echo "single-file page:      file://${site}/meshfit.html (works offline, can be saved and shared)"
echo "formulas and sources:  http://127.0.0.1:${port}/docs.html"
echo "command line:          ${root}/build/meshfit estimate --model llama3.1-70b --gpus 64 --tp 8 --pp 4 --seq 8192"
echo "(Ctrl+C stops the server)"
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site"
