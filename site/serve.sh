#!/usr/bin/env bash
# serve.sh — the README's main command: build everything, then serve the calculator.
# The web page is not built yet (see the open issues); until it is, this builds the native CLI
# and prints an example run, so the command already shows what the calculator computes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/site/build.sh"
example=(estimate --model llama3.1-70b --gpu h100-sxm --gpus 64 --tp 8 --pp 4 --seq 8192 --global-batch 512)
echo
echo "\$ build/meshfit ${example[*]}"
"$root/build/meshfit" "${example[@]}"
echo
echo "The web page is not built yet; the calculator runs as build/meshfit (try: build/meshfit --help)."
