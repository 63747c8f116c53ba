// End-to-end test of the web client in headless Chromium (driven by playwright-core):
//   node tests/web/e2e.mjs URL OUTDIR
// Plays a whole Battle Number game against the AI by clicking, follows its replay link and
// takes over from the middle, plays a TriGolden turn by choosing a piece, a target and a ghost,
// plays twelve Banqi turns (flips and moves), plays the tests' toy game through its own board
// module, switches the language, and saves screenshots in
// OUTDIR. Exits non-zero on any failure.
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync } from 'node:fs';

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
  // A reader in Taipei: the SVG download says the local time there.
  const page = await browser.newPage({ viewport: { width: 1000, height: 1000 }, timezoneId: 'Asia/Taipei', acceptDownloads: true });
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
  // Every step forward made a placement sound (synthesised; the page counts what it played).
  const played = await page.evaluate(() => window.zeroplay.sounds());
  if (!(played.length >= clicks / 2 && played.every((k) => k === 'place'))) fail('sounds: ' + played.length + ' for ' + clicks + ' clicks');
  // Battle Number's hands name their kinds.
  const hand = await page.textContent('#tracker-first');
  if (!/S1×\d D2×\d C2×\d T3×\d X0×\d/.test(hand)) fail('the hand has no kind labels: ' + hand);
  if ((await page.$$('#board rect.lastmove')).length < 1) fail('Battle Number: the last move is not marked');
  const coords = await page.$$eval('#board text.coord', (e) => e.map((x) => x.textContent).join(''));
  if (coords !== 'abcdefg0123456') fail('Battle Number coordinates: ' + coords);
  const status = await page.textContent('#status');
  if (!/wins|Draw/.test(status)) fail('no result shown: ' + status);
  if (await page.$('#thinking.active')) fail('the thinking box still says the AI thinks');
  const kept = await page.textContent('#think-text');
  if (!/searched|思考/.test(kept)) fail('the last search line is not kept');
  if (/[A-Z]\dr\d|depth|simulations/.test(kept)) fail('the last search line speaks in codes: ' + kept);
  // The end-of-game panel: the result and each player's score taken apart (regions,
  // extraction), adding up to the game's score.
  if (!(await page.isVisible('#result'))) fail('no end-of-game panel');
  const breakdown = await page.$$eval('#result tr[data-seat]', (rs) => rs.map((r) => [...r.cells].slice(1).map((c) => c.textContent)));
  const signed = (x) => Number(x.replace('+', ''));
  const firstRow = breakdown[0] || [];
  if (breakdown.length !== 2 || signed(firstRow[0]) + signed(firstRow[1]) !== end.board.score_first || signed(firstRow[3]) !== end.board.score_first) {
    fail('end-of-game breakdown ' + JSON.stringify(breakdown) + ' for a score of ' + end.board.score_first);
  }
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

  // ---- The keyboard, a hint and the move list in words (Battle Number, two people).
  await page.goto(url);
  await idle();
  await page.selectOption('#ai-seat', 'none');
  await page.click('#new');
  await idle();
  // Muted (the 🔊 button, remembered), a move makes no sound.
  await page.click('#sound');
  if ((await page.getAttribute('#sound', 'aria-pressed')) !== 'false') fail('the sound button does not mute');
  const heard = (await page.evaluate(() => window.zeroplay.sounds())).length;
  await page.focus('#board rect.sq.legal');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.zeroplay.view().ply === 1);
  if ((await page.evaluate(() => window.zeroplay.sounds())).length !== heard) fail('a muted page played a sound');
  await page.click('#sound');
  await idle();
  await page.click('#hint');
  await page.waitForFunction(() => /%/.test(document.getElementById('hint-text').textContent), null, { timeout: 20000 });
  const hinted = (await page.$$('#palette button[data-hint]')).length + (await page.$$('#board .hint-mark')).length;
  if (!hinted) fail('the hint marks nothing on the board or the palette');
  if ((await view()).ply !== 1) fail('a hint played a move');
  await page.screenshot({ path: out + '/battlenumber-hint.png' });
  const hintLine = await page.textContent('#hint-text');
  await page.click('#palette button[data-action]');
  await idle();
  const moves = await page.$$eval('#history li', (e) => e.map((x) => x.textContent));
  if (moves.length !== 1 || !/^First: d3 /.test(moves[0])) fail('move list: ' + JSON.stringify(moves));
  console.log('keyboard, hint and move list: ' + hintLine);

  // ---- AI against AI in a two-game match: pace, pause, and the result table.
  await page.selectOption('#ai-seat', 'both');
  await page.selectOption('#ai-ms', '300');
  await page.selectOption('#ai-ms-second', '300');
  await page.selectOption('#pace', '0');
  // A game won outright (no legal move for the loser) decides the match at once, as the
  // rules say: then the table ends there, and the test starts another match.
  for (let attempt = 0; ; attempt++) {
    await page.click('#new-match');
    if (/outright/.test(await page.textContent('#match-result'))) fail('a new match still shows the last one\'s result');
    await page.waitForFunction(() => !document.getElementById('match-next').hidden ||
      /outright/.test(document.getElementById('match-result').textContent), null, { timeout: 120000 });
    if (await page.isVisible('#match-next')) break;
    const decided = await page.$$eval('#match-table tr', (e) => e.length);
    if (decided !== 3) fail('a match decided in game 1 shows ' + decided + ' rows');
    console.log('match decided outright in game 1: ' + (await page.textContent('#match-result')));
    if (attempt >= 4) fail('five matches in a row were decided in game 1');
  }
  const game1 = await view();
  if (!game1.outcome || game1.ai_seat !== 'both') fail('game 1 of the match did not end with the AI in both seats');
  await page.selectOption('#pace', '500');
  await page.click('#match-next');
  await page.waitForFunction(() => window.zeroplay.view() && window.zeroplay.view().ply >= 6, null, { timeout: 60000 });
  await page.click('#pause');
  await idle();
  const pausedAt = (await view()).ply;
  await page.waitForTimeout(1500);
  if ((await view()).ply !== pausedAt) fail('the AI went on playing while paused');
  if (await page.$eval('#undo', (e) => e.disabled)) fail('undo is off while paused');
  await page.screenshot({ path: out + '/match-paused.png' });
  await page.selectOption('#pace', '0');
  await page.click('#pause');
  await page.waitForFunction(() => window.zeroplay.view() && window.zeroplay.view().outcome, null, { timeout: 120000 });
  await idle();
  const rows = await page.$$eval('#match-table tr', (e) => e.map((x) => x.textContent));
  const result = await page.textContent('#match-result');
  // Two games (or one, if game 2 was won outright: then the match is still decided).
  if (rows.length !== 4 || !/match/.test(result) || (await page.isVisible('#match-next'))) fail('match table: ' + JSON.stringify([rows, result]));
  await page.screenshot({ path: out + '/match-result.png' });
  console.log('match: ' + result);
  await page.selectOption('#ai-seat', 'second');

  // ---- While the AI thinks: the controls are off and stay in place; "Stop the AI" hands its
  // seat to a person; a new game started meanwhile is not overtaken by the old search.
  await page.goto(url);
  await idle();
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.selectOption('#ai-ms', '3000');
  const undoAt = await page.$eval('#undo', (e) => e.getBoundingClientRect().top);
  await page.selectOption('#ai-seat', 'first');
  await page.waitForSelector('#thinking.active');
  // The AI's status reads as words: seconds, positions, the move it prefers (no developer codes).
  await page.waitForFunction(() => /thinking… \d+\.\d s, [\d,]+ positions, best: /.test(document.getElementById('think-text').textContent));
  if (!(await page.$eval('#undo', (e) => e.disabled))) fail('undo is live while the AI thinks');
  if (!(await page.$('body.ai-turn'))) fail('the page does not show that it is the AI\'s turn');
  if ((await page.$$('#board rect.sq.legal')).length) fail('squares are offered while the AI thinks');
  const undoNow = await page.$eval('#undo', (e) => e.getBoundingClientRect().top);
  if (Math.abs(undoNow - undoAt) > 1) fail(`the controls moved ${undoNow - undoAt} px when the AI began to think`);
  // The board, its toolbar and both trackers fit a 1280×800 screen.
  const lowest = await page.$eval('#tracker-first', (e) => e.getBoundingClientRect().bottom);
  if (lowest > 800) fail(`the board column ends at ${lowest} px, below an 800 px screen`);
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
    // A ghost is a preview: nothing is placed until Place (Escape goes back).
    await ghost.click();
    if (!(await page.isVisible('#confirm')) || !(await page.$('#board polygon.ghost.preview'))) fail('no preview with Place/Cancel');
    if ((await view()).ply !== before) fail('a ghost click placed the piece without confirmation');
    await page.keyboard.press('Escape');
    if (await page.isVisible('#confirm')) fail('Escape did not cancel the preview');
    ghost = await page.$('#board g.ghost-tag:last-of-type') || await page.$('#board polygon.ghost');
    await ghost.click();
    await page.click('#confirm');
    await page.waitForFunction((n) => window.zeroplay.view().ply === n + 1, before);
    await idle();
  };
  // The board's toolbar lies inside the board, bottom centre; one tracker per player.
  const tools = await page.$eval('#board-tools', (e) => e.getBoundingClientRect().toJSON());
  const boardBox = await page.$eval('#board', (e) => e.getBoundingClientRect().toJSON());
  if (Math.abs(tools.x + tools.width / 2 - (boardBox.x + boardBox.width / 2)) > 2 || tools.bottom > boardBox.bottom || tools.top < boardBox.top + boardBox.height / 2) {
    fail('the toolbar is not inside the board at the bottom centre: ' + JSON.stringify([tools, boardBox]));
  }
  if (!(await page.$('#tracker-first.active')) || (await page.$('#tracker-second.active'))) fail('the first player\'s tracker is not the active one');
  // The opening: a drag turns the view (whole degrees, shown) before the first piece.
  await page.mouse.move(boardBox.x + boardBox.width * 0.8, boardBox.y + boardBox.height / 2);
  await page.mouse.down();
  await page.mouse.move(boardBox.x + boardBox.width / 2, boardBox.y + boardBox.height * 0.8, { steps: 6 });
  const angleText = await page.textContent('#angle');
  await page.mouse.up();
  const angle = Number((angleText.match(/(\d+)°/) || [])[1]);
  if (!(angle > 60 && angle < 120)) fail('a quarter-turn drag turned the view to ' + angleText);
  const turned = await page.$eval('#tg-root', (e) => e.getAttribute('transform'));
  if (!turned.startsWith(`rotate(${angle}) translate(`)) fail('the board is not drawn turned: ' + turned);
  await page.screenshot({ path: out + '/trigolden-opening-turned.png' });
  await placeOne(); // opening
  if (!(await page.$('#tracker-second.active')) || (await page.$('#tracker-first.active'))) fail('the trackers did not change sides');
  await placeOne(); // second seat, first piece
  const midTurn = await view();
  if (midTurn.turn_start) fail('a two-piece turn ended after one piece');
  await placeOne(); // second piece
  const tg = await view();
  if (tg.board.pieces.length !== 3 || !tg.turn_start || tg.to_move !== 'first') fail('TriGolden turn not complete');
  const drawn = await page.$$eval('#board polygon.piece', (e) => e.length);
  if (drawn !== 3) fail(`${drawn} pieces drawn, 3 placed`);
  if ((await page.$$('#board polygon.piece.last')).length !== 2) fail('the last turn is not marked');
  // The mark survives the target highlight: those two pieces are the first player's targets now.
  const lastMarks = await page.$$eval('#board polygon.last-mark', (ms) => ms.map((m) => ({
    stroke: getComputedStyle(m).stroke,
    target: !!document.querySelector(`#board polygon.piece.target[data-piece="${m.dataset.piece}"]`),
    last: m === m.parentNode.lastElementChild || [...m.parentNode.children].indexOf(m) > [...m.parentNode.children].indexOf(document.querySelector(`#board polygon.piece[data-piece="${m.dataset.piece}"]`)),
  })));
  if (lastMarks.length !== 2 || !lastMarks.every((m) => m.stroke === 'rgb(221, 34, 34)' && m.target && m.last)) {
    fail('the last turn\'s marks are hidden by the targets: ' + JSON.stringify(lastMarks));
  }
  // Arbitration at a turn start: a dialog with the count of legal turns.
  await page.click('#arbitrate');
  await page.waitForSelector('#arb-dialog[open]');
  const arb = await page.textContent('#arb-text');
  const legalTurns = Number((arb.match(/(\d+) legal turns/) || [])[1]);
  if (!(legalTurns > 0) || !/No violation/.test(arb)) fail('arbitration dialog: ' + arb);
  await page.screenshot({ path: out + '/trigolden-arbitration.png' });
  await page.click('#arb-close');
  // Zoom buttons keep the centre; the rotate button turns the board round for face-to-face
  // play, the far player's tracker on the far side.
  const vb = async () => (await page.$eval('#board', (e) => e.getAttribute('viewBox'))).split(' ').map(Number);
  const [ax, ay, aw, ah] = await vb();
  await page.click('#zoom-in');
  const [bx, by, bw, bh] = await vb();
  if (Math.abs(ax + aw / 2 - (bx + bw / 2)) > 1e-6 || Math.abs(ay + ah / 2 - (by + bh / 2)) > 1e-6 || !(bw < aw)) fail('zoom moved the centre');
  // Two fingers spread apart zoom in about their midpoint (pinch).
  const [, , pw] = await vb();
  await page.evaluate(() => {
    const svg = document.getElementById('board');
    const r = svg.getBoundingClientRect();
    const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
    const ev = (type, id, x) => svg.dispatchEvent(new PointerEvent(type, {
      pointerId: id, clientX: x, clientY: cy, bubbles: true, isPrimary: id === 1, pointerType: 'touch' }));
    ev('pointerdown', 11, cx - 20); ev('pointerdown', 12, cx + 20);
    ev('pointermove', 12, cx + 50); ev('pointermove', 12, cx + 80);
    ev('pointerup', 11, cx - 20); ev('pointerup', 12, cx + 80);
  });
  const [, , qw] = await vb();
  if (!(Math.abs(qw / pw - 0.4) < 0.02)) fail(`a pinch from 40 px to 100 px zoomed by ${qw / pw}`);
  // The rotate button (the designer's request): on, nothing turns on the first player's turn;
  // on the second player's turn the board column and the control panel turn half round, the
  // toolbar landing on top; back on the first player's turn.
  await page.click('#rotate');
  if ((await page.getAttribute('#rotate', 'aria-pressed')) !== 'true' || (await page.$('body.rotated-view'))) {
    fail('rotate: turned on the first player\'s turn');
  }
  await page.click('#zoom-fit'); // the pinch above zoomed in: every ghost in view again
  await placeOne();
  await placeOne(); // the first player's two pieces: the second player is to move
  const barTop = await page.$eval('#board-tools', (e) => e.getBoundingClientRect().top);
  const firstTop = await page.$eval('#tracker-first', (e) => e.getBoundingClientRect().top);
  const boardTop = await page.$eval('#board', (e) => e.getBoundingClientRect().top);
  const panelTurn = await page.$eval('aside.panel', (e) => getComputedStyle(e).transform);
  if (!(await page.$('body.rotated-view')) || !(firstTop < boardTop) || !(barTop < boardTop + 60) || panelTurn === 'none') {
    fail(`rotate: not turned on the second player's turn (first ${firstTop}, board ${boardTop}, tools ${barTop}, panel ${panelTurn})`);
  }
  await page.screenshot({ path: out + '/trigolden-face-to-face.png' });
  // A piece is placed on the turned board by the same clicks (the page maps them back).
  await placeOne();
  if ((await view()).board.pieces.length !== 6) fail('rotate: a placement on the turned board failed');
  await page.click('#rotate');
  if (await page.$('body.rotated-view')) fail('rotate: still turned after switching it off');
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
  // Each player's tray holds the pieces they took: the opponent colour's sixteen less those
  // still on the board or face down.
  for (const [i, seat] of [[0, 'first'], [1, 'second']]) {
    const mine = bq.board.colours[i];
    if (!mine) continue;
    const foe = mine === 'red' ? (c) => c === c.toLowerCase() : (c) => c === c.toUpperCase();
    const left = bq.board.squares.filter((c) => c && c !== 'X' && foe(c)).length +
      Object.entries(bq.board.pool).filter(([c]) => foe(c)).reduce((a, [, n]) => a + n, 0);
    const tray = await page.$$eval(`#tracker-${seat} .tray .cap`, (d) => d.length);
    if (tray !== 16 - left) fail(`${seat}'s tray shows ${tray} pieces, ${16 - left} taken`);
  }
  // Moves slide and flips turn over (the page counts what it animated).
  if (!((await page.evaluate(() => window.zeroplay.animations())) > 0)) fail('no Banqi move was animated');
  await page.screenshot({ path: out + '/banqi.png' });
  console.log(`banqi: ${bq.ply} actions, ${bqMoves} moves by the page, ${faceDown} face down`);
  // Its replay steps over a flip and its reveal as one move, never stopping between them.
  await page.goto(await page.inputValue('#link'));
  await page.waitForFunction(() => window.zeroplay && window.zeroplay.view() && !document.getElementById('replay-box').hidden);
  const steps = Number(await page.$eval('#r-slider', (e) => e.max));
  if (!(steps < bq.history.length)) fail(`the Banqi replay counts ${steps} steps for ${bq.history.length} clicks`);
  for (let i = 0; i < 4; i++) {
    await page.click('#r-prev');
    await page.waitForFunction((n) => document.getElementById('r-slider').value === String(n), steps - i - 1);
    const r = await view();
    if (!r.outcome && !r.to_move) fail('the replay stopped between a flip and its reveal at ply ' + r.ply);
  }

  // ---- A game the page does not draw itself: the tests' toy game, drawn by its own board
  // module (/boards/toy.js, from the game's folder), offered under its pack's name and played
  // to the end against the AI by clicking.
  const toyOption = await page.$('#game option[value="toy"]');
  if (!toyOption) fail('the toy game (a board module) is not in the menu');
  if ((await toyOption.textContent()) !== 'Toy (井字棋)') fail('toy menu entry: ' + (await toyOption.textContent()));
  await page.selectOption('#game', 'toy');
  await page.selectOption('#ai-seat', 'second');
  await page.selectOption('#ai-ms', '300');
  await page.click('#new');
  await page.waitForFunction(() => window.zeroplay.view() && window.zeroplay.view().game === 'toy');
  await idle();
  for (let turn = 0; turn < 5; turn++) {
    const v = await view();
    if (v.outcome) break;
    await page.click('#board rect.sq.legal');
    await idle();
    if ((await view()).ply <= v.ply) fail('a toy click did not move the game on at ply ' + v.ply);
  }
  const ty = await view();
  if (!ty.outcome) fail('the toy game did not end in five turns');
  // The end-of-game panel is the built-in games' (a stale one from the last game must not stay).
  if (await page.isVisible('#result')) fail('an end-of-game panel for the toy game');
  const marks = (await page.$$eval('#board text', (ts) => ts.map((x) => x.textContent).join(''))).replace(/[^XO]/g, '');
  if (marks.length !== ty.board.squares.filter((x) => x).length) fail('toy marks do not match the board: ' + marks);
  await page.screenshot({ path: out + '/toy.png' });
  console.log(`toy: ${ty.ply} claims, ${ty.outcome.winner || 'draw'}`);

  // ---- Chinese labels, and a phone-sized screen.
  await page.goto(url);
  await idle();
  await page.click('#lang');
  const label = await page.textContent('#new');
  if (label !== '新局') fail('language switch: ' + label);
  // Difficulty levels by name, with their time per move, in the page's language.
  const levels = await page.$$eval('#ai-ms option', (o) => o.map((x) => x.textContent));
  if (levels.join('|') !== '簡單 · 0.3 秒|普通 · 1 秒|困難 · 3 秒|高手 · 10 秒') fail('levels: ' + levels.join('|'));
  await page.setViewportSize({ width: 390, height: 844 });
  await page.selectOption('#ai-seat', 'none');
  await page.selectOption('#game', 'trigolden');
  await page.waitForFunction(() => window.zeroplay.view() && window.zeroplay.view().game === 'trigolden');
  await idle();
  await placeOne();
  await page.click('#palette button[data-shape]:not([disabled])');
  await page.screenshot({ path: out + '/trigolden-zh-phone.png', fullPage: true });
  // The SVG download speaks the page's language and the reader's local time.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#svg')]);
  const svgText = readFileSync(await download.path(), 'utf8');
  if (!/頂鑫棋 · \d{4}-\d\d-\d\d \d\d:\d\d \(UTC\+8:00\)/.test(svgText) || !svgText.includes('輪到後手')) {
    fail('the SVG caption: ' + (svgText.match(/<text[^>]*font-size="16"[^>]*>[^<]*/g) || []).join(' | '));
  }
  if (!/^BraceTheTriGolden_\d{8}_\d{6}\.svg$/.test(download.suggestedFilename())) fail('SVG file name: ' + download.suggestedFilename());
  // The designer's toolbar: download left of rotate, rotate (two opposite arcs) last.
  const bar = await page.$$eval('#board-tools button, #board-tools .button', (els) => els
    .map((e) => ({ id: e.id, r: e.getBoundingClientRect(), arcs: e.querySelectorAll('path[d*="a8"]').length }))
    .filter((e) => e.r.width > 0)
    .map((e) => ({ id: e.id, left: e.r.left, right: e.r.right, top: e.r.top, arcs: e.arcs })));
  const [dl, rot] = bar.slice(-2);
  if (!(dl && rot && dl.id === 'svg' && rot.id === 'rotate' && dl.right <= rot.left && dl.top === rot.top)) {
    fail('toolbar order: ' + JSON.stringify(bar));
  }
  if (rot.arcs !== 2) fail('the rotate icon is not two arcs: ' + JSON.stringify(rot));
  // On a phone every toolbar control is a 44 px touch target, and the toolbar covers no board.
  const small = await page.$$eval('#board-tools button, #board-tools .button', (els) => els
    .map((e) => [e.id || e.textContent.trim(), e.getBoundingClientRect()])
    .filter(([, r]) => r.width > 0 && (r.width < 44 || r.height < 44))
    .map(([id, r]) => `${id} ${Math.round(r.width)}×${Math.round(r.height)}`));
  if (small.length) fail('phone toolbar targets under 44 px: ' + small.join(', '));
  const boardBottom = await page.$eval('#board', (e) => e.getBoundingClientRect().bottom);
  const toolsTop = await page.$eval('#board-tools', (e) => e.getBoundingClientRect().top);
  if (toolsTop < boardBottom - 1) fail(`the phone toolbar covers the board (${toolsTop} < ${boardBottom})`);
  // Each game's rules, in the page's language, one tap from the board.
  const [rulesPage] = await Promise.all([page.context().waitForEvent('page'), page.click('#rules-link')]);
  await rulesPage.waitForLoadState();
  const shown = await rulesPage.$$eval('section.rules', (s) => s.filter((x) => !x.hidden).map((x) => x.id));
  const heading = await rulesPage.$eval('section.rules:not([hidden]) [data-lang="zh"] h2', (h) => h.textContent);
  const headingVisible = await rulesPage.isVisible('section.rules:not([hidden]) [data-lang="zh"] h2');
  const english = await rulesPage.isVisible('section.rules:not([hidden]) [data-lang="en"] h2');
  const game = (await view()).game;
  if (shown.join() !== game || !headingVisible || english || !heading) fail(`rules page: ${shown} for ${game}, heading ${heading}`);
  await rulesPage.screenshot({ path: out + '/rules-' + game + '-zh.png', fullPage: true });
  await rulesPage.close();
  await page.selectOption('#game', 'battlenumber');
  await page.waitForFunction(() => window.zeroplay.view() && window.zeroplay.view().game === 'battlenumber');
  await idle();
  await page.screenshot({ path: out + '/battlenumber-zh-phone.png', fullPage: true });
  // The chosen game and options are in the address and remembered for the next visit.
  if (!page.url().endsWith('/?game=battlenumber')) fail('the address does not name the game: ' + page.url());
  await page.goto(url + '?game=trigolden&scoring=same-owner');
  await page.waitForFunction(() => window.zeroplay.view() && window.zeroplay.view().game === 'trigolden');
  if ((await page.inputValue('#scoring')) !== 'same-owner') fail('the address\'s scoring was not chosen');
  await idle();
  await page.goto(url);
  await page.waitForFunction(() => window.zeroplay.view());
  const back = await view();
  if (back.game !== 'trigolden' || (await page.inputValue('#scoring')) !== 'same-owner' || !page.url().includes('scoring=same-owner')) {
    fail('the last visit\'s game was not remembered: ' + back.game + ' ' + page.url());
  }
  await idle();
  await page.click('#lang');
  if (errors.length) fail('page errors: ' + errors.join('; '));
  console.log('e2e ok');
} finally {
  await browser.close();
}
