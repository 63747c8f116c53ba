//! `trigolden-user`: the user's TriGolden AI as the user wrote it
//! (`../shared/sources/trigolden-ai-request-and-code.txt`, "QuanAI"), ported function by
//! function. Names in brackets are the JavaScript's.
//!
//! **Plans** (one turn each). [`raw_turn_choices`] [`rawTurnChoices`]: the mover's scoring
//! plans if any — on the last, one-piece turn every scoring single link; otherwise every
//! single-link plan (the single link's piece is put down and the tracker updated *before* the
//! second piece is chosen among the mover's methods then alive, kept if the whole turn gains
//! the mover points) and every double-link plan (two methods whose contacts *with each other*
//! score, [`TriGolden::mutual_points`], placed together, kept if the whole turn gains) — else,
//! on the last turn, every legal placement, else every co-live pair. Plans are de-duplicated
//! by kind and pieces, in the file's order.
//!
//! [`mcts_plans`] [`mctsPlans`] (the tree and every rollout ply): raw plans after which the
//! opponent can still continue (a co-live pair, or a piece on their last turn); for co-live
//! plans, none that create a new scoring single or double link for the opponent, and of the
//! rest those that break one of theirs if any do. [`minimax_plans`] [`minimaxPlans`]: the raw
//! plans, except that the second player's last piece, when no single link scores, is one
//! random legal placement.
//!
//! **Search** [`runMcts`]: a UCT tree over plans. A node expands one untried plan per visit,
//! chosen at random, until all are expanded; then UCT picks `mean + c·√(ln N / n)` (with
//! `1 − mean` where the opponent chooses). Each simulation plays random [`mcts_plans`] plans
//! to the end and scores `1 / (1 + e^(−diff/3))`, `diff` the root mover's score minus the
//! opponent's [`mctsValue`]. The move is the most visited root plan (ties: the larger value
//! sum, then the earlier expanded). With `minimax` turns or fewer left, a minimax over
//! [`minimax_plans`] to the end instead [`runBreadthFirstMinimax`], valued by the score
//! difference (±100,000 for a win by arbitration).
//!
//! **Decisions** where the file depends on the page around it, or is ambiguous:
//! - `MCTS_C` is not defined in the file: √2 (`c=`), UCB1's constant for rewards in [0, 1].
//! - `pairIsLegal` compares fields a method does not have (`targetId`, `targetEdge`), which
//!   taken literally rejects every pair; read as intended, "not the same target edge", which is
//!   the engine's own pair test.
//! - The page's geometry (`isValidGhost`, `getTreeDistance`, `attachByEdge`) is the engine's
//!   rules; a bracing point's bracer on a tie is the engine's (lowest piece number).
//! - Arbitration: a position the engine has decided by arbitration is worth 1 or 0 in the tree
//!   (the file's value has no such term, and its ban keeps the tree from reaching one) and
//!   ±100,000 in the minimax, as the file values a node without plans.
//! - The file's minimax has no limit; here it gives up after `nodes` positions (default 20,000)
//!   or the turn's time, whichever comes first, and the UCT search decides in what time is
//!   left (at least one simulation), so a turn cannot take minutes. Depth-first with the file's
//!   child order and first-best tie-break, which chooses the same plan as its breadth-first
//!   build.
//! - The clock: the file starts it after the board statistics (tracking, and the root's plan
//!   kinds); here after the root's raw plans are computed, the engine's tracker being always
//!   up to date (`clock=turn` starts it with the turn instead, as the play server does, so a
//!   turn fits the time asked). Without `time` or `sims` a turn takes the file's default, 3 s.
//! - The opening piece: the file places one at random without searching; so does this agent.
//! - Where the file would refuse to move (no plan passes its filters: it hands the game to the
//!   human), this agent searches the safe raw plans, else the safe co-live pairs, else every
//!   raw plan, else every legal turn, and counts each such turn ([`UserAgent::fallbacks`]).
//! - Mid-turn, the agent plays the second piece of the plan it chose at the first; asked
//!   without one (a turn it did not start), the legal second piece that gains the most, safe
//!   ones first.
//! - Progress [`ai-mcts-progress`] goes through the search's progress callback every 8
//!   simulations: simulations (the file's "nodes"), tree nodes, depth in turns, elapsed time,
//!   the most visited plan's first click and its win rate (as `2·rate − 1`).
//!
//! **Tests.** Hand-worked positions for each candidate rule are rule fixtures
//! (`engine/tests/fixtures/trigolden.toml`, the `user` tables); the safe-turn property and
//! determinism per seed are unit tests (`trigolden/tests.rs`). There is no differential test
//! against the JavaScript under node: the file is a patch to a 201.7 KB page that is not in
//! it, and its plan functions call that page's geometry and rules (`isValidGhost`,
//! `shapesOverlap`, `pointOnOpenSegment`, `segmentsPerfectlyMatch`, `actionCheck`,
//! `getTreeDistance`, `attachByEdge`, …) and globals (`pieces`, `tempPieces`, the shapes and
//! stocks). A harness would have to write those itself, so the test would compare the
//! engine with a second implementation of the rules of our own, not with the user's code.

