// zeroplay web client. It holds no rules: every board it draws, every click it offers comes
// from the server (GET /api/games/{id}: `legal`), and every click goes back to the server.
'use strict';

const I18N = {
  en: {
    title: 'zeroplay', game: 'Game', battlenumber: 'Battle Number (拚數棋)', trigolden: 'TriGolden (頂鑫棋)', banqi: 'Banqi (暗棋)',
    red: 'red', black: 'black', no_colours: 'colours not yet drawn', face_down: 'face down', quiet: '{n} quiet plies (60 draw)',
    ai_plays: 'AI plays', first: 'first', second: 'second', nobody: 'nobody', ai_time: 'AI time per move',
    scoring: 'Scoring', bracer: 'bracer (頂棋)', trigolden_mode: 'TriGolden piece (鑫棋)', same_owner: 'same owner',
    new_game: 'New game', undo: 'Undo', redo: 'Redo', ai_move: 'AI move', download_svg: 'Download SVG',
    take_over: 'Take over from here', replay_link: 'Replay link', history: 'Moves', fit: 'fit',
    you: 'You', ai: 'AI', to_move: '{who} to move', wins: '{who} wins', draw: 'Draw', thinking: 'AI is thinking…',
    seat_first: 'First', seat_second: 'Second', score: 'Score (first seat): {s}', placement: 'placement',
    extraction: 'extraction', hand: 'hand', choose_piece: 'Choose a piece:', pick_shape: 'Choose a piece, then a target piece, then a ghost.',
    progress: '{sims} simulations · {nodes} nodes · depth {depth} · {ms} ms · best {best} · value {value}',
    replay: 'Replay: move {at} of {n}', model: 'model v{v}', no_model: 'rollout AI (no model yet)', decisive: ' (no legal move)',
    mirror: 'mirror', stock: 'left', points: 'Points: first {a}, second {b}',
    stop_ai: 'Stop the AI', ai_stopped: 'The AI was stopped: you play both seats.', last_search: 'AI searched {ms} ms: {line}',
    not_yet: 'The AI has not moved yet.', both: 'both (watch)',
    second_piece: 'Second piece of your turn.', placements: 'Placements:',
    bq_legend: 'G general, A advisor, E elephant, R chariot, H horse, C cannon, S soldier; upper case red, lower case black',
    no_model_trigolden: "the designer's AI (no model yet)", no_model_banqi: 'alpha-beta AI (no model yet)',
  },
  zh: {
    title: 'zeroplay', game: '遊戲', battlenumber: '拚數棋', trigolden: '頂鑫棋', banqi: '暗棋',
    red: '紅', black: '黑', no_colours: '尚未翻出顏色', face_down: '未翻', quiet: '{n} 步未吃未翻（60 和）',
    ai_plays: '電腦執', first: '先手', second: '後手', nobody: '不下', ai_time: '電腦每步時間',
    scoring: '計分', bracer: '頂棋', trigolden_mode: '鑫棋', same_owner: '同主',
    new_game: '新局', undo: '悔棋', redo: '重做', ai_move: '電腦走', download_svg: '下載 SVG',
    take_over: '從此接手', replay_link: '重播連結', history: '棋譜', fit: '全圖',
    you: '你', ai: '電腦', to_move: '輪到{who}', wins: '{who}勝', draw: '和局', thinking: '電腦思考中…',
    seat_first: '先手', seat_second: '後手', score: '比分（先手）：{s}', placement: '佈子',
    extraction: '提子', hand: '手上', choose_piece: '選擇棋子：', pick_shape: '先選棋子，再點目標棋子，再點虛影。',
    progress: '模擬 {sims} · 節點 {nodes} · 深度 {depth} · {ms} 毫秒 · 最佳 {best} · 評估 {value}',
    replay: '重播：第 {at} / {n} 步', model: '模型 v{v}', no_model: '隨機模擬（尚無模型）', decisive: '（無子可下）',
    mirror: '鏡像', stock: '剩', points: '分數：先手 {a}，後手 {b}',
    stop_ai: '停止電腦', ai_stopped: '電腦已停止：兩方都由你下。', last_search: '電腦思考 {ms} 毫秒：{line}',
    not_yet: '電腦尚未走棋。', both: '雙方（觀戰）',
    second_piece: '本回合的第二枚棋子。', placements: '位置：',
    bq_legend: '', no_model_trigolden: '設計者的電腦（尚無模型）', no_model_banqi: 'α-β 搜尋（尚無模型）',
  },
};
let lang = localStorage.getItem('zeroplay-lang') || (navigator.language.startsWith('zh') ? 'zh' : 'en');
function t(key, args) {
  let s = (I18N[lang] && I18N[lang][key]) || I18N.en[key] || key;
  for (const [k, v] of Object.entries(args || {})) s = s.replace('{' + k + '}', v);
  return s;
}
const $ = (id) => document.getElementById(id);
const SVGNS = 'http://www.w3.org/2000/svg';
function el(tag, attrs, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// ---------------------------------------------------------------- state

const app = {
  view: null,        // the game as the server last described it
  id: null,
  aiMs: 1000,
  busy: false,
  gen: 0,            // bumped by every new game or replay: answers for an older one are dropped
  abort: null,       // the AI request in flight, to cancel it
  replay: null,      // {token, actions, at} in replay mode
  tg: { shape: 0, mirror: false, target: null, view: null },
  bq: { from: null },  // Banqi: the square of the piece chosen to move
};

async function api(method, path, body) {
  const res = await fetch(path, {
    method, headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = { error: text }; }
  if (!res.ok) throw new Error((data && data.error) || res.statusText);
  return data;
}

function showError(e) { $('error').textContent = e ? String(e.message || e) : ''; }

// ---------------------------------------------------------------- game flow

// Cancels what belongs to the game on screen: its AI request (the server stops the search
// when the stream closes) and any answer still on its way (the generation check).
function leaveGame() {
  app.gen++;
  if (app.abort) { app.abort.abort(); app.abort = null; }
  app.busy = false;
  $('thinking').classList.remove('active');
}

async function newGame(replayToken, at) {
  showError(null);
  leaveGame();
  const gen = app.gen;
  const game = $('game').value;
  const body = replayToken
    ? { replay: replayToken, at, ai_seat: $('ai-seat').value, ai_ms: Number($('ai-ms').value) }
    : { game, ai_seat: $('ai-seat').value, ai_ms: Number($('ai-ms').value),
        options: game === 'trigolden' ? { scoring: $('scoring').value } : null };
  try {
    if (app.id) api('DELETE', '/api/games/' + app.id).catch(() => {});
    app.id = null;
    app.busy = true; updateButtons();
    const v = await api('POST', '/api/games', body);
    if (gen !== app.gen) { api('DELETE', '/api/games/' + v.id).catch(() => {}); return; }
    app.busy = false;
    app.id = v.id; app.aiMs = body.ai_ms; app.replay = null;
    TG.auto = true;
    app.tg = { shape: 0, mirror: false, target: null, view: null };
    app.bq = { from: null };
    $('replay-box').hidden = true;
    if (location.pathname !== '/') history.pushState(null, '', '/');
    setView(v);
    showSearch(null);
    await maybeAi();
  } catch (e) { if (gen === app.gen) { app.busy = false; updateButtons(); showError(e); } }
}

function aiToMove(v) { return !!v && !v.outcome && !!v.ai_seat && v.to_move === v.ai_seat; }
// Whether a person may click on the board now.
function humanTurn(v) { return !!v && !app.replay && !!app.id && !v.outcome && !!v.to_move && !aiToMove(v); }

async function maybeAi() {
  const gen = app.gen;
  while (gen === app.gen && aiToMove(app.view) && !app.replay) {
    if (!(await aiMove())) break;
  }
}

// Reads the server-sent events of POST /api/games/{id}/ai.
async function aiMove() {
  if (!app.id || app.busy) return false;
  const gen = app.gen, ctl = new AbortController();
  app.abort = ctl;
  app.busy = true; updateButtons();
  $('thinking').classList.add('active'); $('think-bar').value = 0;
  $('think-text').textContent = t('thinking');
  const started = performance.now();
  try {
    let res;
    // 409 right after a stop: the server is still letting go of the stopped search.
    for (let tries = 0; ; tries++) {
      res = await fetch('/api/games/' + app.id + '/ai?ms=' + app.aiMs, { method: 'POST', signal: ctl.signal });
      if (res.status !== 409 || tries >= 30) break;
      await new Promise((r) => setTimeout(r, 100));
      if (gen !== app.gen) return false;
    }
    if (!res.ok) throw new Error((await res.json()).error);
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '', done = null;
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i); buf = buf.slice(i + 2);
        let ev = 'message', data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) ev = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trim();
        }
        if (!data) continue;
        const d = JSON.parse(data);
        if (gen !== app.gen) return false;
        if (ev === 'progress') showProgress(d);
        else if (ev === 'done') done = d;
      }
    }
    if (gen !== app.gen) return false;
    if (!done) throw new Error('the AI stream ended early');
    app.busy = false; app.abort = null;
    if (done.applied) showSearch(done.search, done.elapsed_ms || Math.round(performance.now() - started));
    setView(done.state);
    return done.applied;
  } catch (e) {
    if (gen === app.gen && e.name !== 'AbortError') showError(e);
    return false;
  } finally {
    if (gen === app.gen) {
      app.busy = false; app.abort = null;
      $('thinking').classList.remove('active'); updateButtons();
    }
  }
}

