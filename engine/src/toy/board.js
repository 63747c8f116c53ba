// The toy game's board for the play page (served as /boards/toy.js from the game's pack): a
// 3 × 3 grid, a click on an empty square claims it. A board module registers itself under its
// game's name with what web/app.js asks of it; `kit` is the page's toolbox (el, humanTurn,
// keyable, click, t, lang).
(window.zeroplayBoards = window.zeroplayBoards || {}).toy = {
  // Room under the grid for the board's toolbar.
  viewBox: '-0.1 -0.1 3.2 3.75',
  aspect: '3.2 / 3.75',

  draw(v, svg, kit) {
    const legal = new Set(kit.humanTurn(v) ? v.legal.map((l) => l.action) : []);
    const [lo, hi] = v.last_turn || [0, 0];
    const last = new Set((v.history || []).slice(lo, hi));
    for (let sq = 0; sq < 9; sq++) {
      const x = sq % 3, y = Math.floor(sq / 3), name = 'abc'[x] + (y + 1);
      const g = kit.el('g', { 'data-sq': sq, 'data-name': name }, svg);
      kit.el('rect', { x, y, width: 1, height: 1, fill: '#fbf8f1', stroke: '#888', 'stroke-width': 0.02 }, g);
      const s = v.board.squares[sq];
      if (s) {
        const ink = s === 'first' ? '#7a5300' : '#123e6e';
        const tx = kit.el('text', { x: x + 0.5, y: y + 0.72, 'font-size': 0.7, 'text-anchor': 'middle', fill: ink,
          'pointer-events': 'none' }, g);
        tx.textContent = s === 'first' ? 'X' : 'O';
      }
      if (last.has(name)) kit.el('rect', { x: x + 0.04, y: y + 0.04, width: 0.92, height: 0.92, class: 'lastmove' }, g);
      const ok = legal.has(name);
      const hit = kit.el('rect', { x, y, width: 1, height: 1, class: ok ? 'sq legal' : 'sq', 'data-action': ok ? name : '' }, g);
      if (ok) {
        hit.addEventListener('click', () => kit.click(name));
        kit.keyable(hit, name, () => kit.click(name));
      }
    }
  },

  // What each player's tracker says besides their name.
  tracker(v, i) {
    const n = v.board.squares.filter((s) => s === (i === 0 ? 'first' : 'second')).length;
    return [(i === 0 ? 'X' : 'O') + ' · ' + n];
  },

  // A click as people read it.
  describe(v, a) { return a; },
};
