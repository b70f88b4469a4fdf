// harness.mjs — what the page tests share: the environment they read, Debian's Chromium with
// software WebGL2 (../../shared/TOOLCHAIN.md), the single-file page opened from file:// with the
// network blocked, its DOM mirror read, and its canvas widgets used the way a person uses them (the
// mouse wheel to scroll, a real press to click, keys to type), waiting each time for the page to answer.
// Environment: MESHFIT_SITE (folder with meshfit.html), MESHFIT_CLI (native meshfit), MESHFIT_ARTIFACTS.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const site = process.env.MESHFIT_SITE;
export const cli = process.env.MESHFIT_CLI;
export const artifacts = process.env.MESHFIT_ARTIFACTS;
assert.ok(site && cli && artifacts, 'set MESHFIT_SITE, MESHFIT_CLI and MESHFIT_ARTIFACTS');
mkdirSync(artifacts, { recursive: true });
export const pageUrl = 'file://' + path.resolve(site, 'meshfit.html');
const chromiumArgs = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--enable-unsafe-swiftshader', '--use-angle=swiftshader'];

export const launchChromium = (extraArgs = []) =>
  chromium.launch({ executablePath: '/usr/bin/chromium', args: [...chromiumArgs, ...extraArgs] });

// One browser for the test file that calls this at its top level, opened before its first test.
let browser;
export function useChromium() {
  before(async () => { browser = await launchChromium(); });
  after(async () => { await browser?.close(); });
}
export const newContext = (options) => browser.newContext(options);

// Console errors and uncaught exceptions of a page, kept for the assertion at the end of a test;
// console errors matching `ignored` (a RegExp) are not kept.
export function watchErrors(page, ignored = null) {
  const errors = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !(ignored && ignored.test(message.text()))) errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(String(error)));
  return errors;
}

// The page at `hash`, in a 1440x900 dark context unless `options` say otherwise. Every request that
// is not file:// is counted in `blocked` and aborted, unless `route` (a playwright route handler)
// answers them instead. `prepare(page)` runs once the page is ready; then, with `settle`, the test
// waits for the page to have answered (settled).
export async function openPage(hash = '', options = {}, { route = null, prepare = null, settle = true, ignoredErrors = null } = {}) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'dark', ...options });
  const page = await context.newPage();
  const errors = watchErrors(page, ignoredErrors);
  const blocked = [];
  await context.route('**/*', route ?? ((r) => {
    const url = r.request().url();
    if (url.startsWith('file://')) return r.continue();
    blocked.push(url);
    return r.abort();
  }));
  await page.goto(pageUrl + hash);
  await page.waitForFunction(() => window.meshfitReady === true, null, { timeout: 60000 });
  if (prepare) await prepare(page);
  if (settle) await settled(page);
  return { context, page, errors, blocked };
}

export const mirror = (page) => page.evaluate(() => JSON.parse(document.getElementById('mirror').textContent));
export const widgets = (page) => page.evaluate(() => JSON.parse(document.getElementById('widgets').textContent || '{}'));
export const hash = (page) => page.evaluate(() => location.hash);
export const version = async (page) => (await mirror(page)).version;

// `n` animation frames of the page (two: the frame that takes an input and the one that shows it).
export const frames = (page, n = 2) => page.evaluate((count) => new Promise((resolve) => {
  const next = (left) => (left === 0 ? resolve() : requestAnimationFrame(() => next(left - 1)));
  next(count);
}), n);

// Waits for the page to have answered: the mirror's version past `before` (when given), the URL hash
// caught up with the mirror's link (the config's state plus the view), the fit advice computed (it
// follows a frame later) and the widget positions of that frame published.
export async function settled(page, before = 0) {
  await page.waitForFunction((v) => {
    const text = document.getElementById('mirror').textContent;
    if (!text) return false;
    const m = JSON.parse(text);
    return m.version > v && location.hash === '#' + (m.link || m.state) && !m.fit_pending &&
           document.getElementById('widgets').textContent !== '';
  }, before, { timeout: 60000 });
}

// Does `act` (a change through the page) and returns the mirror once the page has answered it.
export async function answered(page, act) {
  const before = await version(page);
  await act();
  await settled(page, before);
  return mirror(page);
}

// Scrolls the panel under a widget (the mouse wheel, as a person would) until the widget is in view
// above the panel's bottom frame (its border and padding clip a field in the last 32 px); a widget
// not drawn yet is looked for further down.
export async function scrollTo(page, name) {
  const height = await page.evaluate(() => innerHeight);
  for (let i = 0; i < 20; ++i) {
    const rect = (await widgets(page))[name];
    if (rect && rect[1] >= 0 && rect[1] + rect[3] <= height - 32) return;
    await page.mouse.move(rect ? rect[0] + 4 : 100, height / 2);
    await page.mouse.wheel(0, rect && rect[1] < 0 ? -200 : 200);
    await frames(page);
  }
}

// A real press on a named widget: down and up apart, as a person clicks. With `changes`, waits for
// the recompute the click causes.
export async function clickWidget(page, name, { changes = false } = {}) {
  await scrollTo(page, name);
  const rect = (await widgets(page))[name];
  assert.ok(rect, `widget ${name} is on screen`);
  const before = await version(page);
  await page.mouse.click(rect[0] + Math.min(rect[2] / 2, 40), rect[1] + rect[3] / 2, { delay: 60 });
  if (changes) await settled(page, before);
  else await frames(page);
}

// Replaces a field's text as a person does (select all, type, Enter) and waits for the answer.
export async function typeInto(page, name, text) {
  await clickWidget(page, name);
  const before = await version(page);
  await page.keyboard.press('Control+A');
  await page.keyboard.type(text, { delay: 30 });
  await page.keyboard.press('Enter');
  await settled(page, before);
}

// The native CLI's per-rank figures for a state: what the page's mirror must show to the byte.
export function nativeRanks(state) {
  const out = JSON.parse(execFileSync(cli, ['estimate', '--state', state, '--json'], { encoding: 'utf8' }));
  return out.ranks.map((r) => ({ role: r.role, pp_stage: r.pp_stage, peak_allocated_bytes: r.peak_allocated_bytes,
                                 peak_reserved_bytes: r.peak_reserved_bytes, device_bytes: r.device_bytes }));
}