function progressLine(p) {
  return t('progress', {
    sims: p.sims, nodes: p.nodes, depth: p.depth, ms: p.elapsed_ms, best: p.best || '–', value: p.value.toFixed(2),
  });
}

function showProgress(p) {
  $('think-bar').value = Math.min(1, p.elapsed_ms / app.aiMs);
  $('think-text').textContent = progressLine(p);
}

// The last AI turn's search line, kept after its move (the box keeps its place: no jumps).
function showSearch(p, ms) {
  app.lastSearch = p ? { p, ms } : null;
  const waiting = app.view && app.view.ai_seat ? t('not_yet') : '';
  $('think-text').textContent = p ? t('last_search', { ms, line: progressLine(p) }) : waiting;
}

// Stops a thinking AI: its seat becomes a person's (the server drops the search's move).
async function stopAi() {
  if (!app.id) return;
  const gen = app.gen;
  try {
    const v = await api('POST', '/api/games/' + app.id + '/settings', { ai_seat: 'none' });
    if (gen !== app.gen) return;
    $('ai-seat').value = 'none';
    showError(null);
    $('think-text').textContent = t('ai_stopped');
    setView(v);
  } catch (e) { showError(e); }
}

// The AI seat and time selectors apply to the game on screen at once.
async function applySettings(body) {
  if (!app.id || app.replay) return;
  const gen = app.gen;
  try {
    if (body.ai_seat !== undefined && app.abort) { app.abort.abort(); app.abort = null; }
    const v = await api('POST', '/api/games/' + app.id + '/settings', body);
    if (gen !== app.gen) return;
    if (body.ai_ms) app.aiMs = body.ai_ms;
    // An aborted search's stream may still be closing: wait for the server to let it go.
    for (let i = 0; i < 50 && app.busy; i++) await new Promise((r) => setTimeout(r, 20));
    app.busy = false;
    setView(v);
    await maybeAi();
  } catch (e) { if (gen === app.gen) showError(e); }
}

