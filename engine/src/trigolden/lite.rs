//! `trigolden-lite` (formerly `trigolden-seed`): a cheap simplification of the user's own
//! TriGolden AI (rules §8). The faithful port is [`super::user`]; this one stays as the cheap
//! baseline (and its first clicks are `TriGolden::knowledge_priors`).
//!
//! - **Candidates.** If the mover has scoring single links or scoring double links, only
//!   those turns (a single link's first piece is played and its second piece chosen on the
//!   updated position; a double link's two pieces go down together). Otherwise co-live pairs,
//!   preferring those that destroy the opponent's scoring links and create none. Never a turn
//!   that leaves the opponent without a co-live pair (unless every turn does). On the last,
//!   single-piece turn: scoring single links, else any legal placement.
//! - **Search.** UCT over the root candidates; each simulation plays random legal turns to
//!   the end; the value is `1 / (1 + e^(−(own − opponent)/3))` (a decisive result counts
//!   1 or 0). With few turns left (`minimax_turns`, default 3), a breadth-first minimax over
//!   the same candidates instead.
//!
//! Differences from the user's code, on purpose and documented: the UCT is one level deep
//! (UCB1 over the root candidates), and rollouts play uniformly random legal turns rather than
//! random candidates (computing candidates needs the link sets, too slow inside rollouts).

use std::time::Instant;

use super::{Action, TriGolden};
use crate::Rng;
use crate::agent::Agent;
use crate::game::{Game, Seat};
use crate::mcts::Progress;

pub use super::settings::LiteSettings;

/// The agent.
pub struct LiteAgent {
    settings: LiteSettings,
    name: String,
    /// The second click of the turn chosen at its first click.
    planned: Option<Action>,
}

impl LiteAgent {
    /// An agent with these settings, named `name` (its spec string).
    pub fn new(settings: LiteSettings, name: String) -> LiteAgent {
        LiteAgent { settings, name, planned: None }
    }
}

/// A candidate turn: its clicks (one click: the second piece is chosen after it).
type Turn = Vec<Action>;

fn after(state: &TriGolden, turn: &[Action]) -> TriGolden {
    let mut s = state.clone();
    for &a in turn {
        s.play_unchecked(a);
    }
    s
}

/// The value of a finished (or cut-off) game for `me`.
fn value(state: &TriGolden, me: Seat) -> f64 {
    if let Some(o) = state.outcome()
        && let Some(w) = o.decisive
    {
        return if w == me { 1.0 } else { 0.0 };
    }
    let s = state.scores();
    let diff = f64::from(s[me.index()] - s[me.other().index()]);
    1.0 / (1.0 + (-diff / 3.0).exp())
}

/// The mover's candidate turns at a turn start (rules §8).
pub fn candidates(state: &TriGolden) -> Vec<Turn> {
    let me = state.mover();
    let owner = |p: &super::Place| state.pieces()[usize::from(p.target)].owner.other();
    if state.turns_played() == 0 {
        let mut v = Vec::new();
        state.legal_actions(&mut v);
        return v.into_iter().map(|a| vec![a]).collect();
    }
    let links = state.links();
    let mut legal_first = Vec::new();
    state.legal_actions(&mut legal_first);
    let singles: Vec<Turn> = links
        .single
        .iter()
        .filter(|(p, pts)| owner(p) == me && pts[me.index()] > 0 && legal_first.contains(&Action::Place(*p)))
        .map(|(p, _)| vec![Action::Place(*p)])
        .collect();
    if state.is_single_turn() {
        if !singles.is_empty() {
            return singles;
        }
        return legal_first.into_iter().map(|a| vec![a]).collect();
    }
    let mut scoring = singles;
    for (a, b, pts) in &links.double {
        if owner(a) == me && pts[me.index()] > 0 {
            let turn = vec![Action::Place(*a), Action::Place(*b)];
            if legal_first.contains(&turn[0]) && after(state, &turn[..1]).is_legal(turn[1]) {
                scoring.push(turn);
            }
        }
    }
    let pool: Vec<Turn> = if scoring.is_empty() {
        // Co-live pairs, preferring those that destroy the opponent's scoring single links
        // and create none.
        let opp = me.other();
        let opp_scoring: Vec<super::Place> = links
            .single
            .iter()
            .filter(|(p, pts)| owner(p) == opp && pts[opp.index()] > 0)
            .map(|(p, _)| *p)
            .collect();
        let mut ranked: Vec<(i32, Turn)> = links
            .co_live
            .iter()
            .filter(|(a, _)| owner(a) == me)
            .map(|(a, b)| vec![Action::Place(*a), Action::Place(*b)])
            .filter(|t| legal_first.contains(&t[0]))
            .map(|t| {
                let child = after(state, &t);
                let alive: std::collections::HashSet<super::Place> =
                    child.tracker().methods().iter().map(|m| m.place).collect();
                let destroyed = opp_scoring.iter().filter(|p| !alive.contains(p)).count() as i32;
                // Scoring single links the turn creates for the opponent: methods on its new
                // pieces that would score.
                let n = child.pieces().len();
                let created = child
                    .tracker()
                    .methods()
                    .iter()
                    .filter(|m| {
                        usize::from(m.place.target) >= n - 2
                            && child.stock(opp, usize::from(m.place.shape)) > 0
                    })
                    .filter(|m| child.points_if(&[m.piece]).0[opp.index()] > 0)
                    .count() as i32;
                (destroyed - created, t)
            })
            .collect();
        let best = ranked.iter().map(|r| r.0).max().unwrap_or(0);
        ranked.retain(|r| r.0 == best);
        ranked.into_iter().map(|r| r.1).collect()
    } else {
        scoring
    };
    // Never leave the opponent without a co-live pair, if avoidable. (A single-link first
    // click is judged when its second piece is chosen.)
    let safe: Vec<Turn> = pool
        .iter()
        .filter(|t| t.len() < 2 || after(state, t).outcome().is_none_or(|o| o.decisive != Some(me.other())))
        .cloned()
        .collect();
    if safe.is_empty() { pool } else { safe }
}

