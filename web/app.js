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

async function newGame(replayToken, at) {
  showError(null);
  const game = $('game').value;
  const body = replayToken
    ? { replay: replayToken, at, ai_seat: $('ai-seat').value, ai_ms: Number($('ai-ms').value) }
    : { game, ai_seat: $('ai-seat').value, ai_ms: Number($('ai-ms').value),
        options: game === 'trigolden' ? { scoring: $('scoring').value } : null };
  try {
    if (app.id) api('DELETE', '/api/games/' + app.id).catch(() => {});
    const v = await api('POST', '/api/games', body);
    app.id = v.id; app.aiMs = body.ai_ms; app.replay = null;
    app.tg = { shape: 0, mirror: false, target: null, view: null };
    app.bq = { from: null };
    $('replay-box').hidden = true;
    if (location.pathname !== '/') history.pushState(null, '', '/');
    setView(v);
    await maybeAi();
  } catch (e) { showError(e); }
}

function aiToMove(v) { return v && !v.outcome && v.ai_seat && v.to_move === v.ai_seat; }

async function maybeAi() {
  while (aiToMove(app.view) && !app.replay) {
    if (!(await aiMove())) break;
  }
}

// Reads the server-sent events of POST /api/games/{id}/ai.
async function aiMove() {
  if (!app.id || app.busy) return false;
  app.busy = true; updateButtons();
  $('thinking').hidden = false; $('think-bar').value = 0;
  $('think-text').textContent = t('thinking');
  try {
    const res = await fetch('/api/games/' + app.id + '/ai', { method: 'POST' });
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
        if (ev === 'progress') showProgress(d);
        else if (ev === 'done') done = d;
      }
    }
    if (!done) throw new Error('the AI stream ended early');
    if (done.search) showProgress(done.search);
    setView(done.state);
    return done.applied;
  } catch (e) { showError(e); return false; } finally {
    app.busy = false; $('thinking').hidden = true; updateButtons();
  }
}

function showProgress(p) {
  $('think-bar').value = Math.min(1, p.elapsed_ms / app.aiMs);
  $('think-text').textContent = t('progress', {
    sims: p.sims, nodes: p.nodes, depth: p.depth, ms: p.elapsed_ms, best: p.best || '–', value: p.value.toFixed(2),
  });
}

async function sendClick(action) {
  if (app.busy || app.replay) return;
  showError(null);
  app.busy = true;
  try { setView(await api('POST', '/api/games/' + app.id + '/click', { action })); } catch (e) { showError(e); }
  app.busy = false;
  updateButtons();
  await maybeAi();
}

async function undoRedo(which) {
  try { setView(await api('POST', '/api/games/' + app.id + '/' + which)); } catch (e) { showError(e); }
}

// ---------------------------------------------------------------- replay mode

async function openReplay(token) {
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
  if (v.model_version !== undefined && v.game === 'battlenumber') {
    status += ' · ' + (v.model_version > 0 ? t('model', { v: v.model_version }) : t('no_model'));
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
  $('undo').disabled = !playing || app.busy || !(v && v.can_undo);
  $('redo').disabled = !playing || app.busy || !(v && v.can_redo);
  $('ai-move').disabled = !playing || app.busy || !v || !!v.outcome;
  $('svg').hidden = !playing;
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
  svg.setAttribute('viewBox', '-0.1 -0.1 7.2 7.2');
  const b = v.board;
  const legal = new Map();
  for (const l of v.legal) legal.set(l.action, l);
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
    if (legal.has(name) && !app.replay) cls += ' legal';
    const hit = el('rect', { x, y, width: 1, height: 1, class: cls, stroke: '#ccc', 'stroke-width': 0.01, 'data-action': legal.has(name) ? name : '' }, g);
    if (legal.has(name)) hit.addEventListener('click', () => sendClick(name));
  }
  // Scores and hands
  const s = b.score_first;
  $('scores').textContent = t('score', { s: (s > 0 ? '+' : '') + s }) + ' · ' + t(b.phase) +
    ' · ' + t('hand') + ': ' + b.hands.map((h, i) => (i ? t('seat_second') : t('seat_first')) + ' ' + h.join('/')).join(', ');
  // Piece palette: the legal piece clicks after a square is chosen.
  const pal = $('palette');
  pal.innerHTML = '';
  const pieces = v.legal.filter((l) => /^[A-Z]\dr\d$/.test(l.action));
  if (pieces.length && !app.replay) {
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
  const legal = new Set(v.legal.map((l) => l.action));
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
      el('circle', { cx: x + 0.5, cy: y + 0.5, r: 0.4, fill: '#fdf6e3', stroke: ink, 'stroke-width': 0.05, class: 'piece' + (last.has(name) ? ' last' : '') }, g);
      const tx = el('text', { x: x + 0.5, y: y + 0.68, 'font-size': 0.46, 'text-anchor': 'middle', fill: ink, 'pointer-events': 'none' }, g);
      tx.textContent = lang === 'zh' ? BQ_CHARS[c] : c.toUpperCase();
    }
    const flip = legal.has(name + name);
    const movable = [...legal].some((a) => a.startsWith(name) && a !== name + name);
    let cls = 'sq';
    if (!app.replay && (flip || movable || targets.has(name))) cls += ' legal';
    if (app.bq.from === sq) cls += ' pending';
    const hit = el('rect', { x, y, width: 1, height: 1, class: cls, 'data-action': flip ? name + name : '' }, g);
    hit.addEventListener('click', () => bqClick(sq));
  }
  const colours = b.colours[0]
    ? t('seat_first') + ' ' + t(b.colours[0]) + ', ' + t('seat_second') + ' ' + t(b.colours[1])
    : t('no_colours');
  const pool = Object.entries(b.pool).map(([k, n]) => (lang === 'zh' ? BQ_CHARS[k] : k) + '×' + n).join(' ');
  $('scores').textContent = colours + ' · ' + t('face_down') + ': ' + (pool || '–') + ' · ' + t('quiet', { n: b.quiet });
  $('palette').innerHTML = '';
}

