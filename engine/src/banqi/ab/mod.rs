//! `banqi-ab`: an expectiminimax searcher for Banqi, the shape strong Banqi programs share.
//!
//! - **Negamax alpha-beta** over decision nodes. A flip is a chance node averaged over the
//!   face-down pool, with Ballard's *Star1* pruning: each reveal is searched in a window
//!   narrowed by what the reveals not yet searched can still add, bounded by ±[`WIN`], so a
//!   chance node stops as soon as its average is known to fall outside the parent's window.
//! - **Star2's probe** (`probe=2`, the default; `probe=0` turns it off): before a flip's reveals are searched in
//!   full, each meets its opponent's first reply only, in a null window at alpha; a flip whose
//!   every reveal is held to alpha fails low for one reply a reveal, and with `probe=2` the
//!   bounds found narrow the full pass's windows. It changes no value, only the nodes a depth
//!   takes (a third in the middle game at depth 6).
//! - **ChanceProbCut** (`cpc=M`, 40 by default; `cpc=0` turns it off): before a flip is searched in full, its
//!   reveals are searched `cpc_depth` plies shallower in the window widened by `M` on each
//!   side, and a shallow mean beyond it is taken as the flip's bound (forward pruning, as
//!   strong Chinese dark chess programs use at chance nodes; it cuts fail-highs too).
//! - **Iterative deepening** under a time, node or depth budget ([`AbSettings`]).
//! - A **transposition table** on the position's Zobrist key ([`Banqi::key`]: board, pool,
//!   colours and side). The repetition history and the quiet-ply count are not in the key:
//!   the usual graph-history compromise, which the game's own rules (applied at every node by
//!   `play_unchecked`) correct wherever the search actually reaches them.
//! - **Move ordering:** the hash move, captures by most valuable victim then least valuable
//!   attacker, two killer moves per ply, the history heuristic, flips last.
//! - **Quiescence** over captures, the cannon's jumps included.
//! - **Late-move reductions** for quiet moves (re-searched at full depth when they beat
//!   alpha): one extra ply (`lmr=1`), or `ln(depth)·ln(index)/2` plies (`lmr=2`).
//! - **Reverse futility pruning** (`rfp=N`, off by default): within 3 plies of the horizon a
//!   node whose static value beats beta by N per remaining ply is cut without a search.
//! - **Shallower reveals** (`reveal=N`, 0 by default): below the root a flip's reveals are
//!   searched N plies shallower, since each flip costs up to 14 subtrees.
//! - **Principal-variation search** and **aspiration windows** (`search=2`; not the default,
//!   measured no stronger here):
//!   every move after the first is tried in a null window and searched in full only when it
//!   beats the best; from depth 4 the root's window is ±[`ASPIRATION`] around the last
//!   iteration's score.
//! - **Null move** (`search=2`) at null-window nodes, only while face-down pieces remain: a
//!   side that could flip always has a spare move, so Banqi's zugzwang (a side with no legal
//!   move loses) cannot make passing look better than moving. Not twice in a row, never
//!   near a won or lost score.
//! - **Contempt** (40 with `search=2`; `contempt=N` in either search): after a search that
//!   found its side [`CONTEMPT_FROM`] or more ahead, the next one scores a draw (repetition,
//!   no progress) at −N for that side (a pawn is about 40), so a won position is played on
//!   rather than repeated. `search=1`, the default, is the search without these four (as in
//!   ebfbbd8).
//! - **Repetitions** (`rep=1`, the default): below the root, a position that has occurred before (in the
//!   game since the last flip or capture, or on the path) scores as a draw, before the
//!   transposition table is read, since its entries do not know the history.
//! - **Selective flips.** Every flip at the root; below it, the flips next to a face-up piece
//!   (most neighbours first, at most [`AbSettings::near_flips`]) and one flip with no face-up
//!   neighbour standing for all such squares, whose reveals differ only in what they later
//!   become next to, and those only where at least [`AbSettings::flip_depth`] plies remain
//!   (4 by default: a flip is a chance node of up to 14 reveals, and flips near the leaves
//!   cost most of the tree). Every node keeps at least one flip when it has no other move,
//!   so selection never makes a side look as if it had no move.
//!
//! The evaluation ([`Weights`]) values each piece by what it can still capture among the
//! enemy pieces that remain, face up or face down (the king cannot take a pawn, a pawn takes
//! only pawns and the king, a cannon takes anything by a jump), adds a bonus when nothing the
//! enemy has left can take it, counts face-down pieces at their colour's expected value, and
//! adds mobility.

use std::sync::Arc;
use std::time::{Duration, Instant};

mod agent;
mod chance;
mod eval;
mod netleaf;
mod order;

pub use agent::{AbAgent, NODES_PER_SIM, score_value};
use netleaf::NetLeaf;
use order::{capture_order, lmr_plies, touching};

pub use eval::{Weights, evaluate};

mod settings;
use crate::banqi::tablebase::{Tablebase, Wdl};
use crate::banqi::{Action, Banqi, EMPTY, FACE_DOWN, NEIGHBOURS, SQUARES};
use crate::eval::Evaluator;
use crate::game::{Game, Outcome, Seat};
pub use settings::{AB_KEYS, AbSettings, FAMILIES, SharedTables};

/// The score of a won position (less the plies to the win).
pub const WIN: i32 = 100_000;
/// Scores beyond this are wins or losses.
const WIN_BOUND: i32 = WIN - 1_000;
/// The evaluation stays within ± this.
pub(crate) const EVAL_MAX: i32 = 50_000;
const INF: i32 = WIN + 1;
/// Half-width of the root's aspiration window (about a pawn and a quarter).
const ASPIRATION: i32 = 50;
/// How far ahead (three pawns) a side must be for `contempt` to count against its draws.
const CONTEMPT_FROM: i32 = 120;
/// Extra plies a null move's search is shortened by.
const NULL_REDUCTION: i32 = 2;
/// Deepest ply the search reaches (quiescence included).
const MAX_PLY: usize = 128;

/// What one search found.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The action to play.
    pub best: Action,
    /// Its score for the side to move (±[`WIN`] less plies for a forced result).
    pub score: i32,
    /// The deepest iteration completed.
    pub depth: u8,
    /// Nodes searched (decision, chance and quiescence).
    pub nodes: u64,
}