async function sendClick(action) {
  if (app.busy || !humanTurn(app.view)) return;
  showError(null);
  const gen = app.gen;
  app.busy = true;
  try {
    const v = await api('POST', '/api/games/' + app.id + '/click', { action });
    if (gen !== app.gen) return;
    setView(v);
  } catch (e) { if (gen === app.gen) showError(e); }
  if (gen !== app.gen) return;
  app.busy = false;
  updateButtons();
  await maybeAi();
}

async function undoRedo(which) {
  if (app.busy) return;
  const gen = app.gen;
  try {
    const v = await api('POST', '/api/games/' + app.id + '/' + which);
    if (gen === app.gen) setView(v);
  } catch (e) { if (gen === app.gen) showError(e); }
}

// ---------------------------------------------------------------- replay mode

async function openReplay(token) {
  leaveGame();
  try {
    const r = await api('GET', '/api/replay/' + token + '?at=0');
    app.replay = { token, actions: r.actions, at: 0 };
    app.id = null;
    $('game').value = r.game;
    $('replay-box').hidden = false;
    $('r-slider').max = r.actions.length;
    await replayGo(r.actions.length);
  } catch (e) { showError(e); }
}

async function replayGo(at) {
  const r = app.replay;
  at = Math.max(0, Math.min(r.actions.length, at));
  const d = await api('GET', '/api/replay/' + r.token + '?at=' + at);
  r.at = at;
  $('r-slider').value = at;
  $('r-pos').textContent = t('replay', { at, n: r.actions.length });
  setView(Object.assign({ game: d.game, history: d.actions.slice(0, at), replay: r.token, ai_seat: null,
    can_undo: false, can_redo: false, ply: at }, d.state));
}

// ---------------------------------------------------------------- drawing

function setView(v) {
  app.view = v;
  $('board').style.aspectRatio = v.game === 'banqi' ? '8.45 / 4.45' : '';
  $('board').setAttribute('class', v.game);
  if (v.game === 'trigolden') drawTriGolden(v);
  else if (v.game === 'banqi') drawBanqi(v);
  else drawBattleNumber(v);
  drawSide(v);
  updateButtons();
}

function seatName(s) {
  if (!s) return '';
  const v = app.view;
  const who = s === 'first' ? t('seat_first') : t('seat_second');
  if (v && v.ai_seat) return who + ' (' + (s === v.ai_seat ? t('ai') : t('you')) + ')';
  return who;
}

function drawSide(v) {
  let status;
  if (v.outcome) {
    status = v.outcome.winner ? t('wins', { who: seatName(v.outcome.winner) }) : t('draw');
    if (v.outcome.decisive) status += t('decisive');
  } else status = t('to_move', { who: seatName(v.to_move) });
  if (v.model_version !== undefined && !app.replay) {
    const none = { trigolden: 'no_model_trigolden', banqi: 'no_model_banqi' }[v.game] || 'no_model';
    status += ' · ' + (v.model_version > 0 ? t('model', { v: v.model_version }) : t(none));
  }
  $('status').textContent = status;
  $('link').value = v.replay ? location.origin + '/replay/' + v.replay : '';
  const h = $('history');
  h.innerHTML = '';
  for (const a of v.history || []) { const li = document.createElement('li'); li.textContent = a; h.appendChild(li); }
  $('svg').href = app.id ? '/api/games/' + app.id + '/board.svg' : '#';
}