/// The legal second pieces after a first, the safe ones if any.
fn seconds(state: &TriGolden) -> Vec<Turn> {
    let me = state.mover();
    let mut v = Vec::new();
    state.legal_actions(&mut v);
    let all: Vec<Turn> = v.into_iter().map(|a| vec![a]).collect();
    let safe: Vec<Turn> = all
        .iter()
        .filter(|t| after(state, t).outcome().is_none_or(|o| o.decisive != Some(me.other())))
        .cloned()
        .collect();
    if safe.is_empty() { all } else { safe }
}

/// Breadth-first minimax over candidates to the end: the best turn and its value for the
/// mover, or `None` if more than `budget` positions would be needed.
fn minimax(state: &TriGolden, me: Seat, budget: &mut u64) -> Option<(f64, Option<Turn>)> {
    if state.outcome().is_some() {
        return Some((value(state, me), None));
    }
    let turns = if state.at_turn_start() { candidates(state) } else { seconds(state) };
    let maximise = state.mover() == me;
    let mut best: Option<(f64, Turn)> = None;
    for t in turns {
        *budget = budget.checked_sub(1)?;
        let child = after(state, &t);
        let (v, _) = minimax(&child, me, budget)?;
        if best.as_ref().is_none_or(|(b, _)| if maximise { v > *b } else { v < *b }) {
            best = Some((v, t));
        }
    }
    best.map(|(v, t)| (v, Some(t)))
}

/// UCB1 over `turns`, random legal turns to the end from each.
fn uct(
    state: &TriGolden,
    turns: &[Turn],
    s: &LiteSettings,
    start: Instant,
    rng: &mut Rng,
    progress: &mut dyn FnMut(&Progress<Action>),
) -> usize {
    let me = state.mover();
    let children: Vec<TriGolden> = turns.iter().map(|t| after(state, t)).collect();
    let (mut n, mut w) = (vec![0u64; turns.len()], vec![0f64; turns.len()]);
    let max_sims = s.sims.unwrap_or(if s.time.is_some() { u64::MAX } else { 200 });
    let mut sims = 0u64;
    // The time budget counts from the start of the move (candidates included); at least one
    // simulation per candidate runs.
    while sims < max_sims && (s.time.is_none_or(|t| start.elapsed() < t) || sims < turns.len() as u64) {
        let total = (sims + 1) as f64;
        let i = (0..turns.len())
            .max_by(|&a, &b| {
                let ucb = |k: usize| {
                    if n[k] == 0 {
                        f64::INFINITY
                    } else {
                        w[k] / n[k] as f64 + (2.0 * total.ln() / n[k] as f64).sqrt()
                    }
                };
                ucb(a).total_cmp(&ucb(b))
            })
            .expect("candidates");
        let mut g = children[i].clone();
        g.random_playout(rng);
        n[i] += 1;
        w[i] += value(&g, me);
        sims += 1;
        if sims.is_multiple_of(16) {
            let best = (0..turns.len()).max_by_key(|&k| n[k]).expect("candidates");
            progress(&Progress {
                sims,
                nodes: turns.len() + 1,
                max_depth: 1,
                elapsed: start.elapsed(),
                best: turns[best].first().copied(),
                value: (2.0 * w[best] / n[best].max(1) as f64 - 1.0) as f32,
            });
        }
    }
    (0..turns.len()).max_by_key(|&k| (n[k], std::cmp::Reverse(k))).expect("candidates")
}

impl Agent<TriGolden> for LiteAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(
        &mut self,
        state: &TriGolden,
        rng: &mut Rng,
        progress: &mut dyn FnMut(&Progress<Action>),
    ) -> Action {
        let start = Instant::now();
        if !state.at_turn_start()
            && let Some(a) = self.planned.take()
            && state.is_legal(a)
        {
            return a;
        }
        self.planned = None;
        let turns = if state.at_turn_start() { candidates(state) } else { seconds(state) };
        assert!(!turns.is_empty(), "LiteAgent asked to move in a finished game");
        let left = state.total_turns() - state.turns_played();
        let mut pick = None;
        if turns.len() > 1 && left <= self.settings.minimax_turns {
            let mut budget = self.settings.minimax_nodes;
            if let Some((_, Some(t))) = minimax(state, state.mover(), &mut budget) {
                pick = Some(t);
            }
        }
        let turn = match pick {
            Some(t) => t,
            None if turns.len() == 1 => turns[0].clone(),
            None => turns[uct(state, &turns, &self.settings, start, rng, progress)].clone(),
        };
        self.planned = turn.get(1).copied();
        turn[0]
    }
}
