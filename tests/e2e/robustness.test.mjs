// robustness.test.mjs — the page under hostile links (issue 17), in Debian's Chromium: a hash with
// invalid UTF-8 neither stops the page from starting nor kills it mid-session, and the crafted link
// whose layout search once froze the page for minutes leaves it responsive (trivial evaluations
// answer within 100 ms) while the search runs in slices, with progress in the mirror.
// Environment: MESHFIT_SITE (folder with meshfit.html), MESHFIT_CLI (native meshfit), MESHFIT_ARTIFACTS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { artifacts, mirror, openPage as open, useChromium } from './harness.mjs';

const crafted = '#v=1&hidden=221760&layers=10000&heads=55440&kv=55440&ffn=3991680&vocab=1000&gpus=2162160' +
  '&gbs=14414400&seq=4324320&gpu=custom&gpu_memory_gib=900000&framework=deepspeed' +
  // The issue's link plus the custom GPU's compute figures: without them the search is refused at once.
  '&gpu_bf16_tflops=989&gpu_hbm_tbps=3.35';

useChromium();

// The page at `hash`, ready but not waited on to answer: a hostile link may never settle.
const openPage = (hash) => open(hash, { colorScheme: 'light' }, { settle: false });

test('a hash with invalid UTF-8 starts the page with an issue, and one mid-session does not kill it', async () => {
  const { context, page, errors } = await openPage('#v=1&model=%FF');
  let m = await mirror(page);
  assert.ok(m.issues.some((issue) => issue.code === 'invalid_text'), JSON.stringify(m.issues));
  await page.screenshot({ path: path.join(artifacts, 'invalid-utf8-link.png') });
  await page.evaluate(() => { location.hash = '#v=1&model=llama3-8b&seq=%C0%AF'; });
  await page.waitForTimeout(300);
  m = await mirror(page);
  assert.ok(m.issues.some((issue) => issue.code === 'invalid_text'));
  await page.evaluate(() => { location.hash = '#v=1&model=llama3-8b&gpus=8'; });
  await page.waitForFunction(() => JSON.parse(document.getElementById('mirror').textContent).ok === true, null,
    { timeout: 10000 });
  assert.deepEqual(errors, []);
  await context.close();
});

test('a 1 MiB hash is refused with the limit named, and the time the page was blocked is printed (it was 4.3 s)', async () => {
  const { context, page, errors } = await openPage('#v=1&model=llama3-8b&gpus=8');
  const started = Date.now();
  await page.evaluate(() => { location.hash = '#v=1&model=' + 'a'.repeat(1 << 20); });
  const setting = Date.now() - started;  // Chromium taking a 1 MiB URL, before any page code runs
  // Trivial evaluations until the refusal is on screen: the longest is how long the page was blocked.
  const times = [];
  let refused = false;
  while (!refused && Date.now() - started < 60000) {
    const at = Date.now();
    refused = await page.evaluate(() => JSON.parse(document.getElementById('mirror').textContent).issues
      .some((issue) => issue.code === 'input_too_large'));
    times.push(Date.now() - at);
    if (!refused) await page.waitForTimeout(25);
  }
  const answered = Date.now() - started;
  const worst = Math.max(...times);
  // The refusal is the state decoder's size check (8 KiB, test_robustness.cpp); the rest of the time
  // is Chromium setting the URL and the page's next frame, both load-dependent.
  console.log(`1 MiB hash: setting it took ${setting} ms; input_too_large on screen after ${answered} ms; ` +
              `${times.length} trivial evaluations meanwhile, worst ${worst} ms`);
  // Printed, not bounded: on a loaded 2-core machine Chromium alone took seconds to set the URL, and
  // the page's next frames (the link banner, a new search) about 1 s each. Alone it takes ~0.5 s;
  // with four builds beside it (load ~10) it once took 12.5 s, so the only bound is a minute.
  assert.ok(refused, `the refusal reached the screen (gave up after ${answered} ms)`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the crafted link keeps the page responsive while its search runs in slices', async () => {
  const { context, page, errors } = await openPage(crafted);
  assert.equal((await mirror(page)).search_running, true, 'the crafted search takes many frames');
  // Round trips of a trivial evaluation while the search runs. Between the progress redraws (one
  // a second) the page only runs 8 ms slices; a redraw itself costs what any frame of this page
  // costs (tens of ms under software WebGL on a busy machine), so the bound is on the 90th
  // percentile and the worst case is logged for the report.
  const times = [];
  for (let i = 0; i < 40; ++i) {
    const started = Date.now();
    const running = await page.evaluate(() => JSON.parse(document.getElementById('mirror').textContent).search_running);
    if (!running) break;
    times.push(Date.now() - started);
    await page.waitForTimeout(25);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const p90 = sorted[Math.floor(0.9 * (sorted.length - 1))];
  console.log(`crafted link: ${times.length} evaluations while searching, median ${sorted[sorted.length >> 1]} ms, ` +
              `p90 ${p90} ms, worst ${sorted[sorted.length - 1]} ms; all: ${times.join(' ')}`);
  assert.ok(times.length >= 10, 'the search ran long enough to measure');
  assert.ok(p90 < 100, `90% of trivial evaluations should answer within 100 ms, p90 was ${p90} ms`);
  // The worst case is a progress redraw (about once a second): never a freeze (the issue saw > 150 s).
  assert.ok(sorted[sorted.length - 1] < 1000, `the worst evaluation took ${sorted[sorted.length - 1]} ms`);
  await page.screenshot({ path: path.join(artifacts, 'crafted-link-searching.png') });
  // A new hash replaces the running search at once.
  await page.evaluate(() => { location.hash = '#v=1&model=llama3-8b&gpus=8'; });
  await page.waitForFunction(() => {
    const current = JSON.parse(document.getElementById('mirror').textContent);
    return current.ok === true && current.search_running === false && current.layouts_feasible > 0;
  }, null, { timeout: 20000 });
  assert.deepEqual(errors, []);
  await context.close();
});

// An as-a-user review: a link from a newer meshfit (v=2) was rewritten to v=1 in the address bar, so a
// reload or "Copy link" then read it as a v1 link; a repeated key was dropped from it. A link with
// problems stays as written until the user edits; the edit then writes the page's own link.
test('a link with problems stays in the address bar as written until an edit', async () => {
  for (const hash of ['#v=2&model=llama3-70b&gpus=64&seq=8192', '#v=1&model=llama3-8b&gpus=8&gpus=16']) {
    const { context, page, errors } = await openPage(hash);
    await page.waitForTimeout(800);  // past the page's 250 ms hash write
    const m = await mirror(page);
    assert.ok(m.link_issues.length > 0, JSON.stringify(m.link_issues));
    assert.equal(await page.evaluate(() => location.hash), hash);
    assert.equal(m.link, hash.slice(1));
    if (hash.includes('gpus=16')) {
      const gpus = page.getByRole('textbox', { name: 'GPUs', exact: true });
      await gpus.focus();
      await gpus.fill('32');
      await gpus.press('Enter');
      await page.waitForFunction(() => /gpus=32/.test(location.hash), null, { timeout: 10000 });
      assert.doesNotMatch(await page.evaluate(() => location.hash), /gpus=16/);
    }
    assert.deepEqual(errors, []);
    await context.close();
  }
});
