// api.test.mjs — the JavaScript API (node's test runner) against the native CLI: the same inputs give
// the same numbers (byte counts identical, other numbers within 1e-12 relative) over a matrix of
// configurations; state round trips; bad input gives issues, never a throw.
// Environment: MESHFIT_DIST (folder with meshfit.mjs), MESHFIT_CLI (the native meshfit binary).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = process.env.MESHFIT_DIST;
const cli = process.env.MESHFIT_CLI;
assert.ok(dist && cli, 'set MESHFIT_DIST and MESHFIT_CLI');
const { load } = await import(pathToFileURL(path.join(dist, 'meshfit.mjs')).href);
const meshfit = await load();
const scratch = mkdtempSync(path.join(tmpdir(), 'meshfit-api-'));

function native(command, config, extraArgs = []) {
  const file = path.join(scratch, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  try {
    return JSON.parse(execFileSync(cli, [command, '--config', file, '--json', ...extraArgs], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  } catch (error) {
    return JSON.parse(error.stdout);  // exit status 2 still prints the JSON with its issues
  }
}

// Deep equality: *_bytes exactly, other numbers within 1e-12 relative, everything else equal.
function sameResult(a, b, where = '') {
  if (typeof a === 'number' && typeof b === 'number') {
    if (where.endsWith('_bytes') || Number.isInteger(a)) {
      assert.equal(a, b, `${where}: ${a} vs ${b}`);
    } else {
      const scale = Math.max(Math.abs(a), Math.abs(b), 1e-300);
      assert.ok(Math.abs(a - b) / scale <= 1e-12, `${where}: ${a} vs ${b}`);
    }
    return;
  }
  if (Array.isArray(a)) {
    assert.ok(Array.isArray(b) && a.length === b.length, `${where}: array lengths differ`);
    a.forEach((item, i) => sameResult(item, b[i], `${where}[${i}]`));
    return;
  }
  if (a && typeof a === 'object') {
    assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), `${where}: keys differ`);
    for (const key of Object.keys(a)) sameResult(a[key], b[key], where ? `${where}.${key}` : key);
    return;
  }
  assert.equal(a, b, where);
}

function matrix() {
  const configs = [];
  const models = ['llama3.1-8b', 'llama3.1-70b', 'llama2-13b', 'mistral-7b', 'llama3.2-1b', 'gpt3-175b', 'llama2-70b', 'llama1-30b'];
  const layouts = [
    { gpus: 8 }, { gpus: 16, tp: 2 }, { gpus: 64, tp: 8, pp: 4 }, { gpus: 64, tp: 4, pp: 2, cp: 2 },
    { gpus: 128, tp: 8, pp: 4, vpp: 2 },
  ];
  const frameworks = [{ framework: 'megatron', zero: 1 }, { framework: 'fsdp', zero: 3 }, { framework: 'deepspeed', zero: 2 }];
  const recomputes = ['none', 'selective', 'full'];
  let i = 0;
  for (const model of models)
    for (const layout of layouts)
      for (const fw of frameworks) {
        const recompute = recomputes[i++ % 3];
        configs.push({ model, ...layout, ...fw, recompute, seq: 4096, global_batch: 512, gpu: i % 2 ? 'h100-sxm' : 'a100-80gb' });
      }
  configs.push({ model: 'llama3-8b', tp: 3, gpus: 6 });                    // invalid: issues, exit 2
  configs.push({ hidden: 1024, layers: 8, heads: 16, ffn: 4096, vocab: 32000, gpus: 2 });  // custom model
  configs.push({ model: 'llama3-8b', gpu: 'custom', gpu_memory_gib: 24, flash: false });
  return configs;
}

test('WASM estimate equals the native CLI for every configuration of the matrix', () => {
  const configs = matrix();
  assert.ok(configs.length >= 100, `${configs.length} configurations`);
  let valid = 0;
  for (const config of configs) {
    const wasm = meshfit.estimate(config);
    sameResult(wasm, native('estimate', config), JSON.stringify(config));
    if (wasm.ok) valid += 1;
  }
  assert.ok(valid >= 80, `${valid} valid configurations compared`);
});

test('WASM search equals the native CLI', () => {
  for (const config of [
    { model: 'llama3-70b', gpus: 64 },
    { model: 'llama3.1-405b', gpus: 16384, seq: 8192, global_batch: 2048, gpu: 'h100-sxm' },
    { model: 'llama3-8b', gpus: 32, framework: 'fsdp' },
  ]) {
    sameResult(meshfit.search(config, { top: 10 }), native('search', { ...config, top: 10 }), JSON.stringify(config));
  }
});

test('WASM fitAdvice equals the native CLI (meshfit fit), and each suggestion\'s state estimates to its figures', () => {
  for (const config of [
    { model: 'llama3.1-8b', gpu: 'h100-sxm', gpus: 1, finetune: 'full' },
    { model: 'llama3.1-70b', gpu: 'a100-80gb', gpus: 8, finetune: 'lora' },
    { model: 'llama3-70b', gpus: 64, seq: 8192, tp: 2 },
  ]) {
    const wasm = meshfit.fitAdvice(config);
    sameResult(wasm, native('fit', config), JSON.stringify(config));
    assert.ok(wasm.ok && wasm.verdict === 'oom' && wasm.suggestions.length > 0, JSON.stringify(config));
    for (const s of wasm.suggestions) {
      const after = meshfit.estimate({ state: s.state });
      assert.ok(after.ok, s.change);
      assert.equal(after.device_bytes, s.device_bytes, s.change);
      assert.notEqual(after.verdict, 'oom', s.change);
    }
  }
  // A config that fits gets none; a bad one its issues.
  assert.deepEqual(meshfit.fitAdvice({ model: 'llama3.2-1b', gpus: 8 }).suggestions, []);
  const bad = meshfit.fitAdvice({ model: 'llama3-8b', gpus: -1 });
  assert.equal(bad.ok, false);
  assert.ok(bad.issues.some((i) => i.field === 'gpus'));
});

test('state encodes only what differs and decodes back to the same estimate', () => {
  const config = { model: 'llama3.1-70b', gpu: 'h100-sxm', gpus: 64, seq: 8192, global_batch: 256, tp: 8, pp: 4 };
  const { ok, state } = meshfit.encodeState(config);
  assert.equal(ok, true);
  assert.equal(state, 'v=1&model=llama3.1-70b&gpus=64&seq=8192&gbs=256&tp=8&pp=4');
  const decoded = meshfit.decodeState('#' + state);
  assert.equal(decoded.ok, true);
  sameResult(meshfit.estimate({ state }).ranks, meshfit.estimate(config).ranks, 'ranks');
  assert.equal(meshfit.estimate(decoded.config).device_bytes, meshfit.estimate(config).device_bytes);
});

test('bad input comes back as issues, never as a throw', () => {
  for (const bad of [undefined, null, 'garbage', 42, [], { model: 'nope' }, { model: 'llama3-8b', seq: -1 },
                     { model: 'llama3-8b', tp: 2.5 }, { state: 'v=9&model=x' }]) {
    const result = meshfit.estimate(bad);
    assert.equal(result.ok, false, JSON.stringify(bad));
    assert.ok(result.issues.length > 0);
    for (const issue of result.issues) assert.ok(issue.code && issue.field !== undefined && issue.message);
  }
  const result = meshfit.estimate({ model: 'llama3-8b', gpus: 6, tp: 3 });
  assert.equal(result.issues[0].code, 'tp_not_divide_heads');
  assert.match(result.issues[0].message, /tp=3 does not divide 32 attention heads/);
  assert.equal(meshfit.decodeState('v=1&tp=abc').ok, false);
  assert.equal(meshfit.search({ model: 'llama3-8b' }, { memory_limit: 2 }).ok, false);
});

test('validate gives the CLI\'s rows, predictions and median', () => {
  const js = meshfit.validate();
  assert.ok(js.ok && js.rows.length >= 20 && js.false_fits === 0);
  const cliOut = JSON.parse(execFileSync(cli, ['validate', '--json'], { encoding: 'utf8' }));
  sameResult(js, cliOut, 'validate');
});

test('validate\'s "gpu" part: every H100 and H200 row with its figures measured and predicted, and a median per figure', () => {
  const { gpu } = meshfit.validate();
  const metrics = ['peak_allocated', 'peak_reserved', 'device', 'model_states', 'step_transient', 'allocator_reserve',
                   'outside_allocator', 'tokens_per_s', 'first_step_peak_allocated'];  // meshfit.d.ts GpuMetric
  assert.deepEqual(gpu.metrics.map((s) => s.metric), metrics);
  assert.ok(gpu.rows.length >= 60 && gpu.label_rows > 0);
  for (const row of gpu.rows) {
    // Each row is stated on the GPU it ran on (tests/gpu: one H100, and the h200-* rows on one H200).
    assert.match(row.software, /H100|H200/, row.id);
    if (!row.expressible) { assert.ok(row.why_not, row.id); continue; }
    assert.equal(row.config.gpu, /H200/.test(row.software) ? 'h200' : 'h100-sxm', row.id);
    assert.deepEqual(Object.keys(row.predicted).sort(), [...metrics].sort(), row.id);
    assert.ok(['fits', 'tight', 'oom'].includes(row.verdict), row.id);
    if (row.oom) assert.equal(row.measured, undefined, row.id);
    else for (const m of metrics) assert.ok(Number.isFinite(row.measured[m]) && Number.isFinite(row.predicted[m]), `${row.id} ${m}`);
  }
  for (const s of gpu.metrics) {
    assert.ok(s.rows > 0 && Number.isFinite(s.median_abs_error) && s.max_abs_error >= s.median_abs_error, s.metric);
    assert.equal(s.error_over_peak_allocated, s.metric === 'allocator_reserve' || s.metric === 'outside_allocator');
  }
});

test('presets, parseHfConfig and version', () => {
  const presets = meshfit.presets();
  assert.ok(presets.models.some((m) => m.id === 'llama3.1-405b'));
  assert.ok(presets.gpus.some((g) => g.id === 'h100-sxm' && g.memory_bytes === 85017493504));
  const hf = meshfit.parseHfConfig(JSON.stringify({
    model_type: 'llama', hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32, num_hidden_layers: 32,
    num_key_value_heads: 8, vocab_size: 128256 }));
  assert.equal(hf.ok, true);
  assert.equal(hf.model.kv_heads, 8);
  assert.equal(meshfit.parseHfConfig('{"num_local_experts": 8}').ok, false);
  assert.match(meshfit.version, /^\d+\.\d+\.\d+$/);
});

test('head_dim: a Qwen3 config.json keeps it, and the estimate with it equals the native CLI\'s', () => {
  // Qwen3-0.6B (HF Qwen/Qwen3-0.6B config.json): 16 heads of 128 on hidden 1024, not 1024 / 16 = 64.
  const hf = meshfit.parseHfConfig(JSON.stringify({
    model_type: 'qwen3', hidden_size: 1024, intermediate_size: 3072, num_attention_heads: 16, num_hidden_layers: 28,
    num_key_value_heads: 8, head_dim: 128, tie_word_embeddings: true, vocab_size: 151936 }));
  assert.equal(hf.ok, true);
  assert.equal(hf.model.head_dim, 128);
  const preset = meshfit.presets().models.find((m) => m.id === 'qwen3-0.6b');
  assert.equal(preset.head_dim, 128);
  const config = { model: 'qwen3-0.6b', gpus: 8, seq: 4096, global_batch: 64 };
  const js = meshfit.estimate(config);
  assert.equal(js.ok, true);
  sameResult(js, native('estimate', config), 'qwen3-0.6b');
  const narrow = meshfit.estimate({ ...config, head_dim: 64 });
  assert.ok(js.model_flops_per_token > narrow.model_flops_per_token);
  assert.equal(meshfit.estimate({ ...config, head_dim: -1 }).ok, false);
});

test('fine-tuning exports (torchtune YAML, HF Trainer + PEFT) equal the native CLI\'s', () => {
  const config = { model: 'llama3.1-8b', gpu: 'a100-80gb', gpus: 1, seq: 4096, finetune: 'qlora', lora_rank: 16, stack: 'hf_peft' };
  for (const format of ['torchtune', 'hf-trainer']) {
    const wasm = meshfit.exportLaunchConfig(config, format);
    assert.equal(wasm.ok, true, format);
    assert.equal(wasm.text, native('export', config, ['--format', format]).text, format);
  }
  assert.match(meshfit.exportLaunchConfig(config, 'torchtune').text, /quantize_base: True/);
  assert.match(meshfit.exportLaunchConfig(config, 'hf-trainer').text, /lora_config = LoraConfig\(/);
});

test('the page\'s view keys in a state are checked like other keys and otherwise ignored', () => {
  const view = '&tab=layouts&units=mib&sort=tokens_per_s_per_gpu&order=desc&filter=tp%3D2&pin=v%3D1%26model%3Dllama3-8b%26gpus%3D8';
  const decoded = meshfit.decodeState('v=1&model=llama3-8b&gpus=16' + view);
  assert.equal(decoded.ok, true);
  assert.deepEqual(decoded.issues, []);
  assert.equal(decoded.config.gpus, 16);
  assert.equal(meshfit.estimate({ state: 'v=1&model=llama3-8b&gpus=16' + view }).ok, true);
  const bad = meshfit.decodeState('v=1&model=llama3-8b&tab=charts&units=MB');
  assert.equal(bad.ok, true, 'a bad view value is a warning: the config still stands');
  assert.deepEqual(bad.issues.map((i) => [i.field, i.code, i.severity]),
                   [['tab', 'unknown_value', 'warning'], ['units', 'unknown_value', 'warning']]);
  assert.equal(bad.issues[0].message, 'tab must be one of inputs, memory, layouts, methods, compare, validation, got "charts".');
});

test('spatial_temporal search option: the CLI\'s layouts, marked, and no launch config for them', () => {
  // The PrimePar paper's testbed: 4-GPU V100 nodes, NVLink inside, 25 Gb/s InfiniBand per GPU.
  const config = { model: 'llama2-70b', layers: 10, gpus: 32, gpu: 'v100', gpus_per_node: 4, gpu_nvlink_domain: 4,
                   gpu_nic_gbps: 25, seq: 2048, global_batch: 32 };
  const plain = meshfit.search(config, { top: 20 });
  assert.ok(plain.ok && plain.layouts.every((l) => l.spatial_temporal_q === 1 && l.model_parallel === 'megatron_tp'));
  assert.equal(plain.spatial_temporal_layouts, undefined);
  const js = meshfit.search(config, { top: 20, spatial_temporal: true });
  sameResult(js, native('search', { ...config, top: 20, spatial_temporal: true }), 'spatial_temporal search');
  const squares = js.layouts.filter((l) => l.spatial_temporal_q > 1);
  assert.ok(squares.length > 0);
  for (const l of [...squares, ...js.spatial_temporal_layouts]) {
    assert.equal(l.model_parallel, 'spatial_temporal');
    assert.equal(l.modelled_only, 'modelled, not implemented by any public framework');
  }
  const best = squares[0];
  const chosen = { ...config, dp: best.dp, tp: best.tp, pp: best.pp, spatial_temporal_q: best.spatial_temporal_q,
                   micro_batch: best.micro_batch, recompute: best.recompute, zero: best.zero, vpp: best.vpp, sp: best.sp,
                   pp_first_stage_layers: best.pp_first_stage_layers, pp_last_stage_layers: best.pp_last_stage_layers };
  const estimated = meshfit.estimate(chosen);
  assert.equal(estimated.ok, true, JSON.stringify(estimated.issues));
  assert.equal(estimated.device_bytes, best.device_bytes);
  for (const format of ['megatron', 'torchtitan', 'deepspeed']) {
    const exported = meshfit.exportLaunchConfig(chosen, format);
    assert.equal(exported.ok, false);
    // The one error; beside it the V100's warning that its runs are fp16, not bf16 (validate.cpp).
    assert.deepEqual(exported.issues.filter((i) => i.severity === 'error').map((i) => i.code), ['st_not_exportable']);
    assert.deepEqual(exported.issues.filter((i) => i.severity !== 'error').map((i) => i.code), ['precision_unsupported']);
  }
});

test('dp_comm_overlap: the boolean it once was reads as on/off, as in the CLI, and auto follows the framework', () => {
  const base = { model: 'llama2-13b', gpus: 32, framework: 'deepspeed', zero: 2 };
  const on = meshfit.estimate({ ...base, dp_comm_overlap: true });
  const off = meshfit.estimate({ ...base, dp_comm_overlap: false });
  const auto = meshfit.estimate(base);
  for (const result of [on, off, auto]) assert.equal(result.ok, true, JSON.stringify(result.issues));
  assert.equal(on.config.dp_comm_overlap, 'on');
  assert.equal(off.config.dp_comm_overlap, 'off');
  assert.equal(auto.config.dp_comm_overlap, 'auto');
  // DeepSpeed ZeRO-2 overlap_comm=true keeps a second 5e8-element bf16 reduce bucket; auto is off there.
  assert.equal(on.ranks[0].components.comm_buffers - off.ranks[0].components.comm_buffers, 1e9);
  assert.equal(auto.ranks[0].components.comm_buffers, off.ranks[0].components.comm_buffers);
  sameResult(on, native('estimate', { ...base, dp_comm_overlap: true }), 'dp_comm_overlap true');
  assert.equal(meshfit.estimate({ ...base, dp_comm_overlap: 'sometimes' }).ok, false);
});

test('meshfit\'s own JSON (an estimate\'s result, or exportLaunchConfig(..., \'meshfit\')) imports as the same run', () => {
  const config = { model: 'llama3.1-8b', gpus: 16, tp: 2, pp: 2, seq: 8192, global_batch: 64, framework: 'fsdp' };
  const result = meshfit.estimate(config);
  assert.equal(result.ok, true);
  const exported = meshfit.exportLaunchConfig(config, 'meshfit');
  assert.equal(exported.ok, true);
  for (const text of [JSON.stringify(result), exported.text]) {
    const imported = meshfit.importLaunchConfig(text);
    assert.equal(imported.ok, true, JSON.stringify(imported.issues));
    assert.equal(imported.format, 'meshfit');
    assert.deepEqual(imported.config, result.config);
    assert.deepEqual(imported.issues, []);
  }
});
