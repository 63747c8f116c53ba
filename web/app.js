// zeroplay web client. It holds no rules: every board it draws, every click it offers comes
// from the server (GET /api/games/{id}: `legal`), and every click goes back to the server.
'use strict';

const I18N = {
  en: {
    title: 'zeroplay', game: 'Game', battlenumber: 'Battle Number (拚數棋)', trigolden: 'TriGolden (頂鑫棋)', banqi: 'Banqi (暗棋)',
    red: 'red', black: 'black', no_colours: 'colours not yet drawn', face_down: 'face down', quiet: '{n} quiet plies (60 draw)',
    ai_plays: 'AI plays', first: 'first', second: 'second', nobody: 'nobody', ai_time: 'AI level (time per move)',
    captured: 'pieces taken', captured_n: '{n} taken', r_structures: 'bracing points on its pieces', r_placed: 'pieces placed',
    r_left: 'pieces left', r_points: 'points', r_by_arbitration: 'Decided by arbitration.', r_turns: 'All {n} of {m} turns played.',
    r_regions: 'regions', r_extraction: 'extraction', r_total: 'total', r_no_placement: 'Ended in placement: a player had no legal placement.',
    r_extracted: 'Ended after {n} extractions.', r_colour: 'colour', r_on_board: 'pieces left', r_taken: 'pieces taken',
    r_bq_draw: 'Draw: {n} plies without a capture or flip, or a position seen three times.', r_all_taken: 'Every piece of the loser was taken.',
    r_no_move: 'The loser had no legal move.',
    how_to_play: 'How to play', level_300: 'Easy', level_1000: 'Normal', level_3000: 'Hard', level_10000: 'Expert', sound: 'Sound on or off',
    scoring: 'Scoring', bracer: 'bracer (頂棋)', trigolden_mode: 'TriGolden piece (鑫棋)', same_owner: 'same owner',
    new_game: 'New game', undo: 'Undo', redo: 'Redo', ai_move: 'AI move', download_svg: 'Download SVG',
    take_over: 'Take over from here', replay_link: 'Replay link', history: 'Moves', fit: 'fit',
    you: 'You', ai: 'AI', to_move: '{who} to move', wins: '{who} wins', draw: 'Draw', thinking: 'AI is thinking…',
    seat_first: 'First', seat_second: 'Second', score: 'Score (first seat): {s}', placement: 'placement',
    extraction: 'extraction', hand: 'hand', choose_piece: 'Choose a piece:', pick_shape: 'Choose a piece, then a target piece, then a ghost.',
    progress: 'thinking… {s} s, {n} positions, best: {best}',
    replay: 'Replay: move {at} of {n}', model: 'model v{v}', no_model: 'rollout AI (no model yet)', decisive: ' (no legal move)',
    mirror: 'mirror', stock: 'left', points: 'Points: first {a}, second {b}',
    stop_ai: 'Stop the AI', ai_stopped: 'The AI was stopped: you play both seats.', last_search: 'The AI searched {s} s, {n} positions; best: {best}.',
    not_yet: 'The AI has not moved yet.', both: 'both (watch)',
    second_piece: 'Second piece of your turn.', placements: 'Placements:',
    bq_legend: 'G general, A advisor, E elephant, R chariot, H horse, C cannon, S soldier; upper case red, lower case black',
    no_model_trigolden: "the designer's AI (no model yet)", no_model_banqi: 'alpha-beta AI (no model yet)',
    ai_time_second: "Second AI's time", first_ai_time: "First AI's time", pace: 'Pace', pace_fast: 'no pause',
    new_match: 'Two-game match', rotate: 'Face to face: turn the board round on the second player\'s turn', arbitrate: 'Ask for arbitration',
    confirm: 'Place', cancel: 'Cancel', hint: 'Hint', pause: 'Pause', resume: 'Resume', match_next: 'Second game (sides swapped)',
    arbitration: 'Arbitration', arb_met: '{who} has {n} legal turns here: the last turn met its obligation (rule 5). No violation; the game goes on.',
    arb_broken: '{who} has no two pieces that go together on one opponent piece ({n} legal turns): the last turn broke rule 5. {who} wins by arbitration.',
    arb_single: '{who} has {n} legal placements for the final piece.',
    turn_of: 'turn {n} of {m}', pts: '{n} points', left: '{n} pieces left', hand_left: 'hand {h}', angle: 'rotation {a}°',
    drag_rotate: 'The first piece goes in the centre: drag on the board to turn it, then tap it.',
    hint_line: '{agent} for {who}: value {value}', hint_none: 'no search statistics (the AI keeps no tree)', hinting: 'Looking for a hint…',
    match: 'Match', match_game: 'Game {n}', match_total: 'Total', match_first: '{who} first', match_wins: '{who} wins the match, {a} to {b}',
    match_decisive: '{who} wins the match (game {n} was decided outright)', match_tie: 'The match is tied, {a} to {b}',
    match_on: 'Game {n} of the match', player_a: 'Player A', player_b: 'Player B', ai_a: 'AI A', ai_b: 'AI B',
    flips: 'flips', centre: 'in the centre', on_piece: 'on #{n}', turn_label: '{who}:',
    forced: 'The AI searched {ms} ms: it had only one legal move.',
    dots: '● {n} bracing points scored (each dot has the colour of the piece it lies on)',
    final_tg: 'Final after {turns} turns: first {a} points, second {b}; {n} bracing points scored, {fa} on first\'s pieces and {fb} on second\'s',
  },
  zh: {
    title: 'zeroplay', game: '遊戲', battlenumber: '拚數棋', trigolden: '頂鑫棋', banqi: '暗棋',
    red: '紅', black: '黑', no_colours: '尚未翻出顏色', face_down: '未翻', quiet: '{n} 步未吃未翻（60 和）',
    ai_plays: '電腦執', first: '先手', second: '後手', nobody: '不下', ai_time: '電腦難度（每步時間）',
    captured: '吃子', captured_n: '吃 {n} 子', r_structures: '其棋子上的頂鑫點', r_placed: '已放棋子',
    r_left: '剩餘棋子', r_points: '分數', r_by_arbitration: '由仲裁決定勝負。', r_turns: '{m} 回合全部下完（{n}）。',
    r_regions: '區域分', r_extraction: '抽取分', r_total: '總分', r_no_placement: '放置階段結束：一方無處可放。',
    r_extracted: '抽取 {n} 次後結束。', r_colour: '顏色', r_on_board: '剩餘棋子', r_taken: '吃子',
    r_bq_draw: '和局：{n} 步未吃未翻，或同一局面出現三次。', r_all_taken: '輸方的棋子全被吃光。',
    r_no_move: '輸方無子可走。',
    how_to_play: '玩法', level_300: '簡單', level_1000: '普通', level_3000: '困難', level_10000: '高手', sound: '聲音開關',
    scoring: '計分', bracer: '頂棋', trigolden_mode: '鑫棋', same_owner: '同主',
    new_game: '新局', undo: '悔棋', redo: '重做', ai_move: '電腦走', download_svg: '下載 SVG',
    take_over: '從此接手', replay_link: '重播連結', history: '棋譜', fit: '全圖',
    you: '你', ai: '電腦', to_move: '輪到{who}', wins: '{who}勝', draw: '和局', thinking: '電腦思考中…',
    seat_first: '先手', seat_second: '後手', score: '比分（先手）：{s}', placement: '佈子',
    extraction: '提子', hand: '手上', choose_piece: '選擇棋子：', pick_shape: '先選棋子，再點目標棋子，再點虛影。',
    progress: '思考中… {s} 秒，{n} 個局面，最佳：{best}',
    replay: '重播：第 {at} / {n} 步', model: '模型 v{v}', no_model: '隨機模擬（尚無模型）', decisive: '（無子可下）',
    mirror: '鏡像', stock: '剩', points: '分數：先手 {a}，後手 {b}',
    stop_ai: '停止電腦', ai_stopped: '電腦已停止：兩方都由你下。', last_search: '電腦思考了 {s} 秒，{n} 個局面；最佳：{best}。',
    not_yet: '電腦尚未走棋。', both: '雙方（觀戰）',
    second_piece: '本回合的第二枚棋子。', placements: '位置：',
    bq_legend: '', no_model_trigolden: '設計者的電腦（尚無模型）', no_model_banqi: 'α-β 搜尋（尚無模型）',
    ai_time_second: '後手電腦時間', first_ai_time: '先手電腦時間', pace: '節奏', pace_fast: '不停頓',
    new_match: '兩局賽', rotate: '面對面：輪到後手時轉動棋盤', arbitrate: '申請仲裁',
    confirm: '落子', cancel: '取消', hint: '提示', pause: '暫停', resume: '繼續', match_next: '第二局（交換先手）',
    arbitration: '仲裁', arb_met: '{who}此時有 {n} 種合法回合：上一回合符合義務（規則 5），沒有違規，對局繼續。',
    arb_broken: '{who}沒有兩枚棋子能同貼一枚對方棋子（{n} 種合法回合）：上一回合違反規則 5，{who}仲裁勝。',
    arb_single: '{who}的最後一枚棋子有 {n} 個合法位置。',
    turn_of: '第 {n} / {m} 回合', pts: '{n} 分', left: '剩 {n} 子', hand_left: '手上 {h}', angle: '旋轉 {a}°',
    drag_rotate: '第一枚棋子放在中心：在棋盤上拖動可旋轉它，再點它。',
    hint_line: '{agent} 為{who}評估：{value}', hint_none: '沒有搜尋統計（此電腦不保留搜尋樹）', hinting: '正在找提示…',
    match: '比賽', match_game: '第 {n} 局', match_total: '總分', match_first: '{who}先手', match_wins: '{who}贏得比賽（{a} 比 {b}）',
    match_decisive: '{who}贏得比賽（第 {n} 局直接決勝）', match_tie: '比賽平手（{a} 比 {b}）',
    match_on: '兩局賽第 {n} 局', player_a: '甲方', player_b: '乙方', ai_a: '電腦甲', ai_b: '電腦乙',
    flips: '翻出', centre: '放在中心', on_piece: '貼 {n} 號', turn_label: '{who}：',
    forced: '電腦思考 {ms} 毫秒：只有一種合法著法。',
    dots: '● 已計分的頂鑫點 {n} 個（點的顏色是它所在棋子的顏色）',
    final_tg: '{turns} 回合後終局：先手 {a} 分，後手 {b} 分；共 {n} 個頂鑫點，先手棋子上 {fa} 個，後手棋子上 {fb} 個',
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
  settling: null,    // the settings request on its way to the game on screen, if any
  gen: 0,            // bumped by every new game or replay: answers for an older one are dropped
  abort: null,       // the AI request in flight, to cancel it
  replay: null,      // {token, actions, at} in replay mode
  tg: { shape: 0, mirror: false, target: null, view: null, preview: null },
  bq: { from: null },  // Banqi: the square of the piece chosen to move
  angle: 0,          // the view's rotation in whole degrees (the engine keeps its own frame)
  facing: false,     // turned round for two people face to face (the rotate button)
  sounds: [],        // the sounds played, in order (read by the browser tests)
  animations: 0,     // the moves animated (read by the browser tests)
  paused: false,     // AI vs AI: paused between turns
  hint: null,        // {key, data}: the last hint, drawn while the position is the same
  match: null,       // a two-game match: {names, seats, results, ids}
  boards: {},        // each game's titles and download name (/api/info)
};

// The AI's time for `seat`: with the AI in both seats each has its own.
function msFor(seat) {
  const v = app.view;
  if (v && v.ai_seat === 'both' && seat === 'second') return Number($('ai-ms-second').value);
  return app.aiMs;
}
function aiSeats(v) { return (v && v.ai_seats) || (v && v.ai_seat ? [v.ai_seat] : []); }

// Each game's secret, given to this page when it created the game: every request that
// changes the game carries it (anyone may watch a game; only its creator plays in it).
const secrets = {};
function gameHeaders(path) {
  const m = /^\/api\/games\/([0-9a-f]+)/.exec(path);
  return m && secrets[m[1]] ? { 'x-game-secret': secrets[m[1]] } : {};
}

async function api(method, path, body) {
  const res = await fetch(path, {
    method, headers: Object.assign(body ? { 'content-type': 'application/json' } : {}, gameHeaders(path)),
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = { error: text }; }
  if (!res.ok) throw new Error((data && data.error) || res.statusText);
  if (method === 'POST' && path === '/api/games' && data && data.secret) secrets[data.id] = data.secret;
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
    // The old game goes once a settings change still on its way to it has landed (else that
    // request meets a deleted game).
    if (app.id) {
      const old = app.id;
      Promise.resolve(app.settling).catch(() => {}).then(() => api('DELETE', '/api/games/' + old)).catch(() => {});
    }
    app.id = null;
    app.busy = true; updateButtons();
    const v = await api('POST', '/api/games', body);
    if (gen !== app.gen) { api('DELETE', '/api/games/' + v.id).catch(() => {}); return; }
    app.busy = false;
    app.id = v.id; app.aiMs = body.ai_ms; app.replay = null;
    TG.auto = true; TG.openZoom = 1;
    app.tg = { shape: 0, mirror: false, target: null, view: null, preview: null };
    app.bq = { from: null };
    app.hint = null; $('hint-text').textContent = '';
    app.paused = false;
    if (app.match && !replayToken) app.match.ids.push(v.id);
    $('replay-box').hidden = true;
    if (!replayToken) rememberChoice(game);
    else if (location.pathname !== '/') history.pushState(null, '', '/');
    setView(v);
    showSearch(null);
    await maybeAi();
  } catch (e) { if (gen === app.gen) { app.busy = false; updateButtons(); showError(e); } }
}

function aiToMove(v) { return !!v && !v.outcome && !!v.to_move && aiSeats(v).includes(v.to_move); }
// Whether a person may click on the board now.
function humanTurn(v) { return !!v && !app.replay && !!app.id && !v.outcome && !!v.to_move && !aiToMove(v); }

// Lets the AI play while it is to move. AI against AI waits the chosen pace between turns and
// stops at Pause.
async function maybeAi() {
  const gen = app.gen;
  while (gen === app.gen && aiToMove(app.view) && !app.replay) {
    const watching = app.view.ai_seat === 'both';
    if (watching && app.paused) break;
    if (watching && app.view.ply > 0) {
      await new Promise((r) => setTimeout(r, Number($('pace').value)));
      if (gen !== app.gen || app.paused || !aiToMove(app.view)) break;
    }
    if (!(await aiMove())) break;
  }
  updateButtons();
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
  const ms = msFor(app.view && app.view.to_move);
  app.thinkMs = ms;
  try {
    let res;
    // 409 right after a stop: the server is still letting go of the stopped search.
    for (let tries = 0; ; tries++) {
      const path = '/api/games/' + app.id + '/ai?ms=' + ms;
      res = await fetch(path, { method: 'POST', signal: ctl.signal, headers: gameHeaders(path) });
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
    if (done.applied) showSearch(done.search || { forced: true }, done.elapsed_ms || Math.round(performance.now() - started));
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

// A search as a player reads it: seconds, positions looked at, and the move it prefers in
// words (of the position searched, which is still the one on screen).
function searchWords(p, ms) {
  const n = Math.max(p.nodes || 0, p.sims || 0);
  return {
    s: ((ms === undefined ? p.elapsed_ms : ms) / 1000).toFixed(1),
    n: n.toLocaleString(lang === 'zh' ? 'zh-TW' : 'en-US'),
    best: p.best && app.view ? describeClick(app.view, p.best) : '–',
  };
}

function progressLine(p) {
  return t('progress', searchWords(p));
}

function showProgress(p) {
  $('think-bar').value = Math.min(1, p.elapsed_ms / (app.thinkMs || app.aiMs));
  $('think-text').textContent = progressLine(p);
}

// The last AI turn's search line, kept after its move (the box keeps its place: no jumps).
function showSearch(p, ms) {
  app.lastSearch = p ? { p, ms } : null;
  const waiting = app.view && app.view.ai_seat ? t('not_yet') : '';
  // A forced turn (one legal click each time) has no search to report.
  $('think-text').textContent = !p ? waiting : p.forced ? t('forced', { ms }) : t('last_search', searchWords(p, ms));
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

// ---------------------------------------------------------------- two-game matches

// A match is two games with the first player swapped; the scores are added and a decisive
// game (no legal move, arbitration) decides it, as the rules define a match. Player A sits
// first in game 1 and second in game 2.
function startMatch() {
  const seat = $('ai-seat').value;
  const names = {
    second: [t('you'), t('ai')], first: [t('ai'), t('you')], both: [t('ai_a'), t('ai_b')], none: [t('player_a'), t('player_b')],
  }[seat];
  app.match = { names, seat, results: [], ids: [] };
  drawMatch(); // the new match's table at once: nothing of the last one stays on screen
  TG.box = null;
  newGame();
}

// Records a finished game of the match (once) and offers the second game.
function recordMatch(v) {
  const m = app.match;
  if (!m || app.replay || !v.outcome || m.ids[m.ids.length - 1] !== app.id || m.results.length >= m.ids.length) return;
  m.results.push({ scores: v.outcome.scores, decisive: v.outcome.decisive || null });
  drawMatch();
}

function nextMatchGame() {
  const m = app.match;
  if (!m || m.results.length !== 1) return;
  const swap = { first: 'second', second: 'first', both: 'both', none: 'none' };
  $('ai-seat').value = swap[m.seat];
  TG.box = null;
  newGame();
}

function drawMatch() {
  const m = app.match;
  $('match-box').hidden = !m;
  if (!m) return;
  const [a, b] = m.names;
  const rows = [`<tr><th>${t('match')}</th><th>${a}</th><th>${b}</th></tr>`];
  let ta = 0, tb = 0, decided = null;
  m.results.forEach((r, i) => {
    // Game 1: A first; game 2: A second.
    const [sa, sb] = i === 0 ? r.scores : [r.scores[1], r.scores[0]];
    ta += sa; tb += sb;
    if (r.decisive && !decided) {
      const aWon = (r.decisive === 'first') === (i === 0);
      decided = { who: aWon ? a : b, n: i + 1 };
    }
    const first = i === 0 ? a : b;
    rows.push(`<tr><td>${t('match_game', { n: i + 1 })} · ${t('match_first', { who: first })}</td><td>${sa}</td><td>${sb}</td></tr>`);
  });
  // The game still to come (none once a game has decided the match outright).
  if (m.results.length < 2 && !decided) {
    const n = m.results.length + 1, first = n === 1 ? a : b;
    rows.push(`<tr><td>${t('match_game', { n })} · ${t('match_first', { who: first })}</td><td>…</td><td>…</td></tr>`);
  }
  rows.push(`<tr><th>${t('match_total')}</th><th>${ta}</th><th>${tb}</th></tr>`);
  $('match-table').innerHTML = rows.join('');
  let result = m.results.length < 2 ? t('match_on', { n: Math.min(2, m.results.length + 1) }) : '';
  if (decided) result = t('match_decisive', decided);
  // Scores with a true minus sign (zero-sum games give the loser a negative total).
  const num = (x) => (x < 0 ? '−' + -x : String(x));
  if (m.results.length === 2 && !decided) {
    result = ta === tb ? t('match_tie', { a: num(ta), b: num(tb) })
      : t('match_wins', { who: ta > tb ? a : b, a: num(Math.max(ta, tb)), b: num(Math.min(ta, tb)) });
  }
  $('match-result').textContent = result;
  $('match-next').hidden = !(m.results.length === 1 && !decided);
}

// ---------------------------------------------------------------- hints and arbitration

// A hint: the AI searches the position in front of you and shows its value and its three
// most visited clicks on the board. Nothing is played.
async function askHint() {
  if (!app.id || app.busy || !humanTurn(app.view)) return;
  // Keyed by the replay token (the whole history): an undo and another line to the same ply
  // is another position.
  const gen = app.gen, key = app.view.replay;
  app.busy = true; updateButtons();
  $('hint-text').textContent = t('hinting');
  try {
    const d = await api('POST', '/api/games/' + app.id + '/hint?ms=' + Math.min(app.aiMs, 3000));
    if (gen !== app.gen) return;
    app.hint = { key, data: d };
    showHintText();
    setView(app.view);
  } catch (e) { if (gen === app.gen) showError(e); } finally {
    if (gen === app.gen) { app.busy = false; updateButtons(); }
  }
}

function currentHint(v) { return app.hint && v && !app.replay && app.hint.key === v.replay ? app.hint.data : null; }

function showHintText() {
  const d = currentHint(app.view);
  if (!d) { $('hint-text').textContent = ''; return; }
  const who = seatName(app.view.to_move);
  const agent = d.agent.split(':')[0];
  let line = t('hint_line', { agent, who, value: d.value === null ? '–' : (d.value > 0 ? '+' : '') + d.value.toFixed(2) });
  line += ' · ' + d.top.map((x, i) => (i + 1) + '. ' + describeClick(app.view, x.action) +
    (x.share === null ? '' : ' ' + Math.round(x.share * 100) + '%')).join('  ');
  if (d.top.length && d.top[0].share === null && app.view.legal.length > 1) line += ' (' + t('hint_none') + ')';
  $('hint-text').textContent = line;
}

// TriGolden's rule 5 as a dialog: does the player whose turn starts have what the last turn
// owed them, and how many legal turns?
async function askArbitration(auto) {
  if (!app.id) return;
  const gen = app.gen;
  try {
    const a = await api('GET', '/api/games/' + app.id + '/arbitration');
    if (gen !== app.gen) return;
    const who = seatName(a.seat);
    const v = app.view;
    const single = v.board.turns_played + 1 === v.board.total_turns;
    $('arb-text').textContent = a.obligation_met
      ? (single ? t('arb_single', { who, n: a.legal_turns }) + ' ' : '') + t('arb_met', { who, n: a.legal_turns })
      : t('arb_broken', { who, n: a.legal_turns });
    const d = $('arb-dialog');
    if (!d.open) d.showModal();
  } catch (e) { if (gen === app.gen && !auto) showError(e); }
}

// The AI seat and time selectors apply to the game on screen at once.
async function applySettings(body) {
  if (!app.id || app.replay) return;
  const gen = app.gen;
  let req = null;
  try {
    if (body.ai_seat !== undefined && app.abort) { app.abort.abort(); app.abort = null; }
    req = api('POST', '/api/games/' + app.id + '/settings', body);
    app.settling = req;
    const v = await req;
    if (gen !== app.gen) return;
    if (body.ai_ms) app.aiMs = body.ai_ms;
    app.paused = false;
    // An aborted search's stream may still be closing: wait for the server to let it go.
    for (let i = 0; i < 50 && app.busy; i++) await new Promise((r) => setTimeout(r, 20));
    app.busy = false;
    setView(v);
    await maybeAi();
  } catch (e) {
    if (gen === app.gen) showError(e);
  } finally {
    if (app.settling === req) app.settling = null;
  }
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
    if (gen !== app.gen) return;
    // The last search's line would name a move that is gone.
    if (app.lastSearch) { app.lastSearch = null; $('think-text').textContent = ''; }
    setView(v);
  } catch (e) { if (gen === app.gen) showError(e); }
}

// ---------------------------------------------------------------- replay mode

async function openReplay(token) {
  leaveGame();
  try {
    const r = await api('GET', '/api/replay/' + token + '?at=0');
    // The slider steps over the plies a player stops at (a flip and its reveal are one step).
    app.replay = { token, actions: r.actions, stops: r.stops, at: 0, i: 0 };
    app.id = null;
    $('game').value = r.game;
    $('replay-box').hidden = false;
    $('r-slider').max = r.stops.length - 1;
    await replayStep(r.stops.length - 1);
  } catch (e) { showError(e); }
}

async function replayStep(i) {
  const r = app.replay;
  i = Math.max(0, Math.min(r.stops.length - 1, i));
  const at = r.stops[i];
  const d = await api('GET', '/api/replay/' + r.token + '?at=' + at);
  r.at = at; r.i = i;
  $('r-slider').value = i;
  $('r-pos').textContent = t('replay', { at: i, n: r.stops.length - 1 });
  setView(Object.assign({ game: d.game, history: d.actions.slice(0, at), replay: r.token, ai_seat: null,
    can_undo: false, can_redo: false, ply: at }, d.state));
}

// ---------------------------------------------------------------- sound

// Placement and capture sounds, synthesised (no sound files), as the public Banqi page has
// them; off with the 🔊 button, remembered. `app.sounds` counts what was played (for tests).
const SOUND = { on: localStorage.getItem('zeroplay-sound') !== 'off', ctx: null };

function playSound(kind) {
  if (!SOUND.on) return;
  app.sounds.push(kind);
  try {
    SOUND.ctx = SOUND.ctx || new AudioContext();
    const ctx = SOUND.ctx, now = ctx.currentTime;
    const osc = ctx.createOscillator(), gain = ctx.createGain();
    // A placement is a short high tick; a capture a lower, longer knock.
    const [freq, len] = kind === 'capture' ? [180, 0.18] : [660, 0.07];
    osc.type = kind === 'capture' ? 'triangle' : 'sine';
    osc.frequency.setValueAtTime(freq, now);
    osc.frequency.exponentialRampToValueAtTime(freq * 0.6, now + len);
    gain.gain.setValueAtTime(0.25, now);
    gain.gain.exponentialRampToValueAtTime(0.001, now + len);
    osc.connect(gain).connect(ctx.destination);
    osc.start(now); osc.stop(now + len);
  } catch (e) { /* no audio here: silence */ }
}

// The sound of a step forward from `old` to `v` in the same game (a click, or a turn of a
// few): a capture where Banqi's pieces left the board, else a placement or move; nothing for
// an undo, a replay or a new game.
function soundFor(old, v) {
  if (!old || !v || old.game !== v.game || app.replay || !(v.ply > old.ply && v.ply <= old.ply + 4)) return;
  const count = (b) => (b && Array.isArray(b.squares) ? b.squares.filter((x) => x !== null && x !== undefined).length : 0);
  playSound(v.game === 'banqi' && count(v.board) < count(old.board) ? 'capture' : 'place');
}

// A speaker with waves, or crossed out when muted (drawn: emoji fonts are not everywhere).
// The step just played, moving on the board: a Banqi piece slides from its square to the
// new one and a flipped disc turns over; new TriGolden pieces fade in. Only for one step
// forward in the game on screen (not for undo, redo or a replay's jumps), and not at all for
// readers who ask for less motion.
function animateStep(old, v) {
  if (!old || old.game !== v.game || app.replay || !(v.ply > old.ply && v.ply <= old.ply + 2)) return;
  if (window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches) return;
  const svg = $('board'), run = (node, frames, ms) => { node.animate(frames, { duration: ms, easing: 'ease-out' }); app.animations++; };
  if (v.game === 'banqi') {
    const steps = (v.history || []).slice(old.ply, v.ply);
    for (const a of steps) {
      if (!/^[a-h][0-3][a-h][0-3]$/.test(a)) continue;
      const at = svg.querySelector(`g[data-name="${a.slice(2)}"]`);
      if (!at) continue;
      if (a.slice(0, 2) === a.slice(2)) {
        at.querySelectorAll('circle.piece, text').forEach((n) => run(n, [{ transform: 'scaleX(0)' }, { transform: 'scaleX(1)' }], 220));
      } else {
        const col = (n) => 'abcdefgh'.indexOf(n[0]), row = (n) => Number(n[1]);
        const dx = col(a) - col(a.slice(2)), dy = row(a.slice(2)) - row(a);
        at.querySelectorAll('circle.piece, text').forEach((n) => run(n, [{ transform: `translate(${dx}px, ${dy}px)` }, { transform: 'none' }], 260));
      }
    }
  } else if (v.game === 'trigolden') {
    const before = old.board.pieces.length;
    svg.querySelectorAll('polygon.piece').forEach((n) => {
      if (Number(n.dataset.piece) >= before) run(n, [{ opacity: 0 }, { opacity: 1 }], 260);
    });
  }
}

// Banqi's pieces of `colour` that are gone from the game: the starting sixteen less those on
// the board face up and those still face down (the pool's counts).
const BQ_START = { g: 1, a: 2, e: 2, r: 2, h: 2, c: 2, s: 5 };
function bqCaptured(b, colour) {
  const up = colour === 'red' ? (k) => k.toUpperCase() : (k) => k;
  const out = [];
  for (const [k, n] of Object.entries(BQ_START)) {
    const c = up(k);
    const left = b.squares.filter((x) => x === c).length + (b.pool[c] || 0);
    for (let i = left; i < n; i++) out.push(c);
  }
  return out;
}

// Each Banqi player's tray: the pieces they have taken, as small discs.
function bqTray(box, b, seat) {
  const mine = b.colours[seat === 'first' ? 0 : 1];
  if (!mine) return;
  const tray = document.createElement('span'); tray.className = 'tray'; tray.dataset.seat = seat;
  tray.setAttribute('aria-label', t('captured'));
  for (const c of bqCaptured(b, mine === 'red' ? 'black' : 'red')) {
    const d = document.createElement('span');
    d.className = 'cap ' + (c === c.toUpperCase() ? 'red' : 'black');
    d.textContent = lang === 'zh' ? BQ_CHARS[c] : c;
    d.dataset.piece = c;
    tray.appendChild(d);
  }
  box.appendChild(tray);
}

// The end of a game: who won and how, and the score taken apart, per player.
function drawResult(v) {
  const box = $('result');
  box.hidden = !v.outcome;
  if (!v.outcome) return;
  const b = v.board, o = v.outcome;
  let head = o.winner ? t('wins', { who: seatName(o.winner) }) : t('draw');
  if (o.decisive && v.game !== 'trigolden') head += t('decisive');
  const rows = [], cols = [];
  const seats = [['first', 0], ['second', 1]];
  let how = '';
  if (v.game === 'trigolden') {
    cols.push(t('r_structures'), t('r_placed'), t('r_left'), t('r_points'));
    const structures = (s) => b.scored_points.filter((p) => p.owner === s).length;
    const placed = (s) => b.pieces.filter((p) => p.owner === s).length;
    for (const [s, i] of seats) rows.push([structures(s), placed(s), b.stock[i].reduce((a, x) => a + x, 0), b.scores[i]]);
    how = o.decisive ? t('r_by_arbitration') : t('r_turns', { n: b.turns_played, m: b.total_turns });
  } else if (v.game === 'battlenumber') {
    cols.push(t('r_regions'), t('r_extraction'), t('r_placed'), t('r_total'));
    const sign = (n) => (n > 0 ? '+' : '') + n;
    for (const [, i] of seats) {
      const reg = i === 0 ? b.placement_score : -b.placement_score;
      const ext = b.extraction_totals[i] - b.extraction_totals[1 - i];
      rows.push([sign(reg), sign(ext), b.placed[i], sign(i === 0 ? b.score_first : -b.score_first)]);
    }
    how = b.phase === 'placement' ? t('r_no_placement') : t('r_extracted', { n: b.extracted });
  } else if (v.game === 'banqi') {
    cols.push(t('r_colour'), t('r_on_board'), t('r_taken'));
    for (const [, i] of seats) {
      const c = b.colours[i], foe = c === 'red' ? 'black' : 'red';
      const own = c ? 16 - bqCaptured(b, c).length : 0;
      rows.push([c ? t(c) : '–', own, c ? bqCaptured(b, foe).length : 0]);
    }
    if (!o.winner) how = t('r_bq_draw', { n: b.quiet });
    else {
      const loser = b.colours[o.winner === 'first' ? 1 : 0];
      how = loser && bqCaptured(b, loser).length === 16 ? t('r_all_taken') : t('r_no_move');
    }
  } else {
    // A game drawn by its own board module has no breakdown here: its status line says it.
    box.hidden = true;
    return;
  }
  box.innerHTML = '';
  const h = document.createElement('h2'); h.textContent = head; box.appendChild(h);
  const table = document.createElement('table');
  const tr0 = table.insertRow();
  for (const c of ['', ...cols]) { const th = document.createElement('th'); th.textContent = c; tr0.appendChild(th); }
  seats.forEach(([s], k) => {
    const tr = table.insertRow();
    tr.dataset.seat = s;
    if (o.winner === s) tr.className = 'winner';
    const th = document.createElement('th'); th.textContent = seatName(s); tr.appendChild(th);
    for (const x of rows[k]) tr.insertCell().textContent = String(x);
  });
  box.appendChild(table);
  if (how) { const p = document.createElement('p'); p.textContent = how; box.appendChild(p); }
  const again = document.createElement('button');
  again.type = 'button'; again.className = 'primary'; again.id = 'result-new'; again.textContent = t('new_game');
  again.addEventListener('click', () => newGame());
  box.appendChild(again);
}

function showSoundIcon() {
  const waves = SOUND.on ? '<path d="M15 9a4 4 0 0 1 0 6M17.5 6.5a7.5 7.5 0 0 1 0 11"/>' : '<path d="M15 9l6 6M21 9l-6 6"/>';
  $('sound').firstElementChild.innerHTML = '<svg class="icon" viewBox="0 0 24 24" fill="none" stroke="currentColor" ' +
    'stroke-width="2"><path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor"/>' + waves + '</svg>';
}

function toggleSound() {
  SOUND.on = !SOUND.on;
  localStorage.setItem('zeroplay-sound', SOUND.on ? 'on' : 'off');
  $('sound').setAttribute('aria-pressed', String(SOUND.on));
  showSoundIcon();
  if (SOUND.on) playSound('place');
}

// ---------------------------------------------------------------- drawing

function setView(v) {
  soundFor(app.view, v);
  const old = app.view;
  app.view = v;
  $('rules-link').href = '/rules?game=' + encodeURIComponent(v.game);
  // A previewed TriGolden placement lasts while it is still a legal click of this position.
  if (app.tg.preview && !(humanTurn(v) && v.legal.some((l) => l.action === app.tg.preview))) app.tg.preview = null;
  const board = $('board');
  // Room under the board for its toolbar, and on every side for a board turned round.
  const mod = boardModule(v.game);
  board.style.aspectRatio = mod ? mod.aspect : { banqi: '8.7 / 5.45', battlenumber: '7.9 / 8.45' }[v.game] || '';
  board.setAttribute('class', v.game);
  if (mod) drawModule(v, mod);
  else if (v.game === 'trigolden') drawTriGolden(v);
  else if (v.game === 'banqi') drawBanqi(v);
  else drawBattleNumber(v);
  drawHintMarks(v);
  animateStep(old, v);
  document.body.classList.toggle('rotated-view', faceToFace());
  drawSide(v);
  drawResult(v);
  drawTrackers(v);
  recordMatch(v);
  showHintText();
  updateButtons();
  // A TriGolden game decided by arbitration says why, with the count of legal turns.
  if (v.game === 'trigolden' && v.outcome && v.outcome.decisive && app.id && !app.replay && app.arbShown !== app.id) {
    app.arbShown = app.id;
    askArbitration(true);
  }
}

// Whether the view is turned round now: with the rotate button on (two people face to face,
// the second player across the table), on the second player's turn, as the designer asked.
function faceToFace() {
  const v = app.view;
  return app.facing && !!v && !v.outcome && v.to_move === 'second';
}

// Makes a board element reachable and usable from the keyboard (Tab, then Enter or Space).
function keyable(node, label, fn) {
  node.setAttribute('tabindex', '0');
  node.setAttribute('role', 'button');
  node.setAttribute('aria-label', label);
  node.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); fn(); } });
}

