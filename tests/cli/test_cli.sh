#!/bin/sh
# test_cli.sh — the native CLI end to end: the issue's example command prints the promised JSON
# fields, bad input exits 2 naming the field, flags override --config, validate lists the measured
# runs with the median, presets list as JSON.
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
  "len(d['ranks'])==4 and all(len(r['components'])==11 and r['pp_stage']==i for i,r in enumerate(d['ranks']))"
check "worst rank's device bytes are the max" json_has "$tmp/ok.json" \
  "d['device_bytes']==max(r['device_bytes'] for r in d['ranks'])"

check "the estimate carries its memory error band" json_has "$tmp/ok.json" \
  "d['memory_error_band']['runs']>0 and d['memory_error_band']['text'].startswith('\u00b1') and d['memory_error_band']['scope']=='pretraining on any framework'"
# Llama 3 8B on 8 H100 under Megatron at cp 2 without recompute: ~101% of capacity, inside the band.
"$meshfit" estimate --model llama3.1-8b --gpu h100-sxm --gpus 8 --cp 2 --seq 8192 --global-batch 128 --framework megatron >"$tmp/edge.txt"
check "a verdict inside the memory band says it could go either way" sh -c \
  "grep -q '^peak memory: ±' '$tmp/edge.txt' && grep -q 'could go either way' '$tmp/edge.txt'"

"$meshfit" estimate --model llama3-8b --gpus 8 --tp 3 --json >"$tmp/bad.json" 2>"$tmp/bad.err"
check "invalid input exits 2" test $? -eq 2
check "invalid input lists issues with field and code" json_has "$tmp/bad.json" \
  "any(i['field']=='tp' and i['code']=='tp_not_divide_heads' and 'tp=3' in i['message'] for i in d['issues'])"

"$meshfit" estimate --model llama3-8b --tp 2.5 >/dev/null 2>"$tmp/frac.err"
check "fractional degree exits 2" test $? -eq 2
check "fractional degree message names the field" grep -q 'tp: "2.5" is not a whole number.' "$tmp/frac.err"

"$meshfit" search --model llama3.1-70b --gpu rtx4090 --gpus 2 --finetune qlora --stack hf_peft_fsdp --seq 2048 >"$tmp/none.txt" 2>&1
check "a search with nothing feasible says why in words and points to fit" sh -c \
  "grep -q 'out of memory without pipelining' '$tmp/none.txt' && grep -q 'meshfit fit' '$tmp/none.txt'"

"$meshfit" estimate --model llama-3.1-8b >/dev/null 2>"$tmp/typo.err"
check "a mistyped model is one error, with did-you-mean, not its unset dimensions too" sh -c \
  "grep -q 'did you mean llama3.1-8b' '$tmp/typo.err' && test \$(grep -c '^error' '$tmp/typo.err') -eq 1"

"$meshfit" estimate --model llama3-8b --tp 2 --tp 4 >/dev/null 2>"$tmp/twice.err"
check "a flag given twice exits 2" test $? -eq 2
check "a flag given twice is said in the CLI's words" grep -q 'error: tp: --tp is given 2 times; give it once. \[duplicate_key\]' "$tmp/twice.err"

# Counts read as the page reads them (core/io/number_text), with the page's messages.
"$meshfit" estimate --model llama3-8b --seq 8k --global-batch 4,096 --gpus 1.6e1 --json >"$tmp/counts.json"
check "8k, 4,096 and 1.6e1 are counts" json_has "$tmp/counts.json" \
  "d['config']['seq']==8192 and d['config']['global_batch']==4096 and d['config']['gpus']==16"
"$meshfit" estimate --model llama3-8b --seq 3.7 --gpus 1e15 --json >"$tmp/badcount.json" 2>/dev/null
check "3.7 and 1e15 exit 2" test $? -eq 2
check "3.7 and 1e15 are refused with the page's words" json_has "$tmp/badcount.json" \
  "any(i['field']=='seq' and i['message']=='\"3.7\" is not a whole number.' for i in d['issues']) and any(i['field']=='gpus' and i['code']=='out_of_range' and i['message']=='\"1e15\" is beyond the largest supported value, 4194304.' for i in d['issues'])"
"$meshfit" search --model llama3-8b --gpus 8 --top 1e1 --max-micro-batch 2 --json >"$tmp/top.json"
check "search count flags read 1e1" json_has "$tmp/top.json" "len(d['layouts'])==10"