use std::time::{Duration, Instant};

mod plans;

pub use plans::{Plan, PlanKind, RawChoices, RawKind, apply, mcts_plans, minimax_plans, raw_turn_choices};
use plans::{co_live_plans, filter_raw, gain, safe};

use rand::RngExt;

use super::lite::LiteAgent;
use super::{Action, Place, TriGolden};
use crate::Rng;
use crate::agent::{Agent, GameAgents, GameFamily, GameSpec, NetLoader, ServeEnv};
use crate::game::{Game, Seat};
use crate::leaf::LeafSettings;
use crate::mcts::Progress;
use crate::trigolden::settings::{LiteSettings, UserClock, UserSettings};

/// TriGolden's own agents: `trigolden-user:…` and `trigolden-lite:…`.
impl GameAgents for TriGolden {
    const FAMILIES: &'static [GameFamily] = crate::trigolden::settings::FAMILIES;

    fn game_agent(
        spec: &GameSpec,
        name: String,
        _: &NetLoader<'_, TriGolden>,
    ) -> Option<Result<Box<dyn Agent<TriGolden>>, String>> {
        if let Some(s) = spec.settings::<UserSettings>() {
            return Some(Ok(Box::new(UserAgent::new(s.clone(), name))));
        }
        let s = spec.settings::<LiteSettings>()?;
        Some(Ok(Box::new(LiteAgent::new(s.clone(), name))))
    }

    /// `trigolden-user` at `sims` simulations a turn (its other settings the file's).
    fn user_ai(sims: u64) -> Option<GameSpec> {
        Some(GameSpec::new(UserSettings { sims: Some(sims), ..UserSettings::default() }))
    }

    /// The network once there is a model; until then the user's AI, stronger here than
    /// MCTS over rollouts, timed by the whole turn (a person waits for the time they asked).
    fn served_ai(time: Duration, env: &ServeEnv<'_, TriGolden>) -> Box<dyn Agent<TriGolden>> {
        if env.has_model {
            return Self::served_net(time, env);
        }
        let user = UserSettings { clock: UserClock::Turn, ..UserSettings::default() };
        env.spec_at(&GameSpec::new(user), time)
    }

    /// The network alone (a playout costs milliseconds here) with half the root's priors on
    /// the user's AI's candidates, as docs/benchmarks.md measured it.
    fn served_net(time: Duration, env: &ServeEnv<'_, TriGolden>) -> Box<dyn Agent<TriGolden>> {
        env.net_mcts(time, &LeafSettings { lambda: 0.0, ..env.leaf }, SERVED_KNOWLEDGE)
    }
}

/// Weight of `trigolden-user`'s candidate turns in the root priors of the served network AI
/// (`knowledge=0.5`: 90.0% against `trigolden-user` at 500 ms, against 83.5% for the network
/// alone, docs/benchmarks.md).
const SERVED_KNOWLEDGE: f32 = 0.5;

/// The value of `state` for `root` [`mctsValue`]: `1 / (1 + e^(−diff/3))`, or 1 / 0 after a
/// win by arbitration.
fn mcts_value(state: &TriGolden, root: Seat) -> f64 {
    if let Some(w) = state.outcome().and_then(|o| o.decisive) {
        return if w == root { 1.0 } else { 0.0 };
    }
    let s = state.scores();
    let diff = f64::from(s[root.index()] - s[root.other().index()]);
    1.0 / (1.0 + (-diff / f64::from(crate::eval::SCORE_SCALE)).exp())
}

