//! Generic Monte-Carlo tree search over any [`Game`]: PUCT selection with priors from a batched
//! [`Evaluator`], chance nodes, a budget from outside (simulations and/or a deadline), subtree
//! reuse after a move, and a progress callback (depth, nodes, elapsed — what the user's AI shows
//! live).
//!
//! The tree is over atomic actions, so a multi-click turn is a chain of nodes with the same
//! mover. Values are stored from [`Seat::First`]'s view and turned to the mover's view when a
//! child is selected, so a turn of several clicks needs no special case.
//!
//! Batching: with `batch_size > 1` one search gathers several leaves under virtual loss and
//! hands them to the evaluator together.

use std::time::{Duration, Instant};

use crate::Rng;
use crate::eval::{Evaluator, Leaf, outcome_value};
use crate::game::{Actor, Game, Seat};

/// Search settings.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsConfig {
    /// Exploration constant of PUCT: `Q + c_puct · P · √N / (1 + n)`.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this.
    pub fpu_reduction: f32,
    /// Leaves gathered (under virtual loss) per evaluator call.
    pub batch_size: usize,
    /// Score scale of the terminal value (the user's AI: 3).
    pub score_scale: f32,
    /// The progress callback is called every this many simulations (and at the end).
    pub progress_every: u64,
    /// Weight of the game's hand-written root priors ([`Game::knowledge_priors`], e.g. the
    /// user's TriGolden AI's candidate turns) mixed into the root's once it is expanded:
    /// `p ← (1 − k)·p + k·knowledge`. 0 (the default): none; 1: only the game's candidates
    /// get prior mass.
    pub knowledge: f32,
    /// KataGo's forced playouts (Wu 2019, §3.1): a root child with prior `P` gets at least
    /// `√(k · P · N)` of the root's `N` visits before PUCT chooses freely, so that noise-boosted
    /// moves are really tried. 0 (the default): off. KataGo uses k = 2 in full searches, and
    /// [`Mcts::pruned_root_children`] removes the forced visits from the policy target.
    pub forced_playouts: f32,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            c_puct: 1.5,
            fpu_reduction: 0.1,
            batch_size: 1,
            score_scale: crate::eval::SCORE_SCALE,
            progress_every: 1024,
            knowledge: 0.0,
            forced_playouts: 0.0,
        }
    }
}

/// Set (to `true`) by another thread to end a search early ([`Mcts::set_stop`],
/// [`crate::agent::Agent::set_stop`]).
pub type StopFlag = std::sync::Arc<std::sync::atomic::AtomicBool>;

/// How much to search: stops at whichever limit comes first. At least one simulation runs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// Maximum simulations in this call.
    pub sims: Option<u64>,
    /// Wall-clock deadline, supplied by the caller.
    pub deadline: Option<Instant>,
}

impl Budget {
    /// A budget of `n` simulations.
    pub fn sims(n: u64) -> Budget {
        Budget { sims: Some(n), deadline: None }
    }

    /// A budget of `d` from now.
    pub fn time(d: Duration) -> Budget {
        Budget { sims: None, deadline: Some(Instant::now() + d) }
    }
}

/// Live search statistics, passed to the progress callback.
#[derive(Clone, Debug)]
pub struct Progress<A> {
    /// Simulations run in this call.
    pub sims: u64,
    /// Nodes in the tree.
    pub nodes: usize,
    /// Deepest node reached, in actions below the root.
    pub max_depth: u32,
    /// Time since this call started.
    pub elapsed: Duration,
    /// The most visited root action so far.
    pub best: Option<A>,
    /// The root value from the root mover's view, in `[-1, 1]`.
    pub value: f32,
}

/// Statistics of one root child.
#[derive(Clone, Debug, PartialEq)]
pub struct ChildStats<A> {
    /// The action.
    pub action: A,
    /// Visits.
    pub visits: u32,
    /// Mean value from the root mover's view (0 if unvisited).
    pub q: f32,
    /// Prior.
    pub prior: f32,
}

const NO_CHILDREN: u32 = u32::MAX;
const MOVER_CHANCE: u8 = 2;
const MOVER_UNKNOWN: u8 = 3;

