import { chromium } from 'playwright-core';
import path from 'node:path';
const site = process.env.MESHFIT_SITE, out = process.env.OUT;
const url = 'file://' + path.resolve(site, 'meshfit.html') + '#v=1&model=llama3-8b&gpus=64&sp=false&framework=deepspeed&tp=8';
const args = ['--no-sandbox', '--disable-gpu', '--enable-unsafe-swiftshader', '--use-angle=swiftshader'];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args });
const widgets = (page) => page.evaluate(() => JSON.parse(document.getElementById('widgets').textContent || '{}'));
const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
async function scrollTo(page, name) {
  const height = await page.evaluate(() => innerHeight);
  for (let i = 0; i < 30; ++i) {
    const rect = (await widgets(page))[name];
    if (rect && rect[1] >= 0 && rect[1] + rect[3] <= height - 120) return rect;
    const x = rect ? rect[0] + 4 : 100;
    await page.mouse.move(x, height / 2);
    await page.mouse.wheel(0, rect && rect[1] < 0 ? -200 : 200);
    await frames(page);
  }
  return (await widgets(page))[name];
}
for (const [name, opts] of [['desktop-dark', { viewport: { width: 1440, height: 900 }, colorScheme: 'dark' }],
                            ['desktop-light', { viewport: { width: 1440, height: 900 }, colorScheme: 'light' }],
                            ['phone-dark', { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, colorScheme: 'dark' }]]) {
  const context = await browser.newContext(opts);
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(() => window.meshfitReady === true, null, { timeout: 60000 });
  await page.waitForTimeout(3000);
  if (name.startsWith('phone')) {
    const w = await widgets(page);
    if (w.tab_inputs) { await page.touchscreen.tap(w.tab_inputs[0] + 10, w.tab_inputs[1] + 5); await page.waitForTimeout(800); }
  }
  const rect = await scrollTo(page, 'norm_kernel');
  console.log(name, JSON.stringify(rect));
  await page.screenshot({ path: path.join(out, `norm-${name}.png`) });
  if (rect && !name.startsWith('phone')) {
    await page.mouse.click(rect[0] + 40, rect[1] + rect[3] / 2, { delay: 60 });
    await page.waitForTimeout(500);
    await page.screenshot({ path: path.join(out, `norm-${name}-open.png`) });
  }
  await context.close();
}
await browser.close();