/// A minimax leaf's value for `root` [`leafValue`]: the score difference, ±100,000 for a win
/// by arbitration.
fn leaf_value(state: &TriGolden, root: Seat) -> f64 {
    if let Some(w) = state.outcome().and_then(|o| o.decisive) {
        return if w == root { 100_000.0 } else { -100_000.0 };
    }
    let s = state.scores();
    f64::from(s[root.index()] - s[root.other().index()])
}

/// Minimax to the end over [`minimax_plans`]: the value for `root` and the best plan, or
/// `None` once more than `budget` positions were made or `deadline` passed.
fn minimax(
    state: &TriGolden,
    root: Seat,
    rng: &mut Rng,
    budget: &mut u64,
    deadline: Option<Instant>,
) -> Option<(f64, Option<Plan>)> {
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return None;
    }
    if state.outcome().is_some() {
        return Some((leaf_value(state, root), None));
    }
    let plans = minimax_plans(state, rng);
    if plans.is_empty() {
        // No plan: the mover wins by arbitration [leafValue].
        let v = if state.mover() == root { 100_000.0 } else { -100_000.0 };
        return Some((v, None));
    }
    let maximise = state.mover() == root;
    let mut best: Option<(f64, Plan)> = None;
    for p in plans {
        let Some(child) = apply(state, &p) else { continue };
        *budget = budget.checked_sub(1)?;
        let (v, _) = minimax(&child, root, rng, budget, deadline)?;
        if best.as_ref().is_none_or(|(b, _)| if maximise { v > *b } else { v < *b }) {
            best = Some((v, p));
        }
    }
    Some(match best {
        Some((v, p)) => (v, Some(p)),
        None => (leaf_value(state, root), None),
    })
}

struct Node {
    state: TriGolden,
    parent: Option<usize>,
    plan: Option<Plan>,
    depth: u32,
    visits: u64,
    /// Sum of values from the root mover's view.
    value: f64,
    children: Vec<usize>,
    untried: Option<Vec<Plan>>,
}

impl Node {
    fn new(state: TriGolden, parent: Option<usize>, plan: Option<Plan>, depth: u32) -> Node {
        Node { state, parent, plan, depth, visits: 0, value: 0.0, children: Vec::new(), untried: None }
    }
}

/// When a search ends: `time` after `start`, or sooner if another thread sets `stop`.
struct Clock<'a> {
    time: Option<Duration>,
    start: Instant,
    stop: Option<&'a std::sync::atomic::AtomicBool>,
}

/// The UCT search [`runMcts`] from `root` (whose plans are `root_plans`) until `clock` runs
/// out or `s.sims` simulations, whichever ends first: the chosen plan.
fn run_mcts(
    root_state: &TriGolden,
    root_plans: Vec<Plan>,
    s: &UserSettings,
    clock: Clock<'_>,
    rng: &mut Rng,
    progress: &mut dyn FnMut(&Progress<Action>),
) -> Plan {
    let me = root_state.mover();
    let mut tree = vec![Node::new(root_state.clone(), None, None, 0)];
    tree[0].untried = Some(root_plans);
    let max_sims = s.sims.unwrap_or(u64::MAX);
    let Clock { time, start, stop } = clock;
    let out_of_time = |start: Instant| {
        time.is_some_and(|t| start.elapsed() >= t)
            || stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
    };
    let (mut count, mut max_depth) = (0u64, 0u32);
    // At least one simulation, so there is a plan to return.
    while count < max_sims && (count == 0 || !out_of_time(start)) {
        let mut node = 0;
        loop {
            if tree[node].untried.is_none() {
                tree[node].untried = Some(mcts_plans(&tree[node].state));
            }
            let untried = tree[node].untried.as_mut().expect("set above");
            if !untried.is_empty() {
                let plan = untried.swap_remove(rng.random_range(0..untried.len()));
                let Some(child) = apply(&tree[node].state, &plan) else { continue };
                let depth = tree[node].depth + 1;
                tree.push(Node::new(child, Some(node), Some(plan), depth));
                let c = tree.len() - 1;
                tree[node].children.push(c);
                node = c;
                max_depth = max_depth.max(depth);
                break;
            }
            if tree[node].children.is_empty() {
                break;
            }
            node = select(&tree, node, me, s.c);
        }
        let mut rollout = tree[node].state.clone();
        let mut depth = tree[node].depth;
        // The deadline also cuts a rollout short; the cut rollout still counts, as in the file.
        while rollout.outcome().is_none() && !out_of_time(start) {
            let plans = mcts_plans(&rollout);
            if plans.is_empty() {
                break;
            }
            let plan = &plans[rng.random_range(0..plans.len())];
            let Some(next) = apply(&rollout, plan) else { break };
            rollout = next;
            depth += 1;
            max_depth = max_depth.max(depth);
        }
        let v = mcts_value(&rollout, me);
        let mut n = Some(node);
        while let Some(i) = n {
            tree[i].visits += 1;
            tree[i].value += v;
            n = tree[i].parent;
        }
        count += 1;
        if count.is_multiple_of(8) {
            report(&tree, count, max_depth, start, progress);
        }
    }
    // The last report: a turn of fewer than 8 simulations still says what it did.
    if !count.is_multiple_of(8) {
        report(&tree, count, max_depth, start, progress);
    }
    let b = best_child(&tree).expect("the root has a child once a simulation ran");
    tree[b].plan.clone().expect("a child has a plan")
}

