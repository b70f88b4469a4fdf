// page.test.mjs — the calculator page in Debian's Chromium (playwright-core, headless, software
// WebGL2 via SwiftShader; ../../shared/TOOLCHAIN.md). Loads the single-file page from file:// with
// the network blocked, checks the rendered canvas, compares the DOM mirror with the native CLI,
// clicks and types on the canvas, and saves screenshots as artifacts.
// Environment: MESHFIT_SITE (folder with meshfit.html), MESHFIT_CLI (native meshfit), MESHFIT_ARTIFACTS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { chromium } from 'playwright-core';

const site = process.env.MESHFIT_SITE;
const cli = process.env.MESHFIT_CLI;
const artifacts = process.env.MESHFIT_ARTIFACTS;
assert.ok(site && cli && artifacts, 'set MESHFIT_SITE, MESHFIT_CLI and MESHFIT_ARTIFACTS');
mkdirSync(artifacts, { recursive: true });
const pageUrl = 'file://' + path.resolve(site, 'meshfit.html');
const chromiumArgs = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--enable-unsafe-swiftshader', '--use-angle=swiftshader'];

let browser;
before(async () => { browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: chromiumArgs }); });
after(async () => { await browser?.close(); });

// Console errors and uncaught exceptions of a page, kept for the assertion at the end of a test.
function watchErrors(page) {
  const errors = [];
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
  page.on('pageerror', (error) => errors.push(String(error)));
  return errors;
}

// A page with the network blocked (anything but file:// is aborted and counted) and console errors kept.
async function openPage(hash = '', options = {}) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'dark', ...options });
  const page = await context.newPage();
  const errors = watchErrors(page);
  const blocked = [];
  await context.route('**/*', (route) => {
    if (route.request().url().startsWith('file://')) return route.continue();
    blocked.push(route.request().url());
    return route.abort();
  });
  await page.goto(pageUrl + hash);
  await page.waitForFunction(() => window.meshfitReady === true, null, { timeout: 60000 });
  await settled(page);
  return { context, page, errors, blocked };
}

const mirror = (page) => page.evaluate(() => JSON.parse(document.getElementById('mirror').textContent));
const widgets = (page) => page.evaluate(() => JSON.parse(document.getElementById('widgets').textContent || '{}'));
const hash = (page) => page.evaluate(() => location.hash);
const version = async (page) => (await mirror(page)).version;

// Waits for the page to have answered: the mirror's version past `before` (when given), the widget
// positions of that frame published, and the URL hash caught up with the mirror's state.
async function settled(page, before = 0) {
  await page.waitForFunction((v) => {
    const text = document.getElementById('mirror').textContent;
    if (!text) return false;
    const m = JSON.parse(text);
    return m.version > v && location.hash === '#' + m.state && document.getElementById('widgets').textContent !== '';
  }, before, { timeout: 60000 });
}

// A real press on a named widget: down and up apart, as a person clicks. With `changes`, waits for
// the recompute the click causes.
const nextFrames = (page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));

// Scrolls the panel under a widget (mouse wheel, as a person would) until the widget is in view.
async function scrollTo(page, name) {
  const height = await page.evaluate(() => innerHeight);
  for (let i = 0; i < 20; ++i) {
    const rect = (await widgets(page))[name];
    if (!rect || (rect[1] >= 0 && rect[1] + rect[3] <= height)) return;
    await page.mouse.move(rect[0] + 4, height / 2);
    await page.mouse.wheel(0, rect[1] < 0 ? -200 : 200);
    await nextFrames(page);
  }
}

async function clickWidget(page, name, { changes = false } = {}) {
  await scrollTo(page, name);
  const rect = (await widgets(page))[name];
  assert.ok(rect, `widget ${name} is on screen`);
  const before = await version(page);
  await page.mouse.click(rect[0] + Math.min(rect[2] / 2, 40), rect[1] + rect[3] / 2, { delay: 60 });
  if (changes) await settled(page, before);
  else await nextFrames(page);
}

async function typeInto(page, name, text) {
  await clickWidget(page, name);
  const before = await version(page);
  await page.keyboard.press('Control+A');
  await page.keyboard.type(text, { delay: 30 });
  await page.keyboard.press('Enter');
  await settled(page, before);
}

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

function nativeRanks(state) {
  const out = JSON.parse(execFileSync(cli, ['estimate', '--state', state, '--json'], { encoding: 'utf8' }));
  return out.ranks.map((r) => ({ role: r.role, pp_stage: r.pp_stage, peak_allocated_bytes: r.peak_allocated_bytes,
                                 peak_reserved_bytes: r.peak_reserved_bytes, device_bytes: r.device_bytes }));
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
  assert.ok(markdown.includes('(' + link + ')'), 'the Markdown links back to this configuration');
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

test('without WebGL2 the page says so instead of failing silently', async () => {
  const noWebgl = await chromium.launch({ executablePath: '/usr/bin/chromium', args: [...chromiumArgs, '--disable-webgl'] });
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
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`http://127.0.0.1:${server.address().port}/#v=1&model=llama3-8b&gpus=16&tp=2`);
  await page.waitForFunction(() => window.meshfitReady === true, null, { timeout: 60000 });
  const m = await mirror(page);
  assert.equal(m.config.model, 'llama3-8b');
  assert.equal(m.config.tp, 2);
  assert.deepEqual(errors, []);
  await context.close();
  server.close();
});