printf '{"model": "llama2-7b", "gpus": 8, "tp": 2, "seq": 2048}\n' >"$tmp/cfg.json"
"$meshfit" estimate --config "$tmp/cfg.json" --tp 4 --json >"$tmp/over.json"
check "flags override the config file" json_has "$tmp/over.json" "d['config']['tp']==4 and d['config']['seq']==2048"

"$meshfit" estimate --config "$tmp/missing.json" >/dev/null 2>&1
check "unreadable config exits 1" test $? -eq 1

"$meshfit" estimate --model llama3-8b --no-flash --no-sp --json >"$tmp/sw.json"
check "--no-flash / --no-sp switch off" json_has "$tmp/sw.json" "d['config']['flash'] is False and d['config']['sp'] is False"

"$meshfit" estimate --model llama3-8b --gpu-memory-gib 24 --json >"$tmp/small.json"
check "a small GPU gives oom and fits=false" json_has "$tmp/small.json" "d['verdict']=='oom' and d['fits'] is False"

"$meshfit" estimate --model llama3-8b --gpu-memory-gib 24 >"$tmp/small.txt"
check "an oom table says how to make it fit, each change with its state" grep -q -- "--state 'v=1&" "$tmp/small.txt"
"$meshfit" fit --model llama3-8b --gpu-memory-gib 24 --json >"$tmp/fit.json"
check "fit --json: suggestions that fit, each with its state" json_has "$tmp/fit.json" \
  "d['ok'] and d['verdict']=='oom' and len(d['suggestions'])>0 and all(s['verdict']!='oom' and s['state'].startswith('v=1') for s in d['suggestions'])"

"$meshfit" estimate --model llama3.1-70b --gpus 64 --tp 8 --pp 4 --seq 8192 >"$tmp/table.txt"
check "table output labels GiB and names the worst rank" grep -q "worst rank: first" "$tmp/table.txt"
# A custom GPU given only its memory: no step time printed as zeros, and fit says what ranking needs.
"$meshfit" estimate --model llama3.3-70b --gpu custom --gpu-memory-gib 24 --gpus 2 --finetune qlora --stack hf_peft_fsdp \
  --seq 2048 >"$tmp/custom.txt" 2>&1
check "no step time for a GPU without compute figures, not 0 tokens/s" sh -c \
  "grep -q 'MFU: not predicted (gpu: see its warning below)' '$tmp/custom.txt' && grep -q 'has no dense BF16 TFLOPS' '$tmp/custom.txt' && ! grep -q '0 tokens/s/GPU' '$tmp/custom.txt'"
check "fit says ranking needs the compute figures" grep -q "ranking changes needs the GPU's dense BF16" "$tmp/custom.txt"
"$meshfit" estimate --model llama3.1-8b --gpus 8 --gpus-per-node 1 --gpu-nic-gbps 0 >"$tmp/nic.txt" 2>&1
check "no network figure across nodes is named as the reason, not the GPU's TFLOP/s" sh -c \
  "grep -q 'not predicted (gpu_nic_gbps' '$tmp/nic.txt' && grep -q 'gpu_nic_gbps is 0 and the 8 GPUs span nodes of 1' '$tmp/nic.txt'"

"$meshfit" validate --json >"$tmp/validate.json"
check "validate exits 0" test $? -eq 0
check "validate lists every measured run with metric, error, source and the median" json_has "$tmp/validate.json" \
  "len(d['rows'])>=20 and all('metric' in r and 'source' in r for r in d['rows']) and d['measured_rows']>0 and 0<=d['median_abs_error']<1 and all('signed_error' in r for r in d['rows'] if r['expressible'] and 'measured_bytes' in r)"
check "validate never predicts 'fits' for a run that ran out of memory" json_has "$tmp/validate.json" "d['false_fits']==0"
"$meshfit" validate >"$tmp/validate.txt"
check "validate prints the median" grep -q "median |error|" "$tmp/validate.txt"
check "validate lists the fine-tuning runs with metric, signed error and source" json_has "$tmp/validate.json" \
  "len(d['finetune']['rows'])==49 and d['finetune']['measured_rows']>=15 and d['finetune']['false_fits']==0 and all('signed_error' in r for r in d['finetune']['rows'] if r['expressible'] and 'measured_bytes' in r)"
check "validate prints the fine-tuning table" grep -q "Fine-tuning (full, LoRA, QLoRA)" "$tmp/validate.txt"