/// Progress [`ai-mcts-progress`]: simulations, nodes, depth in turns, the most visited plan's
/// first click and its win rate as `2·rate − 1`.
fn report(
    tree: &[Node],
    count: u64,
    max_depth: u32,
    start: Instant,
    progress: &mut dyn FnMut(&Progress<Action>),
) {
    let b = best_child(tree);
    progress(&Progress {
        sims: count,
        nodes: tree.len(),
        max_depth,
        elapsed: start.elapsed(),
        best: b.and_then(|b| tree[b].plan.as_ref()).map(|p| Action::Place(p.pieces[0])),
        value: b.map_or(0.0, |b| (2.0 * tree[b].value / tree[b].visits.max(1) as f64 - 1.0) as f32),
    });
}

/// UCT's choice among `node`'s children [`selectMctsChild`].
fn select(tree: &[Node], node: usize, root: Seat, c: f64) -> usize {
    let maximising = tree[node].state.mover() == root;
    let ln = (tree[node].visits.max(1) as f64).ln();
    let mut best = (f64::NEG_INFINITY, tree[node].children[0]);
    for &ch in &tree[node].children {
        let n = tree[ch].visits.max(1) as f64;
        let mean = tree[ch].value / n;
        let score = if maximising { mean } else { 1.0 - mean } + c * (ln / n).sqrt();
        if score > best.0 {
            best = (score, ch);
        }
    }
    best.1
}

/// The most visited root child (ties: larger value sum, then the earlier).
fn best_child(tree: &[Node]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for &ch in &tree[0].children {
        let better = match best {
            None => true,
            Some(b) => {
                tree[ch].visits > tree[b].visits
                    || (tree[ch].visits == tree[b].visits && tree[ch].value > tree[b].value)
            }
        };
        if better {
            best = Some(ch);
        }
    }
    best
}

/// The user's AI as an agent.
pub struct UserAgent {
    settings: UserSettings,
    name: String,
    /// The second click of the plan chosen at the first.
    planned: Option<Action>,
    fallbacks: u64,
    stop: Option<crate::agent::StopFlag>,
}

impl UserAgent {
    /// An agent with these settings, named `name` (its spec string).
    pub fn new(settings: UserSettings, name: String) -> UserAgent {
        UserAgent { settings, name, planned: None, fallbacks: 0, stop: None }
    }

    /// The time budget of a turn: `time`, or the file's 3 s when neither `time` nor `sims` is
    /// given.
    fn time(&self) -> Option<Duration> {
        self.settings.time.or(if self.settings.sims.is_none() { Some(Duration::from_secs(3)) } else { None })
    }