function seatName(s) {
  if (!s) return '';
  const v = app.view;
  const who = s === 'first' ? t('seat_first') : t('seat_second');
  if (v && aiSeats(v).length === 1) return who + ' (' + (aiSeats(v).includes(s) ? t('ai') : t('you')) + ')';
  if (v && aiSeats(v).length === 2) return who + ' (' + t('ai') + ')';
  return who;
}

// One tracker per player: active while it is their turn, with their score and what is left.
function drawTrackers(v) {
  const b = v.board;
  for (const [i, seat] of [[0, 'first'], [1, 'second']]) {
    const box = $('tracker-' + seat);
    const parts = [];
    let colour = (OWNER[seat] || [])[0];
    if (v.game === 'trigolden') {
      parts.push(t('pts', { n: b.scores[i] }));
      parts.push(t('left', { n: b.stock[i].reduce((a, x) => a + x, 0) }));
      if (v.to_move === seat) parts.push(t('turn_of', { n: b.turns_played + 1, m: b.total_turns }));
    } else if (v.game === 'battlenumber') {
      const sc = i === 0 ? b.score_first : -b.score_first;
      parts.push(t('score', { s: (sc > 0 ? '+' : '') + sc }).replace(/ *\(.*\)/, '').replace(/（.*）/, ''));
      parts.push(t('hand_left', { h: handWords(b, b.hands[i]) }));
    } else if (v.game === 'banqi') {
      const c = b.colours[i];
      colour = c === 'red' ? '#b3261e' : c === 'black' ? '#1d1d1d' : '#8a6a3c';
      parts.push(c ? t(c) : t('no_colours'));
      if (c) parts.push(t('captured_n', { n: bqCaptured(b, c === 'red' ? 'black' : 'red').length }));
    } else {
      const mod = boardModule(v.game);
      if (mod && mod.tracker) parts.push(...mod.tracker(v, i));
    }
    box.innerHTML = '';
    const sw = document.createElement('span'); sw.className = 'swatch'; sw.style.background = colour; box.appendChild(sw);
    const name = document.createElement('b'); name.textContent = seatName(seat); box.appendChild(name);
    box.appendChild(document.createTextNode(' · ' + parts.join(' · ')));
    if (v.game === 'banqi') bqTray(box, b, seat);
    box.classList.toggle('active', !v.outcome && v.to_move === seat);
    box.dataset.seat = seat;
  }
}

