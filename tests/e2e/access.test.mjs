// access.test.mjs — the page on a phone, by keyboard and with a screen reader (issue 13, items 7
// and 8), in Debian's Chromium (playwright-core, headless, software WebGL2) like page.test.mjs:
// a 390x844 touch viewport opens on the verdict, taps and drags act once, a tap on a number field
// focuses a real text input (the phone's keyboard); Tab walks a DOM form of every input in the
// panel's order, shown over its canvas widget; changes made there reach the results; the
// accessibility tree holds the fields, the verdict and the table rows.
// Environment: MESHFIT_SITE (folder with meshfit.html), MESHFIT_CLI (native meshfit), MESHFIT_ARTIFACTS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { answered, artifacts, cli, frames, mirror, nativeRanks, openPage, settled, useChromium, version, widgets }
  from './harness.mjs';

const phone = { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true };

useChromium();

// Waits until a named widget has a rectangle (drawn in the last frame), and returns it.
async function rectOf(page, name) {
  await page.waitForFunction((n) => (JSON.parse(document.getElementById('widgets').textContent || '{}'))[n] !== undefined,
                             name, { timeout: 20000 });
  return (await widgets(page))[name];
}

const centre = (r) => ({ x: r[0] + Math.min(r[2] / 2, 40), y: r[1] + r[3] / 2 });

// One finger dragged from `from` to `to` in small steps (Chrome DevTools touch events).
async function touchDrag(page, from, to, steps = 12) {
  const cdp = await page.context().newCDPSession(page);
  const point = (p) => [{ x: p.x, y: p.y, id: 1 }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: point(from) });
  for (let i = 1; i <= steps; ++i) {
    const p = { x: from.x + (to.x - from.x) * i / steps, y: from.y + (to.y - from.y) * i / steps };
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: point(p) });
    await frames(page, 1);
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await frames(page, 3);
  await cdp.detach();
}