    /// Turns on which the user's code would have refused to move (no plan passed its
    /// filters) and this agent played its best remaining turn instead.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks
    }

    /// The plans to search at a turn start where [`mcts_plans`] has none.
    fn fallback_plans(state: &TriGolden, raw: RawChoices) -> Vec<Plan> {
        let me = state.mover();
        let safe_of = |plans: &[Plan]| -> Vec<Plan> {
            plans.iter().filter(|p| apply(state, p).is_some_and(|c| safe(&c, me))).cloned().collect()
        };
        let safe_raw = safe_of(&raw.plans);
        if !safe_raw.is_empty() {
            return safe_raw;
        }
        let safe_co_live = safe_of(&co_live_plans(state, &raw.links));
        if !safe_co_live.is_empty() {
            return safe_co_live;
        }
        if !raw.plans.is_empty() {
            return raw.plans;
        }
        state
            .legal_turns()
            .into_iter()
            .filter_map(|t| {
                let pieces: Vec<Place> = t
                    .into_iter()
                    .map(|a| match a {
                        Action::Place(p) => Some(p),
                        Action::Open { .. } => None,
                    })
                    .collect::<Option<_>>()?;
                let kind = if pieces.len() == 1 { PlanKind::SinglePiece } else { PlanKind::CoLive };
                Some(Plan { kind, pieces })
            })
            .collect()
    }

    /// The plans the search chooses among at a turn start (past the opening): [`mcts_plans`],
    /// or where the file would refuse to move, the fallbacks (the second value true).
    pub fn root_plans(state: &TriGolden) -> (Vec<Plan>, bool) {
        let raw = raw_turn_choices(state);
        let plans = filter_raw(state, &raw);
        if plans.is_empty() { (Self::fallback_plans(state, raw), true) } else { (plans, false) }
    }

    /// Mid-turn without a plan: the legal second piece that gains the most, safe ones first.
    fn second_piece(state: &TriGolden) -> Action {
        let me = state.mover();
        let mut v = Vec::new();
        state.legal_actions(&mut v);
        v.into_iter()
            .max_by_key(|&a| {
                let mut c = state.clone();
                c.play_unchecked(a);
                (safe(&c, me), gain(state, &c, me), std::cmp::Reverse(a))
            })
            .expect("a legal second piece")
    }
}

impl Agent<TriGolden> for UserAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(
        &mut self,
        state: &TriGolden,
        rng: &mut Rng,
        progress: &mut dyn FnMut(&Progress<Action>),
    ) -> Action {
        assert!(state.outcome().is_none(), "UserAgent asked to move in a finished game");
        if !state.at_turn_start() {
            return match self.planned.take() {
                Some(a) if state.is_legal(a) => a,
                _ => Self::second_piece(state),
            };
        }
        self.planned = None;
        if state.turns_played() == 0 {
            // The opening piece: at random, as the file places it.
            let mut v = Vec::new();
            state.legal_actions(&mut v);
            return v[rng.random_range(0..v.len())];
        }
        let me = state.mover();
        let left = state.total_turns() - state.turns_played();
        let mut plan = None;
        let turn_start = Instant::now();
        let tried_minimax = left <= self.settings.minimax_turns;
        if tried_minimax {
            let mut budget = self.settings.minimax_nodes;
            let deadline = self.time().map(|t| turn_start + t);
            if let Some((_, Some(p))) = minimax(state, me, rng, &mut budget, deadline) {
                plan = Some(p);
            }
        }
        let plan = match plan {
            Some(p) => p,
            None => {
                let (mut plans, fallback) = Self::root_plans(state);
                // The clock starts once the board's statistics are done, as in the file (a
                // minimax that gave up has used its share), or with the turn (`clock=turn`).
                let whole_turn = tried_minimax || self.settings.clock == UserClock::Turn;
                let start = if whole_turn { turn_start } else { Instant::now() };
                self.fallbacks += u64::from(fallback);
                assert!(!plans.is_empty(), "a position where the game goes on has a legal turn");
                if plans.len() == 1 {
                    plans.pop().expect("one plan")
                } else {
                    let clock = Clock { time: self.time(), start, stop: self.stop.as_deref() };
                    run_mcts(state, plans, &self.settings, clock, rng, progress)
                }
            }
        };
        // Place the pieces in an order the rules accept now.
        let order = match (plan.kind, plan.pieces.as_slice()) {
            (PlanKind::Double | PlanKind::CoLive, &[a, b]) => {
                let mut s = state.clone();
                s.play_unchecked(Action::Place(a));
                if s.is_legal(Action::Place(b)) { vec![a, b] } else { vec![b, a] }
            }
            _ => plan.pieces.clone(),
        };
        self.planned = order.get(1).map(|&p| Action::Place(p));
        Action::Place(order[0])
    }

    fn set_stop(&mut self, stop: crate::agent::StopFlag) {
        self.stop = Some(stop);
    }
}
