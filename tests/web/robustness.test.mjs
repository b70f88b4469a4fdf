// robustness.test.mjs — the JavaScript API under hostile input (issue 17): invalid UTF-8 and lone
// surrogates, NaN/Infinity/BigInt, cycles and deep objects, huge texts, unchecked search pins and a
// crafted search. Every call answers {ok, issues} without throwing, and repeated bad calls do not
// grow memory (an abort used to leak the WASM heap on every call).
// Environment: MESHFIT_DIST (folder with meshfit.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = process.env.MESHFIT_DIST;
assert.ok(dist, 'set MESHFIT_DIST');
const { load } = await import(pathToFileURL(path.join(dist, 'meshfit.mjs')).href);
const meshfit = await load();

const codes = (result) => result.issues.map((issue) => issue.code);

function refused(result, code) {
  assert.equal(result.ok, false, JSON.stringify(result).slice(0, 300));
  if (code) assert.ok(codes(result).includes(code), `expected ${code} in ${codes(result)}`);
}

test('invalid UTF-8 in a state is an issue, not RuntimeError: Aborted()', () => {
  refused(meshfit.decodeState('v=1&model=%FF'), 'invalid_text');
  refused(meshfit.decodeState('#v=1&model=llama3-8b&seq=%FF'), 'invalid_text');
  refused(meshfit.estimate({ state: 'v=1&model=llama3-8b&seq=%C0%AF' }), 'invalid_text');
  // Lone surrogates: JSON.stringify escapes them (malformed JSON for the core); a raw string goes
  // through embind's UTF-8 encoder, which pairs it with the next character. Refused either way.
  refused(meshfit.estimate({ model: 'llama3-8b', gpu: 'h100\uD800' }));
  refused(meshfit.parseHfConfig('{"hidden_size": 4096, "model_type": "\uDC00"}'));
  assert.equal(meshfit.estimate({ model: 'llama3-8b' }).ok, true);  // the module is still alive
});

test('300 hostile calls do not grow memory', () => {
  const hostile = () => {
    meshfit.decodeState('v=1&model=%FF');
    meshfit.estimate({ state: 'v=1&seq=%FE' });
    meshfit.search({ model: 'llama3-8b', gpus: 8 }, { vpp: 0 });
    meshfit.parseHfConfig('['.repeat(100000));
  };
  for (let i = 0; i < 20; ++i) hostile();
  const before = process.memoryUsage();
  for (let i = 0; i < 300; ++i) hostile();
  const after = process.memoryUsage();
  const growth = after.arrayBuffers - before.arrayBuffers;
  assert.ok(growth < 16 * 2 ** 20, `arrayBuffers grew by ${growth} bytes`);
});

test('NaN, Infinity and BigInt in a JS object become issues, not defaults', () => {
  for (const value of [NaN, Infinity, -Infinity]) {
    for (const key of ['gpus', 'seq', 'tp', 'headroom', 'gpu_memory_gib']) {
      refused(meshfit.estimate({ model: 'llama3-8b', [key]: value }));
      refused(meshfit.encodeState({ model: 'llama3-8b', [key]: value }));
    }
  }
  refused(meshfit.estimate({ model: 'llama3-8b', gpus: 8n }));
  refused(meshfit.search({ model: 'llama3-8b', gpus: 8 }, { tp: NaN }));
});

test('cycles, deep objects and huge texts give an issue, never a throw', () => {
  const cyclic = { model: 'llama3-8b' };
  cyclic.self = cyclic;
  refused(meshfit.estimate(cyclic));
  let deep = {};
  for (let i = 0; i < 100000; ++i) deep = { a: deep };
  refused(meshfit.estimate(deep));
  let nested = 1;
  for (let i = 0; i < 100; ++i) nested = [nested];
  refused(meshfit.estimate({ model: 'llama3-8b', extra: nested }), 'input_too_large');
  const started = performance.now();
  refused(meshfit.estimate({ model: 'x'.repeat(50 * 2 ** 20) }), 'input_too_large');
  refused(meshfit.decodeState('v=1&model=' + 'x'.repeat(2 ** 20)), 'input_too_large');
  refused(meshfit.parseHfConfig('{"a": "' + 'x'.repeat(2 ** 21) + '"}'), 'input_too_large');
  assert.ok(performance.now() - started < 5000, 'huge inputs are refused quickly');
  refused(meshfit.parseHfConfig(Symbol('x')));
});

test('strict numbers, versions and duplicate keys', () => {
  refused(meshfit.decodeState('v=4294967298&model=llama3-8b'), 'state_version');
  refused(meshfit.decodeState('v=1&model=llama3-8b&gpus=0x10'), 'not_integer');
  refused(meshfit.decodeState('v=1&model=llama3-8b&tp=2&tp=4'), 'duplicate_key');
  refused(meshfit.estimate({ model: 'llama3-8b', gpus: 2 ** 64 }), 'out_of_range');
  refused(meshfit.estimate({ model: 'llama3-8b', gpu: 'custom', gpu_memory_gib: 1e308 }), 'out_of_range');
  refused(meshfit.estimate({ model: 'llama3-8b', gpu: 'custom', gpu_memory_gib: -80 }), 'not_positive');
});