#[derive(Clone, Debug)]
struct Node<A> {
    action: Option<A>,
    prior: f32,
    visits: u32,
    in_flight: u32,
    /// Sum of values from the first seat's view.
    value_sum: f64,
    first_child: u32,
    num_children: u32,
    /// 0/1: seat to move at this node; 2: chance; 3: not yet known (unexpanded).
    mover: u8,
    terminal: Option<f32>,
}

impl<A> Node<A> {
    fn new(action: Option<A>, prior: f32) -> Self {
        Node {
            action,
            prior,
            visits: 0,
            in_flight: 0,
            value_sum: 0.0,
            first_child: NO_CHILDREN,
            num_children: 0,
            mover: MOVER_UNKNOWN,
            terminal: None,
        }
    }
    fn expanded(&self) -> bool {
        self.first_child != NO_CHILDREN
    }
}

/// A search tree rooted at a position, kept between moves for subtree reuse.
pub struct Mcts<G: Game> {
    config: MctsConfig,
    root_state: G,
    nodes: Vec<Node<G::Action>>,
    max_depth: u32,
    chance_buf: Vec<(G::Action, f32)>,
    /// Whether the current root has had its knowledge priors considered.
    root_knowledge: bool,
    /// Ends a search early when set by another thread ([`Mcts::set_stop`]).
    stop: Option<StopFlag>,
    /// Root children (node indices) that the next simulations must go through, in order
    /// (Gumbel's sequential halving schedules its visits this way); consumed from
    /// `forced_next`.
    forced: Vec<usize>,
    forced_next: usize,
}

impl<G: Game> Mcts<G> {
    /// An empty tree at `root`.
    pub fn new(root: G, config: MctsConfig) -> Self {
        Mcts {
            config,
            root_state: root,
            nodes: vec![Node::new(None, 1.0)],
            max_depth: 0,
            chance_buf: Vec::new(),
            root_knowledge: false,
            stop: None,
            forced: Vec::new(),
            forced_next: 0,
        }
    }

    /// A flag that, once set by another thread, ends the running search after the current
    /// batch of simulations (as if its budget were spent). `None` removes it.
    pub fn set_stop(&mut self, stop: Option<StopFlag>) {
        self.stop = stop;
    }

    /// The settings.
    pub fn config(&self) -> &MctsConfig {
        &self.config
    }

    /// Sets [`MctsConfig::forced_playouts`] for the searches that follow (self-play forces
    /// playouts in its full searches only).
    pub fn set_forced_playouts(&mut self, k: f32) {
        self.config.forced_playouts = k.max(0.0);
    }

    /// The root position.
    pub fn root(&self) -> &G {
        &self.root_state
    }

    /// Nodes in the tree.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Visits of the root.
    pub fn root_visits(&self) -> u32 {
        self.nodes[0].visits
    }

    /// Replaces the tree with an empty one at `root`.
    pub fn reset(&mut self, root: G) {
        self.root_state = root;
        self.nodes.clear();
        self.nodes.push(Node::new(None, 1.0));
        self.max_depth = 0;
        self.root_knowledge = false;
        self.forced.clear();
        self.forced_next = 0;
    }

    /// Moves the root to the child reached by `action`, keeping its subtree (subtree reuse).
    /// The action need not have been searched; it must be legal at the root.
    pub fn advance(&mut self, action: G::Action) {
        self.root_knowledge = false;
        let mut next = self.root_state.clone();
        next.play_unchecked(action);
        let root = &self.nodes[0];
        let child = root.expanded().then(|| {
            (root.first_child..root.first_child + root.num_children)
                .find(|&i| self.nodes[i as usize].action == Some(action))
        });
        match child.flatten() {
            Some(c) if self.nodes[c as usize].visits > 0 => {
                let mut kept = Vec::with_capacity(self.nodes.len());
                let mut top = self.nodes[c as usize].clone();
                top.action = None;
                top.prior = 1.0;
                kept.push(top);
                let mut i = 0;
                while i < kept.len() {
                    if kept[i].expanded() {
                        let (first, n) = (kept[i].first_child as usize, kept[i].num_children as usize);
                        let start = kept.len() as u32;
                        kept.extend_from_slice(&self.nodes[first..first + n]);
                        kept[i].first_child = start;
                    }
                    i += 1;
                }
                self.nodes = kept;
                self.root_state = next;
                self.max_depth = 0;
            }
            _ => self.reset(next),
        }
    }

    fn children(&self, n: usize) -> std::ops::Range<usize> {
        let node = &self.nodes[n];
        if node.expanded() {
            node.first_child as usize..(node.first_child + node.num_children) as usize
        } else {
            0..0
        }
    }

