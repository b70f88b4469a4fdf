// hf_fetch.test.mjs — the page's "Fetch config.json" by Hugging Face model id (issue 15), in Debian's
// Chromium with the network mocked (playwright page.route; nothing leaves the machine): a public
// config.json is imported exactly as the same file pasted (the CLI's `meshfit import --hf` of it
// gives the same model), and 404, 401, a non-JSON answer and being offline each leave the inputs
// unchanged with a message that says why; an id that breaks the Hub's rule is refused before any request.
// Environment: MESHFIT_SITE (folder with meshfit.html), MESHFIT_CLI (native meshfit), MESHFIT_ARTIFACTS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { artifacts, cli, clickWidget, mirror, openPage as openWithRoute, useChromium, widgets } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const qwenFile = path.join(here, '../data/launch/qwen2.5-7b.config.json');  // published values, tests/data/launch/README.md
const qwenText = readFileSync(qwenFile, 'utf8');
const qwenUrl = 'https://huggingface.co/Qwen/Qwen2.5-7B/resolve/main/config.json';

useChromium();

// The page with every request that is not file:// counted; huggingface.co answered by `answer`
// (a function of the URL giving {status, body}), or failed as without a network when it gives none.
async function openPage(answer) {
  const requests = [];
  const route = (r) => {
    const url = r.request().url();
    if (url.startsWith('file://')) return r.continue();
    requests.push(url);
    const answered = answer && url.startsWith('https://huggingface.co/') ? answer(url) : undefined;
    if (!answered) return r.abort('internetdisconnected');  // no network: fetch() rejects
    const { status, body, type = 'application/json' } = answered;
    return r.fulfill({ status, body, contentType: type, headers: { 'access-control-allow-origin': '*' } });
  };
  const opened = await openWithRoute('#v=1&model=llama3-8b&gpus=8', {}, { route, ignoredErrors: /Failed to load resource|net::ERR/ });
  return { ...opened, requests };
}

// Types a model id, presses Fetch and waits for the answer's message under the box.
async function fetchId(page, id) {
  if (!(await widgets(page)).hf_model_id) await clickWidget(page, 'hf_toggle');
  await clickWidget(page, 'hf_model_id');
  await page.keyboard.press('Control+A');
  await page.keyboard.type(id, { delay: 20 });
  const before = (await mirror(page)).version;
  await clickWidget(page, 'hf_fetch');
  await page.waitForFunction((v) => {
    const m = JSON.parse(document.getElementById('mirror').textContent);
    return m.version > v && !m.hf_fetching && m.import_message !== '' && !m.import_message.startsWith('Fetching');
  }, before, { timeout: 20000 });
  return mirror(page);
}

test('Fetch config.json imports a public model as the same file pasted (mocked huggingface.co)', async () => {
  const { context, page, errors, requests } = await openPage(() => ({ status: 200, body: qwenText }));
  const m = await fetchId(page, 'Qwen/Qwen2.5-7B');
  assert.deepEqual(requests, [qwenUrl], 'exactly the config.json URL, once');
  assert.match(m.import_message, /^Imported as Hugging Face config\.json, fetched for Qwen\/Qwen2\.5-7B\./);
  await page.waitForFunction(() => JSON.parse(document.getElementById('mirror').textContent).config?.hidden === 3584, null,
    { timeout: 20000 });
  const after = await mirror(page);
  // The CLI's import of the same file: every model field the page took.
  const native = JSON.parse(execFileSync(cli, ['import', '--hf', qwenFile, '--json'], { encoding: 'utf8' }));
  const fields = native.fields ?? native.config;
  for (const key of ['hidden', 'layers', 'heads', 'kv_heads', 'ffn', 'vocab', 'tied_embeddings', 'linear_bias', 'norm', 'mlp'])
    if (key in fields) assert.deepEqual(after.config[key], fields[key], key);
  assert.equal(after.config.hidden, 3584);  // Qwen2.5-7B config.json hidden_size
  assert.equal(after.config.layers, 28);    // num_hidden_layers
  assert.equal(after.config.kv_heads, 4);   // num_key_value_heads
  assert.equal(after.config.gpus, 8, 'the rest of the inputs stays');
  await page.screenshot({ path: path.join(artifacts, 'hf-fetch-imported.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('Fetch config.json: 404, 401, not JSON and offline leave the inputs and say why', async () => {
  const answers = {
    'no-such/model': { status: 404, body: 'Entry not found', type: 'text/plain' },
    'meta-llama/Llama-3.1-8B': { status: 401, body: '{"error":"Access to model meta-llama/Llama-3.1-8B is restricted."}' },
    'some/login-page': { status: 200, body: '<!doctype html><title>Sign in</title>', type: 'text/html' },
  };
  const { context, page, errors, requests } = await openPage((url) => answers[url.split('/').slice(3, 5).join('/')]);
  const before = (await mirror(page)).state;
  const expect = [['no-such/model', /HTTP 404/], ['meta-llama/Llama-3.1-8B', /HTTP 401.*gated or private/s],
                  ['some/login-page', /not JSON/]];
  for (const [id, says] of expect) {
    const m = await fetchId(page, id);
    assert.match(m.import_message, /^Not imported/, id);
    assert.match(m.import_message, says, id);
    assert.equal(m.state, before, `${id}: the inputs are unchanged`);
    if (id === 'no-such/model') await page.screenshot({ path: path.join(artifacts, 'hf-fetch-404.png') });
  }
  await context.setOffline(true);
  const offline = await fetchId(page, 'Qwen/Qwen2.5-7B');
  assert.match(offline.import_message, /could not reach huggingface\.co/);
  assert.equal(offline.state, before);
  await context.setOffline(false);
  // An id that breaks the Hub's rule never becomes a request.
  const counted = requests.length;
  const bad = await fetchId(page, '../../api/whoami?x=1');
  assert.match(bad.import_message, /^Not fetched:\nerror: model id/);
  assert.equal(requests.length, counted, 'no request for a refused id');
  assert.deepEqual(errors, []);
  await context.close();
});