function updateButtons() {
  const v = app.view, playing = !!app.id && !app.replay;
  const aiTurn = app.busy || aiToMove(v);
  $('undo').disabled = !playing || aiTurn || !(v && v.can_undo);
  $('redo').disabled = !playing || aiTurn || !(v && v.can_redo);
  $('ai-move').disabled = !playing || aiTurn || !v || !!v.outcome;
  // Hidden by visibility, not display: the box keeps its height either way.
  $('stop-ai').classList.toggle('off', !(playing && app.abort));
  $('svg').hidden = !playing;
  // While the AI plays, the page says so: the board and the palette take no clicks.
  document.body.classList.toggle('ai-turn', playing && aiTurn && !(v && v.outcome));
}

// Battle Number ------------------------------------------------------------

const COLS = 'abcdefg';
const OWNER = { first: ['#f3d08a', '#7a5300'], second: ['#a9c8ee', '#123e6e'] };
function sqName(sq) { return COLS[sq % 7] + Math.floor(sq / 7); }

// A piece drawn in the unit square at (x, y), size s: solid sides (bits N, E, S, W) drawn thick
// with triangles pointing out; Cross Zero as a cross.
function drawPiece(g, x, y, s, owner, kind, solid) {
  const [fill, ink] = OWNER[owner] || ['#fff', '#333'];
  const m = s * 0.05;
  el('rect', { x: x + m, y: y + m, width: s - 2 * m, height: s - 2 * m, fill, stroke: ink, 'stroke-width': s * 0.02, class: 'piece' }, g);
  if (kind === 'X0') {
    const a = s * 0.25;
    el('path', { d: `M${x + a} ${y + a}L${x + s - a} ${y + s - a}M${x + s - a} ${y + a}L${x + a} ${y + s - a}`, stroke: ink, 'stroke-width': s * 0.06 }, g);
  }
  const sides = [
    [x + m, y + m, x + s - m, y + m, 0, 1], [x + s - m, y + m, x + s - m, y + s - m, -1, 0],
    [x + m, y + s - m, x + s - m, y + s - m, 0, -1], [x + m, y + m, x + m, y + s - m, 1, 0],
  ];
  for (let d = 0; d < 4; d++) {
    if (!((solid >> d) & 1)) continue;
    const [x0, y0, x1, y1, nx, ny] = sides[d];
    el('line', { x1: x0, y1: y0, x2: x1, y2: y1, stroke: ink, 'stroke-width': s * 0.09 }, g);
    const mx = (x0 + x1) / 2, my = (y0 + y1) / 2, tx = mx + nx * s * 0.2, ty = my + ny * s * 0.2;
    const px = -ny * s * 0.12, py = nx * s * 0.12;
    el('path', { d: `M${mx} ${my}L${tx + px} ${ty + py}L${tx - px} ${ty - py}Z`, fill: ink }, g);
  }
}

