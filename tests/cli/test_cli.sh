#!/bin/sh
# test_cli.sh — the native CLI end to end: the issue's example command prints the promised JSON
# fields, bad input exits 2 naming the field, flags override --config, presets list as JSON.
# Usage: test_cli.sh PATH_TO_MESHFIT
set -u
meshfit="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
check() {  # check NAME COMMAND...
  name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $name"; fi
}
json_has() {  # json_has FILE PYTHON_EXPRESSION (over d)
  python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"
}

"$meshfit" estimate --model llama3.1-70b --gpu h100-sxm --gpus 64 --tp 8 --pp 4 --seq 8192 --global-batch 512 --json >"$tmp/ok.json"
check "example exits 0" test $? -eq 0
check "example has the promised fields" json_has "$tmp/ok.json" \
  "all(k in d for k in ['peak_allocated_bytes','peak_reserved_bytes','device_bytes','capacity_bytes','fits','verdict','worst_rank','ranks','issues'])"
check "one rank per pipeline stage with components" json_has "$tmp/ok.json" \
  "len(d['ranks'])==4 and all(len(r['components'])==10 and r['pp_stage']==i for i,r in enumerate(d['ranks']))"
check "worst rank's device bytes are the max" json_has "$tmp/ok.json" \
  "d['device_bytes']==max(r['device_bytes'] for r in d['ranks'])"

"$meshfit" estimate --model llama3-8b --gpus 8 --tp 3 --json >"$tmp/bad.json" 2>"$tmp/bad.err"
check "invalid input exits 2" test $? -eq 2
check "invalid input lists issues with field and code" json_has "$tmp/bad.json" \
  "any(i['field']=='tp' and i['code']=='tp_not_divide_heads' and 'tp=3' in i['message'] for i in d['issues'])"

"$meshfit" estimate --model llama3-8b --tp 2.5 >/dev/null 2>"$tmp/frac.err"
check "fractional degree exits 2" test $? -eq 2
check "fractional degree message names the field" grep -q "tp must be an integer, got 2.5" "$tmp/frac.err"

printf '{"model": "llama2-7b", "gpus": 8, "tp": 2, "seq": 2048}\n' >"$tmp/cfg.json"
"$meshfit" estimate --config "$tmp/cfg.json" --tp 4 --json >"$tmp/over.json"
check "flags override the config file" json_has "$tmp/over.json" "d['config']['tp']==4 and d['config']['seq']==2048"

"$meshfit" estimate --config "$tmp/missing.json" >/dev/null 2>&1
check "unreadable config exits 1" test $? -eq 1

"$meshfit" estimate --model llama3-8b --no-flash --no-sp --json >"$tmp/sw.json"
check "--no-flash / --no-sp switch off" json_has "$tmp/sw.json" "d['config']['flash'] is False and d['config']['sp'] is False"

"$meshfit" estimate --model llama3-8b --gpu-memory-gib 24 --json >"$tmp/small.json"
check "a small GPU gives oom and fits=false" json_has "$tmp/small.json" "d['verdict']=='oom' and d['fits'] is False"

"$meshfit" estimate --model llama3.1-70b --gpus 64 --tp 8 --pp 4 --seq 8192 >"$tmp/table.txt"
check "table output labels GiB and names the worst rank" grep -q "worst rank: first" "$tmp/table.txt"

"$meshfit" presets --json >"$tmp/presets.json"
check "presets --json lists models and gpus" json_has "$tmp/presets.json" "len(d['models'])>=15 and len(d['gpus'])>=10"

check "estimate --json carries the step-time prediction" json_has "$tmp/ok.json" \
  "all(k in d for k in ['step_time_s','tokens_per_s_per_gpu','mfu','breakdown']) and 0 < d['mfu'] < 1"

"$meshfit" search --model llama3.1-405b --gpu h100-sxm --gpus 16384 --seq 8192 --global-batch 2048 --top 10 --json >"$tmp/search.json"
check "search exits 0" test $? -eq 0
check "search JSON has counts and ranked layouts with the promised fields" json_has "$tmp/search.json" \
  "d['evaluated'] == d['feasible'] + sum(d['rejected'].values()) and len(d['layouts']) == 10 and all(all(k in l for k in ['dp','tp','pp','cp','vpp','micro_batch','zero','recompute','sp','peak_reserved_bytes','fits','step_time_s','tokens_per_s_per_gpu','mfu','breakdown']) for l in d['layouts'])"
check "search layouts are sorted best first" json_has "$tmp/search.json" \
  "all(a['tokens_per_s_per_gpu'] >= b['tokens_per_s_per_gpu'] for a, b in zip(d['layouts'], d['layouts'][1:]))"

"$meshfit" search --model llama3-70b --gpus 64 --tp 8 --recompute full --max-pp 4 --json >"$tmp/pinned.json"
check "search honours pins and bounds" json_has "$tmp/pinned.json" \
  "d['layouts'] and all(l['tp'] == 8 and l['recompute'] == 'full' and l['pp'] <= 4 for l in d['layouts'])"

"$meshfit" search --model llama3-8b --gpus 64 --memory-limit 1.5 --json >"$tmp/badlimit.json" 2>/dev/null
check "search rejects a memory limit above 1 with exit 2" test $? -eq 2

"$meshfit" search --model llama3-8b --gpus 64 >"$tmp/search.txt"
check "search table lists ranked layouts" grep -q "^1 " "$tmp/search.txt"

state=$("$meshfit" estimate --model llama3.1-70b --gpus 64 --tp 8 --pp 4 --seq 8192 --global-batch 256 --print-state)
check "--print-state prints the minimal state" test "$state" = "v=1&model=llama3.1-70b&gpus=64&seq=8192&gbs=256&tp=8&pp=4"
"$meshfit" estimate --state "$state" --json >"$tmp/fromstate.json"
"$meshfit" estimate --model llama3.1-70b --gpus 64 --tp 8 --pp 4 --seq 8192 --global-batch 256 --json >"$tmp/fromflags.json"
check "--state gives the same estimate as the flags" python3 -c "
import json; a=json.load(open('$tmp/fromstate.json')); b=json.load(open('$tmp/fromflags.json')); exit(0 if a==b else 1)"
"$meshfit" estimate --state "$state" --tp 4 --json >"$tmp/override.json"
check "flags override --state" json_has "$tmp/override.json" "d['config']['tp']==4 and d['config']['pp']==4"
"$meshfit" estimate --state "v=1&model=llama3-8b&tp=abc" >/dev/null 2>&1
check "a bad state exits 2" test $? -eq 2

# Framework defaults come from the profile: FSDP without --zero means full sharding (issue 10).
"$meshfit" estimate --model llama3.1-8b --gpus 8 --framework fsdp --json >"$tmp/fsdp.json"
check "--framework fsdp alone is valid" test $? -eq 0
check "FSDP defaults to zero=3" json_has "$tmp/fsdp.json" "d['ok'] and d['config']['zero']==3"
# Every schema field has its flag, text ones kept as text.
"$meshfit" estimate --model llama3-8b --notes 123 --print-state >"$tmp/notes.state"
check "--notes is carried in the state as text" grep -q "notes=123" "$tmp/notes.state"
"$meshfit" estimate --state "$(cat "$tmp/notes.state")" --json >"$tmp/notes.json"
check "notes come back as a string" json_has "$tmp/notes.json" "d['config']['notes']=='123'"

echo "cli: $passed passed, $failed failed"
test "$failed" -eq 0