#[derive(Copy, Clone, Debug, Default)]
struct Entry {
    key: u64,
    value: i32,
    best: u16,
    depth: i8,
    bound: u8,
}

const EXACT: u8 = 1;
const LOWER: u8 = 2;
const UPPER: u8 = 3;
const NO_MOVE: u16 = u16::MAX;

fn pack(a: Action) -> u16 {
    match a {
        Action::Flip(s) => u16::from(s),
        Action::Move { from, to } => 32 + u16::from(from) * 32 + u16::from(to),
        Action::Reveal(_) => NO_MOVE,
    }
}

/// The search's state: its table, ordering tables and budget. Keep one per player so the
/// table carries over from move to move.
pub struct Searcher {
    settings: AbSettings,
    weights: Weights,
    table: Vec<Entry>,
    killers: [[u16; 2]; MAX_PLY],
    history: Box<[[i32; 64]; 64]>,
    nodes: u64,
    node_limit: u64,
    deadline: Option<Instant>,
    /// Set by another thread to end the search early ([`Agent::set_stop`]).
    stop: Option<crate::agent::StopFlag>,
    stopped: bool,
    tablebase: Tablebase,
    /// The network that values leaves instead of [`evaluate`], if any.
    leaf: Option<NetLeaf>,
    /// The side to move at the root of the current search.
    root_side: Seat,
    /// A draw's score for the root side: `-contempt` while the last search found it well
    /// ahead (`search=2`), so it plays on for the win instead of repeating; else 0.
    draw_score: i32,
    /// The last search's score, for the root side of that search.
    last_score: i32,
}

impl Searcher {
    /// A searcher with these settings (the evaluation's weights among them).
    pub fn new(settings: AbSettings) -> Searcher {
        Searcher::with_leaf(settings, None)
    }

    /// A searcher whose leaves are valued by `net` (a value network; its value for the side
    /// to move, `v`, becomes the score `1000·atanh(v)`), or by [`evaluate`] without one.
    pub fn with_leaf(settings: AbSettings, net: Option<Arc<dyn Evaluator<Banqi>>>) -> Searcher {
        let entries = (settings.tt_mib.max(1) as usize * (1 << 20) / std::mem::size_of::<Entry>()).max(1);
        let entries = 1usize << (usize::BITS - 1 - entries.leading_zeros());
        Searcher {
            weights: settings.weights.clone(),
            table: vec![Entry::default(); entries],
            killers: [[NO_MOVE; 2]; MAX_PLY],
            history: Box::new([[0; 64]; 64]),
            nodes: 0,
            node_limit: u64::MAX,
            deadline: None,
            stop: None,
            stopped: false,
            tablebase: match &settings.store {
                Some(s) => Tablebase::with_store(s.0.clone()),
                None => Tablebase::new(),
            },
            leaf: net.map(|n| NetLeaf::new(n, settings.model.as_deref() == Some(crate::agent::SERVED_MODEL))),
            root_side: Seat::First,
            draw_score: 0,
            last_score: 0,
            settings,
        }
    }

    /// Replaces the budget of the next searches (`time` and `nodes` as in [`AbSettings`]).
    pub fn set_budget(&mut self, time: Option<Duration>, nodes: Option<u64>) {
        self.settings.time = time;
        self.settings.nodes = nodes;
    }

    /// The best action at `pos` within the settings' budget; `on_depth` is called after every
    /// completed iteration.
    ///
    /// # Panics
    /// If `pos` is finished or a chance node.
    pub fn search(&mut self, pos: &Banqi, mut on_depth: impl FnMut(&SearchResult, Duration)) -> SearchResult {
        assert!(
            pos.outcome.is_none() && pos.pending.is_none(),
            "banqi-ab searches a position where a player moves"
        );
        let start = Instant::now();
        if self.settings.tablebase > 0 {
            // A timed move spends at most half its time building tables; the rest are built
            // on later moves (they persist across moves and games).
            let build_by = self.settings.move_time().map(|t| start + t / 2);
            self.tablebase.prepare(pos, usize::from(self.settings.tablebase), build_by);
        }
        if let Some(leaf) = &mut self.leaf {
            leaf.refresh();
            leaf.root(pos);
        }
        self.nodes = 0;
        self.stopped = false;
        self.root_side = pos.side;
        self.draw_score =
            if self.last_score >= CONTEMPT_FROM { -i32::from(self.settings.contempt()) } else { 0 };
        self.node_limit = self.settings.nodes.unwrap_or(u64::MAX);
        self.deadline = self.settings.move_time().map(|t| start + t);
        self.killers = [[NO_MOVE; 2]; MAX_PLY];
        for row in self.history.iter_mut() {
            for h in row.iter_mut() {
                *h /= 8;
            }
        }
        let mut root: Vec<(Action, i32)> = Vec::new();
        let mut isolated = false;
        pos.for_each_action(|a| {
            // Every flip next to a face-up piece; of the others, one stands for all.
            if let Action::Flip(s) = a
                && touching(pos, s) == 0
            {
                if isolated {
                    return true;
                }
                isolated = true;
            }
            root.push((a, 0));
            true
        });
        let tt_move = self.probe(pos.key).map_or(NO_MOVE, |e| e.best);
        for m in &mut root {
            m.1 = self.order_score(pos, m.0, 0, tt_move);
        }
        root.sort_by_key(|m| std::cmp::Reverse(m.1));
        let mut result = SearchResult { best: root[0].0, score: 0, depth: 0, nodes: 0 };
        if root.len() == 1 {
            return result;
        }
        let v2 = self.settings.search >= 2;
        for depth in 1..=self.settings.depth.max(1) {
            // Aspiration: from depth 4 the root is searched in a window around the last
            // iteration's score, widened to the failing side's infinity when it fails.
            let (mut lo, mut hi) = if v2 && depth >= 4 && result.score.abs() < WIN_BOUND {
                (result.score - ASPIRATION, result.score + ASPIRATION)
            } else {
                (-INF, INF)
            };
            let mut fail_high: Option<(Action, i32)> = None;
            let best = loop {
                let b = self.root_iteration(pos, &mut root, depth, lo, hi);
                if self.stopped {
                    break b;
                }
                match b {
                    Some((a, v)) if v >= hi && hi < INF => {
                        fail_high = Some((a, v));
                        hi = INF;
                        // The move that failed high is searched first again.
                        root.sort_by_key(|m| std::cmp::Reverse(if m.0 == a { INF } else { m.1 }));
                    }
                    None if lo > -INF => lo = -INF,
                    _ => break b,
                }
            };
            if self.stopped {
                // A move of the unfinished iteration counts only if the previous best (searched
                // first) was finished too and was beaten, or if it failed high above the last
                // iteration's score.
                if let Some((a, v)) = best
                    && root[0].0 == result.best
                    && a != result.best
                    && v > root[0].1
                {
                    result.best = a;
                    result.score = v;
                } else if let (None, Some((a, v))) = (best, fail_high) {
                    result.best = a;
                    result.score = v;
                }
                break;
            }
            let (a, v) = best.expect("a completed iteration has a best move");
            result = SearchResult { best: a, score: v, depth, nodes: self.nodes };
            self.store(pos.key, depth.into(), v, EXACT, pack(a), 0);
            // Best first, then by this iteration's scores; unsearched ties keep their order.
            root.sort_by_key(|m| std::cmp::Reverse(if m.0 == a { INF } else { m.1 }));
            on_depth(&result, start.elapsed());
            if v.abs() >= WIN_BOUND {
                break;
            }
        }
        result.nodes = self.nodes;
        self.last_score = result.score;
        result
    }