// A Battle Number hand with its kinds named: `S1×5 D2×4 …` (in Chinese, the kinds' names).
function handWords(b, hand) {
  return hand.map((n, j) => {
    const k = (b.kinds || [])[j];
    return (k ? (lang === 'zh' ? k.chinese : k.code) : '?') + '×' + n;
  }).join(' ');
}

// A click as people read it (move lists, hints).
function describeClick(v, a) {
  const mod = boardModule(v.game);
  if (mod) return mod.describe ? mod.describe(v, a) : a;
  if (v.game === 'battlenumber') {
    const m = /^([A-Z]\d)r(\d)$/.exec(a);
    if (!m) return a;
    const info = (v.board.kinds || []).find((k) => k.code === m[1]);
    return (lang === 'zh' && info ? info.chinese : m[1]) + (m[2] !== '0' ? ' ↻' + m[2] : '');
  }
  if (v.game === 'banqi') {
    if (a.startsWith('=')) return lang === 'zh' ? BQ_CHARS[a[1]] : a[1];
    if (a.slice(0, 2) === a.slice(2)) return a.slice(0, 2) + ' ' + t('flips');
    return a.slice(0, 2) + '–' + a.slice(2);
  }
  const open = /^open:([A-Z])('?)$/.exec(a);
  if (open) return open[1] + (open[2] ? '′' : '') + ' ' + t('centre');
  const pl = /^(\d+)\.\d:([A-Z])('?)\d$/.exec(a);
  if (pl) return pl[2] + (pl[3] ? '′' : '') + ' ' + t('on_piece', { n: pl[1] });
  return a;
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
  // The moves by turns, each with its player, in words (a replay lists its clicks).
  const h = $('history');
  h.innerHTML = '';
  const turns = v.turns || (v.history || []).map((a) => ({ seat: null, clicks: [a] }));
  for (const turn of turns) {
    const li = document.createElement('li');
    if (turn.seat) {
      const who = document.createElement('b');
      who.textContent = t('turn_label', { who: turn.seat === 'first' ? t('seat_first') : t('seat_second') }) + ' ';
      li.appendChild(who);
    }
    const words = [];
    for (const a of turn.clicks) {
      const d = describeClick(v, a);
      if (a.startsWith('=') && words.length) words[words.length - 1] += ' ' + d; else words.push(d);
    }
    li.appendChild(document.createTextNode(words.join(v.game === 'trigolden' ? ' + ' : ' ')));
    li.title = turn.clicks.join(' ');
    h.appendChild(li);
  }
  h.scrollTop = h.scrollHeight;
}

function updateButtons() {
  const v = app.view, playing = !!app.id && !app.replay;
  const watching = !!v && v.ai_seat === 'both';
  const aiTurn = app.busy || (aiToMove(v) && !(watching && app.paused));
  $('undo').disabled = !playing || aiTurn || !(v && v.can_undo);
  $('redo').disabled = !playing || aiTurn || !(v && v.can_redo);
  $('ai-move').disabled = !playing || aiTurn || !v || !!v.outcome;
  $('hint').disabled = !playing || aiTurn || !humanTurn(v);
  $('pause').hidden = !(playing && watching && v && !v.outcome);
  $('pause').textContent = app.paused ? t('resume') : t('pause');
  $('arbitrate').disabled = !(playing && v && v.game === 'trigolden' && v.turn_start && v.board.turns_played > 0 &&
    v.board.turns_played < v.board.total_turns && !app.busy);
  $('confirm-box').hidden = !(playing && app.tg.preview && v && v.game === 'trigolden');
  $('rotate').disabled = !v;
  // Hidden by visibility, not display: the box keeps its height either way.
  $('stop-ai').classList.toggle('off', !(playing && app.abort));
  $('svg').hidden = !playing;
  const both = $('ai-seat').value === 'both';
  $('ai-ms-second-box').hidden = !both; $('pace-box').hidden = !both;
  $('ai-ms-label').textContent = both ? t('first_ai_time') : t('ai_time');
  // While the AI plays, the page says so: the board and the palette take no clicks.
  document.body.classList.toggle('ai-turn', playing && aiTurn && !(v && v.outcome));
}

// The hint's clicks drawn on the board, numbered: squares, moves, placements or palette pieces.
function drawHintMarks(v) {
  const d = currentHint(v);
  if (!d) return;
  const svg = $('board');
  const layer = svg.querySelector('#tg-root') || svg.firstElementChild?.tagName === 'g' && svg.children.length === 1 && svg.firstElementChild || svg;
  const tag = (x, y, n, r) => {
    const g = el('g', { class: 'hint-tag' }, layer);
    el('circle', { cx: x, cy: y, r }, g);
    const tx = el('text', { x, y, 'font-size': r * 1.3, 'text-anchor': 'middle', 'dominant-baseline': 'central' }, g);
    tx.textContent = String(n);
  };
  const mod = boardModule(v.game);
  d.top.forEach((x, i) => {
    const a = x.action, n = i + 1;
    if (mod) {
      const at = svg.querySelector(`[data-action="${a}"]`);
      if (at) at.classList.add('hint-mark');
    } else if (v.game === 'battlenumber') {
      if (/^[a-g]\d$/.test(a)) {
        const c = COLS.indexOf(a[0]), r = Number(a[1]);
        el('rect', { x: c + 0.1, y: r + 0.1, width: 0.8, height: 0.8, class: 'hint-mark' }, layer);
        tag(c + 0.8, r + 0.2, n, 0.16);
      } else {
        const btn = document.querySelector(`#palette button[data-action="${a}"]`);
        if (btn) btn.dataset.hint = String(n);
      }
    } else if (v.game === 'banqi') {
      const xy = (sq) => ['abcdefgh'.indexOf(sq[0]) + 0.5, 3 - Number(sq[1]) + 0.5];
      const [x0, y0] = xy(a.slice(0, 2)), [x1, y1] = xy(a.slice(2));
      if (a.slice(0, 2) === a.slice(2)) el('circle', { cx: x0, cy: y0, r: 0.45, class: 'hint-mark' }, layer);
      else el('line', { x1: x0, y1: y0, x2: x1, y2: y1, class: 'hint-mark', 'stroke-width': 0.1 }, layer);
      tag((x0 + x1) / 2 + 0.25, (y0 + y1) / 2 - 0.25, n, 0.16);
    } else {
      const l = v.legal.find((q) => q.action === a);
      if (!l || !l.points) return;
      el('polygon', { points: tgPts(l.points), class: 'hint-mark' }, layer);
      const cx = l.points.reduce((s0, q) => s0 + q[0], 0) / l.points.length;
      const cy = -l.points.reduce((s0, q) => s0 + q[1], 0) / l.points.length;
      tag(cx, cy, n, 0.22);
    }
  });
}

// Board modules ------------------------------------------------------------

// A game whose board is not drawn here brings its own module (its pack's, served as
// /boards/<name>.js), which registers itself in window.zeroplayBoards under the game's name.
function boardModule(game) { return (window.zeroplayBoards || {})[game]; }

// The page's toolbox handed to a board module.
const KIT = {
  el, keyable, t, humanTurn,
  lang: () => lang,
  click: (a) => { if (!app.busy && humanTurn(app.view)) sendClick(a); },
};

function drawModule(v, mod) {
  const svg = $('board');
  svg.innerHTML = '';
  $('zoom').hidden = true;
  $('palette').innerHTML = '';
  $('scores').textContent = '';
  svg.setAttribute('viewBox', mod.viewBox);
  mod.draw(v, svg, KIT);
}

// The chosen game (and TriGolden's scoring) goes into the address, to be shared or bookmarked,
// and is remembered for the next visit.
function rememberChoice(game) {
  const q = new URLSearchParams({ game });
  if (game === 'trigolden') q.set('scoring', $('scoring').value);
  const want = '/?' + q;
  if (location.pathname + location.search !== want) {
    history[location.pathname === '/' ? 'replaceState' : 'pushState'](null, '', want);
  }
  try { localStorage.setItem('zeroplay-choice', q.toString()); } catch (e) { /* private mode */ }
}

// The game (and options) to open: the address's, else the last visit's, else the menu's own.
function restoreChoice() {
  let saved = null;
  try { saved = localStorage.getItem('zeroplay-choice'); } catch (e) { /* private mode */ }
  const here = new URLSearchParams(location.search);
  const q = here.has('game') ? here : new URLSearchParams(saved || '');
  const has = (sel, v) => !!v && [...$(sel).options].some((o) => o.value === v);
  if (has('game', q.get('game'))) $('game').value = q.get('game');
  if (has('scoring', q.get('scoring'))) $('scoring').value = q.get('scoring');
}

// Loads the board module of every game the server hosts that this page does not draw itself,
// and offers those games in the menu under their own names.
async function loadBoards() {
  let info;
  try { info = await api('GET', '/api/info'); } catch (e) { return; }
  app.boards = info.boards || {};
  const menu = $('game');
  for (const [name, b] of Object.entries(info.boards || {})) {
    if (!b.module || boardModule(name)) continue;
    await new Promise((ok) => {
      const s = document.createElement('script');
      s.src = b.module;
      s.onload = ok; s.onerror = ok;
      document.head.appendChild(s);
    });
    if (!boardModule(name) || menu.querySelector(`option[value="${name}"]`)) continue;
    const o = document.createElement('option');
    o.value = name; o.dataset.titleEn = b.title; o.dataset.titleZh = b.title_zh;
    o.textContent = lang === 'zh' ? b.title_zh : b.title + ' (' + b.title_zh + ')';
    menu.appendChild(o);
  }
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
  svg.setAttribute('viewBox', '-0.45 -0.35 7.9 8.45');
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
    if (legal.has(name)) {
      hit.addEventListener('click', () => sendClick(name));
      keyable(hit, name, () => sendClick(name));
    }
    if (lastSq.has(name)) el('rect', { x: x + 0.04, y: y + 0.04, width: 0.92, height: 0.92, class: 'lastmove' }, g);
  }
  // Scores and hands
  const s = b.score_first;
  $('scores').textContent = t('score', { s: (s > 0 ? '+' : '') + s }) + ' · ' + t(b.phase) +
    ' · ' + t('hand') + ': ' + b.hands.map((h, i) => (i ? t('seat_second') : t('seat_first')) + ' ' + handWords(b, h)).join(', ');
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
  svg.setAttribute('viewBox', '-0.35 -0.35 8.7 5.45');
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
    if (cls.includes('legal')) keyable(hit, name, () => bqClick(sq));
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

const TG = { box: null, drag: null, auto: true, centre: [0, 0], openZoom: 1, count: 0 };

function tgPts(points) { return points.map(([x, y]) => `${x},${-y}`).join(' '); }

// The centre of a polygon (its area's centroid), in the engine's frame.
function centroid(points) {
  let a = 0, cx = 0, cy = 0;
  points.forEach(([x0, y0], i) => {
    const [x1, y1] = points[(i + 1) % points.length], c = x0 * y1 - x1 * y0;
    a += c; cx += (x0 + x1) * c; cy += (y0 + y1) * c;
  });
  return a ? [cx / (3 * a), cy / (3 * a)] : points[0];
}

// Turns a board point (x, y in the engine's frame, y up) into the view: about `c` (the first
// piece's centre, the board's centre on screen), SVG y down, then the view's angle.
function tgRot([x, y], c = TG.centre) {
  const a = (app.angle * Math.PI) / 180, cs = Math.cos(a), sn = Math.sin(a);
  const X = x - c[0], Y = c[1] - y;
  return [X * cs - Y * sn, X * sn + Y * cs];
}

// The board's centre in the engine's frame: the first piece's centre once it is placed, and
// before that the centre of the piece chosen for the opening (the engine lays an opening piece
// from a corner; the designer asks that its centre sit at the board's centre).
function tgCentre(v) {
  const b = v.board;
  if (b.pieces.length) return centroid(b.pieces[0].points);
  const l = v.legal.find((q) => q.target === null && q.shape === app.tg.shape && q.mirror === app.tg.mirror && q.points);
  return l ? centroid(l.points) : [0, 0];
}

// Half the side of the square view of the opening board, before zoom: room for any piece
// turned any way about its centre, and for the toolbar along the bottom.
const TG_OPENING_HALF = 4;

function drawTriGolden(v) {
  const svg = $('board');
  svg.innerHTML = '';
  $('zoom').hidden = false;
  const b = v.board;
  const st = app.tg;
  // A chosen shape that can no longer be played (none left, or no legal place) gives way to
  // the first one that can.
  if (humanTurn(v) && v.legal.length && !v.legal.some((l) => l.shape === st.shape && l.mirror === st.mirror)) {
    st.shape = v.legal[0].shape; st.mirror = v.legal[0].mirror; st.target = null; st.preview = null;
  }
  TG.centre = tgCentre(v);
  // Back to an empty board (undo, a new game): the opening's view starts over unzoomed.
  if (!b.pieces.length && TG.count) { TG.openZoom = 1; TG.auto = true; }
  TG.count = b.pieces.length;
  // Bounds (in the turned view) of pieces and legal ghosts, for the first view and "fit".
  let x0 = -2, y0 = -2, x1 = 2, y1 = 2;
  const grow = (pts) => { for (const p of pts) { const [x, y] = tgRot(p); x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); } };
  b.pieces.forEach((p) => grow(p.points));
  v.legal.forEach((l) => l.points && grow(l.points));
  let fit;
  if (b.pieces.length <= 1) {
    // The opening and its answer: a square about the board's centre, so the first piece sits
    // in the middle of the board (the opening's square has a fixed size: it must not breathe
    // while the view turns).
    const h = b.pieces.length ? Math.max(TG_OPENING_HALF, -x0 + 1.6, x1 + 1.6, -y0 + 1.6, y1 + 1.6) : TG_OPENING_HALF;
    fit = [-h, -h, 2 * h, 2 * h];
  } else {
    // A margin all round, and more at the bottom for the toolbar.
    fit = [x0 - 1, y0 - 1, x1 - x0 + 2, y1 - y0 + 2.6];
  }
  TG.fit = fit;
  if (!b.pieces.length) {
    // The empty board zooms about its centre, and keeps its zoom while the view turns.
    const k = TG.openZoom;
    TG.box = fit.map((q) => q * k);
  } else if (!TG.box || TG.auto) {
    // The view follows the figure as it grows (and shrinks on undo) until the reader pans or
    // zooms; "fit" hands it back to the figure.
    TG.box = fit; TG.auto = true;
  }
  svg.setAttribute('viewBox', TG.box.join(' '));
  // Everything in one group, moved so the board's centre is the view's origin and turned by
  // the view's angle; labels turn back to stay upright.
  const [ox, oy] = TG.centre;
  const root = el('g', { id: 'tg-root', transform: `rotate(${app.angle}) translate(${-ox} ${oy})` }, svg);
  const upright = (x, y) => `rotate(${-app.angle} ${x} ${y})`;
  const last = lastTurn(v);
  const mine = humanTurn(v) ? v.legal.filter((l) => l.shape === st.shape && l.mirror === st.mirror) : [];
  const targets = new Set(mine.map((l) => l.target).filter((x) => x !== null));
  const chooseTarget = (n) => { st.target = n; st.preview = null; drawTriGolden(app.view); updateButtons(); };
  for (const p of b.pieces) {
    const [fill, ink] = OWNER[p.owner];
    let cls = 'piece';
    if (last.has(p.n)) cls += ' last';
    if (targets.has(p.n)) cls += ' target';
    const poly = el('polygon', { points: tgPts(p.points), fill, stroke: ink, 'stroke-width': 0.03, class: cls, 'data-piece': p.n }, root);
    if (targets.has(p.n)) {
      poly.addEventListener('click', () => chooseTarget(p.n));
      keyable(poly, '#' + p.n, () => chooseTarget(p.n));
    }
    const cx = p.points.reduce((a, q) => a + q[0], 0) / 4, cy = -p.points.reduce((a, q) => a + q[1], 0) / 4;
    const label = el('text', { x: cx, y: cy, 'font-size': 0.3, 'text-anchor': 'middle', 'dominant-baseline': 'middle', fill: ink, 'pointer-events': 'none', transform: upright(cx, cy) }, root);
    label.textContent = p.n + b.shapes[p.shape] + (p.mirror ? "'" : '');
  }
  // The last turn's pieces, outlined on top of everything (a target's highlight under it
  // does not hide it): the player always sees what was just played.
  for (const p of b.pieces) {
    if (last.has(p.n)) el('polygon', { points: tgPts(p.points), class: 'last-mark', 'data-piece': p.n }, root);
  }
  for (const sp of b.scored_points) {
    el('circle', { cx: sp.at[0], cy: -sp.at[1], r: 0.09, fill: OWNER[sp.owner || 'first'][1] }, root);
  }
  // Ghosts: the legal placements of the chosen piece on the chosen target (or the opening).
  // A click previews a ghost; the toolbar's Place (or Enter) places it, Cancel (or Escape)
  // goes back. Ghosts may overlap and hide one another, so each also gets a numbered tag,
  // drawn above every ghost, and a numbered button: every placement has a point to click.
  const shown = mine.filter((l) => l.target === null || l.target === st.target);
  const preview = (l) => { st.preview = l.action; drawTriGolden(app.view); updateButtons(); };
  if (st.preview) {
    const l = v.legal.find((q) => q.action === st.preview);
    const [fill] = OWNER[v.to_move];
    el('polygon', { points: tgPts(l.points), class: 'ghost preview', fill, 'data-action': l.action }, root)
      .addEventListener('click', () => confirmPreview());
  } else {
    shown.forEach((l, i) => {
      const g = el('polygon', { points: tgPts(l.points), class: 'ghost', 'data-action': l.action }, root);
      g.addEventListener('click', () => preview(l));
      if (shown.length === 1) keyable(g, t('placements') + ' 1', () => preview(l));
    });
    if (shown.length > 1) {
      shown.forEach((l, i) => {
        const cx = l.points.reduce((a, q) => a + q[0], 0) / l.points.length;
        const cy = -l.points.reduce((a, q) => a + q[1], 0) / l.points.length;
        const tag = el('g', { class: 'ghost-tag', 'data-action': l.action }, root);
        el('circle', { cx, cy, r: 0.2 }, tag);
        const tx = el('text', { x: cx, y: cy, 'font-size': 0.24, 'text-anchor': 'middle', 'dominant-baseline': 'central', transform: upright(cx, cy) }, tag);
        tx.textContent = String(i + 1);
        tag.addEventListener('click', () => preview(l));
        keyable(tag, t('placements') + ' ' + (i + 1), () => preview(l));
        tag.addEventListener('mouseenter', () => svg.querySelector(`polygon.ghost[data-action="${l.action}"]`)?.classList.add('hot'));
        tag.addEventListener('mouseleave', () => svg.querySelector(`polygon.ghost[data-action="${l.action}"]`)?.classList.remove('hot'));
      });
    }
  }
  // The points, what the dots mean, and at the end how the game was scored.
  let line = t('points', { a: b.scores[0], b: b.scores[1] });
  if (b.scored_points.length) line += ' · ' + t('dots', { n: b.scored_points.length });
  if (v.outcome) {
    const by = (o) => b.scored_points.filter((p) => p.owner === o).length;
    line = t('final_tg', { a: b.scores[0], b: b.scores[1], n: b.scored_points.length, fa: by('first'), fb: by('second'), turns: b.turns_played });
  }
  $('scores').textContent = line;
  // The opening: the view turns with a drag, so the first piece lies as its player wants.
  $('angle').hidden = !(humanTurn(v) && !b.pieces.length) && !TG.rotating;
  $('angle').textContent = t('angle', { a: ((app.angle % 360) + 360) % 360 });
  // Palette: each shape and its mirror, with the mover's stock.
  const pal = $('palette');
  pal.innerHTML = '';
  if (humanTurn(v)) {
    const seat = v.to_move === 'first' ? 0 : 1;
    const hint = document.createElement('p'); hint.textContent = b.pieces.length ? t('pick_shape') : t('drag_rotate'); hint.style.width = '100%'; pal.appendChild(hint);
    if (!v.turn_start) {
      const second = document.createElement('p'); second.className = 'second-piece';
      second.textContent = t('second_piece'); second.style.width = '100%'; pal.appendChild(second);
    }
    if (shown.length > 1 && !st.preview) {
      const row = document.createElement('div'); row.className = 'ghost-list';
      row.appendChild(document.createTextNode(t('placements') + ' '));
      shown.forEach((l, i) => {
        const btn = document.createElement('button');
        btn.type = 'button'; btn.dataset.action = l.action; btn.textContent = String(i + 1);
        btn.addEventListener('click', () => preview(l));
        row.appendChild(btn);
      });
      pal.appendChild(row);
    }
    b.shapes.forEach((name, i) => {
      for (const mirror of [false, true]) {
        const btn = document.createElement('button');
        btn.type = 'button';
        btn.dataset.shape = i; btn.dataset.mirror = mirror;
        // The icon is the piece as the opening lays it, turned with the view: the same on
        // every turn, and on the opening board exactly the piece the player is about to place.
        const outline = (b.outlines || [])[i]?.[mirror ? 1 : 0];
        if (outline) btn.appendChild(shapeIcon(outline, v.to_move));
        // On a phone the words "mirror" and "left" go (CSS): "A′ (9)".
        const words = (text, cls) => { const w = document.createElement('span'); w.textContent = text; if (cls) w.className = cls; btn.appendChild(w); };
        words(name + (mirror ? "'" : ''));
        if (mirror) words(' ' + t('mirror'), 'long');
        words(' (');
        words(t('stock') + ' ', 'long');
        words(b.stock[seat][i] + ')');
        const usable = v.legal.some((l) => l.shape === i && l.mirror === mirror);
        btn.disabled = !usable;
        if (st.shape === i && st.mirror === mirror) btn.classList.add('chosen');
        btn.addEventListener('click', () => { st.shape = i; st.mirror = mirror; st.target = null; st.preview = null; drawTriGolden(app.view); updateButtons(); });
        pal.appendChild(btn);
      }
    });
  }
}

function confirmPreview() {
  const a = app.tg.preview;
  if (!a) return;
  app.tg.preview = null; app.tg.target = null;
  sendClick(a);
}

function cancelPreview() {
  if (!app.tg.preview) return;
  app.tg.preview = null;
  if (app.view) setView(app.view);
}

// A small picture of a piece (its corners in the engine's frame), turned as the view is turned.
function shapeIcon(points, owner) {
  const turned = points.map((p) => tgRot(p, centroid(points)));
  const xs = turned.map((p) => p[0]), ys = turned.map((p) => p[1]);
  const x0 = Math.min(...xs), y0 = Math.min(...ys), w = Math.max(...xs) - x0, h = Math.max(...ys) - y0;
  const m = Math.max(w, h) * 0.1, size = Math.max(w, h) + 2 * m;
  const icon = document.createElementNS(SVGNS, 'svg');
  icon.setAttribute('viewBox', `${x0 - m - (size - w - 2 * m) / 2} ${y0 - m - (size - h - 2 * m) / 2} ${size} ${size}`);
  icon.setAttribute('class', 'shape-icon');
  const [fill, ink] = OWNER[owner] || ['#fff', '#333'];
  el('polygon', { points: turned.map((p) => p.join(',')).join(' '), fill, stroke: ink, 'stroke-width': size * 0.04 }, icon);
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
  if (app.view && app.view.game === 'trigolden' && !app.view.board.pieces.length) {
    // The empty board zooms about its centre, where the first piece goes (the designer's
    // request), and keeps its zoom while the view turns.
    TG.openZoom *= f;
    TG.box = TG.fit.map((q) => q * TG.openZoom);
    $('board').setAttribute('viewBox', TG.box.join(' '));
    return;
  }
  const [x, y, w, h] = TG.box;
  cx = cx ?? x + w / 2; cy = cy ?? y + h / 2;
  TG.box = [cx - (cx - x) * f, cy - (cy - y) * f, w * f, h * f];
  TG.auto = false;
  $('board').setAttribute('viewBox', TG.box.join(' '));
}

// Pointer input on the TriGolden board: one finger or the mouse pans (on the empty opening
// board it turns the first piece instead, about the board's centre, in whole degrees); two
// fingers pinch to zoom about their midpoint; the wheel zooms about the pointer (the empty
// board zooms about its centre).
function setupPanZoom() {
  const svg = $('board');
  const pointers = new Map();
  const tgOn = () => app.view && app.view.game === 'trigolden';
  const toBox = (e) => {
    const r = svg.getBoundingClientRect();
    const [x, y, w, h] = TG.box;
    // The box is drawn with "meet": one scale for both axes, centred; a board turned half round
    // (face to face) has its screen axes reversed.
    const k = Math.max(w / r.width, h / r.height) * (faceToFace() ? -1 : 1);
    return [x + w / 2 + (e.clientX - r.left - r.width / 2) * k, y + h / 2 + (e.clientY - r.top - r.height / 2) * k];
  };
  svg.addEventListener('wheel', (e) => {
    if (!tgOn()) return;
    e.preventDefault();
    const [cx, cy] = toBox(e);
    zoom(e.deltaY > 0 ? 1.15 : 1 / 1.15, cx, cy);
  }, { passive: false });
  svg.addEventListener('pointerdown', (e) => {
    if (!tgOn()) return;
    const v = app.view;
    const opening = !v.board.pieces.length && humanTurn(v);
    // A press on a ghost or a target is a click, except on the opening board, where a drag
    // that starts on the piece turns it like any other (a press without a move still clicks).
    const cls = e.target.classList;
    if (!opening && (cls.contains('ghost') || cls.contains('target') || e.target.closest('.ghost-tag'))) return;
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      TG.drag = null; TG.rotating = null;
      TG.pinch = { d: Math.hypot(a.x - b.x, a.y - b.y), box: TG.box.slice(), openZoom: TG.openZoom };
      return;
    }
    if (opening) {
      // The opening: a drag turns the first piece (the view) about the board's centre.
      const r = svg.getBoundingClientRect();
      const c = [r.left + r.width / 2, r.top + r.height / 2];
      TG.rotating = { c, a0: Math.atan2(e.clientY - c[1], e.clientX - c[0]), angle: app.angle, x: e.clientX, y: e.clientY, moved: false };
    } else TG.drag = { x: e.clientX, y: e.clientY, box: TG.box.slice() };
  });
  window.addEventListener('pointermove', (e) => {
    if (!pointers.has(e.pointerId)) return;
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    const r = svg.getBoundingClientRect();
    if (TG.pinch && pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      const f = TG.pinch.d / Math.max(1, Math.hypot(a.x - b.x, a.y - b.y));
      TG.box = TG.pinch.box.slice(); TG.openZoom = TG.pinch.openZoom;
      const [cx, cy] = toBox({ clientX: (a.x + b.x) / 2, clientY: (a.y + b.y) / 2 });
      zoom(f, cx, cy);
    } else if (TG.rotating) {
      const { c, a0, angle } = TG.rotating;
      // A few pixels of jitter in a tap are not a turn.
      if (!TG.rotating.moved && Math.hypot(e.clientX - TG.rotating.x, e.clientY - TG.rotating.y) < 4) return;
      TG.rotating.moved = true;
      $('angle').hidden = false;
      const a = Math.atan2(e.clientY - c[1], e.clientX - c[0]);
      app.angle = Math.round(angle + ((a - a0) * 180) / Math.PI);
      app.angle = ((app.angle % 360) + 360) % 360;
      TG.auto = true;
      drawTriGolden(app.view);
    } else if (TG.drag) {
      const [x, y, w, h] = TG.drag.box;
      const k = Math.max(w / r.width, h / r.height) * (faceToFace() ? -1 : 1);
      TG.box = [x - (e.clientX - TG.drag.x) * k, y - (e.clientY - TG.drag.y) * k, w, h];
      TG.auto = false;
      svg.setAttribute('viewBox', TG.box.join(' '));
    }
  });
  const up = (e) => {
    pointers.delete(e.pointerId);
    if (pointers.size < 2) TG.pinch = null;
    if (!pointers.size) {
      TG.drag = null;
      // A turn redraws once more (the angle's label goes); a tap leaves the board alone so
      // that its click reaches the piece under it.
      if (TG.rotating) { const moved = TG.rotating.moved; TG.rotating = null; if (moved && app.view) drawTriGolden(app.view); }
    }
  };
  window.addEventListener('pointerup', up);
  window.addEventListener('pointercancel', up);
  // The buttons zoom about the view's centre.
  $('zoom-in').addEventListener('click', () => zoom(1 / 1.25));
  $('zoom-out').addEventListener('click', () => zoom(1.25));
  $('zoom-fit').addEventListener('click', () => {
    if (!TG.fit) return;
    TG.openZoom = 1;
    TG.box = TG.fit.slice();
    TG.auto = true;
    $('board').setAttribute('viewBox', TG.box.join(' '));
  });
}

