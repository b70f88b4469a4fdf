#!/bin/sh
# test_robustness.sh — the CLI under hostile input (issue 17): every case exits 2 with a message
# naming the problem (never 134 abort, 136 SIGFPE, 139 stack overflow, or 0 with a silent change),
# and a crafted search stops at its budget.
# Usage: test_robustness.sh PATH_TO_MESHFIT
set -u
meshfit="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
expect() {  # expect NAME STATUS PATTERN -- COMMAND...: exit STATUS and stderr+stdout matching PATTERN
  name="$1"; status="$2"; pattern="$3"; shift 4
  "$@" >"$tmp/out" 2>&1
  got=$?
  if [ "$got" -eq "$status" ] && grep -q -- "$pattern" "$tmp/out"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); echo "FAILED: $name (exit $got)"; head -c 600 "$tmp/out"; echo
  fi
}

expect "invalid UTF-8 in a state" 2 "invalid_text" -- "$meshfit" estimate --state 'v=1&model=llama3-8b&seq=%FF'
expect "invalid UTF-8 in a state, JSON" 2 '"invalid_text"' -- "$meshfit" estimate --state 'v=1&model=%FF' --json
expect "invalid UTF-8 in a flag" 2 "invalid_text" -- "$meshfit" estimate --model "$(printf 'llama\377')"
for pin in "--vpp 0" "--vpp -1" "--dp 0" "--pp -2" "--micro-batch 0" "--max-tp 0" "--top 0" "--budget 0"; do
  # shellcheck disable=SC2086
  expect "search $pin" 2 "not_positive" -- "$meshfit" search --model llama3-8b --gpus 8 $pin
done
expect "search --zero 7" 2 "out_of_range" -- "$meshfit" search --model llama3-8b --gpus 8 --zero 7
expect "search --max-vpp 10000 names the limit" 2 "maximum of 64" -- "$meshfit" search --model llama3-8b --gpus 8 --max-vpp 10000
expect "overflowing stage layers" 2 "stage_layers_invalid" -- "$meshfit" estimate --model llama3-8b --gpus 24 --pp 3 \
  --pp-first-stage-layers 9223372036854775807 --pp-last-stage-layers 9223372036854775777
expect "hex count" 2 "not_integer" -- "$meshfit" estimate --model llama3-8b --gpus 0x10
expect "huge count" 2 "out_of_range" -- "$meshfit" estimate --model llama3-8b --gpus 99999999999999999999
expect "gpu memory 1e308" 2 "out_of_range" -- "$meshfit" estimate --model llama3-8b --gpu-memory-gib 1e308
expect "gpu memory -80" 2 "not_positive" -- "$meshfit" estimate --model llama3-8b --gpu-memory-gib -80
expect "state version 4294967298" 2 "state_version" -- "$meshfit" estimate --state 'v=4294967298&model=llama3-8b'
expect "duplicate state key" 2 "duplicate_key" -- "$meshfit" estimate --state 'v=1&model=llama3-8b&tp=2&tp=4'

printf '{"model": "llama3-8b",' >"$tmp/malformed.json"
expect "malformed JSON config exits 2 with the parse error" 2 "parse error" -- "$meshfit" estimate --config "$tmp/malformed.json"
python3 -c "print('[' * 100000 + ']' * 100000)" >"$tmp/deep.json"
expect "deep JSON config" 2 "input_too_large" -- "$meshfit" estimate --config "$tmp/deep.json"
printf '{"model": "llama3-8b", "gpus": 8, "gpus": 16}' >"$tmp/dup.json"
expect "duplicate JSON key" 2 "duplicate_key" -- "$meshfit" estimate --config "$tmp/dup.json"
python3 -c "print('{\"model\": \"' + 'x' * 2000000 + '\"}')" >"$tmp/big.json"
expect "2 MB JSON config" 2 "input_too_large" -- "$meshfit" estimate --config "$tmp/big.json"
printf '{"model": "\377"}' >"$tmp/utf8.json"
expect "invalid UTF-8 in a JSON config" 2 "invalid_text" -- "$meshfit" estimate --config "$tmp/utf8.json"

expect "a budget cuts the search short" 0 "cut short" -- "$meshfit" search --model llama3-8b --gpus 64 --budget 100
# The crafted link names a custom GPU without compute figures: refused at once, naming them.
expect "the crafted link is refused at once: its custom GPU has no compute figures" 2 "gpu_bf16_tflops" -- timeout 60 "$meshfit" search --state \
  'v=1&hidden=221760&layers=10000&heads=55440&kv=55440&ffn=3991680&vocab=1000&gpus=2162160&gbs=14414400&seq=4324320&gpu=custom&gpu_memory_gib=900000&framework=deepspeed'
expect "the crafted link with compute figures stops at the default budget" 0 "search_cut_short" -- timeout 60 "$meshfit" search --state \
  'v=1&hidden=221760&layers=10000&heads=55440&kv=55440&ffn=3991680&vocab=1000&gpus=2162160&gbs=14414400&seq=4324320&gpu=custom&gpu_memory_gib=900000&gpu_bf16_tflops=989&gpu_hbm_tbps=3.35&framework=deepspeed'

echo "cli robustness: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
