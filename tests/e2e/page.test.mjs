// page.test.mjs — the calculator page in Debian's Chromium (playwright-core, headless, software
// WebGL2 via SwiftShader; ../../shared/TOOLCHAIN.md). Loads the single-file page from file:// with
// the network blocked, checks the rendered canvas, compares the DOM mirror with the native CLI,
// clicks and types on the canvas, and saves screenshots as artifacts.
// Environment: MESHFIT_SITE (folder with meshfit.html), MESHFIT_CLI (native meshfit), MESHFIT_ARTIFACTS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { artifacts, cli, clickWidget, frames, hash, launchChromium, mirror, nativeRanks, newContext, openPage, pageUrl, site,
         scrollTo, settled, typeInto, useChromium, version, watchErrors, widgets } from './harness.mjs';

useChromium();

// Distinct byte values in the PNG's decoded image data: a blank canvas has a handful.
function pngVariety(png) {
  const chunks = [];
  for (let offset = 8; offset < png.length;) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('ascii', offset + 4, offset + 8);
    if (type === 'IDAT') chunks.push(png.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
  }
  return new Set(inflateSync(Buffer.concat(chunks))).size;
}

// Shows the Methods view; returns the page's mirror once it is ranked, and `meshfit methods` for its state.
async function methodsView(page) {
  await clickWidget(page, 'tab_methods');
  await page.waitForFunction(() => JSON.parse(document.getElementById('mirror').textContent).methods !== undefined, null, { timeout: 60000 });
  const m = await mirror(page);
  return { m, native: JSON.parse(execFileSync(cli, ['methods', '--state', m.state, '--json'], { encoding: 'utf8' })) };
}