// The rotate button: from now on, on the second player's turn the board with its toolbar and
// the control panel turn half round for the player across the table (the toolbar then sits on
// top), and turn back on the first player's turn.
function rotateBoard() {
  app.facing = !app.facing;
  $('rotate').setAttribute('aria-pressed', String(app.facing));
  if (app.view) setView(app.view);
}

// The download button: the board exactly as it is drawn on this page (the view's turn and zoom,
// face to face included), serialised with its look inlined, and a caption of the game, the
// local time, whose turn or the result, and the score. Ghosts, hints and clickable squares
// are the page's, not the position's, and stay out. The name is the designer's:
// BraceTheTriGolden_yyyymmdd_hhiiss.svg (each game its own stem).
function boardSvg(when) {
  const v = app.view, src = $('board');
  const r = src.getBoundingClientRect();
  const W = Math.round(r.width), H = Math.round(r.height);
  const clone = src.cloneNode(true);
  const look = ['fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-dasharray', 'stroke-opacity', 'opacity',
    'font-family', 'font-size', 'font-weight', 'visibility'];
  const from = [...src.querySelectorAll('*')], to = [...clone.querySelectorAll('*')];
  from.forEach((n, i) => {
    const cs = getComputedStyle(n);
    to[i].setAttribute('style', look.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(';'));
  });
  clone.querySelectorAll('.ghost, .ghost-tag, .hint-tag, .hint-mark').forEach((n) => n.remove());
  clone.querySelectorAll('.sq.legal, .sq.pending').forEach((n) => { n.style.fill = 'transparent'; n.style.stroke = 'none'; });
  clone.querySelectorAll('[tabindex], [role]').forEach((n) => { n.removeAttribute('tabindex'); n.removeAttribute('role'); });
  const board = document.createElementNS(SVGNS, 'svg');
  for (const a of ['viewBox', 'preserveAspectRatio']) if (src.getAttribute(a)) board.setAttribute(a, src.getAttribute(a));
  board.setAttribute('width', W); board.setAttribute('height', H);
  while (clone.firstChild) board.appendChild(clone.firstChild);
  const title = (app.boards[v.game] || {})[lang === 'zh' ? 'title_zh' : 'title'] || v.game;
  // Caption lines wrap at spaces to the board's width (about 10 px a character at 16 px; a CJK
  // character counts twice).
  // A phone's narrow board gets a file at least 520 px wide, the board centred, so the caption
  // keeps its lines.
  const FW = Math.max(W, 520), bx = (FW - W) / 2;
  const room = FW / 10, width = (x) => [...x].reduce((a, c) => a + (c.charCodeAt(0) > 0x2e80 ? 2 : 1), 0);
  const lines = [];
  for (const text of [`${title} · ${when}`, $('status').textContent, $('scores').textContent]) {
    let line = '';
    for (const word of text.split(' ')) {
      if (line && width(line + ' ' + word) > room) { lines.push(line); line = word; } else line = line ? line + ' ' + word : word;
    }
    if (line) lines.push(line);
  }
  const band = 12 + 22 * lines.length;
  const out = document.createElementNS(SVGNS, 'svg');
  out.setAttribute('xmlns', SVGNS);
  out.setAttribute('width', FW); out.setAttribute('height', H + band);
  out.setAttribute('viewBox', `0 0 ${FW} ${H + band}`);
  el('rect', { width: FW, height: H + band, fill: '#ffffff' }, out);
  el('rect', { x: bx, width: W, height: H, rx: 8, fill: getComputedStyle(src).backgroundColor }, out);
  // Face to face the page shows the board turned half round: so does the file.
  const g = el('g', { transform: `translate(${bx} 0)` + (faceToFace() ? ` rotate(180 ${W / 2} ${H / 2})` : '') }, out);
  g.appendChild(board);
  lines.forEach((line, i) => {
    const tx = el('text', { x: 12, y: H + 26 + 22 * i, 'font-size': 16, 'font-family': 'system-ui, sans-serif', fill: '#222' }, out);
    tx.textContent = line;
  });
  return new XMLSerializer().serializeToString(out);
}