function drawBattleNumber(v) {
  const svg = $('board');
  svg.innerHTML = '';
  $('zoom').hidden = true;
  svg.setAttribute('viewBox', '-0.45 -0.1 7.55 7.5');
  const b = v.board;
  const mine = humanTurn(v);
  const legal = new Map();
  if (mine) for (const l of v.legal) legal.set(l.action, l);
  // The squares of the last turn (its square clicks), outlined like the last move in chess.
  const lastSq = new Set();
  const [lo, hi] = v.last_turn || [0, 0];
  for (const a of (v.history || []).slice(lo, hi)) if (/^[a-g]\d$/.test(a)) lastSq.add(a);
  for (let c = 0; c < 7; c++) {
    const tx = el('text', { x: c + 0.5, y: 7.3, 'font-size': 0.25, 'text-anchor': 'middle', fill: '#666', class: 'coord' }, svg);
    tx.textContent = COLS[c];
  }
  for (let r = 0; r < 7; r++) {
    const tx = el('text', { x: -0.22, y: r + 0.58, 'font-size': 0.25, 'text-anchor': 'middle', fill: '#666', class: 'coord' }, svg);
    tx.textContent = String(r);
  }
  const region = new Map();
  (b.regions || []).forEach((r, i) => r.forEach((sq) => region.set(sq, i)));
  const path = new Set(b.path ? b.path.squares : []);
  el('rect', { x: 3, y: 3, width: 1, height: 1, fill: 'none', stroke: '#c33', 'stroke-width': 0.03, 'stroke-dasharray': '.1 .06' }, svg);
  for (let sq = 0; sq < 49; sq++) {
    const x = sq % 7, y = Math.floor(sq / 7);
    const p = b.squares[sq];
    const g = el('g', { 'data-sq': sq, 'data-name': sqName(sq) }, svg);
    if (p) drawPiece(g, x, y, 1, p.owner, p.kind, p.solid);
    const name = sqName(sq);
    let cls = 'sq';
    if (region.has(sq)) cls += ' region-' + (region.get(sq) % 4);
    if (path.has(sq)) cls += ' path';
    if (b.pending_square === sq) cls += ' pending';
    if (legal.has(name)) cls += ' legal';
    const hit = el('rect', { x, y, width: 1, height: 1, class: cls, stroke: '#ccc', 'stroke-width': 0.01, 'data-action': legal.has(name) ? name : '' }, g);
    if (legal.has(name)) hit.addEventListener('click', () => sendClick(name));
    if (lastSq.has(name)) el('rect', { x: x + 0.04, y: y + 0.04, width: 0.92, height: 0.92, class: 'lastmove' }, g);
  }
  // Scores and hands
  const s = b.score_first;
  $('scores').textContent = t('score', { s: (s > 0 ? '+' : '') + s }) + ' · ' + t(b.phase) +
    ' · ' + t('hand') + ': ' + b.hands.map((h, i) => (i ? t('seat_second') : t('seat_first')) + ' ' + h.join('/')).join(', ');
  // Piece palette: the legal piece clicks after a square is chosen.
  const pal = $('palette');
  pal.innerHTML = '';
  const pieces = mine ? v.legal.filter((l) => /^[A-Z]\dr\d$/.test(l.action)) : [];
  if (pieces.length) {
    const label = document.createElement('span'); label.textContent = t('choose_piece'); pal.appendChild(label);
    for (const l of pieces) {
      const [kind, rot] = [l.action.slice(0, 2), Number(l.action.slice(3))];
      const info = b.kinds.find((k) => k.code === kind);
      const btn = document.createElement('button');
      btn.type = 'button'; btn.dataset.action = l.action;
      btn.title = (lang === 'zh' ? info.chinese : kind) + ' r' + rot;
      const ps = document.createElementNS(SVGNS, 'svg');
      ps.setAttribute('viewBox', '0 0 1 1');
      drawPiece(ps, 0, 0, 1, v.to_move, kind, info.solid[rot]);
      btn.appendChild(ps);
      btn.addEventListener('click', () => sendClick(l.action));
      pal.appendChild(btn);
    }
  }
}

// Banqi --------------------------------------------------------------------

const BQ_CHARS = { G: '帥', A: '仕', E: '相', R: '俥', H: '傌', C: '炮', S: '兵',
  g: '將', a: '士', e: '象', r: '車', h: '馬', c: '包', s: '卒' };
function bqName(sq) { return 'abcdefgh'[sq % 8] + Math.floor(sq / 8); }

// A flip is one click on a face-down square (`d1d1`); a move or capture is a click on the
// piece, then on one of the squares the server lists for it (`d1d2`).
function drawBanqi(v) {
  const svg = $('board');
  svg.innerHTML = '';
  $('zoom').hidden = true;
  svg.setAttribute('viewBox', '-0.35 -0.1 8.45 4.45');
  const b = v.board;
  const legal = new Set(humanTurn(v) ? v.legal.map((l) => l.action) : []);
  const from = app.bq.from === null ? null : bqName(app.bq.from);
  const targets = new Set();
  if (from) for (const a of legal) if (a.startsWith(from) && a !== from + from) targets.add(a.slice(2));
  const last = new Set();
  const [lo, hi] = v.last_turn || [0, 0];
  for (const a of (v.history || []).slice(lo, hi)) if (/^[a-h][0-3][a-h][0-3]$/.test(a)) { last.add(a.slice(0, 2)); last.add(a.slice(2)); }
  el('rect', { x: 0, y: 0, width: 8, height: 4, fill: '#f4e3c1', stroke: '#5a4320', 'stroke-width': 0.03 }, svg);
  for (let c = 0; c < 8; c++) {
    const tx = el('text', { x: c + 0.5, y: 4.3, 'font-size': 0.22, 'text-anchor': 'middle', fill: '#666' }, svg);
    tx.textContent = 'abcdefgh'[c];
  }
  for (let r = 0; r < 4; r++) {
    const tx = el('text', { x: -0.18, y: 3.58 - r, 'font-size': 0.22, 'text-anchor': 'middle', fill: '#666' }, svg);
    tx.textContent = String(r);
  }
  for (let sq = 0; sq < 32; sq++) {
    const x = sq % 8, y = 3 - Math.floor(sq / 8), name = bqName(sq);
    const g = el('g', { 'data-sq': sq, 'data-name': name }, svg);
    el('rect', { x, y, width: 1, height: 1, fill: 'none', stroke: '#b8a27a', 'stroke-width': 0.02 }, g);
    const c = b.squares[sq];
    if (c === 'X') {
      el('circle', { cx: x + 0.5, cy: y + 0.5, r: 0.4, fill: '#8a6a3c', stroke: '#4a3418', 'stroke-width': 0.04, class: 'piece facedown' }, g);
    } else if (c) {
      const ink = c === c.toUpperCase() ? '#b3261e' : '#1d1d1d';
      el('circle', { cx: x + 0.5, cy: y + 0.5, r: 0.4, fill: '#fdf6e3', stroke: ink, 'stroke-width': 0.05, class: 'piece' }, g);
      const tx = el('text', { x: x + 0.5, y: y + 0.68, 'font-size': 0.46, 'text-anchor': 'middle', fill: ink, 'pointer-events': 'none' }, g);
      // English: the notation's letters, upper case red and lower case black (told apart
      // without colour too); the legend is under the board.
      tx.textContent = lang === 'zh' ? BQ_CHARS[c] : c;
    }
    // The last turn's squares (from and to) as a square outline: a red ring would vanish on red pieces.
    if (last.has(name)) el('rect', { x: x + 0.04, y: y + 0.04, width: 0.92, height: 0.92, class: 'lastmove' }, g);
    const flip = legal.has(name + name);
    const movable = [...legal].some((a) => a.startsWith(name) && a !== name + name);
    // With a piece chosen, only its moves are lit (a dot on each); else what can be clicked.
    let cls = 'sq';
    if (from ? targets.has(name) : flip || movable) cls += ' legal';
    if (app.bq.from === sq) cls += ' pending';
    if (targets.has(name)) el('circle', { cx: x + 0.5, cy: y + 0.5, r: 0.13, class: 'dest' }, g);
    const hit = el('rect', { x, y, width: 1, height: 1, class: cls, 'data-action': flip ? name + name : '' }, g);
    hit.addEventListener('click', () => bqClick(sq));
  }
  const colours = b.colours[0]
    ? t('seat_first') + ' ' + t(b.colours[0]) + ', ' + t('seat_second') + ' ' + t(b.colours[1])
    : t('no_colours');
  const pool = Object.entries(b.pool).map(([k, n]) => (lang === 'zh' ? BQ_CHARS[k] : k) + '×' + n).join(' ');
  $('scores').textContent = colours + ' · ' + t('face_down') + ': ' + (pool || '–') + ' · ' + t('quiet', { n: b.quiet }) +
    (lang === 'zh' ? '' : ' · ' + t('bq_legend'));
  $('palette').innerHTML = '';
}