    /// Mean value of node `n` from `seat`'s view, with in-flight visits counted as losses.
    fn q(&self, n: usize, seat: Seat) -> Option<f32> {
        let node = &self.nodes[n];
        let visits = node.visits + node.in_flight;
        if visits == 0 {
            return None;
        }
        let v = (node.value_sum as f32) * seat.sign() - node.in_flight as f32;
        Some(v / visits as f32)
    }

    fn select_child(&self, n: usize) -> usize {
        let node = &self.nodes[n];
        let range = self.children(n);
        if node.mover == MOVER_CHANCE {
            // Stratified: the outcome furthest below its share of the visits.
            let total = (node.visits + node.in_flight + 1) as f32;
            return range
                .max_by(|&a, &b| {
                    let da =
                        self.nodes[a].prior * total - (self.nodes[a].visits + self.nodes[a].in_flight) as f32;
                    let db =
                        self.nodes[b].prior * total - (self.nodes[b].visits + self.nodes[b].in_flight) as f32;
                    da.total_cmp(&db)
                })
                .expect("an expanded chance node has outcomes");
        }
        let seat = if node.mover == 0 { Seat::First } else { Seat::Second };
        let parent_visits = (node.visits + node.in_flight) as f32;
        let sqrt_n = parent_visits.max(1.0).sqrt();
        let parent_q = self.q(n, seat).unwrap_or(0.0);
        let fpu = parent_q - self.config.fpu_reduction;
        // Forced playouts, at the root only: a child below √(k·P·N) visits goes first (the
        // one furthest below its floor).
        let k = self.config.forced_playouts;
        if n == 0 && k > 0.0 {
            let forced = range
                .clone()
                .map(|c| {
                    let child = &self.nodes[c];
                    (c, (k * child.prior * parent_visits).sqrt() - (child.visits + child.in_flight) as f32)
                })
                .filter(|&(c, deficit)| deficit > 0.0 && self.nodes[c].prior > 0.0)
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((c, _)) = forced {
                return c;
            }
        }
        let mut best = range.start;
        let mut best_score = f32::NEG_INFINITY;
        for c in range {
            let child = &self.nodes[c];
            let q = self.q(c, seat).unwrap_or(fpu);
            let u =
                self.config.c_puct * child.prior * sqrt_n / (1.0 + (child.visits + child.in_flight) as f32);
            let score = q + u;
            if score > best_score {
                best_score = score;
                best = c;
            }
        }
        best
    }

    fn backup(&mut self, path: &[usize], value: f32, virtual_loss: bool) {
        for &n in path {
            let node = &mut self.nodes[n];
            node.visits += 1;
            node.value_sum += value as f64;
            if virtual_loss {
                node.in_flight -= 1;
            }
        }
    }

    fn expand(&mut self, n: usize, leaf: &Leaf<G>) {
        let first = self.nodes.len() as u32;
        match leaf.state.to_move() {
            Actor::Chance => {
                leaf.state.chance_outcomes(&mut self.chance_buf);
                self.nodes[n].mover = MOVER_CHANCE;
                for &(a, p) in &self.chance_buf {
                    self.nodes.push(Node::new(Some(a), p));
                }
            }
            Actor::Player(seat) => {
                self.nodes[n].mover = seat.index() as u8;
                let k = leaf.actions.len();
                let ok = leaf.priors.len() == k && leaf.priors.iter().all(|p| p.is_finite() && *p >= 0.0);
                let sum: f32 = if ok { leaf.priors.iter().sum() } else { 0.0 };
                for (i, &a) in leaf.actions.iter().enumerate() {
                    let p = if ok && sum > 0.0 { leaf.priors[i] / sum } else { 1.0 / k as f32 };
                    self.nodes.push(Node::new(Some(a), p));
                }
            }
        }
        let count = self.nodes.len() as u32 - first;
        let node = &mut self.nodes[n];
        node.first_child = first;
        node.num_children = count;
    }