"$meshfit" export --format torchtune --model llama3.1-8b --gpu a100-80gb --gpus 1 --finetune qlora --lora-rank 16 >"$tmp/tt.yaml"
check "export --format torchtune writes a recipe YAML with the QLoRA builder and rank" \
  grep -q "quantize_base: True" "$tmp/tt.yaml"
"$meshfit" export --format hf-trainer --model llama3.1-8b --gpu a100-80gb --gpus 1 --finetune qlora --lora-rank 16 >"$tmp/hf.py"
check "export --format hf-trainer writes TrainingArguments and LoraConfig" grep -q "lora_config = LoraConfig(" "$tmp/hf.py"
check "the hf-trainer snippet is Python" python3 -c "import ast,sys; ast.parse(open(sys.argv[1]).read())" "$tmp/hf.py"

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
# A run name (one schema row): --name through the state and --json, UTF-8 kept, over 1 KiB refused.
"$meshfit" estimate --model llama3-8b --name "Llama 3 — 8 GPUs" --print-state >"$tmp/name.state"
"$meshfit" estimate --state "$(cat "$tmp/name.state")" --json >"$tmp/name.json"
check "--name comes back through the state" json_has "$tmp/name.json" "d['config']['name']=='Llama 3 \u2014 8 GPUs'"
"$meshfit" estimate --model llama3-8b --name "$(head -c 1025 /dev/zero | tr '\0' x)" --json >"$tmp/long_name.json"
check "a name over 1 KiB is refused with input_too_large" json_has "$tmp/long_name.json" \
  "not d['ok'] and any(i['code']=='input_too_large' and i['field']=='name' for i in d['issues'])"
# The old --compile flag still reads, as kernels=compiled with a renamed_field warning.
"$meshfit" estimate --model llama3-8b --framework fsdp --compile --json >"$tmp/compile.json"
check "--compile reads as kernels=compiled" json_has "$tmp/compile.json" \
  "d['ok'] and d['config']['kernels']=='compiled' and any(i['code']=='renamed_field' for i in d['issues'])"
# dp_comm_overlap was a boolean: --dp-comm-overlap alone and --no-dp-comm-overlap still read (on/off),
# beside the words; no flag is auto. No warning: the same key reads its old values.
overlap() {  # overlap NAME EXPECTED FLAGS...
  name="$1"; expected="$2"; shift 2
  "$meshfit" estimate --model llama3-8b --gpus 16 --framework deepspeed "$@" --json >"$tmp/overlap.json" 2>/dev/null
  check "$name" json_has "$tmp/overlap.json" "d['ok'] and d['config']['dp_comm_overlap']=='$expected' and not d['issues']"
}
overlap "no flag is dp_comm_overlap=auto" auto
overlap "--dp-comm-overlap alone is on" on --dp-comm-overlap --tp 1
overlap "--no-dp-comm-overlap is off" off --no-dp-comm-overlap
overlap "--dp-comm-overlap off" off --dp-comm-overlap off
overlap "--dp-comm-overlap true (the old value) is on" on --dp-comm-overlap true
overlap "--dp-comm-overlap 0 is off" off --dp-comm-overlap 0
"$meshfit" estimate --model llama3-8b --dp-comm-overlap maybe >/dev/null 2>"$tmp/overlap.err"
check "--dp-comm-overlap maybe exits 2" test $? -eq 2
check "--dp-comm-overlap maybe names the field and its words" grep -q 'dp_comm_overlap must be one of auto, on, off' "$tmp/overlap.err"
"$meshfit" estimate --help >"$tmp/help.txt" 2>&1
check "help lists the words and the old switch" grep -q -- '--no-dp-comm-overlap' "$tmp/help.txt"
# Launch configs: a Megatron-LM command line -> import -> search -> export --format megatron.
data="$(dirname "$0")/../data/launch"
args=$(grep -v '^#' "$data/gpt3-175b.megatron.sh")
"$meshfit" import --megatron-args "$args" --json >"$tmp/import.json" 2>/dev/null
check "import reads the Megatron-LM example" json_has "$tmp/import.json" \
  "d['ok'] and d['format']=='megatron' and d['config']['tp']==8 and d['config']['pp']==16 and d['config']['gpus']==128"
imported=$("$meshfit" import --megatron-args "$args" --print-state 2>/dev/null)
"$meshfit" estimate --state "$imported" --json >"$tmp/imported_estimate.json"
check "the imported state estimates as the command's layout" json_has "$tmp/imported_estimate.json" \
  "d['ok'] and d['config']['tp']==8 and d['config']['pp']==16 and d['config']['global_batch']==1536"
