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
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text() + ' ' + (m.location().url || '')); });
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
  // The AI's last turn is outlined on its squares; the board has its coordinates.
  if ((await page.$$('#board rect.lastmove')).length < 1) fail('Battle Number: the last move is not marked');
  const coords = await page.$$eval('#board text.coord', (e) => e.map((x) => x.textContent).join(''));
  if (coords !== 'abcdefg0123456') fail('Battle Number coordinates: ' + coords);
  const status = await page.textContent('#status');
  if (!/wins|Draw/.test(status)) fail('no result shown: ' + status);
  if (await page.$('#thinking.active')) fail('the thinking box still says the AI thinks');
  if (!/searched|思考/.test(await page.textContent('#think-text'))) fail('the last search line is not kept');
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

  // ---- While the AI thinks: the controls are off and stay in place; "Stop the AI" hands its
  // seat to a person; a new game started meanwhile is not overtaken by the old search.
  await page.goto(url);
  await idle();
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.selectOption('#ai-ms', '3000');
  const undoAt = await page.$eval('#undo', (e) => e.getBoundingClientRect().top);
  await page.selectOption('#ai-seat', 'first');
  await page.waitForSelector('#thinking.active');
  await page.waitForFunction(() => /simulations|模擬/.test(document.getElementById('think-text').textContent));
  if (!(await page.$eval('#undo', (e) => e.disabled))) fail('undo is live while the AI thinks');
  if (!(await page.$('body.ai-turn'))) fail('the page does not show that it is the AI\'s turn');
  if ((await page.$$('#board rect.sq.legal')).length) fail('squares are offered while the AI thinks');
  const undoNow = await page.$eval('#undo', (e) => e.getBoundingClientRect().top);
  if (Math.abs(undoNow - undoAt) > 1) fail(`the controls moved ${undoNow - undoAt} px when the AI began to think`);
  await page.screenshot({ path: out + '/thinking-desktop.png' });
  await page.click('#stop-ai');
  await idle();
  const stopped = await view();
  if (stopped.ai_seat !== null || stopped.ply !== 0) fail('stop: the AI still plays or moved: ' + JSON.stringify([stopped.ai_seat, stopped.ply]));
  if ((await page.inputValue('#ai-seat')) !== 'none') fail('stop: the seat selector does not say nobody');
  if (!(await page.$$('#board rect.sq.legal')).length) fail('stop: the person cannot move');
  // The AI thinks again; a new game (another game chosen) meanwhile.
  await page.selectOption('#ai-seat', 'first');
  await page.waitForSelector('#thinking.active');
  const oldId = (await view()).id;
  await page.selectOption('#game', 'banqi');
  await page.waitForFunction(() => window.zeroplay.view() && window.zeroplay.view().game === 'banqi');
  await idle();
  const fresh = (await view()).id;
  await page.waitForTimeout(3500); // past the old search's 3 s
  const after = await view();
  if (after.game !== 'banqi' || after.id !== fresh) fail('the old search switched the page back: ' + JSON.stringify([after.game, after.id, fresh]));
  if ((await page.inputValue('#game')) !== 'banqi') fail('the game selector changed');
  if ((await page.textContent('#error')).trim()) fail('an error after a new game: ' + (await page.textContent('#error')));
  const oldStatus = await page.evaluate((id) => fetch('/api/games/' + id).then((r) => r.status), oldId);
  if (oldStatus !== 404) fail('the old game was not deleted: ' + oldStatus);
  console.log('thinking: controls held in place, stop, and a new game during a search');

  // ---- An address that names nothing: a page with a way back.
  const nf = await page.goto(url + 'no/such/page');
  if (nf.status() !== 404 || !(await page.$('a[href="/"]'))) fail('no 404 page');
  // The two 404s asked for on purpose (the deleted game, the wrong address) are no page errors.
  for (let i = errors.length - 1; i >= 0; i--) {
    if (errors[i].includes('/no/such/page') || errors[i].includes('/api/games/' + oldId)) errors.splice(i, 1);
  }
  await page.setViewportSize({ width: 1000, height: 1000 });

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
      // A target reads as clickable: blue, whatever else marks it (the last turn is red).
      const stroke = await page.$eval('#board polygon.piece.target', (e) => getComputedStyle(e).stroke);
      if (stroke !== 'rgb(45, 108, 223)') fail('a target piece is drawn ' + stroke);
      await page.click('#board polygon.piece.target');
      ghost = await page.$('#board polygon.ghost');
    }
    if (!ghost) fail('no ghost after choosing a target');
    // Ghosts can overlap: with more than one, each has a numbered tag above them all and a
    // numbered button, so every placement can be clicked.
    const ghosts = (await page.$$('#board polygon.ghost')).length;
    if (ghosts > 1) {
      const tags = (await page.$$('#board g.ghost-tag')).length;
      const buttons = (await page.$$('#palette .ghost-list button')).length;
      if (tags !== ghosts || buttons !== ghosts) fail(`${ghosts} ghosts, ${tags} tags, ${buttons} buttons`);
      ghost = await page.$('#board g.ghost-tag:last-of-type');
    }
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
  await page.selectOption('#game', 'battlenumber');
  await page.waitForFunction(() => window.zeroplay.view() && window.zeroplay.view().game === 'battlenumber');
  await idle();
  await page.screenshot({ path: out + '/battlenumber-zh-phone.png', fullPage: true });
  await page.click('#lang');
  if (errors.length) fail('page errors: ' + errors.join('; '));
  console.log('e2e ok');
} finally {
  await browser.close();
}
