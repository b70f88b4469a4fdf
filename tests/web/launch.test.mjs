// launch.test.mjs — importLaunchConfig / exportLaunchConfig of the JS API against the native CLI's
// `meshfit import` / `meshfit export` (same JSON), and hostile text giving issues, never a throw.
// Environment: MESHFIT_DIST (folder with meshfit.mjs), MESHFIT_CLI (the native meshfit binary).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = process.env.MESHFIT_DIST;
const cli = process.env.MESHFIT_CLI;
assert.ok(dist && cli, 'set MESHFIT_DIST and MESHFIT_CLI');
const { load } = await import(pathToFileURL(path.join(dist, 'meshfit.mjs')).href);
const meshfit = await load();
const data = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'data', 'launch');

function native(args) {
  try {
    return JSON.parse(execFileSync(cli, [...args, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  } catch (error) {
    return JSON.parse(error.stdout);
  }
}

test('importLaunchConfig detects each format and gives the CLI\'s result', () => {
  const files = [['llama3.1-8b.config.json', 'hf', '--hf'], ['llama3-8b.torchtitan.toml', 'torchtitan', '--torchtitan'],
                 ['hf-trainer-zero3.deepspeed.json', 'deepspeed', '--deepspeed']];
  for (const [file, format, flag] of files) {
    const text = readFileSync(path.join(data, file), 'utf8');
    const js = meshfit.importLaunchConfig(text, { overrides: { gpus: 8, model: format === 'deepspeed' ? 'llama3-8b' : undefined } });
    assert.equal(js.format, format, file);
    const cliArgs = ['import', flag, path.join(data, file), '--gpus', '8'];
    if (format === 'deepspeed') cliArgs.push('--model', 'llama3-8b');
    assert.deepEqual(js, native(cliArgs), file);
  }
  const megatron = readFileSync(path.join(data, 'gpt3-175b.megatron.sh'), 'utf8');
  const js = meshfit.importLaunchConfig(megatron);
  assert.equal(js.ok, true);
  assert.equal(js.config.tp, 8);
  assert.deepEqual(js, native(['import', '--megatron-args', megatron]));
});

test('exportLaunchConfig gives the CLI\'s text and Megatron flags that import back', () => {
  const config = { model: 'llama3.1-70b', gpus: 64, tp: 8, pp: 4, vpp: 5, seq: 8192, recompute: 'selective' };
  const js = meshfit.exportLaunchConfig(config, 'megatron');
  assert.equal(js.ok, true);
  assert.ok(js.args.includes('--num-layers-per-virtual-pipeline-stage'));
  assert.deepEqual(js, native(['export', '--format', 'megatron', '--model', 'llama3.1-70b', '--gpus', '64', '--tp', '8',
                               '--pp', '4', '--vpp', '5', '--seq', '8192', '--recompute', 'selective']));
  const back = meshfit.importLaunchConfig(js.text);
  assert.equal(back.ok, true);
  assert.equal(back.config.vpp, 5);
  assert.equal(back.config.hidden, 8192);
  const toml = meshfit.exportLaunchConfig({ model: 'llama3.1-8b', framework: 'fsdp', gpus: 16, tp: 2 }, 'torchtitan');
  assert.match(toml.text, /^\[parallelism\]$/m);
  assert.equal(meshfit.exportLaunchConfig({ model: 'llama3-8b' }, 'yaml').ok, false);
});

test('hostile text gives issues, never a throw', () => {
  const inputs = ['', '{', '{"hidden_size": 1e999}', '[training]\nseq_len = ', '--num-layers \'8', '\uFFFD'.repeat(10),
                  '['.repeat(100000), '{"a": 1, "a": 2}', 'x'.repeat(2 * 1024 * 1024), '--tensor-model-parallel-size $TP'];
  for (const text of inputs) {
    for (const format of ['auto', 'hf', 'megatron', 'torchtitan', 'deepspeed']) {
      const result = meshfit.importLaunchConfig(text, { format });
      assert.equal(typeof result.ok, 'boolean');
      assert.ok(Array.isArray(result.issues));
      if (text.length > 0 && format !== 'auto') assert.ok(result.issues.length > 0, `${format}: ${text.slice(0, 20)}`);
    }
  }
});