    /// One iteration over the root moves in the window `(lo, hi)`: the best move and its
    /// score, `None` when none scored above `lo` (or the search stopped first). With
    /// `search=2` every move after the first is tried in a null window first (PVS) and
    /// searched in full only when it beats the best so far.
    fn root_iteration(
        &mut self,
        pos: &Banqi,
        root: &mut [(Action, i32)],
        depth: u8,
        lo: i32,
        hi: i32,
    ) -> Option<(Action, i32)> {
        let pvs = self.settings.search >= 2;
        let d = i32::from(depth) - 1;
        let mut alpha = lo;
        let mut best = None;
        for (i, m) in root.iter_mut().enumerate() {
            let mut v = if pvs && i > 0 {
                self.child_value(pos, m.0, d, alpha, alpha + 1, 0)
            } else {
                self.child_value(pos, m.0, d, alpha, hi, 0)
            };
            if pvs && i > 0 && v > alpha && v < hi && !self.stopped {
                v = self.child_value(pos, m.0, d, alpha, hi, 0);
            }
            if self.stopped {
                break;
            }
            m.1 = v;
            if v > alpha {
                alpha = v;
                best = Some((m.0, v));
                if v >= hi {
                    break;
                }
            }
        }
        best
    }

    /// The value for the mover at `pos` of playing `a`, searched to `depth` more plies.
    fn child_value(&mut self, pos: &Banqi, a: Action, depth: i32, alpha: i32, beta: i32, ply: usize) -> i32 {
        let mut child = pos.clone();
        child.play_unchecked(a);
        self.derived(pos, &child, ply + 1);
        match a {
            Action::Flip(_) => self.chance(&child, depth, alpha, beta, ply + 1),
            _ => -self.negamax(&child, depth, -beta, -alpha, ply + 1, true),
        }
    }

    /// The static value of `pos` for the side to move: the network's where one values the
    /// leaves, else the handcrafted evaluation.
    fn stand(&mut self, pos: &Banqi, ply: usize) -> i32 {
        match &mut self.leaf {
            Some(net) if net.live() => net.value(pos, ply),
            _ => evaluate(pos, &self.weights),
        }
    }

    /// Keeps the network's accumulators in step with the search: `child` (at `ply`) was
    /// made from `parent` by one action.
    #[inline]
    fn derived(&mut self, parent: &Banqi, child: &Banqi, ply: usize) {
        if let Some(leaf) = &mut self.leaf {
            leaf.derive(parent, child, ply);
        }
    }

    /// `pos` repeats a position of the game or the path, and `rep=1` scores it as a draw
    /// (a repetition needs 4 quiet plies).
    fn repeats(&self, pos: &Banqi) -> bool {
        self.settings.repetition && pos.quiet >= 4 && pos.repetitions() >= 2
    }

