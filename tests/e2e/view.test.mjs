// view.test.mjs — the page's view, Compare and exports (issue 13, items 6, 9 and 10) in Debian's
// Chromium: the view (tab, units, sort, filter) and a pinned configuration ride in the link and
// round-trip, bad view keys are listed in the CLI's words; Compare shows the pinned and the edited
// configuration side by side, in the page and in the Markdown; "Export CSV" writes every evaluated
// layout; MiB is a third unit; the formulas page opens inside the single file. Screenshots of each
// in both themes at 1440x900 and 390x844 land in MESHFIT_ARTIFACTS.
// Environment: MESHFIT_SITE (folder with meshfit.html), MESHFIT_CLI (native meshfit), MESHFIT_ARTIFACTS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { artifacts, cli, clickWidget, frames, hash, mirror, openPage as openNetworkless, typeInto, useChromium, widgets }
  from './harness.mjs';

useChromium();

// The page (network blocked, as every page test opens it) with downloads recorded in
// window.meshfitDownloads instead of saved.
const openPage = (at = '', options = {}) => openNetworkless(at, options, {
  prepare: (page) => page.evaluate(() => {
    window.meshfitDownloads = [];
    meshfitShell.download = (name, mime, text) => window.meshfitDownloads.push({ name, mime, text });
  }),
});

// The layout search finished (its result is the one on screen).
async function searched(page) {
  await page.waitForFunction(() => {
    const m = JSON.parse(document.getElementById('mirror').textContent);
    return m.search_complete && !m.search_running && !m.fit_pending && location.hash === '#' + m.link;
  }, null, { timeout: 120000 });
}

// Opens the "Export CSV" menu and waits for its items to be drawn.
async function openCsvMenu(page) {
  await clickWidget(page, 'export_csv');
  await page.waitForFunction(() => 'csv_layouts' in JSON.parse(document.getElementById('widgets').textContent || '{}'));
}

