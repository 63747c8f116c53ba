// Page load and AI-move latency as a person sees them, in headless Chromium (playwright-core):
//   node tests/web/bench.mjs URL [LOADS]
// For each game: LOADS fresh page loads, each timed from navigation to the first board drawn
// (the game created and its view drawn: window.zeroplay.view() set); then LOADS AI moves at
// 300 ms (successive turns of one game), each timed from the click on "AI move" to the page
// idle again with the move drawn.
// Prints medians and the slowest as Markdown rows. Not a test: a benchmark (docs/benchmarks.md).
import { createRequire } from 'node:module';

const require = createRequire(process.env.ZEROPLAY_NODE_MODULES + '/');
const { chromium } = require('playwright-core');

const [url, loadsArg] = process.argv.slice(2);
const loads = Number(loadsArg || 10);
const browser = await chromium.launch({
  executablePath: process.env.ZEROPLAY_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
const median = (v) => { const s = [...v].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
try {
  console.log('| game | page load to first board (median) | slowest | AI move at 300 ms, click to board (median) | slowest |');
  console.log('|---|---|---|---|---|');
  for (const game of (process.env.GAMES || 'battlenumber,trigolden,banqi').split(',')) {
    const load = [], ai = [];
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (e) => console.error('page error: ' + e));
    // The page remembers nothing of the game between loads but its language; the game is
    // chosen by the selector, so the load is timed for the default game and the chosen one
    // is timed from the selector's change to its board.
    // A page left for another keeps its game on the server until it idles out: delete it, as
    // the per-client game limit would otherwise refuse the next load.
    const drop = () => page.evaluate(() => window.zeroplay && window.zeroplay.drop());
    for (let i = 0; i < loads; i++) {
      if (i) await drop();
      const t0 = Date.now();
      await page.goto(url);
      if (game !== 'battlenumber') {
        await page.waitForFunction(() => window.zeroplay && window.zeroplay.idle());
        const t1 = Date.now();
        await page.selectOption('#ai-seat', 'none');
        await page.selectOption('#game', game);
        await page.waitForFunction((g) => window.zeroplay.view() && window.zeroplay.view().game === g && window.zeroplay.idle(), game);
        load.push(Date.now() - t1);
      } else {
        await page.waitForFunction(() => window.zeroplay && window.zeroplay.view() && window.zeroplay.idle());
        load.push(Date.now() - t0);
      }
    }
    await page.selectOption('#ai-seat', 'none');
    await page.selectOption('#ai-ms', '300');
    // Successive AI turns of one game (a new one if it ends), so the positions move on.
    for (let i = 0; i < loads; i++) {
      if (i === 0 || (await page.evaluate(() => !!window.zeroplay.view().outcome))) {
        await page.click('#new');
        await page.waitForFunction(() => window.zeroplay.idle() && window.zeroplay.view().ply === 0);
      }
      const before = await page.evaluate(() => window.zeroplay.view().ply);
      const t0 = Date.now();
      await page.click('#ai-move');
      await page.waitForFunction((n) => window.zeroplay.idle() && window.zeroplay.view().ply > n, before);
      ai.push(Date.now() - t0);
    }
    await drop();
    await page.close();
    console.log(`| ${game} | ${median(load)} ms | ${Math.max(...load)} ms | ${median(ai)} ms | ${Math.max(...ai)} ms |`);
  }
} finally {
  await browser.close();
}
