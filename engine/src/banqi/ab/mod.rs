//! `banqi-ab`: an expectiminimax searcher for Banqi, the shape strong Banqi programs share.
//!
//! - **Negamax alpha-beta** over decision nodes. A flip is a chance node averaged over the
//!   face-down pool, with Ballard's *Star1* pruning: each reveal is searched in a window
//!   narrowed by what the reveals not yet searched can still add, bounded by ±[`WIN`], so a
//!   chance node stops as soon as its average is known to fall outside the parent's window.
//! - **Iterative deepening** under a time, node or depth budget ([`AbSettings`]).
//! - A **transposition table** on the position's Zobrist key ([`Banqi::key`]: board, pool,
//!   colours and side). The repetition history and the quiet-ply count are not in the key:
//!   the usual graph-history compromise, which the game's own rules (applied at every node by
//!   `play_unchecked`) correct wherever the search actually reaches them.
//! - **Move ordering:** the hash move, captures by most valuable victim then least valuable
//!   attacker, two killer moves per ply, the history heuristic, flips last.
//! - **Quiescence** over captures, the cannon's jumps included.
//! - **Late-move reductions** for quiet moves (re-searched at full depth when they beat
//!   alpha). No null move: Banqi has zugzwang (a side with no legal move loses), and a null
//!   move through a chance node has no sound meaning.
//! - **Selective flips.** Every flip at the root; below it, the flips next to a face-up piece
//!   (most neighbours first, at most [`AbSettings::near_flips`]) and one flip with no face-up
//!   neighbour standing for all such squares, whose reveals differ only in what they later
//!   become next to. Every node keeps at least one flip while any face-down square remains,
//!   so selection never makes a side look as if it had no move.
//!
//! The evaluation ([`Weights`]) values each piece by what it can still capture among the
//! enemy pieces that remain, face up or face down (the king cannot take a pawn, a pawn takes
//! only pawns and the king, a cannon takes anything by a jump), adds a bonus when nothing the
//! enemy has left can take it, counts face-down pieces at their colour's expected value, and
//! adds mobility.

use std::sync::Arc;
use std::time::{Duration, Instant};

mod eval;

pub use eval::{Weights, evaluate};

use crate::Rng;
pub use crate::agent::AbSettings;
use crate::agent::{Agent, AgentSpec, GameAgents, NetLoader};
use crate::banqi::tablebase::{Tablebase, Wdl};
use crate::banqi::{Action, Banqi, EMPTY, FACE_DOWN, NEIGHBOURS, PIECE_CODES, Piece, SQUARES};
use crate::eval::{Evaluator, Leaf};
use crate::game::{Game, Outcome, Seat};
use crate::leaf::LeafSettings;
use crate::mcts::Progress;

/// The score of a won position (less the plies to the win).
pub const WIN: i32 = 100_000;
/// Scores beyond this are wins or losses.
const WIN_BOUND: i32 = WIN - 1_000;
/// The evaluation stays within ± this.
pub(crate) const EVAL_MAX: i32 = 50_000;
const INF: i32 = WIN + 1;
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
}

/// A value network at the leaves, with a cache of the positions it has valued (the same
/// leaf recurs across iterations and transpositions, and a call costs tens of µs).
struct NetLeaf {
    net: Arc<dyn Evaluator<Banqi>>,
    cache: Vec<(u64, i32)>,
    rng: Rng,
    calls: u64,
}

impl NetLeaf {
    const CACHE: usize = 1 << 16;