function downloadBoard(e) {
  e.preventDefault();
  if (!app.view) return;
  const d = new Date(), two = (n) => String(n).padStart(2, '0');
  const day = `${d.getFullYear()}${two(d.getMonth() + 1)}${two(d.getDate())}`;
  const time = `${two(d.getHours())}${two(d.getMinutes())}${two(d.getSeconds())}`;
  const off = -d.getTimezoneOffset();
  const zone = `UTC${off < 0 ? '-' : '+'}${Math.floor(Math.abs(off) / 60)}:${two(Math.abs(off) % 60)}`;
  const when = `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6)} ${two(d.getHours())}:${two(d.getMinutes())} (${zone})`;
  const stem = (app.boards[app.view.game] || {}).svg_name || app.view.game;
  const url = URL.createObjectURL(new Blob([boardSvg(when)], { type: 'image/svg+xml' }));
  const a = document.createElement('a');
  a.href = url; a.download = `${stem}_${day}_${time}.svg`;
  document.body.appendChild(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function setupKeys() {
  document.addEventListener('keydown', (e) => {
    if (e.target.closest && e.target.closest('input, select, textarea, dialog')) return;
    if (e.key === 'Escape') {
      if (app.tg.preview) cancelPreview();
      else if (app.bq.from !== null) { app.bq.from = null; if (app.view) setView(app.view); }
    } else if (e.key === 'Enter' && app.tg.preview && !(e.target.closest && e.target.closest('button, [role=button]'))) {
      e.preventDefault(); confirmPreview();
    } else if (app.replay && (e.key === 'ArrowLeft' || e.key === 'ArrowRight')) {
      replayStep(app.replay.i + (e.key === 'ArrowLeft' ? -1 : 1));
    }
  });
}

// ---------------------------------------------------------------- language and start-up

function applyLang() {
  document.documentElement.lang = lang === 'zh' ? 'zh-Hant' : 'en';
  $('lang').textContent = lang === 'zh' ? 'English' : '中文';
  for (const e of document.querySelectorAll('[data-i18n]')) e.textContent = t(e.dataset.i18n);
  for (const e of document.querySelectorAll('[data-i18n-title]')) { e.title = t(e.dataset.i18nTitle); e.setAttribute('aria-label', e.title); }
  for (const o of document.querySelectorAll('option[data-title-en]')) {
    o.textContent = lang === 'zh' ? o.dataset.titleZh : o.dataset.titleEn + ' (' + o.dataset.titleZh + ')';
  }
  // Difficulty by name, with the time per move it means.
  for (const o of document.querySelectorAll('#ai-ms option, #ai-ms-second option')) {
    o.textContent = t('level_' + o.value) + ' · ' + Number(o.value) / 1000 + (lang === 'zh' ? ' 秒' : ' s');
  }
  drawMatch();
  if (app.view) setView(app.view);
}

async function init() {
  $('lang').addEventListener('click', () => { lang = lang === 'zh' ? 'en' : 'zh'; localStorage.setItem('zeroplay-lang', lang); applyLang(); });
  $('sound').addEventListener('click', () => toggleSound());
  $('sound').setAttribute('aria-pressed', String(SOUND.on));
  showSoundIcon();
  const showScoring = () => { $('scoring-box').hidden = $('game').value !== 'trigolden'; };
  // Choosing another game (or TriGolden's scoring) starts it; the AI's seat and time apply
  // to the game on screen.
  $('game').addEventListener('change', () => { showScoring(); TG.box = null; app.match = null; drawMatch(); newGame(); });
  $('scoring').addEventListener('change', () => { TG.box = null; app.match = null; drawMatch(); newGame(); });
  $('ai-seat').addEventListener('change', () => applySettings({ ai_seat: $('ai-seat').value }));
  $('ai-ms').addEventListener('change', () => { app.aiMs = Number($('ai-ms').value); applySettings({ ai_ms: app.aiMs }); });
  $('stop-ai').addEventListener('click', () => stopAi());
  $('new').addEventListener('click', () => { TG.box = null; app.match = null; drawMatch(); newGame(); });
  $('undo').addEventListener('click', () => undoRedo('undo'));
  $('redo').addEventListener('click', () => undoRedo('redo'));
  $('ai-move').addEventListener('click', () => aiMove());
  $('hint').addEventListener('click', () => askHint());
  $('pause').addEventListener('click', () => { app.paused = !app.paused; updateButtons(); if (!app.paused) maybeAi(); });
  $('rotate').addEventListener('click', () => rotateBoard());
  $('svg').addEventListener('click', downloadBoard);
  $('arbitrate').addEventListener('click', () => askArbitration(false));
  $('confirm').addEventListener('click', () => confirmPreview());
  $('cancel').addEventListener('click', () => cancelPreview());
  $('new-match').addEventListener('click', () => startMatch());
  $('match-next').addEventListener('click', () => nextMatchGame());
  $('ai-ms-second').addEventListener('change', () => updateButtons());
  $('r-first').addEventListener('click', () => replayStep(0));
  $('r-prev').addEventListener('click', () => replayStep(app.replay.i - 1));
  $('r-next').addEventListener('click', () => replayStep(app.replay.i + 1));
  $('r-last').addEventListener('click', () => replayStep(app.replay.stops.length - 1));
  $('r-slider').addEventListener('input', (e) => replayStep(Number(e.target.value)));
  $('take-over').addEventListener('click', () => newGame(app.replay.token, app.replay.at));
  setupPanZoom();
  setupKeys();
  applyLang();
  const m = location.pathname.match(/^\/replay\/([A-Za-z0-9_-]+)$/);
  // A replay of a game drawn by a module needs the module first, and so does a remembered
  // game drawn by one.
  await loadBoards();
  if (!m) restoreChoice();
  showScoring();
  if (m) openReplay(m[1]); else newGame();
}

init();

// For the browser tests: whether the page waits on nothing (no request, no AI turn due).
window.zeroplay = {
  view: () => app.view && Object.assign({ id: app.id }, app.view),
  sounds: () => app.sounds.slice(),
  animations: () => app.animations,
  // Deletes the game on screen on the server (with its secret), as a page left for another.
  drop: () => (app.id ? api('DELETE', '/api/games/' + app.id).then(() => 0, () => 0) : 0),
  idle: () => !app.busy && !!app.view &&
    (!!app.replay || !aiToMove(app.view) || !!app.view.outcome || (app.paused && app.view.ai_seat === 'both')),
};