free=$("$meshfit" import --megatron-args "$args" --gpus 1024 --drop-layout --print-state 2>/dev/null)
check "--drop-layout leaves the layout to the search" sh -c "echo '$free' | grep -qv 'tp='"
"$meshfit" search --state "$free" --top 1 --json >"$tmp/free_search.json"
check "the search runs on the imported model" json_has "$tmp/free_search.json" "d['ok'] and len(d['layouts'])==1"
"$meshfit" export --format megatron --state "$free" --fastest >"$tmp/fastest.sh" 2>/dev/null
check "export --fastest exits 0" test $? -eq 0
check "export --fastest writes the search's best layout" python3 -c "
import json, shlex; d=json.load(open('$tmp/free_search.json'))['layouts'][0]
words=shlex.split(open('$tmp/fastest.sh').read().replace('\\\n',' '))
v=lambda f: int(words[words.index(f)+1])
exit(0 if v('--tensor-model-parallel-size')==d['tp'] and v('--pipeline-model-parallel-size')==d['pp'] and v('--global-batch-size')==1536 else 1)"
"$meshfit" import --megatron-args "$(cat "$tmp/fastest.sh")" --json >"$tmp/reimport.json" 2>/dev/null
check "the exported flags import back" json_has "$tmp/reimport.json" "d['ok'] and d['config']['gpus']==1024"
"$meshfit" import --hf "$data/llama3.1-8b.config.json" --gpus 8 --json >"$tmp/hf.json"
check "import --hf reads a published config.json" json_has "$tmp/hf.json" "d['ok'] and d['config']['kv_heads']==8 and d['config']['vocab']==128256"
"$meshfit" import --torchtitan "$data/llama3-8b.torchtitan.toml" --gpus 8 --json >"$tmp/tt.json" 2>/dev/null
check "import --torchtitan reads torchtitan's example" json_has "$tmp/tt.json" "d['ok'] and d['config']['framework']=='fsdp' and d['config']['model']=='llama3.1-8b'"
"$meshfit" import --deepspeed "$data/hf-trainer-zero3.deepspeed.json" --model llama3-8b --micro-batch 1 --json >"$tmp/ds.json" 2>/dev/null
check "import --deepspeed reads the HF Trainer's ZeRO-3 config" json_has "$tmp/ds.json" "d['ok'] and d['config']['zero']==3"
# meshfit's own JSON: an estimate's --json result is the config it was computed from, for --config and import.
"$meshfit" import --file "$tmp/ok.json" --json >"$tmp/own.json" 2>"$tmp/own.err"
check "import reads an estimate's --json result as meshfit's config" json_has "$tmp/own.json" \
  "d['ok'] and d['format']=='meshfit' and d['config']['tp']==8 and d['config']['pp']==4 and not d['issues']"
"$meshfit" estimate --config "$tmp/ok.json" --tp 4 --json >"$tmp/again.json" 2>/dev/null
check "--config reads an estimate's result, flags over it" json_has "$tmp/again.json" \
  "d['ok'] and d['config']['tp']==4 and d['config']['pp']==4 and d['config']['gpus']==64"
"$meshfit" export --format torchtitan --model llama3.1-8b --framework fsdp --gpus 64 --tp 2 >"$tmp/tt.toml" 2>/dev/null
check "export --format torchtitan writes TOML sections" grep -q '^\[parallelism\]' "$tmp/tt.toml"
"$meshfit" export --format deepspeed --model llama3-8b --framework deepspeed --gpus 8 --zero 3 --json >"$tmp/dsout.json" 2>/dev/null
check "export --format deepspeed: accumulation = global / (dp x micro)" python3 -c "
import json; d=json.loads(json.load(open('$tmp/dsout.json'))['text']); exit(0 if d['gradient_accumulation_steps']==512//8 else 1)"
printf '{"hidden_size": 4096,' >"$tmp/truncated.json"
"$meshfit" import --hf "$tmp/truncated.json" >/dev/null 2>"$tmp/truncated.err"
check "a truncated config.json exits 2 naming the parse error" sh -c "test $? -eq 2 && grep -q malformed_json '$tmp/truncated.err'"
"$meshfit" export --format yaml --model llama3-8b >/dev/null 2>&1
check "an unknown export format exits 2" test $? -eq 2

echo "cli: $passed passed, $failed failed"
test "$failed" -eq 0