    /// Runs simulations until the budget is spent, calling `progress` every
    /// `config.progress_every` simulations and once at the end.
    ///
    /// # Panics
    /// If the root is a finished game.
    pub fn search<E: Evaluator<G> + ?Sized>(
        &mut self,
        evaluator: &E,
        budget: Budget,
        rng: &mut Rng,
        progress: &mut dyn FnMut(&Progress<G::Action>),
    ) -> u64 {
        assert!(self.root_state.outcome().is_none(), "search called on a finished game");
        let start = Instant::now();
        let batch = self.config.batch_size.max(1);
        let mut sims = 0u64;
        let mut next_report = self.config.progress_every.max(1);
        let mut leaves: Vec<Leaf<G>> = Vec::with_capacity(batch);
        let mut leaf_paths: Vec<Vec<usize>> = Vec::with_capacity(batch);
        let mut path = Vec::new();
        loop {
            let want = match budget.sims {
                Some(max) => (max.saturating_sub(sims) as usize).min(batch),
                None => batch,
            };
            if want == 0 && sims > 0 {
                break;
            }
            // Gather up to `want` leaves under virtual loss.
            leaves.clear();
            leaf_paths.clear();
            let mut done_now = 0u64;
            for _ in 0..want.max(1) {
                let mut state = self.root_state.clone();
                path.clear();
                path.push(0usize);
                let mut n = 0usize;
                let mut forced = false;
                while self.nodes[n].expanded() && self.nodes[n].terminal.is_none() {
                    n = if n == 0 && self.forced_next < self.forced.len() {
                        forced = true;
                        self.forced_next += 1;
                        self.forced[self.forced_next - 1]
                    } else {
                        self.select_child(n)
                    };
                    state.play_unchecked(self.nodes[n].action.expect("children have actions"));
                    path.push(n);
                }
                self.max_depth = self.max_depth.max(path.len() as u32 - 1);
                if self.nodes[n].terminal.is_none()
                    && let Some(o) = state.outcome()
                {
                    self.nodes[n].terminal = Some(outcome_value(&o, self.config.score_scale));
                }
                if let Some(v) = self.nodes[n].terminal {
                    self.backup(&path, v, false);
                    done_now += 1;
                    continue;
                }
                if self.nodes[n].in_flight > 0 {
                    // Already gathered in this batch: stop gathering rather than evaluate twice
                    // (a scheduled root visit waits for the next batch).
                    if forced {
                        self.forced_next -= 1;
                    }
                    break;
                }
                for &p in &path {
                    self.nodes[p].in_flight += 1;
                }
                leaves.push(Leaf::new(state));
                leaf_paths.push(path.clone());
            }
            if !leaves.is_empty() {
                evaluator.evaluate(&mut leaves, rng);
                for (leaf, p) in leaves.iter().zip(&leaf_paths) {
                    let n = *p.last().expect("non-empty path");
                    self.expand(n, leaf);
                    self.backup(p, leaf.value.clamp(-1.0, 1.0), true);
                }
            }
            if !self.root_knowledge && self.nodes[0].expanded() {
                self.apply_root_knowledge();
            }
            sims += done_now + leaves.len() as u64;
            if sims >= next_report {
                next_report = sims + self.config.progress_every.max(1);
                progress(&self.progress(sims, start.elapsed()));
            }
            if budget.sims.is_some_and(|m| sims >= m)
                || budget.deadline.is_some_and(|d| Instant::now() >= d)
                || self.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
            {
                break;
            }
        }
        progress(&self.progress(sims, start.elapsed()));
        sims
    }

    /// Mixes [`Game::knowledge_priors`] into the expanded root's priors at weight
    /// `config.knowledge` (once per root).
    fn apply_root_knowledge(&mut self) {
        self.root_knowledge = true;
        let k = self.config.knowledge;
        if k <= 0.0 || !matches!(self.root_state.to_move(), Actor::Player(_)) {
            return;
        }
        let actions: Vec<G::Action> =
            self.children(0).map(|c| self.nodes[c].action.expect("children have actions")).collect();
        let Some(w) = self.root_state.knowledge_priors(&actions) else { return };
        let sum: f32 = w.iter().sum();
        if w.len() != actions.len() || !sum.is_finite() || sum <= 0.0 || w.iter().any(|x| *x < 0.0) {
            return;
        }
        let w: Vec<f32> = w.iter().map(|x| x / sum).collect();
        self.mix_root_priors(&w, k.min(1.0));
    }

    fn progress(&self, sims: u64, elapsed: Duration) -> Progress<G::Action> {
        Progress {
            sims,
            nodes: self.nodes.len(),
            max_depth: self.max_depth,
            elapsed,
            best: self.best_action(),
            value: self.root_value(),
        }
    }