    fn tick(&mut self) -> bool {
        self.nodes += 1;
        // The clock is read every 1,024 nodes only: it costs more than a node.
        if self.nodes >= self.node_limit
            || (self.nodes & 1023 == 0
                && (self.deadline.is_some_and(|d| Instant::now() >= d)
                    || self.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))))
        {
            self.stopped = true;
        }
        self.stopped
    }

    fn terminal(&self, o: Outcome, side: Seat, ply: usize) -> i32 {
        match o.winner() {
            None if side == self.root_side => self.draw_score,
            None => -self.draw_score,
            Some(w) if w == side => WIN - ply as i32,
            Some(_) => -(WIN - ply as i32),
        }
    }

    /// `null_ok`: a null move may be tried here (not right after one).
    fn negamax(
        &mut self,
        pos: &Banqi,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        null_ok: bool,
    ) -> i32 {
        if let Some(o) = pos.outcome {
            return self.terminal(o, pos.side, ply);
        }
        // A position seen before is the draw it can be steered into (`rep=1`); checked before
        // the table, whose entries do not know the history. A repetition needs 4 quiet plies.
        if ply > 0 && self.repeats(pos) {
            return self.terminal(Outcome::on_points([0, 0]), pos.side, ply);
        }
        if let Some(v) = self.probe_tables(pos, ply) {
            return v;
        }
        if depth <= 0 || ply >= MAX_PLY - 1 {
            return self.quiesce(pos, alpha, beta, ply);
        }
        if self.tick() {
            return 0;
        }
        let mut tt_move = NO_MOVE;
        if let Some(e) = self.probe(pos.key) {
            tt_move = e.best;
            if i32::from(e.depth) >= depth {
                let v = from_tt(e.value, ply);
                let hit = match e.bound {
                    EXACT => true,
                    LOWER => v >= beta,
                    UPPER => v <= alpha,
                    _ => false,
                };
                if hit {
                    return v;
                }
            }
        }
        // Reverse futility (`rfp=`): near the horizon a static value that beats beta by the
        // margin for each ply left is taken as a cut without a search.
        // The static value is computed at most once here: both prunings below may read it.
        let mut stand = None;
        let rfp = i32::from(self.settings.rfp);
        if rfp > 0 && depth <= 3 && beta.abs() < WIN_BOUND {
            let v = *stand.get_or_insert_with(|| self.stand(pos, ply));
            if v - rfp * depth >= beta {
                return v;
            }
        }
        let v2 = self.settings.search >= 2;
        // Null move: while face-down pieces remain the mover always has a spare move (a flip),
        // so passing is a sound lower bound in all but rare zugzwangs. Null-window nodes only.
        if v2
            && self.settings.null_move
            && null_ok
            && depth >= 3
            && beta - alpha == 1
            && beta.abs() < WIN_BOUND
            && pos.pool.iter().any(|&n| n > 0)
            && *stand.get_or_insert_with(|| self.stand(pos, ply)) >= beta
        {
            let mut null = pos.clone();
            null.switch_side();
            null.irreversible();
            null.settle();
            self.derived(pos, &null, ply + 1);
            let v = -self.negamax(&null, depth - 1 - NULL_REDUCTION, -beta, -beta + 1, ply + 1, false);
            if self.stopped {
                return 0;
            }
            if v >= beta {
                return if v >= WIN_BOUND { beta } else { v };
            }
        }
        let mut moves = [(Action::Flip(0), 0i32); 96];
        let n = self.generate(pos, depth, ply, tt_move, &mut moves);
        let moves = &mut moves[..n];
        moves.sort_unstable_by_key(|m| std::cmp::Reverse(m.1));
        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_move = NO_MOVE;
        for (i, &(a, score)) in moves.iter().enumerate() {
            let quiet = score < 80_000 && matches!(a, Action::Move { .. });
            let late = quiet && i >= 3 && depth >= 3;
            // The extra plies a late quiet move loses (`lmr=`).
            let r = if !late {
                0
            } else if self.settings.lmr >= 2 {
                lmr_plies(depth, i)
            } else {
                1
            };
            let v = if v2 && i > 0 {
                // PVS: a null window first (reduced for late quiet moves), the full window
                // only for a move that beats the best so far.
                let mut v = self.child_value(pos, a, depth - 1 - r, alpha, alpha + 1, ply);
                if late && v > alpha && !self.stopped {
                    v = self.child_value(pos, a, depth - 1, alpha, alpha + 1, ply);
                }
                if v > alpha && v < beta && !self.stopped {
                    v = self.child_value(pos, a, depth - 1, alpha, beta, ply);
                }
                v
            } else if late {
                let reduced = self.child_value(pos, a, depth - 1 - r, alpha, alpha + 1, ply);
                if reduced > alpha && !self.stopped {
                    self.child_value(pos, a, depth - 1, alpha, beta, ply)
                } else {
                    reduced
                }
            } else {
                self.child_value(pos, a, depth - 1, alpha, beta, ply)
            };
            if self.stopped {
                return 0;
            }
            if v > best {
                best = v;
                best_move = pack(a);
                if v > alpha {
                    alpha = v;
                    if v >= beta {
                        if quiet {
                            let k = &mut self.killers[ply];
                            if k[0] != best_move {
                                k[1] = k[0];
                                k[0] = best_move;
                            }
                            if let Action::Move { from, to } = a {
                                let h = &mut self.history[from as usize][to as usize];
                                *h = (*h + depth * depth).min(60_000);
                            }
                        }
                        break;
                    }
                }
            }
        }
        let bound = if best >= beta {
            LOWER
        } else if best <= alpha0 {
            UPPER
        } else {
            EXACT
        };
        self.store(pos.key, depth, best, bound, best_move, ply);
        best
    }

    fn quiesce(&mut self, pos: &Banqi, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        if let Some(o) = pos.outcome {
            return self.terminal(o, pos.side, ply);
        }
        if let Some(v) = self.probe_tables(pos, ply) {
            return v;
        }
        if self.tick() {
            return 0;
        }
        let stand = self.stand(pos, ply);
        if stand >= beta || ply >= MAX_PLY - 1 {
            return stand;
        }
        alpha = alpha.max(stand);
        let mut caps = [(Action::Flip(0), 0i32); 64];
        let mut n = 0;
        pos.for_each_action(|a| {
            if let Action::Move { from, to } = a
                && pos.board[to as usize] != EMPTY
            {
                caps[n] = (a, capture_order(pos, from, to));
                n += 1;
            }
            true
        });
        let caps = &mut caps[..n];
        caps.sort_unstable_by_key(|m| std::cmp::Reverse(m.1));
        let mut best = stand;
        for &(a, _) in caps.iter() {
            let mut child = pos.clone();
            child.play_unchecked(a);
            self.derived(pos, &child, ply + 1);
            let v = -self.quiesce(&child, -beta, -alpha, ply + 1);
            if self.stopped {
                return 0;
            }
            if v > best {
                best = v;
                if v > alpha {
                    alpha = v;
                    if v >= beta {
                        break;
                    }
                }
            }
        }
        best
    }

    /// The endgame tables' score of `pos`, where they hold it.
    fn probe_tables(&self, pos: &Banqi, ply: usize) -> Option<i32> {
        if self.tablebase.tables() == 0 || pos.pool.iter().any(|&n| n > 0) {
            return None;
        }
        let won = |d: u16| WIN - ply as i32 - i32::from(d);
        Some(match self.tablebase.probe(pos)? {
            Wdl::Win(d) => won(d),
            Wdl::Loss(d) => -won(d),
            Wdl::Draw => 0,
        })
    }

    fn probe(&self, key: u64) -> Option<Entry> {
        let e = self.table[key as usize & (self.table.len() - 1)];
        (e.bound != 0 && e.key == key).then_some(e)
    }

    fn store(&mut self, key: u64, depth: i32, value: i32, bound: u8, best: u16, ply: usize) {
        let mask = self.table.len() - 1;
        let slot = &mut self.table[key as usize & mask];
        if slot.key != key || i32::from(slot.depth) <= depth {
            *slot = Entry { key, value: to_tt(value, ply), best, depth: depth.clamp(0, 127) as i8, bound };
        }
    }
}

/// Win scores count plies from the root; the table keeps them from the node.
fn to_tt(v: i32, ply: usize) -> i32 {
    if v >= WIN_BOUND {
        v + ply as i32
    } else if v <= -WIN_BOUND {
        v - ply as i32
    } else {
        v
    }
}