function cliJson(args) {
  try {
    return JSON.parse(execFileSync(cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  } catch (error) {
    return JSON.parse(error.stdout);  // exit status 2: invalid input, still one JSON object
  }
}
const nativeEstimate = (state) => cliJson(['estimate', '--state', state, '--json']);

// RFC 4180 records (quoted fields with commas, doubled quotes and line breaks).
function parseCsv(text) {
  const records = [];
  let record = [], field = '', quoted = false;
  for (let i = 0; i < text.length; ++i) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { field += '"'; ++i; } else if (ch === '"') quoted = false; else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { record.push(field); field = ''; }
    else if (ch === '\n') { record.push(field); records.push(record); record = []; field = ''; }
    else field += ch;
  }
  if (field !== '' || record.length) { record.push(field); records.push(record); }
  return records;
}

// [SECTION] The view in the link

test('the view (tab, units, sort, filter) is part of the link, round-trips, and follows the clicks', async () => {
  const state = 'v=1&model=llama3-8b&gpus=16';
  const view = '&tab=layouts&units=mib&sort=tokens_per_s_per_gpu&order=desc&filter=tp%3D2';
  const { context, page, errors } = await openPage('#' + state + view);
  await searched(page);
  let m = await mirror(page);
  assert.deepEqual(m.link_issues, [], 'every view key of the link is understood');
  assert.deepEqual(m.view, { tab: 'layouts', units: 'mib', sort: 'tokens_per_s_per_gpu', order: 'desc', filter: 'tp=2' });
  assert.equal(m.state, state);
  assert.equal(m.link, state + view, 'the link is written back as it came');
  assert.equal(await hash(page), '#' + state + view);
  assert.match(m.banner.text, / MiB /, 'the banner speaks MiB');
  assert.match(await page.evaluate(() => document.getElementById('results').textContent), / MiB/, 'so does the live region');
  await page.screenshot({ path: path.join(artifacts, 'view-layouts-mib-sorted.png') });

  await clickWidget(page, 'units_gb', { changes: true });
  m = await mirror(page);
  assert.equal(m.view.units, 'gb');
  assert.match(await hash(page), /&units=gb/);
  await clickWidget(page, 'tab_memory', { changes: true });
  m = await mirror(page);
  assert.equal(m.view.tab, 'memory');
  assert.ok(!(await hash(page)).includes('tab='), 'the default tab is left out of the link');
  assert.match(await hash(page), /&sort=tokens_per_s_per_gpu&order=desc&filter=tp%3D2$/, 'the sort and filter stay');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a link of view keys only opens the page\'s own configuration in that view, as an empty link does', async () => {
  const { context, page, errors } = await openPage('#tab=validation&units=mib');
  const m = await mirror(page);
  assert.equal(m.view.tab, 'validation');
  assert.equal(m.view.units, 'mib');
  assert.equal(m.config.model, 'llama3.1-70b', 'the page\'s default, not "no model"');
  assert.deepEqual(m.link_issues, []);
  assert.match(await hash(page), /^#v=1&model=llama3\.1-70b.*&tab=validation&units=mib$/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a link with bad view values lists each in the CLI\'s words, as warnings that keep the result', async () => {
  const state = 'v=1&model=llama3-8b&gpus=16&tab=charts&units=MB&sort=speed&order=up';
  const { context, page, errors } = await openPage('#' + state);
  const m = await mirror(page);
  const native = nativeEstimate(state);
  const byField = (issues) => Object.fromEntries(issues.filter((i) => ['tab', 'units', 'sort', 'order'].includes(i.field))
                                                      .map((i) => [i.field, i.message]));
  const listed = byField(m.link_issues);
  assert.deepEqual(Object.keys(listed).sort(), ['order', 'sort', 'tab', 'units']);
  assert.deepEqual(listed, byField(native.issues), 'the banner words them exactly as the CLI does');
  assert.equal(listed.tab, 'tab must be one of inputs, memory, layouts, methods, compare, validation, got "charts".');
  assert.equal(m.ok, true, 'the config is still evaluated');
  assert.equal(m.config.gpus, 16);
  assert.ok(m.link_issues.every((i) => i.severity === 'warning'));
  assert.deepEqual(m.view, { tab: 'memory', units: 'gib', sort: 'rank', order: 'asc', filter: '' });
  assert.equal(m.link, 'v=1&model=llama3-8b&gpus=16', 'the link is rewritten without the bad keys');
  assert.deepEqual(errors, []);
  await context.close();
});

test('405B end to end with the view: search, row 1, per-rank view in MiB, copy link, new page: same state and view', async () => {
  const state = 'v=1&model=llama3.1-405b&gpus=1024&seq=8192&gbs=1024';
  const { context, page, errors } = await openPage('#' + state);
  await clickWidget(page, 'tab_layouts');
  await searched(page);
  await clickWidget(page, 'layout_row_0', { changes: true });
  await searched(page);
  let m = await mirror(page);
  assert.deepEqual(m.issues, [], 'the searched layout is valid as applied');
  assert.equal(m.ok, true);
  assert.equal(m.selected_layout, 0);
  await clickWidget(page, 'units_mib', { changes: true });
  await clickWidget(page, 'tab_memory', { changes: true });
  m = await mirror(page);
  assert.equal(m.view.units, 'mib');
  const native = nativeEstimate(m.state);
  assert.deepEqual(m.ranks.map((r) => r.device_bytes), native.ranks.map((r) => r.device_bytes));
  await clickWidget(page, 'copy_link');
  const link = await page.evaluate(() => meshfitShell.lastClipboard());
  assert.ok(link.endsWith('#' + m.link));
  assert.match(link, /&units=mib$/);

  const second = await openPage('#' + link.split('#')[1]);
  await searched(second.page);
  const reopened = await mirror(second.page);
  assert.equal(reopened.ok, true);
  assert.equal(reopened.state, m.state);
  assert.equal(reopened.link, m.link);
  assert.deepEqual(reopened.view, m.view);
  assert.deepEqual(reopened.config, m.config);
  assert.deepEqual(reopened.ranks, m.ranks);
  assert.equal(reopened.selected_layout, 0, 'the selected row is the one whose layout the link carries');
  assert.deepEqual(second.errors, []);
  await second.context.close();
  assert.deepEqual(errors, []);
  await context.close();
});

// [SECTION] Compare

test('Compare: pin, edit, see both side by side in the page and the Markdown; the pin survives the link', async () => {
  const state = 'v=1&model=llama3.1-70b&gpus=64&seq=8192&tp=8&pp=4';
  const { context, page, errors } = await openPage('#' + state);
  assert.equal((await mirror(page)).compare.pinned, false);
  await clickWidget(page, 'pin', { changes: true });
  let m = await mirror(page);
  assert.equal(m.compare.pinned, true);
  assert.equal(m.compare.pin_state, state);
  assert.equal(m.view.tab, 'compare', 'pinning opens Compare');
  assert.deepEqual(m.compare.diff, [], 'nothing differs yet');
  await typeInto(page, 'seq', '4k');
  m = await mirror(page);
  assert.equal(m.config.seq, 4096);
  assert.deepEqual(m.compare.diff, [{ key: 'seq', pinned: '8192', current: '4096' }]);
  // Both sides are the CLI's figures for their states.
  const pinned = nativeEstimate(m.compare.pin_state), current = nativeEstimate(m.state);
  assert.deepEqual(m.compare.pinned_result.ranks, pinned.ranks.map((r) => r.device_bytes));
  assert.deepEqual(m.compare.current_result.ranks, current.ranks.map((r) => r.device_bytes));
  assert.equal(m.compare.pinned_result.tokens_per_s_per_gpu, pinned.tokens_per_s_per_gpu);
  assert.equal(m.compare.current_result.step_time_s, current.step_time_s);
  assert.ok(m.compare.current_result.device_bytes < m.compare.pinned_result.device_bytes, 'half the sequence, less memory');
  assert.match(await hash(page), /&tab=compare&pin=v%3D1%26model%3Dllama3.1-70b%26gpus%3D64%26seq%3D8192%26tp%3D8%26pp%3D4$/);
  assert.ok((await widgets(page)).compare_table, 'the side-by-side table is drawn');
  await page.screenshot({ path: path.join(artifacts, 'compare-1440x900-dark.png') });

  await clickWidget(page, 'copy_markdown');
  const markdown = await page.evaluate(() => meshfitShell.lastClipboard());
  assert.match(markdown, /\*\*Compare\*\*: pinned configuration vs this one\./);
  assert.match(markdown, /\| worst rank \(device memory\) \| \w+ \d+: [\d.]+ GiB \(\d+%\) \| \w+ \d+: [\d.]+ GiB \(\d+%\) \| -[\d.]+% \|/);
  assert.match(markdown, /\| tokens\/s\/GPU \| \d+ \| \d+ \| [+-][\d.]+% \|/);
  assert.ok(markdown.includes('Inputs that differ: `seq` 8192 → 4096.'));
  assert.ok(!/\b-?(nan|inf)\b/i.test(markdown), 'no NaN or inf in the Markdown');

  // The link carries the pin: a new page compares the same two configurations.
  const second = await openPage(await hash(page));
  const reopened = await mirror(second.page);
  assert.equal(reopened.compare.pinned, true);
  assert.equal(reopened.compare.pin_state, state);
  assert.deepEqual(reopened.compare.diff, m.compare.diff);
  assert.deepEqual(reopened.compare.pinned_result, m.compare.pinned_result);
  assert.equal(reopened.view.tab, 'compare');
  assert.deepEqual(second.errors, []);
  await second.context.close();

  // Back to the pinned configuration, then unpin: the link drops the pin.
  await clickWidget(page, 'compare_restore', { changes: true });
  assert.equal((await mirror(page)).state, state);
  await clickWidget(page, 'compare_unpin', { changes: true });
  m = await mirror(page);
  assert.equal(m.compare.pinned, false);
  assert.ok(!(await hash(page)).includes('pin='));
  assert.deepEqual(errors, []);
  await context.close();
});

// [SECTION] Exports and docs

test('"Export CSV" writes every evaluated layout through the core\'s CSV writer, not only the top rows', async () => {
  const state = 'v=1&model=llama3-8b&gpus=64';
  const { context, page, errors } = await openPage('#' + state);
  await searched(page);
  const m = await mirror(page);
  await openCsvMenu(page);
  await page.screenshot({ path: path.join(artifacts, 'export-csv-menu.png') });
  await clickWidget(page, 'csv_layouts');
  await page.waitForFunction(() => window.meshfitDownloads.length > 0, null, { timeout: 60000 });
  const [download] = await page.evaluate(() => window.meshfitDownloads);
  assert.equal(download.name, 'meshfit-layouts.csv');
  assert.equal(download.mime, 'text/csv');
  const [header, ...rows] = parseCsv(download.text);
  for (const column of ['dp', 'tp', 'pp', 'cp', 'vpp', 'micro_batch', 'zero', 'recompute', 'device_bytes', 'feasible',
                        'tokens_per_s_per_gpu', 'breakdown.compute_s'])
    assert.ok(header.includes(column), `column ${column}`);
  const feasible = header.indexOf('feasible');
  assert.ok(rows.every((r) => r.length === header.length), 'every row as long as the header');
  assert.equal(rows.filter((r) => r[feasible] === 'true').length, m.layouts_feasible,
               'every feasible layout the search counted is a row');
  assert.ok(rows.length > 200, `more rows (${rows.length}) than the table's top 200`);
  assert.ok(rows.some((r) => r[feasible] === 'false'), 'the out-of-memory evaluations are rows too');
  assert.ok(rows.every((r) => r.every((cell) => !/^-?(nan|inf)/i.test(cell))), 'no NaN or inf in the export');
  // The per-rank CSV is the menu's other item.
  await openCsvMenu(page);
  await clickWidget(page, 'csv_ranks');
  await page.waitForFunction(() => window.meshfitDownloads.length > 1);
  const ranks = (await page.evaluate(() => window.meshfitDownloads))[1];
  assert.equal(ranks.name, 'meshfit-ranks.csv');
  assert.match(ranks.text, /^role,pp_stage,/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('MiB is a third unit: banner, Markdown and the live region use it', async () => {
  const state = 'v=1&model=llama3-8b&gpus=16&tp=2';
  const { context, page, errors } = await openPage('#' + state + '&units=mib');
  const m = await mirror(page);
  const worst = m.ranks[m.worst_rank];
  assert.ok(m.banner.text.includes(`${Math.round(worst.device_bytes / 1048576)} MiB of ${Math.round(m.capacity_bytes / 1048576)} MiB`),
            m.banner.text);
  await clickWidget(page, 'copy_markdown');
  const markdown = await page.evaluate(() => meshfitShell.lastClipboard());
  assert.match(markdown, /\| (only|rank) \(MiB\) \|/);
  assert.match(await page.evaluate(() => document.getElementById('results').textContent), /\d+ MiB of \d+ MiB/);
  await clickWidget(page, 'units_gib', { changes: true });
  assert.ok((await mirror(page)).banner.text.includes(' GiB '));
  assert.ok(!(await hash(page)).includes('units='));
  assert.deepEqual(errors, []);
  await context.close();
});

test('the formulas page opens inside the single file (no file:// link, no network, no new window)', async () => {
  const { context, page, errors, blocked } = await openPage('#v=1&model=llama3-8b&gpus=16');
  await clickWidget(page, 'formulas');
  await page.waitForFunction(() => !document.getElementById('docs').hidden);
  const frame = page.frames().find((f) => f !== page.mainFrame());
  assert.ok(frame, 'the formulas page is a frame of this page');
  await frame.waitForSelector('h1');
  assert.equal(await frame.evaluate(() => document.querySelector('h1').textContent), 'meshfit: formulas and sources');
  assert.ok(await frame.evaluate(() => document.querySelectorAll('h2').length) >= 5, 'the whole document, not a stub');
  assert.equal(context.pages().length, 1, 'no window opened');
  await page.screenshot({ path: path.join(artifacts, 'formulas-1440x900-dark.png') });
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.getElementById('docs').hidden);
  // The page still answers after the overlay is closed.
  await typeInto(page, 'gpus', '32');
  assert.equal((await mirror(page)).config.gpus, 32);
  assert.deepEqual(blocked, []);
  assert.deepEqual(errors, []);
  await context.close();
});

// [SECTION] Screenshots for review

test('screenshots: Compare, the CSV menu in MiB, and the formulas page, both themes, 1440x900 and 390x844', async () => {
  const pin = encodeURIComponent('v=1&model=llama3.1-70b&gpus=64&seq=8192&tp=8&pp=4');
  const link = `#v=1&model=llama3.1-70b&gpus=64&seq=4096&tp=8&pp=4&tab=compare&pin=${pin}`;
  for (const [width, height] of [[1440, 900], [390, 844]]) {
    for (const colorScheme of ['dark', 'light']) {
      const size = `${width}x${height}-${colorScheme}`;
      const { context, page, errors } = await openPage(link, { viewport: { width, height }, colorScheme });
      const m = await mirror(page);
      assert.equal(m.compare.pinned, true);
      await page.screenshot({ path: path.join(artifacts, `review-compare-${size}.png`) });
      await clickWidget(page, 'units_mib', { changes: true });
      await openCsvMenu(page);
      await page.screenshot({ path: path.join(artifacts, `review-csv-mib-${size}.png`) });
      await page.keyboard.press('Escape');
      await frames(page);
      await clickWidget(page, 'formulas');
      await page.waitForFunction(() => !document.getElementById('docs').hidden);
      await page.frames().find((f) => f !== page.mainFrame()).waitForSelector('h1');
      await page.screenshot({ path: path.join(artifacts, `review-formulas-${size}.png`) });
      assert.deepEqual(errors, []);
      await context.close();
    }
  }
});