    /// The root value from the root mover's view (0 before any visit).
    pub fn root_value(&self) -> f32 {
        let seat = match self.root_state.to_move() {
            Actor::Player(s) => s,
            Actor::Chance => Seat::First,
        };
        self.q(0, seat).unwrap_or(0.0)
    }

    /// Root children with their statistics, in legal-action order.
    pub fn root_children(&self) -> Vec<ChildStats<G::Action>> {
        let seat = match self.root_state.to_move() {
            Actor::Player(s) => s,
            Actor::Chance => Seat::First,
        };
        self.children(0)
            .map(|c| {
                let n = &self.nodes[c];
                ChildStats {
                    action: n.action.expect("children have actions"),
                    visits: n.visits,
                    q: self.q(c, seat).unwrap_or(0.0),
                    prior: n.prior,
                }
            })
            .collect()
    }

    /// Root children with KataGo's policy-target pruning (Wu 2019, §3.1) applied to their
    /// visits: every child but the most visited loses as many visits, up to its forced
    /// `√(k · P · N)`, as it can while its PUCT score stays below the most visited child's;
    /// a child left with one visit or fewer is pruned to 0. The result is the policy target
    /// of a search that forced playouts with `k`; `k = 0` returns
    /// [`Mcts::root_children`] unchanged.
    pub fn pruned_root_children(&self, k: f32) -> Vec<ChildStats<G::Action>> {
        let mut kids = self.root_children();
        if k <= 0.0 || kids.is_empty() {
            return kids;
        }
        let total: u32 = kids.iter().map(|c| c.visits).sum();
        let sqrt_n = (total.max(1) as f32).sqrt();
        let c_puct = self.config.c_puct;
        let best = (0..kids.len()).max_by_key(|&i| kids[i].visits).expect("not empty");
        let b = &kids[best];
        let best_score = b.q + c_puct * b.prior * sqrt_n / (1.0 + b.visits as f32);
        for (i, c) in kids.iter_mut().enumerate() {
            if i == best || c.visits == 0 {
                continue;
            }
            let forced = (k * c.prior * total as f32).sqrt();
            let floor = (c.visits as f32 - forced).max(0.0).ceil();
            // The fewest visits at which q + c·P·√N / (1 + n) is still ≤ the best's score.
            let gap = best_score - c.q;
            let keep =
                if gap <= 0.0 { c.visits as f32 } else { (c_puct * c.prior * sqrt_n / gap - 1.0).ceil() };
            let n = keep.max(floor).min(c.visits as f32) as u32;
            c.visits = if n <= 1 { 0 } else { n };
        }
        kids
    }

    /// Mixes `noise` (one value per root child, summing to 1) into the root priors:
    /// `p ← (1 − fraction)·p + fraction·noise`. Used for root Dirichlet noise in self-play.
    /// Does nothing if the root is not expanded or the lengths differ.
    pub fn mix_root_priors(&mut self, noise: &[f32], fraction: f32) {
        let range = self.children(0);
        if range.len() != noise.len() {
            return;
        }
        for (c, n) in range.zip(noise) {
            let p = &mut self.nodes[c].prior;
            *p = (1.0 - fraction) * *p + fraction * n;
        }
    }

    /// The most visited root action (ties: higher value, then lower prior index).
    pub fn best_action(&self) -> Option<G::Action> {
        let kids = self.root_children();
        kids.iter()
            .enumerate()
            .max_by(|(ia, a), (ib, b)| a.visits.cmp(&b.visits).then(a.q.total_cmp(&b.q)).then(ib.cmp(ia)))
            .map(|(_, c)| c.action)
    }

    /// The principal variation: most visited actions from the root, while visited.
    pub fn principal_variation(&self, max_len: usize) -> Vec<G::Action> {
        let mut pv = Vec::new();
        let mut n = 0;
        while pv.len() < max_len {
            let Some(best) =
                self.children(n).filter(|&c| self.nodes[c].visits > 0).max_by_key(|&c| self.nodes[c].visits)
            else {
                break;
            };
            pv.push(self.nodes[best].action.expect("children have actions"));
            n = best;
        }
        pv
    }
}

mod gumbel;
pub use gumbel::{GumbelConfig, GumbelResult};

#[cfg(test)]
mod tests;