function bqClick(sq) {
  const v = app.view;
  if (app.busy || !humanTurn(v)) return;
  const name = bqName(sq);
  const legal = new Set(v.legal.map((l) => l.action));
  const from = app.bq.from === null ? null : bqName(app.bq.from);
  if (from && from !== name && legal.has(from + name)) { app.bq.from = null; sendClick(from + name); return; }
  if (legal.has(name + name)) { app.bq.from = null; sendClick(name + name); return; }
  app.bq.from = [...legal].some((a) => a.startsWith(name)) && app.bq.from !== sq ? sq : null;
  drawBanqi(v);
}

// TriGolden ----------------------------------------------------------------

const TG = { box: null, drag: null, auto: true };

function tgPts(points) { return points.map(([x, y]) => `${x},${-y}`).join(' '); }

function drawTriGolden(v) {
  const svg = $('board');
  svg.innerHTML = '';
  $('zoom').hidden = false;
  const b = v.board;
  const st = app.tg;
  // Bounds of pieces and legal ghosts, for the first view and "fit".
  let x0 = -2, y0 = -2, x1 = 2, y1 = 2;
  const grow = (pts) => { for (const [x, y] of pts) { x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, -y); y1 = Math.max(y1, -y); } };
  b.pieces.forEach((p) => grow(p.points));
  v.legal.forEach((l) => l.points && grow(l.points));
  const fit = [x0 - 1, y0 - 1, x1 - x0 + 2, y1 - y0 + 2];
  // The view follows the figure as it grows (and shrinks on undo) until the reader pans or
  // zooms; "fit" hands it back to the figure.
  if (!TG.box || TG.auto || !b.pieces.length) { TG.box = fit; TG.auto = true; }
  TG.fit = fit;
  svg.setAttribute('viewBox', TG.box.join(' '));
  const last = lastTurn(v);
  const mine = humanTurn(v) ? v.legal.filter((l) => l.shape === st.shape && l.mirror === st.mirror) : [];
  const targets = new Set(mine.map((l) => l.target).filter((x) => x !== null));
  for (const p of b.pieces) {
    const [fill, ink] = OWNER[p.owner];
    let cls = 'piece';
    if (last.has(p.n)) cls += ' last';
    if (targets.has(p.n)) cls += ' target';
    const poly = el('polygon', { points: tgPts(p.points), fill, stroke: ink, 'stroke-width': 0.03, class: cls, 'data-piece': p.n }, svg);
    if (targets.has(p.n)) poly.addEventListener('click', () => { st.target = p.n; drawTriGolden(app.view); });
    const cx = p.points.reduce((a, q) => a + q[0], 0) / 4, cy = -p.points.reduce((a, q) => a + q[1], 0) / 4;
    const label = el('text', { x: cx, y: cy, 'font-size': 0.3, 'text-anchor': 'middle', 'dominant-baseline': 'middle', fill: ink, 'pointer-events': 'none' }, svg);
    label.textContent = p.n + b.shapes[p.shape] + (p.mirror ? "'" : '');
  }
  for (const sp of b.scored_points) {
    el('circle', { cx: sp.at[0], cy: -sp.at[1], r: 0.09, fill: OWNER[sp.owner || 'first'][1] }, svg);
  }
  // Ghosts: the legal placements of the chosen piece on the chosen target (or the opening).
  // Ghosts may overlap and hide one another, so each also gets a numbered label at its centre,
  // drawn above every ghost, and a numbered button under the board: every placement has a
  // point to click.
  const shown = mine.filter((l) => l.target === null || l.target === st.target);
  const place = (l) => { st.target = null; sendClick(l.action); };
  shown.forEach((l) => {
    const g = el('polygon', { points: tgPts(l.points), class: 'ghost', 'data-action': l.action }, svg);
    g.addEventListener('click', () => place(l));
  });
  if (shown.length > 1) {
    shown.forEach((l, i) => {
      const cx = l.points.reduce((a, q) => a + q[0], 0) / l.points.length;
      const cy = -l.points.reduce((a, q) => a + q[1], 0) / l.points.length;
      const tag = el('g', { class: 'ghost-tag', 'data-action': l.action }, svg);
      el('circle', { cx, cy, r: 0.2 }, tag);
      const tx = el('text', { x: cx, y: cy, 'font-size': 0.24, 'text-anchor': 'middle', 'dominant-baseline': 'central' }, tag);
      tx.textContent = String(i + 1);
      tag.addEventListener('click', () => place(l));
      tag.addEventListener('mouseenter', () => svg.querySelector(`polygon.ghost[data-action="${l.action}"]`)?.classList.add('hot'));
      tag.addEventListener('mouseleave', () => svg.querySelector(`polygon.ghost[data-action="${l.action}"]`)?.classList.remove('hot'));
    });
  }
  $('scores').textContent = t('points', { a: b.scores[0], b: b.scores[1] });
  // Palette: each shape and its mirror, with the mover's stock.
  const pal = $('palette');
  pal.innerHTML = '';
  if (humanTurn(v)) {
    const seat = v.to_move === 'first' ? 0 : 1;
    const hint = document.createElement('p'); hint.textContent = t('pick_shape'); hint.style.width = '100%'; pal.appendChild(hint);
    if (!v.turn_start) {
      const second = document.createElement('p'); second.className = 'second-piece';
      second.textContent = t('second_piece'); second.style.width = '100%'; pal.appendChild(second);
    }
    if (shown.length > 1) {
      const row = document.createElement('div'); row.className = 'ghost-list';
      row.appendChild(document.createTextNode(t('placements') + ' '));
      shown.forEach((l, i) => {
        const btn = document.createElement('button');
        btn.type = 'button'; btn.dataset.action = l.action; btn.textContent = String(i + 1);
        btn.addEventListener('click', () => place(l));
        row.appendChild(btn);
      });
      pal.appendChild(row);
    }
    b.shapes.forEach((name, i) => {
      for (const mirror of [false, true]) {
        const btn = document.createElement('button');
        btn.type = 'button';
        btn.dataset.shape = i; btn.dataset.mirror = mirror;
        const sample = v.legal.find((l) => l.shape === i && l.mirror === mirror && l.points);
        if (sample) btn.appendChild(shapeIcon(sample.points, v.to_move));
        btn.appendChild(document.createTextNode(name + (mirror ? "' " + t('mirror') : '') + ' (' + t('stock') + ' ' + b.stock[seat][i] + ')'));
        const usable = !!sample || v.legal.some((l) => l.shape === i && l.mirror === mirror);
        btn.disabled = !usable;
        if (st.shape === i && st.mirror === mirror) btn.classList.add('chosen');
        btn.addEventListener('click', () => { st.shape = i; st.mirror = mirror; st.target = null; drawTriGolden(app.view); });
        pal.appendChild(btn);
      }
    });
  }
}