test('search pins are range-checked with one code per rule', () => {
  const base = { model: 'llama3-8b', gpus: 8 };
  for (const [options, code] of [
    [{ vpp: 0 }, 'not_positive'], [{ vpp: -1 }, 'not_positive'], [{ dp: 0 }, 'not_positive'],
    [{ pp: -2 }, 'not_positive'], [{ micro_batch: 0 }, 'not_positive'], [{ zero: 7 }, 'out_of_range'],
    [{ max_vpp: 10000 }, 'out_of_range'], [{ top: 0 }, 'not_positive'], [{ budget: -5 }, 'not_positive'],
  ]) {
    const result = meshfit.search(base, options);
    refused(result, code);
    assert.equal(result.layouts, undefined);
  }
});

test('a search budget cuts the crafted link short and says so', () => {
  const small = meshfit.search({ model: 'llama3-8b', gpus: 64 }, { budget: 50 });
  assert.equal(small.ok, true);
  assert.equal(small.complete, false);
  assert.deepEqual(codes(small), ['search_cut_short']);
  const started = performance.now();
  const crafted = meshfit.search({
    state: 'v=1&hidden=221760&layers=10000&heads=55440&kv=55440&ffn=3991680&vocab=1000&gpus=2162160&gbs=14414400' +
           '&seq=4324320&gpu=custom&gpu_memory_gib=900000&framework=deepspeed' +
           '&gpu_bf16_tflops=989&gpu_hbm_tbps=3.35',  // without them the search is refused at once
  }, { budget: 100000 });
  assert.equal(crafted.complete, false);
  assert.ok(performance.now() - started < 10000);
  assert.equal(meshfit.search({ model: 'llama3-8b', gpus: 8 }).complete, true);
});

test('free text: a run name round-trips through the API and the state; over 1 KiB is refused; compile is an old spelling', () => {
  const name = 'Llama 3 — 8 GPUs & 50% MFU?';
  const result = meshfit.estimate({ model: 'llama3-8b', gpus: 8, name });
  assert.equal(result.ok, true, JSON.stringify(result.issues));
  assert.equal(result.config.name, name);
  const state = meshfit.encodeState({ model: 'llama3-8b', gpus: 8, name });
  assert.equal(meshfit.decodeState(state.state ?? state).config.name, name);
  refused(meshfit.estimate({ model: 'llama3-8b', name: 'x'.repeat(1025) }), 'input_too_large');
  const old = meshfit.estimate({ model: 'llama3-8b', gpus: 8, framework: 'fsdp', compile: true });
  assert.equal(old.ok, true);
  assert.equal(old.config.kernels, 'compiled');
  assert.ok(codes(old).includes('renamed_field'));
});

// An as-a-user review of the JS API: options that are null, not objects, or carry a key the call
// does not read; range-refused integers through JSON; empty search spaces; unknown method words.
test('options of the wrong shape and refused values are issues naming them, never a throw or a silent default', () => {
  const megatron = 'pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4';
  assert.equal(meshfit.importLaunchConfig(megatron, null).format, 'megatron');
  refused(meshfit.importLaunchConfig(megatron, 'x'), 'unknown_value');
  refused(meshfit.importLaunchConfig(megatron, { overides: { gpus: 8 } }), 'unknown_field');
  refused(meshfit.importLaunchConfig(megatron, { drop_layout: 'no' }), 'unknown_value');
  refused(meshfit.importLaunchConfig(megatron, { overrides: [1] }), 'unknown_value');
  refused(meshfit.importLaunchConfig(42), 'unknown_value');
  // A state string as overrides is read, not ignored.
  assert.equal(meshfit.importLaunchConfig(megatron, { overrides: 'v=1&gpus=16' }).fields.gpus, 16);
  const config = { model: 'llama3.1-8b', gpus: 8 };
  refused(meshfit.search(config, 'x'), 'unknown_value');
  refused(meshfit.search(config, { gpus: 64 }), 'unknown_field');
  assert.equal(meshfit.search(config, null).ok, true);
  const none = meshfit.search(config, { tp: 3 });
  refused(none, 'layout_product_mismatch');
  assert.equal(none.issues[0].field, 'tp');
  for (const [field, value] of [['gpu_sms', -1], ['gpu_nvlink_domain', -5], ['gpu_nvlink_domain', 0],
    ['gpu_bf16_gemm_ceiling', 5], ['gpu_fp8_gemm_ceiling', 0]]) {
    const result = meshfit.estimate({ ...config, [field]: value });
    refused(result);
    assert.ok(result.issues.some((issue) => issue.field === field), `${field}=${value}: ${JSON.stringify(result.issues)}`);
  }
  const methods = meshfit.methods({ ...config, methods: 'lora,QLoRA' });
  refused(methods, 'unknown_value');
  assert.match(methods.issues.map((issue) => issue.message).join(' '), /"QLoRA"/);
  refused(meshfit.methods({ ...config, methods: 5 }), 'unknown_value');
  const huge = meshfit.estimate({ model: 'llama3-8b', gpus: 4194304, tp: 4194304, pp: 4194304, cp: 4194304 });
  assert.match(huge.issues.map((issue) => issue.message).join(' '), /= 73786976294838206464 exceeds/);
});