fn from_tt(v: i32, ply: usize) -> i32 {
    if v >= WIN_BOUND {
        v - ply as i32
    } else if v <= -WIN_BOUND {
        v + ply as i32
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use rand::RngExt;

    use super::eval::{PREY_START, piece_values, preys_on};
    use super::*;
    use crate::Rng;
    use crate::agent::Agent;
    use crate::banqi::Colour;
    use crate::banqi::Kind;
    use crate::banqi::Piece;
    use crate::eval::Leaf;
    use crate::leaf::LeafSettings;
    use crate::shallow::ShallowNet;
    use crate::spec::AgentSpec;

    fn pos(text: &str) -> Banqi {
        Banqi::from_position_string(text).unwrap()
    }

    fn best(text: &str, nodes: u64) -> SearchResult {
        let settings = AbSettings { nodes: Some(nodes), ..AbSettings::default() };
        Searcher::new(settings).search(&pos(text), |_, _| {})
    }

    #[test]
    fn prey_table_follows_the_capture_rules() {
        // King: everything but pawns (11 pieces); pawn: pawns and the king (6); cannon: all 16.
        assert_eq!(PREY_START, [11, 15, 13, 11, 9, 16, 6]);
        for a in Kind::ALL {
            for t in Kind::ALL {
                if a != Kind::Cannon {
                    assert_eq!(preys_on(a as usize, t as usize), a.takes_adjacent(t), "{a:?} takes {t:?}");
                }
            }
        }
    }

    #[test]
    fn evaluation_is_antisymmetric_in_the_side_to_move() {
        let r = pos("8/1X6/Ga1s4/8 r A1 0 1");
        let b = pos("8/1X6/Ga1s4/8 b A1 0 1");
        let w = Weights::default();
        assert_eq!(evaluate(&r, &w), -evaluate(&b, &w));
        assert_eq!(evaluate(&Banqi::start(), &w), 0);
    }

    #[test]
    fn a_king_is_worth_less_while_enemy_pawns_remain() {
        let w = Weights::default();
        // Red king alone against a black advisor, with and without black pawns alive.
        let with_pawns = piece_values(&pos("8/8/G6a/4s3 r - 0 1"), &w);
        let without = piece_values(&pos("8/8/G6a/8 r - 0 1"), &w);
        assert!(without[0] > with_pawns[0], "{} vs {}", without[0], with_pawns[0]);
    }

    #[test]
    fn takes_the_hanging_king() {
        // The red king next to the black king takes it (equal ranks take each other).
        let r = best("8/8/Gg1a4/8 r - 0 1", 20_000);
        assert_eq!(r.best, Action::Move { from: 8, to: 9 }, "{r:?}");
    }

    #[test]
    fn moves_a_threatened_piece_away() {
        // The black king on b1 threatens the red advisor on a1, which cannot take it back:
        // the advisor flees rather than the horse moving. (The tables know that neither
        // saves the game, so this tests the search and evaluation without them.)
        let settings = AbSettings { nodes: Some(50_000), tablebase: 0, ..AbSettings::default() };
        let r = Searcher::new(settings).search(&pos("8/8/Ag6/7H r - 0 1"), |_, _| {});
        match r.best {
            Action::Move { from: 8, to } => assert!(to == 0 || to == 16, "the advisor must flee: {r:?}"),
            other => panic!("expected the advisor to flee, got {other:?}"),
        }
    }

    #[test]
    fn finds_a_win_in_one() {
        // The red chariot takes black's last piece.
        let r = best("8/8/8/Rh6 r - 0 1", 20_000);
        assert_eq!(r.best, Action::Move { from: 0, to: 1 });
        assert_eq!(r.score, WIN - 1);
    }

    #[test]
    fn the_tables_score_a_hopeless_chase_as_a_draw() {
        // Chariot against horse, two squares apart, the chariot to move: the horse keeps the
        // parity that saves it. The evaluation alone sees a chariot up.
        let text = "8/8/8/R1h5 r - 0 1";
        let with = best(text, 20_000);
        assert_eq!(with.score, 0, "{with:?}");
        let settings = AbSettings { nodes: Some(20_000), tablebase: 0, ..AbSettings::default() };
        let without = Searcher::new(settings).search(&pos(text), |_, _| {});
        assert!(without.score > 0, "{without:?}");
    }

    /// Random positions with colours known and a player to move.
    fn midgames(seed: u64, count: usize) -> Vec<Banqi> {
        let mut rng = crate::rng_from_seed(seed);
        let mut out = Vec::new();
        let mut actions = Vec::new();
        while out.len() < count {
            let mut g = Banqi::start();
            let plies = rng.random_range(6..40);
            for _ in 0..plies {
                if g.outcome.is_some() {
                    break;
                }
                if g.pending.is_some() {
                    let mut o = Vec::new();
                    g.chance_outcomes(&mut o);
                    g.play_unchecked(o[rng.random_range(0..o.len())].0);
                } else {
                    g.legal_actions(&mut actions);
                    g.play_unchecked(actions[rng.random_range(0..actions.len())]);
                }
            }
            if g.outcome.is_none() && g.pending.is_none() && g.first_colour.is_some() {
                out.push(g);
            }
        }
        out
    }

    #[test]
    fn star1_windows_agree_with_the_full_window() {
        // Alpha-beta's contract at a chance node: inside the window the exact value, outside
        // it a bound on the right side. Depth 2 has no reductions, so a fresh searcher per
        // call sees the same tree whatever the window.
        // Star1 alone: a probe (`probe=`) fills the table, on which the moves searched below
        // `flip_depth` depend (star2_probes_keep_the_bounds_and_save_nodes covers it).
        let fresh = || Searcher::new(AbSettings { tt_mib: 1, probe: 0, cpc: 0, ..AbSettings::default() });
        let mut flips = 0;
        for g in midgames(17, 6) {
            let mut actions = Vec::new();
            g.legal_actions(&mut actions);
            for &a in actions.iter().filter(|a| matches!(a, Action::Flip(_))).take(3) {
                flips += 1;
                let full = fresh().child_value(&g, a, 2, -INF, INF, 0);
                let inside = fresh().child_value(&g, a, 2, full - 40, full + 40, 0);
                assert_eq!(inside, full, "{a:?} at {g}");
                let low = fresh().child_value(&g, a, 2, full + 1, full + 200, 0);
                assert!(low <= full + 1, "fail low: {low} for {full}, {a:?} at {g}");
                let high = fresh().child_value(&g, a, 2, full - 200, full - 1, 0);
                assert!(high >= full - 1, "fail high: {high} for {full}, {a:?} at {g}");
            }
        }
        assert!(flips >= 6, "only {flips} flips tried");
    }

    #[test]
    fn star2_probes_keep_the_bounds_and_save_nodes() {
        // The probe changes no value: every window keeps alpha-beta's contract against the
        // search without it (depth 2: no reductions), and a window far above the flip's value,
        // as for a flip tried after a good capture, costs fewer nodes with it. `flip_depth=0`
        // keeps the move set independent of the table (below `flip_depth`, a side with only
        // flips searches the table's flip alone when it has one, and a probe fills the table).
        let fresh = |probe| {
            Searcher::new(AbSettings { tt_mib: 1, probe, flip_depth: 0, cpc: 0, ..AbSettings::default() })
        };
        let (mut flips, mut nodes) = (0, [0u64; 3]);
        for g in midgames(23, 8) {
            let mut actions = Vec::new();
            g.legal_actions(&mut actions);
            for &a in actions.iter().filter(|a| matches!(a, Action::Flip(_))).take(3) {
                flips += 1;
                let full = fresh(0).child_value(&g, a, 2, -INF, INF, 0);
                assert!(full.abs() < WIN_BOUND);
                for probe in 0..3u8 {
                    let at = |lo: i32, hi: i32| fresh(probe).child_value(&g, a, 2, lo, hi, 0);
                    assert_eq!(at(-INF, INF), full, "probe={probe}, {a:?} at {g}");
                    assert_eq!(at(full - 40, full + 40), full, "probe={probe}, {a:?} at {g}");
                    let high = at(full - 200, full - 1);
                    assert!(high >= full - 1, "probe={probe}, fail high: {high} for {full}, {a:?} at {g}");
                    let low = at(full + 100, full + 101);
                    assert!(low <= full + 100, "probe={probe}, fail low: {low} for {full}, {a:?} at {g}");
                    let mut s = fresh(probe);
                    assert!(s.child_value(&g, a, 2, full + 2_000, full + 2_001, 0) <= full + 2_000);
                    nodes[probe as usize] += s.nodes;
                }
            }
        }
        assert!(flips >= 12, "only {flips} flips tried");
        assert!(nodes[1] < nodes[0] && nodes[2] < nodes[0], "nodes by probe=0, 1, 2: {nodes:?}");
    }

    #[test]
    fn chance_probcut_cuts_far_windows_on_both_sides_for_fewer_nodes() {
        // ChanceProbCut (`cpc=`) can change a value, so what is checked is what it is for: a
        // window 50 pawns away from a flip's value, above or below, is cut on the right side,
        // in fewer nodes than without it (the probe alone cannot cut a fail-high).
        let fresh = |cpc| Searcher::new(AbSettings { tt_mib: 1, cpc, ..AbSettings::default() });
        let (mut flips, mut nodes) = (0, [[0u64; 2]; 2]);
        for g in midgames(29, 4) {
            let mut actions = Vec::new();
            g.legal_actions(&mut actions);
            for &a in actions.iter().filter(|a| matches!(a, Action::Flip(_))).take(3) {
                flips += 1;
                let full = fresh(0).child_value(&g, a, 3, -INF, INF, 0);
                assert!(full.abs() < WIN_BOUND - 3_000, "{full}: {a:?} at {g}");
                for (cpc, n) in [0u16, 40].into_iter().zip(&mut nodes) {
                    let mut s = fresh(cpc);
                    let low = s.child_value(&g, a, 3, full + 2_000, full + 2_001, 0);
                    assert!(low <= full + 2_000, "cpc={cpc}: fail low {low} for {full}, {a:?} at {g}");
                    n[0] += s.nodes;
                    let mut s = fresh(cpc);
                    let high = s.child_value(&g, a, 3, full - 2_001, full - 2_000, 0);
                    assert!(high >= full - 2_000, "cpc={cpc}: fail high {high} for {full}, {a:?} at {g}");
                    n[1] += s.nodes;
                }
            }
        }
        assert!(flips >= 6, "only {flips} flips tried");
        let [off, on] = nodes;
        assert!(on[0] < off[0] && on[1] < off[1], "nodes (low, high) without and with cpc: {off:?} {on:?}");
    }

    /// A stand-in "network" whose value is the handcrafted evaluation through
    /// [`score_value`], so a search with it as the leaf must agree with the plain search.
    /// With `.1` it answers lone positions through [`Evaluator::mover_value`] too.
    struct HandAsNet(Weights, bool);

    impl Evaluator<Banqi> for HandAsNet {
        fn evaluate(&self, leaves: &mut [Leaf<Banqi>], _: &mut Rng) {
            for l in leaves {
                l.value = score_value(evaluate(&l.state, &self.0)) * l.state.side.sign();
                l.priors = vec![1.0 / l.actions.len().max(1) as f32; l.actions.len()];
            }
        }
        fn name(&self) -> String {
            "hand-as-net".into()
        }
        fn mover_value(&self, state: &Banqi) -> Option<f32> {
            self.1.then(|| score_value(evaluate(state, &self.0)))
        }
    }

    /// A random one-layer network handed to the searcher to run itself, or (with `.1`
    /// false) only through the lone-position path, summed from scratch.
    struct Shallow(Arc<ShallowNet>, bool);

    impl Evaluator<Banqi> for Shallow {
        fn evaluate(&self, _: &mut [Leaf<Banqi>], _: &mut Rng) {
            unreachable!("the searcher asks for lone values")
        }
        fn name(&self) -> String {
            "shallow".into()
        }
        fn mover_value(&self, state: &Banqi) -> Option<f32> {
            let mut x = vec![0.0; <Banqi as crate::Features>::FEATURE_LEN];
            crate::Features::encode_features(state, &mut x);
            Some(self.0.value_dense(&x))
        }
        fn shallow(&self) -> Option<Arc<ShallowNet>> {
            self.1.then(|| self.0.clone())
        }
    }

    #[test]
    fn with_rep_a_position_seen_before_is_a_draw_below_the_root() {
        // Red is a chariot up; both sides shuffle back, so the start is on the board again.
        let mut pos = Banqi::from_position_string("R7/8/8/3h3R r - 0 1").unwrap();
        for a in ["a3a2", "d0c0", "a2a3", "c0d0"] {
            pos.play(Action::parse(a).unwrap()).unwrap();
        }
        assert_eq!((pos.repetitions(), pos.outcome), (2, None));
        let value = |repetition: bool| {
            let settings = AbSettings { tablebase: 0, repetition, ..AbSettings::default() };
            let mut s = Searcher::new(settings);
            s.root_side = pos.side;
            s.negamax(&pos, 2, -INF, INF, 1, false)
        };
        assert!(value(false) > 100, "without rep the position is valued as red's: {}", value(false));
        assert_eq!(value(true), 0, "with rep it is the draw the shuffle leads to");
        // The root itself is searched as usual (a repetition is only avoided, never claimed).
        let mut s = Searcher::new(AbSettings {
            tablebase: 0,
            repetition: true,
            depth: 2,
            nodes: Some(1 << 40),
            ..AbSettings::default()
        });
        assert!(s.search(&pos, |_, _| {}).score > 100);
    }

    #[test]
    fn logarithmic_reductions_grow_with_depth_and_index_and_leave_a_ply() {
        assert_eq!(lmr_plies(3, 3), 1);
        assert_eq!(lmr_plies(10, 20), 3);
        assert_eq!(lmr_plies(4, 60), 2, "capped at depth - 2");
        assert!(lmr_plies(12, 30) > lmr_plies(6, 30) && lmr_plies(12, 30) > lmr_plies(12, 5));
    }

    #[test]
    fn reverse_futility_cuts_a_node_far_above_beta_without_a_search() {
        // Red is a chariot and a horse up: its static value clears a low beta by far.
        let pos = pos("R7/8/8/h4H1R r - 0 1");
        let run = |rfp: u16| {
            let mut s = Searcher::new(AbSettings { tablebase: 0, rfp, ..AbSettings::default() });
            let stand = evaluate(&pos, &s.weights);
            let v = s.negamax(&pos, 2, stand - 500, stand - 499, 1, false);
            (v, s.nodes, stand)
        };
        let (v, nodes, stand) = run(100);
        assert_eq!((v, nodes), (stand, 1), "cut at the node itself");
        let (v, nodes, _) = run(0);
        assert!(v >= stand - 499 && nodes > 1, "searched without rfp: {v} in {nodes} nodes");
        // Not where the margin is not cleared.
        let (_, nodes, _) = run(300);
        assert!(nodes > 1);
    }

    #[test]
    fn the_new_pruning_keys_keep_the_tactics() {
        let settings =
            AbSettings { nodes: Some(50_000), rfp: 60, lmr: 2, reveal: 1, ..AbSettings::default() };
        let r = Searcher::new(settings.clone()).search(&pos("8/8/Gg1a4/8 r - 0 1"), |_, _| {});
        assert_eq!(r.best, Action::Move { from: 8, to: 9 }, "{r:?}");
        let r = Searcher::new(settings).search(&pos("8/8/8/Rh6 r - 0 1"), |_, _| {});
        assert_eq!((r.best, r.score), (Action::Move { from: 0, to: 1 }, WIN - 1));
    }

    #[test]
    fn contempt_is_its_own_key_in_either_search() {
        let draw_score = |keys: &str| {
            let spec: AgentSpec = format!("banqi-ab:nodes=2000{keys}").parse().unwrap();
            let AgentSpec::Game(g) = &spec else { unreachable!("{spec}") };
            let settings = g.settings::<AbSettings>().unwrap().clone();
            let mut s = Searcher::new(settings);
            s.last_score = 500;
            s.search(&Banqi::start(), |_, _| {});
            s.draw_score
        };
        assert_eq!(draw_score(""), 0, "search=1 has none unless asked");
        assert_eq!(draw_score(",search=2"), -40, "search=2 keeps its 40");
        assert_eq!(draw_score(",contempt=40"), -40, "search=1 with contempt=40");
        assert_eq!(draw_score(",search=2,contempt=0"), 0);
    }

    #[test]
    fn the_searchers_own_incremental_network_gives_the_networks_values() {
        let net = Arc::new(crate::shallow::random_net(<Banqi as crate::Features>::FEATURE_LEN, 16, 5));
        net.validate().unwrap();
        let settings =
            AbSettings { depth: 3, nodes: Some(u64::MAX / 2), tablebase: 0, ..AbSettings::default() };
        let own: Arc<dyn Evaluator<Banqi>> = Arc::new(Shallow(net.clone(), true));
        let lone: Arc<dyn Evaluator<Banqi>> = Arc::new(Shallow(net, false));
        for g in midgames(31, 6) {
            // Debug builds check every incremental accumulator against a full sum as well.
            let mut a = Searcher::with_leaf(settings.clone(), Some(own.clone()));
            let mut b = Searcher::with_leaf(settings.clone(), Some(lone.clone()));
            let (ra, rb) = (a.search(&g, |_, _| {}), b.search(&g, |_, _| {}));
            assert!(a.leaf.as_ref().unwrap().shallow.is_some() && b.leaf.as_ref().unwrap().shallow.is_none());
            // Float sums in another order: scores agree to rounding.
            assert!((ra.score - rb.score).abs() <= 2, "{ra:?} vs {rb:?} at {g}");
            assert!(a.leaf.as_ref().unwrap().calls > 0);
        }
    }

    #[test]
    fn a_network_at_the_leaves_replaces_the_evaluation() {
        // Depth 3 decides, not the clock: with neither time nor nodes the default is 300 ms,
        // which a loaded machine could spend before depth 3 in one search and not the other.
        let settings =
            AbSettings { depth: 3, nodes: Some(u64::MAX / 2), tablebase: 0, ..AbSettings::default() };
        let net: Arc<dyn Evaluator<Banqi>> = Arc::new(HandAsNet(Weights::default(), false));
        // The batch path and the lone-position path (what a CPU network gives) alike.
        let lone: Arc<dyn Evaluator<Banqi>> = Arc::new(HandAsNet(Weights::default(), true));
        for g in midgames(23, 5) {
            let plain = Searcher::new(settings.clone()).search(&g, |_, _| {});
            for leaf_net in [&net, &lone] {
                let mut with = Searcher::with_leaf(settings.clone(), Some(leaf_net.clone()));
                let netted = with.search(&g, |_, _| {});
                // Scores pass through tanh and atanh, so they agree to rounding.
                assert!((plain.score - netted.score).abs() <= 3, "{plain:?} vs {netted:?} at {g}");
                let leaf = with.leaf.as_ref().unwrap();
                assert!(
                    leaf.calls > 0 && leaf.calls < netted.nodes,
                    "{} calls, {} nodes",
                    leaf.calls,
                    netted.nodes
                );
            }
        }
        // Through the spec: model= loads the network with the loader it is built with.
        let spec: AgentSpec = "banqi-ab:nodes=500,model=m.safetensors".parse().unwrap();
        assert!(spec.uses_net());
        let asked = std::sync::Mutex::new(Vec::new());
        let loader = |m: &str, leaf: &LeafSettings| -> Result<Arc<dyn Evaluator<Banqi>>, String> {
            asked.lock().unwrap().push((m.to_string(), leaf.lambda));
            Ok(net.clone())
        };
        let mut agent = spec.build_with::<Banqi>(&loader).unwrap();
        assert_eq!(agent.name(), "banqi-ab:nodes=500,model=m.safetensors");
        assert_eq!(*asked.lock().unwrap(), vec![("m.safetensors".to_string(), 0.0)]);
        let g = &midgames(24, 1)[0];
        assert!(g.is_legal(agent.choose(g, &mut crate::rng_from_seed(1), &mut |_| {})));
        let refused = spec.build_with::<Banqi>(&|_, _| Err("no such file".into()));
        assert_eq!(refused.err(), Some("no such file".to_string()));
    }

    #[test]
    fn the_node_budget_makes_the_search_deterministic() {
        let mut g = Banqi::start();
        g.play_unchecked(Action::Flip(10));
        g.play_unchecked(Action::Reveal(Piece::new(Colour::Red, Kind::Advisor)));
        g.play_unchecked(Action::Flip(13));
        g.play_unchecked(Action::Reveal(Piece::new(Colour::Black, Kind::Chariot)));
        let settings = AbSettings { nodes: Some(30_000), ..AbSettings::default() };
        let a = Searcher::new(settings.clone()).search(&g, |_, _| {});
        let b = Searcher::new(settings).search(&g, |_, _| {});
        assert_eq!(a, b);
        assert!(g.is_legal(a.best));
        assert!(a.depth >= 2, "{a:?}");
    }

    #[test]
    fn plays_whole_games_with_legal_moves_only() {
        let mut rng = crate::rng_from_seed(5);
        let settings = AbSettings { nodes: Some(2_000), ..AbSettings::default() };
        let mut agent = AbAgent::new(settings, "banqi-ab".into());
        let mut g = Banqi::start();
        let mut plies = 0;
        while g.outcome().is_none() && plies < 400 {
            let a = if g.pending.is_some() {
                let mut out = Vec::new();
                g.chance_outcomes(&mut out);
                out[0].0
            } else {
                agent.choose(&g, &mut rng, &mut |_| {})
            };
            assert!(g.is_legal(a), "{a:?} at {g}");
            g.play_unchecked(a);
            plies += 1;
        }
    }

    #[test]
    fn both_search_generations_solve_the_tactics() {
        for search in [1, 2] {
            let run = |text: &str, tablebase: u8| {
                let settings = AbSettings { nodes: Some(50_000), tablebase, search, ..AbSettings::default() };
                Searcher::new(settings).search(&pos(text), |_, _| {})
            };
            assert_eq!(
                run("8/8/Gg1a4/8 r - 0 1", 5).best,
                Action::Move { from: 8, to: 9 },
                "search={search}"
            );
            let win = run("8/8/8/Rh6 r - 0 1", 5);
            assert_eq!((win.best, win.score), (Action::Move { from: 0, to: 1 }, WIN - 1), "search={search}");
            let flee = run("8/8/Ag6/7H r - 0 1", 0);
            assert!(
                matches!(flee.best, Action::Move { from: 8, to: 0 | 16 }),
                "search={search}: the advisor must flee: {flee:?}"
            );
        }
    }

    #[test]
    fn the_null_move_pass_keeps_the_position_but_the_mover() {
        // What a null move searches: the same board and pool, the other side to move, and a
        // key that is that position's own (so the table holds it as a real position).
        let g = pos("1X2g3/r1XC4/2hS1a2/S6X r S1a1c1 12 1");
        let mut null = g.clone();
        null.switch_side();
        null.irreversible();
        null.settle();
        let mut direct = pos("1X2g3/r1XC4/2hS1a2/S6X b S1a1c1 12 1");
        direct.irreversible();
        assert_eq!(
            (null.board, null.pool, null.side, null.key),
            (direct.board, direct.pool, direct.side, direct.key)
        );
        assert_eq!(null.outcome, None);
        assert!(g.face_down_count() > 0);
    }

    #[test]
    fn a_side_well_ahead_scores_draws_below_zero() {
        let p = pos("8/8/Gg1a4/8 r - 0 1");
        let draw = Outcome::on_points([0, 0]);
        for (search, want) in [(1, 0), (2, -40)] {
            let mut s = Searcher::new(AbSettings { nodes: Some(2_000), search, ..AbSettings::default() });
            s.last_score = CONTEMPT_FROM;
            s.search(&p, |_, _| {});
            assert_eq!(s.terminal(draw, p.side, 3), want, "search={search}");
            assert_eq!(s.terminal(draw, p.side.other(), 4), -want, "search={search}");
            // Level positions keep draws at 0.
            s.last_score = CONTEMPT_FROM - 1;
            s.search(&p, |_, _| {});
            assert_eq!(s.terminal(draw, p.side, 3), 0);
        }
    }

    #[test]
    fn flips_only_where_depth_remains_search_deeper_on_the_same_nodes() {
        // An opening, four pieces face up: flips near the leaves are chance nodes of up to 14
        // reveals each, so leaving them to the upper plies buys depth.
        let p = pos("XXXgXXXX/XXXXsXXX/XXXXXXXX/XXCXXXXG r A2E2R2H2C1S5a2e2r2h2c2s4 0 5");
        let depth = |flip_depth: u8| {
            // As measured when `flip_depth=4` became the default, before Star2's probe: with
            // it, flips near the leaves cost less and this position no longer tells them apart.
            let settings = AbSettings { nodes: Some(200_000), flip_depth, probe: 0, ..AbSettings::default() };
            Searcher::new(settings).search(&p, |_, _| {}).depth
        };
        assert_eq!(AbSettings::default().flip_depth, 4);
        let (old, new) = (depth(2), depth(4));
        assert!(new > old, "flip_depth=4 reached depth {new}, flip_depth=2 depth {old}");
    }
}