// A small picture of a piece from one of its placements (its polygon, scaled into the icon).
function shapeIcon(points, owner) {
  const xs = points.map((p) => p[0]), ys = points.map((p) => -p[1]);
  const x0 = Math.min(...xs), y0 = Math.min(...ys), w = Math.max(...xs) - x0, h = Math.max(...ys) - y0;
  const m = Math.max(w, h) * 0.1, size = Math.max(w, h) + 2 * m;
  const icon = document.createElementNS(SVGNS, 'svg');
  icon.setAttribute('viewBox', `${x0 - m - (size - w - 2 * m) / 2} ${y0 - m - (size - h - 2 * m) / 2} ${size} ${size}`);
  icon.setAttribute('class', 'shape-icon');
  const [fill, ink] = OWNER[owner] || ['#fff', '#333'];
  el('polygon', { points: tgPts(points), fill, stroke: ink, 'stroke-width': size * 0.04 }, icon);
  return icon;
}

// Pieces of the last completed turn and of the turn in progress: TriGolden places one piece
// per click, so the server's ply range of the last turn is a range of piece numbers.
function lastTurn(v) {
  const out = new Set();
  const [from, to] = v.last_turn || [0, 0];
  for (let i = from; i < to; i++) out.add(i);
  return out;
}

// Pan (drag) and zoom (wheel, buttons) of the TriGolden view.
function zoom(f, cx, cy) {
  if (!TG.box) return;
  const [x, y, w, h] = TG.box;
  cx = cx ?? x + w / 2; cy = cy ?? y + h / 2;
  TG.box = [cx - (cx - x) * f, cy - (cy - y) * f, w * f, h * f];
  TG.auto = false;
  $('board').setAttribute('viewBox', TG.box.join(' '));
}

