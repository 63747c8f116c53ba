// The balance report's page in headless Chromium, as the play server serves it at /report:
//   node tests/web/report.mjs URL OUTDIR
// Opens it in English, checks the verdicts, the plots and the tables, switches to Chinese (the
// choice remembered), and saves screenshots. Exits non-zero on any failure.
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';

const require = createRequire(process.env.ZEROPLAY_NODE_MODULES + '/');
const { chromium } = require('playwright-core');

const [url, out] = process.argv.slice(2);
mkdirSync(out, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.ZEROPLAY_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
const fail = (msg) => { throw new Error(msg); };
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 }, locale: 'en-US' });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const res = await page.goto(url + 'report');
  if (res.status() !== 200) fail('/report answered ' + res.status());
  if (!(await page.isVisible('text=balance report'))) fail('no English title');
  if (await page.isVisible('text=平衡報告')) fail('both languages shown at once');
  const verdicts = await page.$$eval('#verdicts li', (l) => l.map((x) => x.innerText));
  if (!verdicts.length || !verdicts.every((v) => /first player scores \d+\.\d% \[\d+\.\d%, \d+\.\d%\]/.test(v))) fail('verdicts: ' + verdicts.join(' | '));
  const groups = await page.$$('section.group');
  if (groups.length < 2) fail(groups.length + ' game sections');
  // Every plot is drawn, with something in it, and fits the page's width.
  const plots = await page.$$eval('svg.plot', (s) => s.map((x) => ({ w: x.getBoundingClientRect().width, marks: x.querySelectorAll('circle, rect').length })));
  if (plots.length < 8 || plots.some((p) => p.marks === 0 || p.w > 1100)) fail('plots: ' + JSON.stringify(plots));
  const endings = await page.$$eval('table.endings tr[data-ending]', (r) => r.length);
  if (!endings) fail('no endings table');
  await page.screenshot({ path: out + '/report-en.png', fullPage: true });
  // Chinese, and remembered on the next visit.
  await page.click('#lang');
  if (!(await page.isVisible('text=平衡報告')) || (await page.isVisible('text=balance report'))) fail('the switch to Chinese did not take');
  await page.reload();
  if (!(await page.isVisible('text=平衡報告'))) fail('the language was not remembered');
  const zhVerdict = await page.$eval('#verdicts li', (l) => l.innerText);
  if (!/先手得分率 \d+\.\d%/.test(zhVerdict)) fail('Chinese verdict: ' + zhVerdict);
  await page.screenshot({ path: out + '/report-zh.png', fullPage: true });
  const json = await (await page.request.get(url + 'report.json')).json();
  if (!(json.games > 0) || json.groups.length !== groups.length) fail('report.json: ' + JSON.stringify(json).slice(0, 200));
  if (errors.length) fail('page errors: ' + errors.join('; '));
  console.log(`report ok: ${json.games} games, ${groups.length} sections, ${plots.length} plots`);
} finally {
  await browser.close();
}
