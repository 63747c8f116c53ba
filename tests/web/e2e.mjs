// End-to-end test of the web client in headless Chromium (driven by playwright-core):
//   node tests/web/e2e.mjs URL OUTDIR
// Plays a whole Battle Number game against the AI by clicking, follows its replay link and
// takes over from the middle, plays a TriGolden turn by choosing a piece, a target and a ghost,
// plays twelve Banqi turns (flips and moves), switches the language, and saves screenshots in
// OUTDIR. Exits non-zero on any failure.
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';

// playwright-core lives in the test tools' node_modules (scripts/setup-test-tools.sh), named by
// ZEROPLAY_NODE_MODULES; ES modules ignore NODE_PATH, so it is required from there.
const require = createRequire(process.env.ZEROPLAY_NODE_MODULES + '/');
const { chromium } = require('playwright-core');

const [url, out] = process.argv.slice(2);
mkdirSync(out, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.ZEROPLAY_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const errors = [];
const fail = (msg) => { throw new Error(msg); };
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 1000 } });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url);
  const idle = () => page.waitForFunction(() => window.zeroplay && window.zeroplay.idle(), null, { timeout: 60000 });
  const view = () => page.evaluate(() => window.zeroplay.view());

  // ---- Battle Number against the AI (second seat), 0.3 s a move.
  await page.selectOption('#game', 'battlenumber');
  await page.selectOption('#ai-seat', 'second');
  await page.selectOption('#ai-ms', '300');
  await page.click('#new');
  await idle();
  let clicks = 0;
  for (;;) {
    const v = await view();
    if (v.outcome) break;
    if (clicks++ > 400) fail('the game did not end');
    // A piece to choose (after a square), else a highlighted square. Locators, not element
    // handles: a click re-finds its element if the page redraws in between.
    const piece = page.locator('#palette button[data-action]').first();
    const square = page.locator('#board rect.sq.legal').first();
    const target = (await piece.count()) ? piece : (await square.count()) ? square : null;
    if (!target) fail('nothing to click at ply ' + v.ply);
    await target.click();
    await idle();
    if (clicks === 6) await page.screenshot({ path: out + '/battlenumber-placement.png' });
  }
  const end = await view();
  const status = await page.textContent('#status');
  if (!/wins|Draw/.test(status)) fail('no result shown: ' + status);
  if (!(await page.$('#thinking[hidden]'))) fail('the thinking box is still shown');
  await page.screenshot({ path: out + '/battlenumber-end.png' });
  console.log(`battlenumber: ${end.ply} clicks, ${clicks} by the page; ${status}`);

  // ---- Its replay link: step through, then take over from the middle.
  const link = await page.inputValue('#link');
  await page.goto(link);
  await page.waitForFunction(() => window.zeroplay && window.zeroplay.view() && !document.getElementById('replay-box').hidden);
  await page.waitForFunction((n) => window.zeroplay.view().ply === n, end.ply);
  const replayed = await view();
  if (JSON.stringify(replayed.board) !== JSON.stringify(end.board)) fail('the replay ends on another board');
  const mid = Math.floor(end.ply / 2) & ~1;
  await page.$eval('#r-slider', (e, v) => { e.value = v; e.dispatchEvent(new Event('input')); }, mid);
  await page.waitForFunction((n) => window.zeroplay.view().ply === n, mid);
  await page.click('#r-prev');
  await page.waitForFunction((n) => window.zeroplay.view().ply === n, mid - 1);
  await page.click('#r-next');
  await page.waitForFunction((n) => window.zeroplay.view().ply === n, mid);
  await page.screenshot({ path: out + '/replay.png' });
  await page.selectOption('#ai-seat', 'none');
  await page.click('#take-over');
  await page.waitForFunction(() => document.getElementById('replay-box').hidden);
  await idle();
  const taken = await view();
  if (taken.ply !== mid || !taken.id) fail('take over did not start a game at ply ' + mid);
  if (JSON.stringify(taken.history) !== JSON.stringify(end.history.slice(0, mid))) fail('take over changed the moves');

  // ---- TriGolden: the opening, then a full two-piece turn, by piece, target and ghost.
  await page.goto(url);
  await idle();
  await page.selectOption('#game', 'trigolden');
  await page.selectOption('#ai-seat', 'none');
  await page.click('#new');
  await page.waitForFunction(() => window.zeroplay.view() && window.zeroplay.view().game === 'trigolden');
  await idle();
  const placeOne = async () => {
    const shape = await page.$('#palette button[data-shape]:not([disabled])');
    if (!shape) fail('no usable piece in the palette');
    await shape.click();
    let ghost = await page.$('#board polygon.ghost');
    if (!ghost) {
      await page.click('#board polygon.piece.target');
      ghost = await page.$('#board polygon.ghost');
    }
    if (!ghost) fail('no ghost after choosing a target');
    const before = (await view()).ply;
    await ghost.click();
    await page.waitForFunction((n) => window.zeroplay.view().ply === n + 1, before);
    await idle();
  };
  await placeOne(); // opening
  await placeOne(); // second seat, first piece
  const midTurn = await view();
  if (midTurn.turn_start) fail('a two-piece turn ended after one piece');
  await placeOne(); // second piece
  const tg = await view();
  if (tg.board.pieces.length !== 3 || !tg.turn_start || tg.to_move !== 'first') fail('TriGolden turn not complete');
  const drawn = await page.$$eval('#board polygon.piece', (e) => e.length);
  if (drawn !== 3) fail(`${drawn} pieces drawn, 3 placed`);
  if ((await page.$$('#board polygon.piece.last')).length !== 2) fail('the last turn is not marked');
  await page.click('#zoom-in');
  await page.screenshot({ path: out + '/trigolden-turn.png' });
  console.log('trigolden: opening and a two-piece turn placed');

  // ---- Banqi against the AI: a flip is one click on a face-down disc, a move is the piece
  // then a highlighted square; twelve of our turns.
  await page.selectOption('#game', 'banqi');
  await page.selectOption('#ai-seat', 'second');
  await page.selectOption('#ai-ms', '300');
  await page.click('#new');
  await page.waitForFunction(() => window.zeroplay.view() && window.zeroplay.view().game === 'banqi');
  await idle();
  let bqMoves = 0;
  for (let turn = 0; turn < 12; turn++) {
    const v = await view();
    if (v.outcome) break;
    const mv = v.legal.map((l) => l.action).find((a) => a.slice(0, 2) !== a.slice(2));
    if (mv) {
      await page.click(`#board g[data-name="${mv.slice(0, 2)}"] rect.sq.legal`);
      await page.click(`#board g[data-name="${mv.slice(2)}"] rect.sq.legal`);
      bqMoves++;
    } else {
      await page.click('#board rect.sq.legal[data-action]:not([data-action=""])');
    }
    await idle();
    const after = await view();
    if (after.ply <= v.ply) fail('a Banqi click did not move the game on at ply ' + v.ply);
  }
  const bq = await view();
  const faceDown = bq.board.squares.filter((c) => c === 'X').length;
  if ((await page.$$('#board circle.facedown')).length !== faceDown) fail('face-down discs do not match the board');
  if (!bq.history.some((a) => a.startsWith('='))) fail('no flip was revealed');
  await page.screenshot({ path: out + '/banqi.png' });
  console.log(`banqi: ${bq.ply} actions, ${bqMoves} moves by the page, ${faceDown} face down`);

  // ---- Chinese labels, and a phone-sized screen.
  await page.click('#lang');
  const label = await page.textContent('#new');
  if (label !== '新局') fail('language switch: ' + label);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: out + '/trigolden-zh-phone.png', fullPage: true });
  await page.click('#lang');
  if (errors.length) fail('page errors: ' + errors.join('; '));
  console.log('e2e ok');
} finally {
  await browser.close();
}