function setupPanZoom() {
  const svg = $('board');
  svg.addEventListener('wheel', (e) => {
    if (!app.view || app.view.game !== 'trigolden') return;
    e.preventDefault();
    const r = svg.getBoundingClientRect();
    const [x, y, w, h] = TG.box;
    zoom(e.deltaY > 0 ? 1.15 : 1 / 1.15, x + ((e.clientX - r.left) / r.width) * w, y + ((e.clientY - r.top) / r.height) * h);
  }, { passive: false });
  svg.addEventListener('pointerdown', (e) => {
    if (!app.view || app.view.game !== 'trigolden' || e.target.classList.contains('ghost') || e.target.classList.contains('target')) return;
    TG.drag = { x: e.clientX, y: e.clientY, box: TG.box.slice() };
  });
  window.addEventListener('pointermove', (e) => {
    if (!TG.drag) return;
    const r = svg.getBoundingClientRect();
    const [x, y, w, h] = TG.drag.box;
    TG.box = [x - ((e.clientX - TG.drag.x) / r.width) * w, y - ((e.clientY - TG.drag.y) / r.height) * h, w, h];
    TG.auto = false;
    svg.setAttribute('viewBox', TG.box.join(' '));
  });
  window.addEventListener('pointerup', () => { TG.drag = null; });
  $('zoom-in').addEventListener('click', () => zoom(1 / 1.25));
  $('zoom-out').addEventListener('click', () => zoom(1.25));
  $('zoom-fit').addEventListener('click', () => { TG.box = TG.fit.slice(); zoom(1); TG.auto = true; });
}

// ---------------------------------------------------------------- language and start-up

function applyLang() {
  document.documentElement.lang = lang === 'zh' ? 'zh-Hant' : 'en';
  $('lang').textContent = lang === 'zh' ? 'English' : '中文';
  for (const e of document.querySelectorAll('[data-i18n]')) e.textContent = t(e.dataset.i18n);
  if (app.view) setView(app.view);
}

function init() {
  $('lang').addEventListener('click', () => { lang = lang === 'zh' ? 'en' : 'zh'; localStorage.setItem('zeroplay-lang', lang); applyLang(); });
  const showScoring = () => { $('scoring-box').hidden = $('game').value !== 'trigolden'; };
  // Choosing another game (or TriGolden's scoring) starts it; the AI's seat and time apply
  // to the game on screen.
  $('game').addEventListener('change', () => { showScoring(); TG.box = null; newGame(); });
  $('scoring').addEventListener('change', () => { TG.box = null; newGame(); });
  $('ai-seat').addEventListener('change', () => applySettings({ ai_seat: $('ai-seat').value }));
  $('ai-ms').addEventListener('change', () => { app.aiMs = Number($('ai-ms').value); applySettings({ ai_ms: app.aiMs }); });
  $('stop-ai').addEventListener('click', () => stopAi());
  $('new').addEventListener('click', () => { TG.box = null; newGame(); });
  $('undo').addEventListener('click', () => undoRedo('undo'));
  $('redo').addEventListener('click', () => undoRedo('redo'));
  $('ai-move').addEventListener('click', () => aiMove());
  $('r-first').addEventListener('click', () => replayGo(0));
  $('r-prev').addEventListener('click', () => replayGo(app.replay.at - 1));
  $('r-next').addEventListener('click', () => replayGo(app.replay.at + 1));
  $('r-last').addEventListener('click', () => replayGo(app.replay.actions.length));
  $('r-slider').addEventListener('input', (e) => replayGo(Number(e.target.value)));
  $('take-over').addEventListener('click', () => newGame(app.replay.token, app.replay.at));
  setupPanZoom();
  applyLang();
  const m = location.pathname.match(/^\/replay\/([A-Za-z0-9_-]+)$/);
  showScoring();
  if (m) openReplay(m[1]); else newGame();
}

init();

// For the browser tests: whether the page waits on nothing (no request, no AI turn due).
window.zeroplay = {
  view: () => app.view && Object.assign({ id: app.id }, app.view),
  idle: () => !app.busy && !!app.view && (!!app.replay || !aiToMove(app.view) || !!app.view.outcome),
};