test('a phone (390x844, touch) opens on the verdict and the per-rank chart, in one column', async () => {
  const { context, page, errors } = await openPage('', phone);
  const w = await widgets(page);
  assert.equal(w.gpus, undefined, 'the inputs are a tab of their own, not the first thing shown');
  assert.ok(w.tab_inputs, 'and that tab is there');
  const banner = w.verdict_banner;
  assert.ok(banner, 'the verdict banner is drawn');
  assert.ok(banner[1] >= 0 && banner[1] + banner[3] <= 844 / 3, `the verdict is in the top third: ${banner}`);
  assert.ok(banner[2] >= 390 - 40, 'the banner spans the width (one column)');
  assert.ok(w.rank_bars && w.rank_bars[1] < 844, `the per-rank chart starts on the first screen: ${w.rank_bars}`);
  await page.screenshot({ path: path.join(artifacts, 'phone-first-screen.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('the per-rank table turns on a phone (a row per component), so no column hides behind a sideways scroll', async () => {
  const hash = '#v=1&model=llama3.1-70b&gpus=64&tp=8&pp=4';
  const onPhone = await openPage(hash, phone);
  const turned = await rectOf(onPhone.page, 'rank_table_turned');
  assert.ok(turned[0] >= 0 && turned[0] + turned[2] <= 390, `the turned table fits the 390 px width: ${turned}`);
  assert.equal((await widgets(onPhone.page)).rank_table, undefined, 'the wide, scrolling table is not drawn');
  assert.deepEqual(onPhone.errors, []);
  await onPhone.context.close();
  // A desktop window keeps a row per rank.
  const onDesktop = await openPage(hash);
  assert.ok(await rectOf(onDesktop.page, 'rank_table'));
  assert.equal((await widgets(onDesktop.page)).rank_table_turned, undefined);
  assert.deepEqual(onDesktop.errors, []);
  await onDesktop.context.close();
});

test('on a phone a finger dragged over a tall per-rank chart (pp 16) scrolls the page, not only the chart', async () => {
  const { context, page, errors } = await openPage('#v=1&model=llama3.1-405b&gpus=512&tp=8&pp=16&pp_first_stage_layers=7&pp_last_stage_layers=7', phone);
  const bars = await rectOf(page, 'rank_bars');
  const start = { x: 200, y: Math.min(800, bars[1] + bars[3] - 20) };
  assert.ok(start.y > bars[1] + 20, `the drag starts over the chart: ${bars}`);
  // The view below the fixed header scrolls as a whole: the chart itself moves up with the finger.
  await touchDrag(page, start, { x: 200, y: start.y - 300 });
  const after = (await widgets(page)).rank_bars;
  assert.ok(after === undefined || bars[1] - after[1] > 200, `the page scrolled with the finger: chart at y=${bars[1]}, then ${after}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('on a phone one tap switches tab, a drag scrolls the inputs, and a tap on a number field focuses a text input', async () => {
  const { context, page, errors } = await openPage('', phone);
  // One tap on a tab opens it: Layouts (its filter field is drawn), then Inputs.
  const tap = async (name) => { const c = centre(await rectOf(page, name)); await page.touchscreen.tap(c.x, c.y); await frames(page, 6); };
  await tap('tab_layouts');
  assert.ok((await widgets(page)).layout_filter, 'one tap opened the Layouts tab');
  await tap('tab_inputs');
  assert.ok((await widgets(page)).gpus, 'one tap opened the Inputs tab');
  // A finger dragged up scrolls the panel under it.
  const before = (await rectOf(page, 'seq'))[1];
  await touchDrag(page, { x: 200, y: 760 }, { x: 200, y: 460 });
  const after = (await rectOf(page, 'seq'))[1];
  assert.ok(before - after > 150, `the inputs scrolled with the finger: seq at y=${before}, then y=${after}`);
  await touchDrag(page, { x: 200, y: 460 }, { x: 200, y: 800 });
  // A tap on a count field: a real, focused DOM text input asking for a number keyboard. The field
  // is first dragged into view if the finger-sized buttons above it pushed it below the screen.
  let field = await rectOf(page, 'gpus');
  if (centre(field).y > 700) {
    await touchDrag(page, { x: 200, y: 760 }, { x: 200, y: 760 - (centre(field).y - 500) });
    field = await rectOf(page, 'gpus');
  }
  await page.touchscreen.tap(centre(field).x, centre(field).y);
  await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'ime', null, { timeout: 10000 });
  assert.equal(await page.evaluate(() => document.activeElement.inputMode), 'decimal');
  // What the phone's keyboard (or an IME) inserts reaches the field: input events, no key events.
  const v = await version(page);
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText('128');
  await page.keyboard.press('Enter');
  await settled(page, v);
  const m = await mirror(page);
  assert.equal(m.config.gpus, 128);
  assert.ok(m.ok);
  await page.screenshot({ path: path.join(artifacts, 'phone-typed.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('Tab from the canvas walks every input of the panel in its order, each shown over its widget with a focus ring', async () => {
  const { context, page, errors } = await openPage();
  const form = (await mirror(page)).form.map((f) => f.field);
  for (const field of ['model', 'gpu', 'gpus', 'seq', 'global_batch', 'micro_batch', 'framework', 'recompute', 'tp', 'pp', 'zero', 'headroom'])
    assert.ok(form.includes(field), `the form has ${field}`);
  await page.focus('#canvas');
  const reached = [];
  for (let i = 0; i < form.length; ++i) {
    await page.keyboard.press('Tab');
    await frames(page, 3);
    const focus = await page.evaluate(() => {
      const el = document.activeElement;
      const r = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      return { field: el.dataset ? el.dataset.field : undefined, over: el.classList.contains('over'),
               rect: [r.x, r.y, r.width, r.height], outline: style.outlineStyle + ' ' + style.outlineWidth };
    });
    reached.push(focus.field);
    assert.ok(focus.over && focus.rect[2] > 0 && focus.rect[3] > 0, `${focus.field} is shown while focused`);
    assert.equal(focus.outline, 'solid 3px', `${focus.field} has a visible focus ring`);
    const widget = (await widgets(page))[focus.field];
    assert.ok(widget, `${focus.field} has its canvas widget on screen`);
    assert.ok(Math.abs(widget[0] - focus.rect[0]) < 2 && Math.abs(widget[1] - focus.rect[1]) < 2,
              `${focus.field} sits over its widget: ${focus.rect} vs ${widget}`);
    if (focus.field === 'headroom') await page.screenshot({ path: path.join(artifacts, 'keyboard-focus.png') });
  }
  assert.deepEqual(reached, form, 'Tab order = the panel order');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a change in the DOM form goes through the app: results, link and tables follow; bad text is refused beside the field', async () => {
  const { context, page, errors } = await openPage();
  const gpus = page.getByRole('textbox', { name: 'GPUs', exact: true });
  let v = await version(page);
  await gpus.focus();
  await gpus.fill('128');
  await gpus.press('Enter');
  await settled(page, v);
  let m = await mirror(page);
  assert.equal(m.config.gpus, 128);
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  assert.match(await page.evaluate(() => location.hash), /gpus=128/);
  // The commit changed the choosers' options, so the form was rebuilt: the field still shows what was
  // committed (an as-a-user review found it blank), and keeps the focus.
  assert.equal(await gpus.inputValue(), '128');
  assert.ok(await gpus.evaluate((el) => el === document.activeElement));
  const rows = await page.getByRole('table', { name: 'Per-rank memory' }).getByRole('row').allTextContents();
  assert.equal(rows.length, m.ranks.length + 1);
  const worst = m.ranks[m.worst_rank];
  assert.ok(rows.some((r) => r.includes((worst.device_bytes / 2 ** 30).toFixed(2) + ' GiB')), 'the table shows the new figures');
  // A chooser: only the valid degrees are offered; choosing one applies it.
  const tp = page.getByRole('combobox', { name: 'tp' });
  const offered = await tp.locator('option').evaluateAll((options) => options.map((o) => Number(o.value)));
  assert.deepEqual(offered, m.choices.tp);
  v = await version(page);
  await tp.selectOption('4');
  await settled(page, v);
  m = await mirror(page);
  assert.equal(m.config.tp, 4);
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  // Text that is not a whole number stays in the field with the message; the config keeps its value.
  v = await version(page);
  await gpus.fill('3.7');
  await gpus.press('Enter');
  await settled(page, v);
  m = await mirror(page);
  assert.equal(m.config.gpus, 128);
  assert.equal(await gpus.getAttribute('aria-invalid'), 'true');
  const described = await gpus.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby')).textContent);
  assert.match(described, /whole number/);
  assert.equal(described, m.text_errors.gpus);
  assert.deepEqual(errors, []);
  await context.close();
});

// A review of the form found no way to fine-tune from it: a keyboard or screen-reader user could not
// reach the training mode, the stack or the adapter settings, nor the tokens to train.
test('the DOM form switches to fine-tuning as the panel does, and its fine-tuning fields sit over their widgets', async () => {
  const hash = '#v=1&model=llama3.1-8b&gpu=h100-sxm&gpus=8';
  const canvas = await openPage(hash);
  const r = await rectOf(canvas.page, 'finetune_qlora');
  const viaCanvas = await answered(canvas.page,
                                   () => canvas.page.mouse.click(r[0] + Math.min(r[2] / 2, 20), r[1] + r[3] / 2, { delay: 60 }));
  assert.equal(viaCanvas.config.finetune, 'qlora');
  await canvas.context.close();

  const { context, page, errors } = await openPage(hash);
  const mode = page.getByRole('combobox', { name: 'training mode', exact: true });
  assert.equal(await mode.inputValue(), 'none');
  let m = await answered(page, () => mode.selectOption('qlora'));
  assert.equal(m.state, viaCanvas.state, 'the same config (the stack defaults included) as a click on the panel');
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  const form = m.form.map((f) => f.field);
  for (const field of ['finetune', 'stack', 'lora_rank', 'lora_alpha', 'lora_dropout', 'lora_targets', 'adapter_dtype',
                       'embedding_trained', 'lm_head_trained', 'double_quant', 'kbit_upcast', 'offload',
                       'optimizer_in_backward', 'tokens_to_train', 'offload_activations'])
    assert.ok(form.includes(field), `the form has ${field}`);
  // PEFT modules_to_save from the keyboard: the head's trainable copy is in the config and the ranks
  // are the CLI's for that state, above the ranks without it.
  const headBox = page.getByRole('checkbox', { name: 'train LM head fully', exact: true });
  const withoutHead = m.ranks;
  await headBox.focus();
  m = await answered(page, () => page.keyboard.press('Space'));
  assert.equal(m.config.lm_head_trained, true);
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  assert.notDeepEqual(m.ranks, withoutHead, 'the trained head changes the ranks');
  m = await answered(page, () => page.keyboard.press('Space'));
  assert.equal(m.config.lm_head_trained, false);
  // Activation offloading from the keyboard: the checked box reaches the config, and the CLI's ranks
  // for the resulting state are the page's (its saved layers go to CPU memory).
  const offloadBox = page.getByRole('checkbox', { name: 'offload activations to CPU', exact: true });
  await offloadBox.focus();
  m = await answered(page, () => page.keyboard.press('Space'));
  assert.equal(m.config.offload_activations, true);
  assert.deepEqual(m.ranks, nativeRanks(m.state));
  const offloadedRanks = JSON.parse(execFileSync(cli, ['estimate', '--state', m.state, '--json'], { encoding: 'utf8' })).ranks;
  assert.ok(offloadedRanks.every((r) => r.host_bytes > 0), 'offloaded activations are host bytes');
  m = await answered(page, () => page.keyboard.press('Space'));
  // A number in range is taken; one out of range is refused and the config keeps its value.
  const alpha = page.getByRole('textbox', { name: 'LoRA alpha', exact: true });
  m = await answered(page, async () => {
    await alpha.fill('48');
    await alpha.press('Enter');
  });
  assert.equal(m.config.lora_alpha, 48);
  const dropout = page.getByRole('textbox', { name: 'LoRA dropout', exact: true });
  const keptDropout = m.config.lora_dropout;
  m = await answered(page, async () => {
    await dropout.fill('1.5');
    await dropout.press('Enter');
  });
  assert.equal(m.config.lora_dropout, keptDropout);
  const tokens = page.getByRole('textbox', { name: 'tokens to train (billions, 0 = none)', exact: true });
  m = await answered(page, async () => {
    await tokens.fill('2.5');
    await tokens.press('Enter');
  });
  assert.equal(m.config.tokens_to_train, 2.5e9);
  // A micro-batch the stack's global batch cannot hold keeps its accumulation steps and raises the
  // global batch (an as-a-user review saw micro_batch 2 undone at a stack's global batch of 1).
  const dpOf = (c) => c.gpus / (c.tp * c.pp * c.cp);
  const accumulation = m.config.global_batch / (m.config.micro_batch * dpOf(m.config));
  const micro = page.getByRole('textbox', { name: 'micro-batch', exact: true });
  const raised = await answered(page, async () => {
    await micro.fill(String(m.config.micro_batch * 3));
    await micro.press('Enter');
  });
  assert.equal(raised.config.micro_batch, m.config.micro_batch * 3, 'the micro-batch typed is kept');
  assert.equal(raised.config.global_batch, accumulation * raised.config.micro_batch * dpOf(raised.config));
  assert.match(raised.layout_note, /^global_batch \d+ → \d+ to hold micro_batch/);
  // Every field of the form, focused, is shown over its canvas widget.
  for (const f of (await mirror(page)).form) {
    await page.focus('#f-' + f.field);
    await frames(page, 3);
    const focus = await page.evaluate(() => {
      const el = document.activeElement;
      const box = el.getBoundingClientRect();
      return { field: el.dataset.field, over: el.classList.contains('over'), rect: [box.x, box.y, box.width, box.height] };
    });
    assert.equal(focus.field, f.field);
    assert.ok(focus.over && focus.rect[2] > 0, `${f.field} is shown while focused`);
    const widget = (await widgets(page))[f.field];
    assert.ok(widget, `${f.field} has its canvas widget on screen`);
    assert.ok(Math.abs(widget[0] - focus.rect[0]) < 2 && Math.abs(widget[1] - focus.rect[1]) < 2,
              `${f.field} sits over its widget: ${focus.rect} vs ${widget}`);
  }
  // Back to pretraining from the form, as the panel's radio button does.
  m = await answered(page, () => mode.selectOption('none'));
  assert.equal(m.config.finetune, 'none');
  assert.ok(!m.form.some((f) => f.field === 'stack'), 'the fine-tuning fields leave the form');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the accessibility tree holds every field with its value, the verdict and the rows of both tables', async () => {
  const { context, page, errors } = await openPage('#v=1&model=llama3-8b&gpus=16&tp=2');
  await page.waitForFunction(() => JSON.parse(document.getElementById('mirror').textContent).search_complete, null, { timeout: 60000 });
  const m = await mirror(page);
  for (const f of m.form) {
    const role = f.kind === 'choice' ? 'combobox' : f.kind === 'flag' ? 'checkbox' : 'textbox';
    const el = page.getByRole(role, { name: f.label, exact: true });
    assert.equal(await el.count(), 1, `${f.field} is a ${role} named "${f.label}"`);
    if (role === 'checkbox') assert.equal(await el.isChecked(), f.value === 'true');
    else assert.equal(await el.inputValue(), f.value, `${f.field} holds its value`);
  }
  assert.equal(await page.getByRole('textbox', { name: 'GPUs', exact: true }).inputValue(), '16');
  const verdict = page.getByRole('heading', { name: /^(FITS|TIGHT|OUT OF MEMORY): (worst rank \(pipeline stage \d+ of stages 0-\d+\)|every GPU|the GPU) uses / });
  assert.equal(await verdict.count(), 1);
  assert.equal(await verdict.textContent(), m.banner.text.replace(/ {2,}/g, ': '));
  const rankRows = page.getByRole('table', { name: 'Per-rank memory' }).getByRole('row');
  assert.equal(await rankRows.count(), m.ranks.length + 1);
  const layoutRows = page.getByRole('table', { name: 'Fastest layouts that fit' }).getByRole('row');
  assert.equal(await layoutRows.count(), Math.min(10, m.layouts_feasible) + 1);
  const first = await layoutRows.nth(1).allTextContents();
  assert.match(first.join(' '), new RegExp(`^1\\s*${m.layouts[0].dp}\\s*${m.layouts[0].tp}\\s*${m.layouts[0].pp}`));
  // The same through Chromium's accessibility tree (what a screen reader reads).
  const cdp = await context.newCDPSession(page);
  const { nodes } = await cdp.send('Accessibility.getFullAXTree');
  const named = (role, name) => nodes.some((n) => n.role && n.role.value === role && n.name && name.test(n.name.value));
  assert.ok(named('textbox', /^GPUs$/), 'a textbox named GPUs');
  assert.ok(named('combobox', /^model$/), 'a combobox named model');
  assert.ok(named('heading', /^(FITS|TIGHT|OUT OF MEMORY): .+ of capacity\)$/), 'the verdict heading');
  assert.ok(named('table', /^Per-rank memory$/) && named('table', /^Fastest layouts that fit$/), 'both tables');
  assert.ok(nodes.filter((n) => n.role && n.role.value === 'row').length >= m.ranks.length + 2, 'their rows');
  assert.deepEqual(errors, []);
  await context.close();
});