    /// The network's value of `pos` for the side to move, on the evaluation's scale
    /// (the inverse of [`score_value`]).
    fn value(&mut self, pos: &Banqi) -> i32 {
        let slot = (pos.key as usize) & (Self::CACHE - 1);
        if self.cache[slot].0 == pos.key && pos.key != 0 {
            return self.cache[slot].1;
        }
        self.calls += 1;
        // No actions: the search reads only the value, so no legal moves and no priors.
        let mut leaf = [Leaf { state: pos.clone(), actions: Vec::new(), value: 0.0, priors: Vec::new() }];
        self.net.evaluate(&mut leaf, &mut self.rng);
        let v = leaf[0].value * pos.side.sign();
        let score = (1_000.0 * v.clamp(-0.999, 0.999).atanh()).round() as i32;
        let score = score.clamp(-EVAL_MAX, EVAL_MAX);
        self.cache[slot] = (pos.key, score);
        score
    }
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
            leaf: net.map(|net| NetLeaf {
                net,
                cache: vec![(0, 0); NetLeaf::CACHE],
                rng: crate::rng_from_seed(0),
                calls: 0,
            }),
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
        self.nodes = 0;
        self.stopped = false;
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
        for depth in 1..=self.settings.depth.max(1) {
            let mut alpha = -INF;
            let mut best: Option<(Action, i32)> = None;
            for m in root.iter_mut() {
                let v = self.child_value(pos, m.0, i32::from(depth) - 1, alpha, INF, 0);
                if self.stopped {
                    break;
                }
                m.1 = v;
                if v > alpha {
                    alpha = v;
                    best = Some((m.0, v));
                }
            }
            if self.stopped {
                // A move of the unfinished iteration counts only if the previous best (searched
                // first) was finished too and was beaten.
                if let Some((a, v)) = best
                    && root[0].0 == result.best
                    && a != result.best
                    && v > root[0].1
                {
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
        result
    }

    /// The value for the mover at `pos` of playing `a`, searched to `depth` more plies.
    fn child_value(&mut self, pos: &Banqi, a: Action, depth: i32, alpha: i32, beta: i32, ply: usize) -> i32 {
        let mut child = pos.clone();
        child.play_unchecked(a);
        match a {
            Action::Flip(_) => self.chance(&child, depth, alpha, beta, ply + 1),
            _ => -self.negamax(&child, depth, -beta, -alpha, ply + 1),
        }
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

    /// A flip's value for the flipper: the pool-weighted mean over its reveals, each searched
    /// in Star1's narrowed window.
    fn chance(&mut self, pos: &Banqi, depth: i32, alpha: i32, beta: i32, ply: usize) -> i32 {
        if self.tick() {
            return 0;
        }
        let mut outcomes: Vec<(u8, u8)> = (0..PIECE_CODES as u8)
            .filter(|&c| pos.pool[c as usize] > 0)
            .map(|c| (c, pos.pool[c as usize]))
            .collect();
        outcomes.sort_by_key(|o| std::cmp::Reverse(o.1));
        let total: f64 = outcomes.iter().map(|o| f64::from(o.1)).sum();
        let (lo, hi) = (f64::from(-WIN), f64::from(WIN));
        let (alpha_f, beta_f) = (f64::from(alpha), f64::from(beta));
        let mut sum = 0.0;
        let mut rest = 1.0;
        for (code, n) in outcomes {
            let p = f64::from(n) / total;
            rest = (rest - p).max(0.0);
            let a = ((alpha_f - sum - hi * rest) / p).floor().max(lo - 1.0);
            let b = ((beta_f - sum - lo * rest) / p).ceil().min(hi + 1.0);
            let mut child = pos.clone();
            child.play_unchecked(Action::Reveal(Piece::from_code(code)));
            // The reveal passes the turn: the child's mover is the flipper's opponent.
            let v = f64::from(-self.negamax(&child, depth, -(b as i32), -(a as i32), ply + 1));
            if self.stopped {
                return 0;
            }
            if v >= b {
                return beta;
            }
            if v <= a {
                return alpha;
            }
            sum += p * v;
        }
        sum.round() as i32
    }

    fn terminal(o: Outcome, side: Seat, ply: usize) -> i32 {
        match o.winner() {
            None => 0,
            Some(w) if w == side => WIN - ply as i32,
            Some(_) => -(WIN - ply as i32),
        }
    }

    fn negamax(&mut self, pos: &Banqi, depth: i32, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        if let Some(o) = pos.outcome {
            return Self::terminal(o, pos.side, ply);
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
        let mut moves = [(Action::Flip(0), 0i32); 96];
        let n = self.generate(pos, depth, ply, tt_move, &mut moves);
        let moves = &mut moves[..n];
        moves.sort_unstable_by_key(|m| std::cmp::Reverse(m.1));
        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_move = NO_MOVE;
        for (i, &(a, score)) in moves.iter().enumerate() {
            let quiet = score < 80_000 && matches!(a, Action::Move { .. });
            let v = if quiet && i >= 3 && depth >= 3 {
                let reduced = self.child_value(pos, a, depth - 2, alpha, alpha + 1, ply);
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
            return Self::terminal(o, pos.side, ply);
        }
        if let Some(v) = self.probe_tables(pos, ply) {
            return v;
        }
        if self.tick() {
            return 0;
        }
        let stand = match &mut self.leaf {
            Some(net) => net.value(pos),
            None => evaluate(pos, &self.weights),
        };
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

    /// Fills `out` with the node's actions and their ordering scores; returns how many.
    fn generate(
        &self,
        pos: &Banqi,
        depth: i32,
        ply: usize,
        tt_move: u16,
        out: &mut [(Action, i32)],
    ) -> usize {
        let mut n = 0;
        let mut isolated: Option<u8> = None;
        let mut near: [(u8, i32); SQUARES] = [(0, 0); SQUARES];
        let mut near_n = 0;
        pos.for_each_action(|a| {
            match a {
                Action::Flip(s) => {
                    let touching = touching(pos, s);
                    if pack(a) == tt_move {
                        out[n] = (a, self.order_score(pos, a, ply, tt_move));
                        n += 1;
                    } else if touching == 0 {
                        isolated.get_or_insert(s);
                    } else {
                        near[near_n] = (s, touching);
                        near_n += 1;
                    }
                }
                _ => {
                    out[n] = (a, self.order_score(pos, a, ply, tt_move));
                    n += 1;
                }
            }
            true
        });
        // Deep enough for a reveal to matter, or nothing else to do: the selected flips.
        if depth >= 2 || n == 0 {
            let near = &mut near[..near_n];
            near.sort_by_key(|f| std::cmp::Reverse(f.1));
            for &(s, touching) in near.iter().take(self.settings.near_flips as usize) {
                out[n] = (Action::Flip(s), -1_000 + touching);
                n += 1;
            }
            if let Some(s) = isolated {
                out[n] = (Action::Flip(s), -2_000);
                n += 1;
            }
        }
        n
    }

    fn order_score(&self, pos: &Banqi, a: Action, ply: usize, tt_move: u16) -> i32 {
        let p = pack(a);
        if p == tt_move {
            return 1_000_000;
        }
        match a {
            Action::Move { from, to } if pos.board[to as usize] != EMPTY => {
                100_000 + capture_order(pos, from, to)
            }
            Action::Move { from, to } => {
                if ply < MAX_PLY && self.killers[ply][0] == p {
                    90_000
                } else if ply < MAX_PLY && self.killers[ply][1] == p {
                    89_000
                } else {
                    self.history[from as usize][to as usize]
                }
            }
            Action::Flip(s) => -1_000 + touching(pos, s),
            Action::Reveal(_) => 0,
        }
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

/// Face-up pieces orthogonally next to `sq`.
fn touching(pos: &Banqi, sq: u8) -> i32 {
    NEIGHBOURS[sq as usize].iter().filter(|&&t| t != u8::MAX && pos.board[t as usize] < FACE_DOWN).count()
        as i32
}

/// Most valuable victim first, then least valuable attacker.
fn capture_order(pos: &Banqi, from: u8, to: u8) -> i32 {
    let rank = |c: u8| i32::from(c % 7);
    // Kinds run strongest first: a low victim rank is a valuable victim.
    (7 - rank(pos.board[to as usize])) * 16 + rank(pos.board[from as usize])
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

/// Banqi's own agent: `banqi-ab:…`.
impl GameAgents for Banqi {
    fn game_agent(
        spec: &AgentSpec,
        name: String,
        net: &NetLoader<'_, Banqi>,
    ) -> Option<Result<Box<dyn Agent<Banqi>>, String>> {
        let AgentSpec::BanqiAb(s) = spec else { return None };
        let leaf = match &s.model {
            Some(m) => match net(m, &LeafSettings::net_alone()) {
                Ok(n) => Some(n),
                Err(e) => return Some(Err(e)),
            },
            None => None,
        };
        Some(Ok(Box::new(AbAgent { name, searcher: Searcher::with_leaf(s.clone(), leaf) })))
    }

    /// `banqi-ab` at [`NODES_PER_SIM`] nodes per simulation: deterministic, and about the
    /// time the same number of network MCTS simulations take on one core.
    fn user_ai(sims: u64) -> Option<AgentSpec> {
        Some(AgentSpec::BanqiAb(AbSettings {
            nodes: Some(sims.saturating_mul(NODES_PER_SIM)),
            ..AbSettings::default()
        }))
    }
}

/// `banqi-ab`'s nodes for one MCTS simulation in gating: a node costs ~0.45 µs, a network
/// simulation ~45 µs (inference at small batches plus the tree) on one core.
pub const NODES_PER_SIM: u64 = 100;

/// The `banqi-ab:…` agent: a [`Searcher`] kept across the game's moves.
pub struct AbAgent {
    name: String,
    searcher: Searcher,
}

impl AbAgent {
    /// An agent with these settings (a `model` in them is not loaded: build the agent from
    /// its [`AgentSpec`] with a network loader for that).
    pub fn new(settings: AbSettings, name: String) -> AbAgent {
        AbAgent { name, searcher: Searcher::new(settings) }
    }
}

impl Agent<Banqi> for AbAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(
        &mut self,
        state: &Banqi,
        _rng: &mut Rng,
        progress: &mut dyn FnMut(&Progress<Action>),
    ) -> Action {
        let result = self.searcher.search(state, |r, elapsed| {
            progress(&Progress {
                sims: r.nodes,
                nodes: r.nodes as usize,
                max_depth: u32::from(r.depth),
                elapsed,
                best: Some(r.best),
                value: score_value(r.score),
            })
        });
        result.best
    }

    fn set_stop(&mut self, stop: crate::agent::StopFlag) {
        self.searcher.stop = Some(stop);
    }
}

/// A score as a value in `[-1, 1]` (a pawn's worth is about 0.04).
pub fn score_value(score: i32) -> f32 {
    if score.abs() >= WIN_BOUND { score.signum() as f32 } else { (score as f32 / 1_000.0).tanh() }
}

#[cfg(test)]
mod tests {
    use rand::RngExt;

    use super::eval::{PREY_START, piece_values, preys_on};
    use super::*;
    use crate::banqi::Colour;
    use crate::banqi::Kind;

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
        let fresh = || Searcher::new(AbSettings { tt_mib: 1, ..AbSettings::default() });
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

    /// A stand-in "network" whose value is the handcrafted evaluation through
    /// [`score_value`], so a search with it as the leaf must agree with the plain search.
    struct HandAsNet(Weights);

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
    }

    #[test]
    fn a_network_at_the_leaves_replaces_the_evaluation() {
        // Depth 3 decides, not the clock: with neither time nor nodes the default is 300 ms,
        // which a loaded machine could spend before depth 3 in one search and not the other.
        let settings =
            AbSettings { depth: 3, nodes: Some(u64::MAX / 2), tablebase: 0, ..AbSettings::default() };
        let net: Arc<dyn Evaluator<Banqi>> = Arc::new(HandAsNet(Weights::default()));
        for g in midgames(23, 5) {
            let plain = Searcher::new(settings.clone()).search(&g, |_, _| {});
            let mut with = Searcher::with_leaf(settings.clone(), Some(net.clone()));
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
}