function bqClick(sq) {
  const v = app.view;
  if (app.replay || app.busy || !v) return;
  const name = bqName(sq);
  const legal = new Set(v.legal.map((l) => l.action));
  const from = app.bq.from === null ? null : bqName(app.bq.from);
  if (from && from !== name && legal.has(from + name)) { app.bq.from = null; sendClick(from + name); return; }
  if (legal.has(name + name)) { app.bq.from = null; sendClick(name + name); return; }
  app.bq.from = [...legal].some((a) => a.startsWith(name)) && app.bq.from !== sq ? sq : null;
  drawBanqi(v);
}

// TriGolden ----------------------------------------------------------------

const TG = { box: null, drag: null };

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
  if (!TG.box) TG.box = fit;
  TG.fit = fit;
  svg.setAttribute('viewBox', TG.box.join(' '));
  const last = lastTurn(v);
  const mine = v.legal.filter((l) => l.shape === st.shape && l.mirror === st.mirror);
  const targets = new Set(mine.map((l) => l.target).filter((x) => x !== null));
  for (const p of b.pieces) {
    const [fill, ink] = OWNER[p.owner];
    let cls = 'piece';
    if (last.has(p.n)) cls += ' last';
    if (targets.has(p.n) && !app.replay) cls += ' target';
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
  if (!app.replay) {
    for (const l of mine) {
      if (l.target !== null && l.target !== st.target) continue;
      const g = el('polygon', { points: tgPts(l.points), class: 'ghost', 'data-action': l.action }, svg);
      g.addEventListener('click', () => { st.target = null; sendClick(l.action); });
    }
  }
  $('scores').textContent = t('points', { a: b.scores[0], b: b.scores[1] });
  // Palette: each shape and its mirror, with the mover's stock.
  const pal = $('palette');
  pal.innerHTML = '';
  if (v.to_move && !app.replay) {
    const seat = v.to_move === 'first' ? 0 : 1;
    const hint = document.createElement('p'); hint.textContent = t('pick_shape'); hint.style.width = '100%'; pal.appendChild(hint);
    b.shapes.forEach((name, i) => {
      for (const mirror of [false, true]) {
        const btn = document.createElement('button');
        btn.type = 'button';
        btn.dataset.shape = i; btn.dataset.mirror = mirror;
        btn.textContent = name + (mirror ? "' " + t('mirror') : '') + ' (' + t('stock') + ' ' + b.stock[seat][i] + ')';
        const usable = v.legal.some((l) => l.shape === i && l.mirror === mirror);
        btn.disabled = !usable;
        if (st.shape === i && st.mirror === mirror) btn.classList.add('chosen');
        btn.addEventListener('click', () => { st.shape = i; st.mirror = mirror; st.target = null; drawTriGolden(app.view); });
        pal.appendChild(btn);
      }
    });
  }
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
    svg.setAttribute('viewBox', TG.box.join(' '));
  });
  window.addEventListener('pointerup', () => { TG.drag = null; });
  $('zoom-in').addEventListener('click', () => zoom(1 / 1.25));
  $('zoom-out').addEventListener('click', () => zoom(1.25));
  $('zoom-fit').addEventListener('click', () => { TG.box = TG.fit.slice(); zoom(1); });
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
  $('game').addEventListener('change', () => { $('scoring-box').hidden = $('game').value !== 'trigolden'; });
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
  if (m) openReplay(m[1]); else newGame();
}

init();

// For the browser tests: whether the page waits on nothing (no request, no AI turn due).
window.zeroplay = {
  view: () => app.view && Object.assign({ id: app.id }, app.view),
  idle: () => !app.busy && !!app.view && (!!app.replay || !aiToMove(app.view) || !!app.view.outcome),
};