test('loads from file:// with the network blocked, renders, and logs no errors', async () => {
  const { context, page, errors, blocked } = await openPage();
  const shot = await page.screenshot({ path: path.join(artifacts, 'memory-dark.png') });
  assert.ok(pngVariety(shot) > 64, 'the canvas shows a rendered page, not a blank one');
  const m = await mirror(page);
  assert.equal(m.ok, true);
  assert.equal(m.config.model, 'llama3.1-70b');
  assert.equal(m.config.gpus, 64);
  assert.match(await page.evaluate(() => document.getElementById('results').textContent), /Worst rank/);
  const firstFrameMs = await page.evaluate(() => window.meshfitFirstFrameMs);
  console.log(`time to first rendered frame: ${firstFrameMs.toFixed(0)} ms (software WebGL)`);
  assert.deepEqual(blocked, [], 'the page asks the network for nothing');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a state in the URL hash shows the same per-rank figures as the CLI', async () => {
  const state = 'v=1&model=llama3-70b&gpus=128&seq=4096&gbs=256&tp=8&pp=4&vpp=2&recompute=selective';
  const { context, page, errors } = await openPage('#' + state);
  const m = await mirror(page);
  assert.equal(m.ok, true);
  assert.deepEqual(m.ranks, nativeRanks(state));
  // The page keeps the link in its canonical form (defaults dropped, fields in schema order).
  const canonical = execFileSync(cli, ['estimate', '--state', state, '--print-state'], { encoding: 'utf8' }).trim();
  assert.equal(await hash(page), '#' + canonical);
  await page.screenshot({ path: path.join(artifacts, 'state-from-url.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('clicks and typing on the canvas change the GPU count and select a layout; results and URL follow', async () => {
  const { context, page, errors } = await openPage();
  await typeInto(page, 'gpus', '128');
  let m = await mirror(page);
  assert.equal(m.ok, true);
  assert.equal(m.config.gpus, 128);
  assert.match(await hash(page), /gpus=128/);
  assert.deepEqual(m.ranks, nativeRanks(m.state));

  await clickWidget(page, 'tab_layouts');
  await page.screenshot({ path: path.join(artifacts, 'layouts.png') });
  const before = await hash(page);
  await clickWidget(page, 'layout_row_1', { changes: true });
  m = await mirror(page);
  assert.equal(m.selected_layout, 1, 'the clicked row is now the current layout');
  assert.notEqual(await hash(page), before, 'the URL follows the chosen layout');
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  await page.screenshot({ path: path.join(artifacts, 'layout-selected.png') });
  await clickWidget(page, 'tab_validation');  // measured runs vs predictions (meshfit validate)
  await page.screenshot({ path: path.join(artifacts, 'validation.png') });
  // Its own sub-tab: the step-time model against the 434 published throughput runs.
  await clickWidget(page, 'validation_tab_throughput');
  const throughput = (await widgets(page)).validation_throughput;
  const height = await page.evaluate(() => innerHeight);
  assert.ok(throughput && throughput[1] >= 0 && throughput[1] < height, 'the throughput validation is on screen');
  await page.screenshot({ path: path.join(artifacts, 'validation-throughput.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('invalid input shows its message and nothing crashes', async () => {
  const { context, page, errors } = await openPage();
  await typeInto(page, 'seq', '0');
  const m = await mirror(page);
  assert.equal(m.ok, false);
  assert.ok(m.issues.some((i) => i.field === 'seq' && /positive/.test(i.message)));
  await page.screenshot({ path: path.join(artifacts, 'invalid-input.png') });
  // Still alive: a valid value brings results back.
  await typeInto(page, 'seq', '4096');
  assert.equal((await mirror(page)).ok, true);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the peak is shown with the memory error band the CLI reports, and a verdict inside it is said to go either way', async () => {
  // Llama 3.1 8B under Megatron-LM on 8 H100 at cp 2, no recompute: ~101% of capacity (CLI test_cli.sh).
  const state = 'v=1&model=llama3.1-8b&gpus=8&seq=8192&gbs=128&cp=2&framework=megatron';
  const { context, page, errors } = await openPage('#' + state);
  const m = await mirror(page);
  assert.equal(m.ok, true);
  const native = JSON.parse(execFileSync(cli, ['estimate', '--state', state, '--json'], { encoding: 'utf8' }));
  const band = native.memory_error_band;
  assert.ok(band.runs > 0 && band.capacity_within, JSON.stringify(band));
  assert.ok(m.memory_band_text.startsWith('Peak memory ' + band.text + '.'), m.memory_band_text);
  assert.ok(m.memory_band_text.includes('could go either way'), m.memory_band_text);
  assert.match(m.banner.text, /^OUT OF MEMORY .*\(101% of capacity\), within the ±\d+\.\d% error: could go either way$/);
  assert.ok((await page.evaluate(() => document.getElementById('results').textContent)).includes(band.text));
  await clickWidget(page, 'copy_markdown');
  assert.ok((await page.evaluate(() => meshfitShell.lastClipboard())).includes(m.memory_band_text));
  assert.deepEqual(errors, []);
  await context.close();
});

test('tokens/s, MFU and the time to train are shown with the validation error band the CLI reports', async () => {
  const state = 'v=1&model=llama3-70b&gpus=128&seq=4096&gbs=256&tp=8&pp=4&vpp=2&recompute=selective';
  const { context, page, errors } = await openPage('#' + state);
  let m = await mirror(page);
  assert.equal(m.ok, true);
  const native = JSON.parse(execFileSync(cli, ['estimate', '--state', state, '--tokens-to-train', '15e12', '--json'],
    { encoding: 'utf8' }));
  assert.ok(native.error_band.runs > 0, 'H100 Megatron has published runs behind its band');
  assert.ok(m.throughput_text.includes(native.error_band.text), m.throughput_text);
  assert.ok(!m.throughput_text.includes(' to train '), 'no time to train without tokens to train');
  // Typing 15,000 billion tokens (Llama 3's corpus) gives the CLI's days, band beside them.
  await typeInto(page, 'tokens_to_train', '15000');
  m = await mirror(page);
  assert.equal(m.config.tokens_to_train, 15e12);
  assert.match(native.time_to_train_text, /^\d+\.\d days$/);
  assert.ok(m.throughput_text.includes(`${native.time_to_train_text} to train 15 T tokens (each ${native.error_band.text})`), m.throughput_text);
  assert.equal(m.throughput_text.split(native.error_band.text).length, 2, 'the band once');
  assert.ok((await page.evaluate(() => document.getElementById('results').textContent)).includes(native.error_band.text));
  await clickWidget(page, 'copy_markdown');
  assert.ok((await page.evaluate(() => meshfitShell.lastClipboard())).includes(m.throughput_text));
  assert.deepEqual(errors, []);
  await context.close();
});

test('Copy link and Copy as Markdown put the page link and the per-rank table on the clipboard', async () => {
  const { context, page, errors } = await openPage('#v=1&model=llama3-8b&gpus=16&tp=2');
  await clickWidget(page, 'copy_link');
  const link = await page.evaluate(() => meshfitShell.lastClipboard());
  assert.equal(link, await page.evaluate(() => location.href));
  assert.match(link, /#v=1&model=llama3-8b&gpus=16&tp=2$/);
  await clickWidget(page, 'copy_markdown');
  const markdown = await page.evaluate(() => meshfitShell.lastClipboard());
  assert.match(markdown, /^\*\*meshfit\*\*: llama3-8b on 16 x h100-sxm/);
  assert.match(markdown, /\| only \(GiB\) \||\| rank \(GiB\) \|/);
  assert.ok(!markdown.includes('file://'), 'no local-file link in a Markdown meant for an issue');
  assert.ok(markdown.includes('(state `v=1&model=llama3-8b&gpus=16&tp=2`)'), 'the state instead, which the CLI and any copy read');
  assert.match(markdown, /Fastest layouts that fit/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a lost WebGL context is restored and the page keeps working', async () => {
  const { context, page, errors } = await openPage();
  await page.evaluate(() => {
    const lose = document.getElementById('canvas').getContext('webgl2').getExtension('WEBGL_lose_context');
    lose.loseContext();
    setTimeout(() => lose.restoreContext(), 200);
  });
  await page.waitForFunction(() => !document.getElementById('canvas').getContext('webgl2').isContextLost());
  await typeInto(page, 'gpus', '32');
  assert.equal((await mirror(page)).config.gpus, 32);
  const shot = await page.screenshot({ path: path.join(artifacts, 'after-context-restore.png') });
  assert.ok(pngVariety(shot) > 64, 'the canvas renders again after the restore');
  assert.deepEqual(errors, []);
  await context.close();
});

// The three ways the page once lost inputs on the way to the core (issue 10): it kept a copy of the
// config with fewer fields than the schema. Each compares the page with the CLI on the same state.

test('a run name in the link is kept, shown in the header and quoted in the Markdown (one schema row, no UI code)', async () => {
  const state = 'v=1&model=llama3-8b&gpus=16&tp=2&name=' + encodeURIComponent('Llama 3 — 16 GPUs');
  const { context, page, errors } = await openPage('#' + state);
  const m = await mirror(page);
  assert.equal(m.ok, true);
  assert.equal(m.config.name, 'Llama 3 — 16 GPUs');
  await clickWidget(page, 'copy_markdown');
  const markdown = await page.evaluate(() => meshfitShell.lastClipboard());
  assert.ok(markdown.includes('> name: Llama 3 — 16 GPUs'), markdown.slice(0, 400));
  assert.ok((await hash(page)).includes('name='), 'the page keeps the name in its link');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a link with an uneven pipeline split and fp32_grad_buffer=false keeps every field', async () => {
  const state = 'v=1&model=llama3.1-405b&gpus=2048&seq=8192&gbs=2048&fp32_grad_buffer=false&tp=8&pp=16' +
                '&pp_first_stage_layers=7&pp_last_stage_layers=7';
  const { context, page, errors } = await openPage('#' + state);
  const m = await mirror(page);
  assert.deepEqual(m.issues, [], 'the CLI accepts this state, so must the page');
  assert.equal(m.ok, true);
  assert.equal(m.config.pp_first_stage_layers, 7);
  assert.equal(m.config.pp_last_stage_layers, 7);
  assert.equal(m.config.fp32_grad_buffer, false);
  assert.deepEqual(m.ranks, nativeRanks(state));
  const canonical = execFileSync(cli, ['estimate', '--state', state, '--print-state'], { encoding: 'utf8' }).trim();
  assert.equal(await hash(page), '#' + canonical, 'the page rewrites the link without losing a key');
  assert.deepEqual(errors, []);
  await context.close();
});

test('"Use the fastest layout" applies the whole layout, uneven split included (README example)', async () => {
  const state = 'v=1&model=llama3.1-405b&gpus=16384&seq=8192&gbs=2048';
  const { context, page, errors } = await openPage('#' + state);
  await clickWidget(page, 'best_layout', { changes: true });
  const m = await mirror(page);
  assert.deepEqual(m.issues, []);
  assert.equal(m.ok, true);
  const best = JSON.parse(execFileSync(cli, ['search', '--state', state, '--top', '1', '--json'], { encoding: 'utf8' })).layouts[0];
  for (const key of ['tp', 'pp', 'cp', 'vpp', 'micro_batch', 'zero', 'recompute', 'pp_first_stage_layers', 'pp_last_stage_layers'])
    assert.equal(m.config[key], best[key], `${key} is the search's`);
  assert.equal(m.selected_layout, 0, 'the applied layout is the first of the table');
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  await page.screenshot({ path: path.join(artifacts, 'fastest-layout-405b.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('"Edit dimensions" and the HF import keep linear_bias and dropout', async () => {
  const { context, page, errors } = await openPage('#v=1&model=gpt3-175b&gpus=64&tp=8&pp=8');
  const preset = await mirror(page);
  assert.equal(preset.config.linear_bias, true);
  await clickWidget(page, 'edit_dimensions', { changes: true });
  const edited = await mirror(page);
  assert.equal(edited.config.model, 'custom');
  assert.equal(edited.config.linear_bias, true);
  assert.equal(edited.config.dropout, true);
  assert.deepEqual(edited.ranks, preset.ranks, 'the same model, so the same memory (58.96 GiB worst rank)');

  await clickWidget(page, 'hf_toggle');
  await clickWidget(page, 'hf_config');
  await page.keyboard.type('{"model_type": "gpt2", "n_embd": 12288, "n_layer": 96, "n_head": 96, "vocab_size": 50257}');
  await clickWidget(page, 'hf_import', { changes: true });
  const imported = await mirror(page);
  assert.equal(imported.config.linear_bias, true, 'GPT-2 style projections have biases');
  assert.equal(imported.config.norm, 'layernorm');
  assert.deepEqual(imported.ranks, nativeRanks(imported.state));
  assert.deepEqual(errors, []);
  await context.close();
});

test('a Qwen3 preset keeps its head_dim through "Edit dimensions", and the custom form lists head_dim', async () => {
  const { context, page, errors } = await openPage('#v=1&model=qwen3-32b&gpus=8&tp=8');
  const preset = await mirror(page);
  assert.equal(preset.config.head_dim, 128, 'HF Qwen/Qwen3-32B config.json head_dim (5120 / 64 would be 80)');
  await page.screenshot({ path: path.join(artifacts, 'head-dim-preset.png') });
  await clickWidget(page, 'edit_dimensions', { changes: true });
  const edited = await mirror(page);
  assert.equal(edited.config.model, 'custom');
  assert.equal(edited.config.head_dim, 128);
  assert.match(edited.state, /head_dim=128/, 'a custom model writes its head_dim into the link');
  assert.ok(edited.form.some((f) => f.field === 'head_dim'), 'the DOM form has a head_dim field');
  assert.deepEqual(edited.ranks, preset.ranks, 'the same model, so the same memory');
  assert.deepEqual(edited.ranks, nativeRanks(edited.state));
  await page.screenshot({ path: path.join(artifacts, 'head-dim-custom.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('without WebGL2 the page says so instead of failing silently', async () => {
  const noWebgl = await launchChromium(['--disable-webgl']);
  const page = await noWebgl.newPage();
  await page.goto(pageUrl);
  await page.waitForFunction(() => document.getElementById('overlay')?.classList.contains('failed'), null, { timeout: 30000 });
  assert.match(await page.evaluate(() => document.getElementById('status').textContent), /needs WebGL2/);
  await noWebgl.close();
});

test('HiDPI and the light theme render crisply (screenshots for review)', async () => {
  const { context, page, errors } = await openPage('', { deviceScaleFactor: 2, colorScheme: 'light' });
  const size = await page.evaluate(() => [document.getElementById('canvas').width, innerWidth]);
  assert.equal(size[0], size[1] * 2, 'the canvas backing store is in physical pixels');
  await page.screenshot({ path: path.join(artifacts, 'memory-light-hidpi.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('the hosted page (separate .js and .wasm) loads over http:// from a local server', async () => {
  const { createServer } = await import('node:http');
  const { readFile } = await import('node:fs/promises');
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };
  const server = createServer(async (request, response) => {
    const file = path.join(site, request.url === '/' ? 'index.html' : path.basename(request.url.split('?')[0]));
    try {
      const body = await readFile(file);
      response.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const context = await newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`http://127.0.0.1:${server.address().port}/#v=1&model=llama3-8b&gpus=16&tp=2`);
  await page.waitForFunction(() => window.meshfitReady === true, null, { timeout: 60000 });
  await settled(page);
  const m = await mirror(page);
  assert.equal(m.config.model, 'llama3-8b');
  assert.equal(m.config.tp, 2);
  assert.equal(m.local_file, false);
  await clickWidget(page, 'copy_markdown');
  const markdown = await page.evaluate(() => meshfitShell.lastClipboard());
  assert.ok(markdown.includes(`([open](http://127.0.0.1:${server.address().port}/#${m.state}))`), 'served: the Markdown links the page');
  assert.deepEqual(errors, []);
  await context.close();
  server.close();
});

// [issue 15] The paste box reads any launch config; "Copy launch flags" exports the current layout
// and each layouts-table row, as the CLI's `meshfit export` does.
const megatronCommand = 'torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --num-layers 32 --hidden-size 4096 ' +
  '--ffn-hidden-size 14336 --num-attention-heads 32 --group-query-attention --num-query-groups 8 --swiglu ' +
  '--normalization RMSNorm --untie-embeddings-and-output-weights --disable-bias-linear --position-embedding-type rope ' +
  '--vocab-size 128256 --attention-dropout 0 --hidden-dropout 0 --tensor-model-parallel-size 2 ' +
  '--pipeline-model-parallel-size 2 --sequence-parallel --use-distributed-optimizer --micro-batch-size 1 ' +
  '--global-batch-size 64 --seq-length 4096 --bf16';

function nativeExport(state, extra = []) {
  return execFileSync(cli, ['export', '--format', 'megatron', '--state', state, ...extra],
                      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
}

test('Paste config reads a Megatron-LM command line; Copy launch flags gives the flags back', async () => {
  const { context, page, errors } = await openPage('#v=1&model=llama3-8b&gpus=8');
  await clickWidget(page, 'hf_toggle');
  await clickWidget(page, 'hf_config');
  await page.keyboard.type(megatronCommand);
  await clickWidget(page, 'hf_import', { changes: true });
  const imported = await mirror(page);
  assert.equal(imported.config.gpus, 16);
  assert.equal(imported.config.tp, 2);
  assert.equal(imported.config.pp, 2);
  assert.equal(imported.config.hidden, 4096);
  assert.equal(imported.config.global_batch, 64);
  assert.deepEqual(imported.ranks, nativeRanks(imported.state));
  await page.screenshot({ path: path.join(artifacts, 'paste-megatron.png') });

  await clickWidget(page, 'copy_flags');
  await page.screenshot({ path: path.join(artifacts, 'copy-launch-flags-menu.png') });
  await clickWidget(page, 'copy_flags_megatron');
  const flags = await page.evaluate(() => meshfitShell.lastClipboard());
  assert.equal(flags, nativeExport(imported.state));
  assert.match(flags, /--tensor-model-parallel-size 2 \\\n {2}--pipeline-model-parallel-size 2/);
  assert.deepEqual(errors, []);
  await context.close();
});

// [Issue 13] The page never strands the user.

const searchJson = (state, ...flags) =>
  JSON.parse(execFileSync(cli, ['search', '--state', state, '--json', ...flags], { encoding: 'utf8' }));

test('an edit that breaks the layout moves it to the nearest valid one and says what moved and why', async () => {
  const { context, page, errors } = await openPage();  // Llama 3.1 70B, 64 GPUs, tp 8, pp 4
  await typeInto(page, 'gpus', '1');
  let m = await mirror(page);
  assert.equal(m.ok, true, 'one GPU still shows a result, not an empty pane');
  assert.equal(m.config.gpus, 1);
  assert.equal(m.config.tp, 1);
  assert.equal(m.config.pp, 1);
  assert.match(m.layout_note, /^tp 8 → 1, pp 4 → 1: tp\*pp\*cp = 8\*4\*1 = 32 exceeds gpus=1\.$/);
  assert.ok((await widgets(page)).layout_note, 'the line is on screen');
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  await page.screenshot({ path: path.join(artifacts, 'layout-moved-one-gpu.png') });

  assert.deepEqual(errors, []);
  await context.close();
});

test('an imported config whose heads tp=8 does not divide (Qwen2-7B) moves tp alone and keeps results', async () => {
  const { context, page, errors } = await openPage();  // tp 8, pp 4
  await clickWidget(page, 'hf_toggle');
  await clickWidget(page, 'hf_config');
  await page.keyboard.type('{"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28, ' +
                           '"num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064}');
  const tpBefore = (await mirror(page)).config.tp;
  await clickWidget(page, 'hf_import', { changes: true });
  const m = await mirror(page);
  assert.equal(m.ok, true, 'the imported model shows results');
  assert.equal(m.config.heads, 28);
  assert.equal(m.config.tp, 4, 'tp moved to the nearest divisor of 28 heads');
  assert.match(m.layout_note, new RegExp(`^tp ${tpBefore} → 4: tp=${tpBefore} does not divide 28 attention heads`));
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  assert.deepEqual(errors, []);
  await context.close();
});

test('right-clicking a layouts-table row copies that layout as Megatron-LM flags', async () => {
  const state = 'v=1&model=llama3-8b&gpus=16&seq=4096&gbs=64';
  const { context, page, errors } = await openPage('#' + state);
  await clickWidget(page, 'tab_layouts');
  await scrollTo(page, 'layout_row_0');
  const row = (await widgets(page)).layout_row_0;
  await page.mouse.click(row[0] + 10, row[1] + row[3] / 2, { button: 'right', delay: 60 });
  await frames(page);
  await page.screenshot({ path: path.join(artifacts, 'row-launch-flags-menu.png') });
  await clickWidget(page, 'row_flags_megatron');
  const flags = await page.evaluate(() => meshfitShell.lastClipboard());
  assert.equal(flags, nativeExport(state, ['--fastest']));
  assert.equal((await mirror(page)).config.tp, 1, 'copying a row does not change the current layout');
  assert.deepEqual(errors, []);
  await context.close();
});

test('405B on 1024 GPUs: the pp chooser offers exactly the valid degrees (uneven splits included)', async () => {
  const state = 'v=1&model=llama3.1-405b&gpus=1024&seq=8192&gbs=1024&tp=8';
  const { context, page, errors } = await openPage('#' + state);
  const m = await mirror(page);
  // The search, pinned to tp=8 and each pp with vpp=1, says which degrees have any structurally valid layout.
  const structural = ['pp_exceeds_layers', 'pp_not_divide_layers'];
  const valid = [];
  for (let pp = 1; pp <= 128; pp *= 2) {
    const result = searchJson(state, '--tp', '8', '--pp', String(pp), '--vpp', '1', '--top', '1');
    const rejectedForPp = structural.reduce((sum, key) => sum + (result.rejected[key] || 0), 0);
    if (rejectedForPp < result.evaluated) valid.push(pp);
  }
  assert.ok(valid.includes(16) && !valid.includes(128), 'sanity: pp=16 (7 + 14x8 + 7) is valid, 128 stages exceed 126 layers');
  assert.deepEqual(m.choices.pp, valid);
  assert.deepEqual(errors, []);
  await context.close();
});

test('405B end to end: Layouts, click row 1, per-rank view valid, copy link, open it in a new page: same state', async () => {
  const state = 'v=1&model=llama3.1-405b&gpus=1024&seq=8192&gbs=1024';
  const { context, page, errors } = await openPage('#' + state);
  await clickWidget(page, 'tab_layouts');
  await clickWidget(page, 'layout_row_0', { changes: true });
  let m = await mirror(page);
  assert.deepEqual(m.issues, [], 'the searched layout is valid as applied');
  assert.equal(m.ok, true);
  assert.equal(m.selected_layout, 0);
  const best = searchJson(state, '--top', '1').layouts[0];
  for (const key of ['tp', 'pp', 'cp', 'vpp', 'micro_batch', 'zero', 'recompute', 'pp_first_stage_layers', 'pp_last_stage_layers'])
    assert.equal(m.config[key], best[key], `${key} is the search's`);
  await clickWidget(page, 'tab_memory');
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  assert.ok(m.ranks.length > 1, 'one bar per pipeline stage role');
  await page.screenshot({ path: path.join(artifacts, '405b-row1-memory.png') });
  await clickWidget(page, 'copy_link');
  const link = await page.evaluate(() => meshfitShell.lastClipboard());
  assert.ok(link.endsWith('#' + m.state));

  const second = await newContext({ viewport: { width: 1440, height: 900 } });
  const other = await second.newPage();
  const otherErrors = watchErrors(other);
  await other.goto(link);
  await other.waitForFunction(() => window.meshfitReady === true, null, { timeout: 60000 });
  await settled(other);
  const reopened = await mirror(other);
  assert.equal(reopened.ok, true);
  assert.equal(reopened.state, m.state);
  assert.deepEqual(reopened.config, m.config);
  assert.deepEqual(reopened.ranks, m.ranks);
  assert.equal(reopened.selected_layout, 0);
  assert.deepEqual(otherErrors, []);
  await second.close();
  assert.deepEqual(errors, []);
  await context.close();
});

// WCAG relative luminance and contrast ratio of two sRGB colours.
function luminance(rgb) {
  const [r, g, b] = rgb.map((v) => { const c = v / 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };

// Pixels of a screenshot, decoded by the browser (CSS pixels at deviceScaleFactor 1).
async function pixels(page, png, points) {
  return page.evaluate(async ({ data, points }) => {
    const image = new Image();
    image.src = 'data:image/png;base64,' + data;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const g = canvas.getContext('2d');
    g.drawImage(image, 0, 0);
    return points.map(([x, y]) => Array.from(g.getImageData(Math.round(x), Math.round(y), 1, 1).data.slice(0, 3)));
  }, { data: png.toString('base64'), points });
}

test('the verdict is a coloured banner with the worst rank and its share, AA contrast in both themes; overflow is marked', async () => {
  const cases = [
    { state: 'v=1&model=llama3-8b&gpus=16&tp=2', verdict: /^FITS  every GPU uses /, overflow: false },
    { state: 'v=1&model=llama3.1-70b&gpus=8&seq=8192&tp=8', verdict: /^OUT OF MEMORY  every GPU uses /, overflow: true },
    { state: 'v=1&model=llama3.1-70b&gpus=64&tp=8&pp=4', verdict: /^\w[\w ]+  worst rank \(pipeline stage \d of stages 0-3\) uses /, overflow: null },
  ];
  for (const colorScheme of ['dark', 'light']) {
    for (const { state, verdict, overflow } of cases) {
      const { context, page, errors } = await openPage('#' + state, { colorScheme });
      const m = await mirror(page);
      assert.match(m.banner.text, verdict);
      // Who: the worst pipeline stage, or every GPU alike with one stage ("worst rank only" read as room to spare).
      assert.match(m.banner.text, /(worst rank \(pipeline stage \d+ of stages 0-\d+\)|every GPU|the GPU) uses .+ of .+ \(\d+% of capacity\)$/);
      const ratio = contrast(m.banner.color, m.banner.background);
      assert.ok(ratio >= 4.5, `${colorScheme} ${m.banner.text}: contrast ${ratio.toFixed(2)} >= 4.5`);
      const w = await widgets(page);
      const banner = w.verdict_banner;
      assert.ok(banner && banner[2] > 600, 'the banner spans the results width');
      const shot = await page.screenshot({ path: path.join(artifacts, `verdict-${colorScheme}-${overflow === null ? 'pipeline' : overflow ? 'oom' : 'fits'}.png`) });
      const [fill] = await pixels(page, shot, [[banner[0] + banner[2] - 6, banner[1] + banner[3] / 2]]);
      assert.ok(fill.every((v, i) => Math.abs(v - m.banner.background[i]) <= 3), `the banner is drawn in its colour (${fill})`);
      if (overflow) {
        const over = w.bar_overflow;
        assert.ok(over && over[2] > 4, 'the part of the bar beyond capacity is marked');
        const samples = await pixels(page, shot, [0.2, 0.4, 0.6, 0.8].map((f) => [over[0] + over[2] * f, over[1] + over[3] / 2]));
        assert.ok(samples.some(([r, g, b]) => r > 140 && r > g + 60 && r > b + 60), `hatched red beyond capacity (${JSON.stringify(samples)})`);
      } else if (overflow === false) {
        assert.equal(w.bar_overflow, undefined);
      }
      assert.deepEqual(errors, []);
      await context.close();
    }
  }
});

test('count fields read 8k, 32K, 4,096 and 1e4 as meant and refuse 3.7 and 1e15 beside the field', async () => {
  const { context, page, errors } = await openPage('#v=1&model=llama3-8b&gpus=16&tp=2');
  await typeInto(page, 'seq', '8k');
  assert.equal((await mirror(page)).config.seq, 8192);
  await typeInto(page, 'seq', '32K');
  assert.equal((await mirror(page)).config.seq, 32768);
  await typeInto(page, 'gpus', '4,096');
  assert.equal((await mirror(page)).config.gpus, 4096);
  await typeInto(page, 'global_batch', '1e4');
  assert.equal((await mirror(page)).config.global_batch, 10000);
  const good = await mirror(page);

  await typeInto(page, 'micro_batch', '3.7');
  let m = await mirror(page);
  assert.equal(m.config.micro_batch, good.config.micro_batch, 'a refused value changes nothing');
  assert.equal(m.text_errors.micro_batch, '"3.7" is not a whole number.');
  await typeInto(page, 'seq', '1e15');
  m = await mirror(page);
  assert.equal(m.config.seq, 32768);
  assert.match(m.text_errors.seq, /^"1e15" is beyond the largest supported value/);
  assert.equal(m.ok, true, 'the last good result stays');
  await page.screenshot({ path: path.join(artifacts, 'refused-input.png') });
  // Typing does not commit: no recompute until Enter.
  const before = await version(page);
  await clickWidget(page, 'gpus');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('16384', { delay: 30 });
  await frames(page);
  assert.equal(await version(page), before, 'no recompute per keystroke');
  await page.keyboard.press('Enter');
  await settled(page, before);
  assert.equal((await mirror(page)).config.gpus, 16384);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a link lists every key it could not use, in the CLI\'s words, in a banner that can be dismissed', async () => {
  const state = 'v=1&model=llama3-8b&gpus=NaN&foo=1&tp=2&recompute=sometimes';
  const { context, page, errors } = await openPage('#' + state);
  const m = await mirror(page);
  const { spawnSync } = await import('node:child_process');
  const native = JSON.parse(spawnSync(cli, ['estimate', '--state', state, '--json'], { encoding: 'utf8' }).stdout);
  assert.ok(native.issues.length >= 3);
  assert.deepEqual(m.link_issues.map((i) => [i.field, i.message]), native.issues.map((i) => [i.field, i.message]));
  const w = await widgets(page);
  assert.ok(w.link_issues, 'the banner is on screen');
  await page.screenshot({ path: path.join(artifacts, 'link-issues.png') });
  await clickWidget(page, 'dismiss_link_issues', { changes: true });
  assert.deepEqual((await mirror(page)).link_issues, []);
  assert.equal((await widgets(page)).link_issues, undefined, 'dismissed');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a link whose only problem is an unknown key says so in the banner, and Dismiss computes the rest of it', async () => {
  const { context, page, errors } = await openPage('#v=1&model=llama3-8b&gpus=16&tp=2&foo=1');
  let m = await mirror(page);
  assert.match(m.banner.text, /^LINK NOT USED .*Dismiss/, 'not "see the messages next to the fields": no field has one');
  await clickWidget(page, 'dismiss_link_issues', { changes: true });
  m = await mirror(page);
  assert.deepEqual(m.link_issues, []);
  assert.equal(m.state, 'v=1&model=llama3-8b&gpus=16&tp=2');
  assert.ok(['fits', 'tight'].includes(m.verdict), 'the rest of the link is computed');
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  assert.deepEqual(errors, []);
  await context.close();
});

// Screenshots for review at three window sizes in both themes (build-wasm/e2e-artifacts).
test('screenshots at 1440x900, 1024x768 and 390x844 in both themes', async () => {
  for (const [width, height] of [[1440, 900], [1024, 768], [390, 844]]) {
    for (const colorScheme of ['dark', 'light']) {
      const { context, page, errors } = await openPage('#v=1&model=llama3.1-405b&gpus=1024&seq=8192&gbs=1024&tp=8&pp=16' +
                                                       '&pp_first_stage_layers=7&pp_last_stage_layers=7',
                                                       { viewport: { width, height }, colorScheme });
      const shot = await page.screenshot({ path: path.join(artifacts, `review-${width}x${height}-${colorScheme}.png`) });
      assert.ok(pngVariety(shot) > 64);
      assert.deepEqual(errors, []);
      await context.close();
    }
  }
});

test('"How to make it fit": searched changes with their new peak and throughput, one click to apply; largest micro-batch and sequence', async () => {
  const state = 'v=1&model=llama3-70b&gpus=64&seq=8192&gbs=512&tp=8';  // 80 layers on one stage: out of memory
  const { context, page, errors } = await openPage('#' + state);
  const m = await mirror(page);
  assert.match(m.banner.text, /^OUT OF MEMORY/);
  assert.ok(m.fit.suggestions.length > 0, 'changes that fit are offered');
  for (const f of m.fit.suggestions) {
    const native = JSON.parse(execFileSync(cli, ['estimate', '--state', f.state, '--json'], { encoding: 'utf8' }));
    assert.equal(native.verdict, 'fits', `${f.change} fits by the CLI's numbers`);
    assert.equal(native.device_bytes, f.device_bytes, `${f.change}: the same new peak`);
    assert.ok(Number.isFinite(f.throughput_change) && /→/.test(f.change));
  }
  assert.ok(m.fit.largest_seq > 0 && m.fit.largest_seq < 8192, `largest sequence that fits: ${m.fit.largest_seq}`);
  assert.ok((await widgets(page)).fit_apply_0, 'each change has an Apply button');
  await page.screenshot({ path: path.join(artifacts, 'how-to-make-it-fit.png') });
  await clickWidget(page, 'fit_apply_0', { changes: true });
  const applied = await mirror(page);
  assert.equal(applied.state, m.fit.suggestions[0].state);
  assert.match(applied.banner.text, /^FITS/);
  assert.deepEqual(applied.ranks, nativeRanks(applied.state));
  assert.deepEqual(errors, []);
  await context.close();
});

// Every number in a JSON value, with its path (for the no-NaN/inf/negative scan).
function numbers(value, at = '', out = []) {
  if (typeof value === 'number') out.push([at, value]);
  else if (Array.isArray(value)) value.forEach((v, i) => numbers(v, `${at}[${i}]`, out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) numbers(v, `${at}.${k}`, out);
  return out;
}
const badText = /\bnan\b|-nan|\binf\b|infinity/i;

test('no NaN, inf or negative number reaches the screen mirror, the link, the Markdown, JSON or CSV export (custom GPU included)', async () => {
  const states = [
    'v=1&model=llama3.1-70b&gpus=64&seq=8192&tp=8&pp=4',
    'v=1&model=llama3.1-70b&gpus=8&seq=8192&tp=8',             // out of memory
    'v=1&model=llama3-8b&gpu=custom&gpu_memory_gib=80',         // a custom GPU with only its memory
    'v=1&model=llama3-8b&gpus=NaN&seq=Infinity',                // a broken link
  ];
  for (const state of states) {
    const { context, page, errors } = await openPage('#' + state);
    await page.evaluate(() => {
      window.downloads = [];
      meshfitShell.download = (name, mime, text) => window.downloads.push({ name, text });
    });
    const m = await mirror(page);
    // Figures only: an issue, and the DOM form's copy of it, may quote what a link said ("got \"NaN\""),
    // and a field refused beside its message keeps the text as the link gave it.
    const form = (m.form || []).map((f) => ({ ...f, error: '', value: f.error ? '' : f.value }));
    // A link with errors stays as the user gave it (robustness.test.mjs): the page writes no figure into it.
    const kept = m.link_issues.some((i) => i.severity === 'error');
    if (kept) assert.equal(m.link, state, `${state}: link kept as given`);
    assert.doesNotMatch(JSON.stringify({ ...m, issues: [], link_issues: [], text_errors: {}, form, link: kept ? '' : m.link }), badText,
                        `${state}: mirror`);
    for (const [at, v] of numbers(m))
      if (!at.endsWith('throughput_change') && at !== '.selected_layout') assert.ok  // -1: no row selected
       (Number.isFinite(v) && v >= 0, `${state}: mirror ${at} = ${v}`);
    if (kept) assert.equal(await hash(page), '#' + state, `${state}: link kept`);
    else assert.doesNotMatch(await hash(page), badText, `${state}: link`);
    const spoken = await page.evaluate(() => document.getElementById('results').textContent);
    assert.doesNotMatch(spoken.replace(/"[^"]*"/g, '""'), badText, `${state}: live region (quoted input aside)`);
    await clickWidget(page, 'copy_markdown');
    const markdown = await page.evaluate(() => meshfitShell.lastClipboard());
    assert.doesNotMatch(markdown, badText, `${state}: Markdown`);
    assert.doesNotMatch(markdown, /[|(\s]-\d/, `${state}: no negative figure in the Markdown`);
    await clickWidget(page, 'export_json');
    const exported = await page.evaluate(() => window.downloads);
    assert.equal(exported.length, 1);
    assert.doesNotMatch(exported[0].text.replace(/"message": "(?:[^"\\]|\\.)*"/g, ''), badText, `${state}: JSON export (messages aside)`);
    for (const [at, v] of numbers(JSON.parse(exported[0].text))) assert.ok(Number.isFinite(v) && v >= 0, `${state}: export ${at} = ${v}`);
    await clickWidget(page, 'export_csv');  // a menu: this configuration's ranks, or every evaluated layout
    await clickWidget(page, 'csv_ranks');
    const csv = (await page.evaluate(() => window.downloads))[1];
    assert.equal(csv.name, 'meshfit-ranks.csv');
    assert.doesNotMatch(csv.text, badText, `${state}: CSV`);
    const [header, ...rows] = csv.text.trim().split('\n');
    assert.match(header, /^role,pp_stage,.*,device_bytes$/);
    for (const row of rows)  // every figure after the role: a whole, finite, non-negative number
      for (const cell of row.split(',').slice(1)) assert.ok(/^\d+$/.test(cell), `${state}: CSV cell ${cell} in ${row}`);
    if (m.ok) assert.equal(rows.length, m.ranks.length, `${state}: one CSV row per rank`);
    if (state.includes('custom')) {
      assert.equal(m.ok, true, 'a custom GPU with only its memory still gets its memory verdict');
      assert.ok(m.issues.some((i) => i.field === 'gpu' && /not predicted/.test(i.message)), 'and is told why there is no throughput');
      await page.screenshot({ path: path.join(artifacts, 'custom-gpu-memory-only.png') });
    }
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('Copy link uses the public address when the build sets one (MESHFIT_PUBLIC_URL)', async () => {
  const { context, page, errors } = await openPage('#v=1&model=llama3-8b&gpus=16&tp=2');
  await page.evaluate(() => meshfitShell.setPublicUrl('https://example.org/meshfit.html'));  // what the build passes
  await clickWidget(page, 'copy_link');
  assert.equal(await page.evaluate(() => meshfitShell.lastClipboard()), 'https://example.org/meshfit.html#v=1&model=llama3-8b&gpus=16&tp=2');
  assert.deepEqual(errors, []);
  await context.close();
});

test('fine-tuning: QLoRA on Llama 3.1 8B gives the CLI\'s verdict and ranks, the Methods view ranks what fits, and the link keeps it', async () => {
  const cliState = (...flags) => execFileSync(cli, ['estimate', ...flags, '--print-state'], { encoding: 'utf8' }).trim();
  const base = ['--model', 'llama3.1-8b', '--gpu', 'a100-80gb', '--gpus', '1', '--seq', '4096'];
  const { context, page, errors } = await openPage('#' + cliState(...base));
  await clickWidget(page, 'finetune_qlora', { changes: true });
  let m = await mirror(page);
  assert.equal(m.ok, true);
  assert.equal(m.config.finetune, 'qlora');
  // The mode switch applies the same defaults the CLI gives a config that names only the method.
  assert.equal(m.state, cliState(...base, '--finetune', 'qlora', '--lora-rank', '16'));
  assert.equal(m.config.recompute, 'full', 'QLoRA turns gradient checkpointing on (prepare_model_for_kbit_training)');
  assert.match(m.defaults_note, /recompute none -> full/, 'the switch says under the verdict what its defaults changed');
  assert.ok(['fits', 'tight'].includes(m.verdict), 'an 8B QLoRA fits an 80 GB GPU');
  assert.match(m.banner.text, /fits|tight/i);
  assert.deepEqual(m.ranks, nativeRanks(m.state));

  await typeInto(page, 'lora_rank', '64');
  m = await mirror(page);
  assert.equal(m.config.lora_rank, 64);
  assert.match(await hash(page), /lora_r=64/);
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  await page.screenshot({ path: path.join(artifacts, 'finetune-qlora.png') });

  const shown = await methodsView(page);
  m = shown.m;
  const cliMethods = shown.native;
  const { ranked, rejected } = m.methods;
  assert.ok(ranked.length > 0, 'some method fits one A100 80GB');
  for (const r of ranked) assert.ok(r.device_bytes <= m.capacity_bytes && r.step_time_s > 0, `${r.finetune} ${r.strategy} fits`);
  for (let i = 1; i < ranked.length; ++i) assert.ok(ranked[i - 1].step_time_s <= ranked[i].step_time_s, 'fastest first');
  assert.ok(rejected.length > 0 && rejected.every((r) => r.reason.length > 0), 'every rejected method says why');
  assert.deepEqual(ranked.map((r) => [r.finetune, r.strategy]), cliMethods.ranked.map((r) => [r.finetune, r.strategy]),
    'the same ranking as `meshfit methods`');
  await page.screenshot({ path: path.join(artifacts, 'finetune-methods.png') });

  // The link reopens the same fine-tuning config.
  const link = await page.evaluate(() => location.href);
  const second = await newContext({ viewport: { width: 1440, height: 900 } });
  const other = await second.newPage();
  const otherErrors = watchErrors(other);
  await other.goto(link);
  await other.waitForFunction(() => window.meshfitReady === true, null, { timeout: 60000 });
  await settled(other);
  const reopened = await mirror(other);
  assert.equal(reopened.state, m.state);
  assert.deepEqual(reopened.config, m.config);
  assert.deepEqual(reopened.ranks, m.ranks);
  assert.deepEqual(otherErrors, []);
  await second.close();

  // One click applies the fastest method.
  await clickWidget(page, 'method_row_0', { changes: true });
  m = await mirror(page);
  assert.equal(m.config.finetune, ranked[0].finetune);
  assert.equal(m.config.recompute, ranked[0].recompute);

  // From one fine-tuning method to another the global batch the user typed stays.
  await typeInto(page, 'global_batch', '8');
  await clickWidget(page, m.config.finetune === 'lora' ? 'finetune_qlora' : 'finetune_lora', { changes: true });
  m = await mirror(page);
  assert.equal(m.config.global_batch, 8, 'switching the fine-tuning method keeps the typed global batch');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the Methods view of a pretraining link ranks what `meshfit methods` ranks for it (the fine-tuning defaults, not the pretraining batch)', async () => {
  const state = 'v=1&model=llama3.1-8b&gpus=8&framework=fsdp&seq=8192';
  const { context, page, errors } = await openPage('#' + state);
  const { m, native: cliMethods } = await methodsView(page);
  assert.equal(m.config.finetune, 'none', 'the inputs stay a pretraining run');
  assert.equal(cliMethods.config.global_batch, 8, 'ranked at the LoRA stack\'s batch: one sequence per GPU, no accumulation');
  assert.deepEqual(m.methods.ranked.map((r) => [r.finetune, r.strategy, r.device_bytes]),
    cliMethods.ranked.map((r) => [r.finetune, r.strategy, r.device_bytes]), 'the same ranking and memory as `meshfit methods`');
  assert.deepEqual(errors, []);
  await context.close();
});

// An as-a-user review saw "-nan s" in every row of a custom GPU's Methods view, ranked as enumerated.
test('the Methods view of a custom GPU given only its memory has no step times and ranks by memory, as `meshfit methods`', async () => {
  const state = 'v=1&model=llama3.1-8b&gpus=2&seq=2048&gpu=custom&gpu_memory_gib=24';
  const { context, page, errors } = await openPage('#' + state);
  const { m, native: cliMethods } = await methodsView(page);
  assert.ok(cliMethods.issues.some((i) => i.field === 'gpu' && i.severity === 'warning'), 'the CLI says why there is no step time');
  assert.ok(m.methods.ranked.length > 1);
  assert.ok(m.methods.ranked.every((r) => r.step_time_s === null), 'no step time, not NaN');
  assert.deepEqual(m.methods.ranked.map((r) => [r.finetune, r.strategy, r.device_bytes]),
    cliMethods.ranked.map((r) => [r.finetune, r.strategy, r.device_bytes]), 'the same ranking and memory as `meshfit methods`');
  const fitting = cliMethods.ranked.filter((r) => r.verdict === 'fits').map((r) => r.device_bytes);
  assert.deepEqual(fitting, [...fitting].sort((a, b) => a - b), 'those that fit, smallest first');
  assert.doesNotMatch(await page.evaluate(() => document.getElementById('results').textContent), /nan/i);
  await page.screenshot({ path: path.join(artifacts, 'methods-custom-gpu.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('the layouts view offers spatial-temporal (PrimePar-style) layouts on request, marked as modelled only', async () => {
  // The PrimePar paper's testbed: 4-GPU V100 nodes with NVLink inside, 25 Gb/s InfiniBand per GPU.
  const state = 'v=1&model=llama2-70b&layers=10&gpus=32&gpu=v100&gpus_per_node=4&gpu_nvlink_domain=4&gpu_nic_gbps=25&seq=2048&gbs=32';
  const { context, page, errors } = await openPage('#' + state);
  await clickWidget(page, 'tab_layouts');
  const done = () => page.waitForFunction(() => !JSON.parse(document.getElementById('mirror').textContent).search_running,
    null, { timeout: 120000 });
  await done();
  let m = await mirror(page);
  assert.equal(m.search_spatial_temporal, false);
  assert.ok(m.layouts.length > 0 && m.layouts.every((l) => l.spatial_temporal_q === 1), 'off by default');
  await clickWidget(page, 'search_spatial_temporal', { changes: true });
  await done();
  await frames(page);
  m = await mirror(page);
  assert.equal(m.search_spatial_temporal, true);
  const squares = m.layouts.filter((l) => l.spatial_temporal_q > 1);
  assert.ok(squares.length > 0, 'spatial-temporal layouts are ranked beside the standard ones');
  assert.ok(m.layouts.some((l) => l.spatial_temporal_q === 1), 'standard layouts stay in the list');
  for (const l of squares) {
    assert.equal(l.marking, 'modelled, not implemented by any public framework');
    assert.match(l.label, /spatial-temporal: modelled, not implemented by any public framework/);
  }
  assert.ok((await widgets(page)).spatial_temporal_note, 'the table says what the mark means');
  // The same ranking as the CLI's search with --spatial-temporal.
  const cliOut = JSON.parse(execFileSync(cli, ['search', '--state', state, '--spatial-temporal', '--json'], { encoding: 'utf8' }));
  assert.equal(m.layouts[0].spatial_temporal_q, cliOut.layouts[0].spatial_temporal_q);
  assert.equal(cliOut.layouts.filter((l) => l.spatial_temporal_q > 1).every((l) => l.modelled_only ===
    'modelled, not implemented by any public framework'), true);
  await page.screenshot({ path: path.join(artifacts, 'layouts-spatial-temporal.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('Validation: the GPU ground truth sub-tab lists the H100 rows and the CLI\'s medians, both themes, 1440x900 and 390x844', async () => {
  const gpu = JSON.parse(execFileSync(cli, ['validate', '--json'], { encoding: 'utf8' })).gpu;
  const row = '8b-l4-s16384-full';  // full recompute at 16k tokens (tests/data/gpu_memory_measured.csv)
  assert.ok(gpu.rows.some((r) => r.id === row));
  for (const [width, height] of [[1440, 900], [390, 844]]) {
    for (const colorScheme of ['dark', 'light']) {
      const size = `${width}x${height}-${colorScheme}`;
      const { context, page, errors } = await openPage('', { viewport: { width, height }, colorScheme });
      await clickWidget(page, 'tab_validation', { changes: true });
      await clickWidget(page, 'validation_tab_gpu');
      let w = await widgets(page);
      const table = w.validation_gpu;
      assert.ok(table && table[1] >= 0 && table[1] + table[3] <= height, `the rows' table is on screen (${size})`);
      const inTable = (rect) => rect && rect[1] >= table[1] && rect[1] + rect[3] <= table[1] + table[3];
      assert.ok(inTable(w[`gpu_row_${gpu.rows[0].id}`]), `the first row is shown (${size})`);
      // Every harness row has its line; wheel the table down to the known row.
      for (const r of gpu.rows) assert.ok(w[`gpu_row_${r.id}`], `row ${r.id} is in the table`);
      for (let i = 0; i < 20 && !inTable(w[`gpu_row_${row}`]); ++i) {
        await page.mouse.move(table[0] + 20, table[1] + table[3] / 2);
        await page.mouse.wheel(0, 100);
        await frames(page);
        w = await widgets(page);
      }
      assert.ok(inTable(w[`gpu_row_${row}`]), `${row} scrolls into view (${size})`);
      await page.mouse.move(width - 2, height - 2);  // no tooltip over the screenshot
      await frames(page);
      w = await widgets(page);
      await page.screenshot({ path: path.join(artifacts, `validation-gpu-${size}.png`) });
      // The medians below the table, as the mirror reads them: the CLI's figures (meshfit validate --json, "gpu").
      const medians = (await mirror(page)).validation_gpu.medians;
      for (const s of gpu.metrics)
        assert.ok(medians.includes(`${s.label}: ${s.rows} rows, median |error| ${(100 * s.median_abs_error).toFixed(1)}%`),
          `${s.metric} in "${medians}"`);
      assert.ok(medians.includes(`fit/OOM labels: ${gpu.label_disagreements} of ${gpu.label_rows} disagree`), medians);
      for (const name of ['validation_gpu_summary', 'validation_gpu_medians']) {
        const rect = w[name];
        assert.ok(rect && rect[1] >= 0 && rect[1] + rect[3] <= height + 1, `${name} is on screen (${size})`);
        assert.ok(rect[0] >= 0 && rect[0] + rect[2] <= width + 1, `${name} does not overflow the width (${size})`);
      }
      assert.ok(table[0] >= 0 && table[0] + table[2] <= width + 1, `the table does not overflow the width (${size})`);
      assert.deepEqual(errors, []);
      await context.close();
    }
  }
});

// An as-a-user review of the page: a framework switch lowered an explicit ZeRO stage unsaid; LoRA and
// back to pretraining left the LoRA stack's framework, batch and stage; QLoRA with tp 8 left the page
// with no result. Each move is now made and said, or undone.
test('mode and framework switches say what they move, LoRA and back restores pretraining, QLoRA takes tp 1', async () => {
  let { context, page, errors } = await openPage('#v=1&model=llama3.1-8b&gpus=16&framework=deepspeed&zero=3');
  let v = await version(page);
  await page.getByRole('combobox', { name: 'framework' }).selectOption('megatron');
  await settled(page, v);
  let m = await mirror(page);
  assert.equal(m.config.zero, 1);
  assert.match(m.layout_note, /zero 3 \u2192 1: Megatron-LM has no stage 3/);
  assert.deepEqual(errors, []);
  await context.close();

  ({ context, page, errors } = await openPage('#v=1&model=llama3.1-70b&gpus=64&seq=8192&tp=8&pp=4'));
  const pretraining = (await mirror(page)).state;
  await clickWidget(page, 'finetune_lora', { changes: true });
  m = await mirror(page);
  assert.equal(m.config.finetune, 'lora');
  assert.notEqual(m.state, pretraining);
  await clickWidget(page, 'finetune_none', { changes: true });
  m = await mirror(page);
  assert.equal(m.state, pretraining, 'back to pretraining: the settings LoRA\'s defaults changed are restored');
  assert.match(m.defaults_note, /back to the pretraining settings/);
  // The same through two fine-tuning switches: what QLoRA's defaults and layout repair wrote after
  // LoRA's (tp 8 -> 1) is undone too; before, only the first switch was tracked and tp stayed 1.
  await clickWidget(page, 'finetune_lora', { changes: true });
  assert.equal((await mirror(page)).config.tp, 8);
  await clickWidget(page, 'finetune_qlora', { changes: true });
  m = await mirror(page);
  assert.equal(m.config.tp, 1);
  // QLoRA runs tp 1, dp 64: LoRA's batch (one sequence per rank of dp 8) cannot fill it, so the
  // stack's batch replaces it, said; it had left the page with no valid layout.
  assert.equal(m.ok, true, JSON.stringify(m.issues));
  assert.equal(m.config.global_batch % 64, 0);
  assert.match(m.defaults_note, /global_batch \d+ -> \d+/);
  await clickWidget(page, 'finetune_none', { changes: true });
  m = await mirror(page);
  assert.equal(m.state, pretraining, 'back to pretraining after LoRA and QLoRA');
  assert.deepEqual(errors, []);
  await context.close();

  ({ context, page, errors } = await openPage('#v=1&model=llama3.1-70b&gpus=8&seq=4096&tp=8'));
  const tp8 = (await mirror(page)).state;
  await clickWidget(page, 'finetune_qlora', { changes: true });
  m = await mirror(page);
  assert.equal(m.config.tp, 1);
  assert.equal(m.ok, true);
  assert.match(m.layout_note, /tp 8 \u2192 1: .*bitsandbytes/);
  // What the repair moved on the first switch is undone on the way back as well.
  await clickWidget(page, 'finetune_none', { changes: true });
  assert.equal((await mirror(page)).state, tp8);
  assert.deepEqual(errors, []);
  await context.close();
});
