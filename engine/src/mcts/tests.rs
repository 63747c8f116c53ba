//! Search tests on tiny games with known answers; no network needed.

use super::*;
use crate::eval::{Rollout, Uniform};
use crate::game::{ActionParseError, DecodeError, Outcome};

/// Nim: take 1 or 2 from a pile; whoever takes the last stone wins decisively. The mover wins
/// exactly when the pile is not a multiple of 3.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Nim {
    pile: u8,
    mover: Seat,
}

impl Game for Nim {
    type Action = u8;
    type Options = ();
    const NAME: &'static str = "nim";
    const STATE_VERSION: u8 = 1;
    fn new_game(_: &()) -> Self {
        Nim { pile: 7, mover: Seat::First }
    }
    fn options(&self) -> &() {
        &()
    }
    fn to_move(&self) -> Actor {
        Actor::Player(self.mover)
    }
    fn outcome(&self) -> Option<Outcome> {
        (self.pile == 0).then(|| Outcome::decisive(self.mover.other(), [0, 0]))
    }
    fn at_turn_start(&self) -> bool {
        true
    }
    fn legal_actions(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend((1..=2).filter(|&k| k <= self.pile));
    }
    fn play_unchecked(&mut self, a: u8) {
        self.pile -= a;
        self.mover = self.mover.other();
    }
    fn parse_action(&self, t: &str) -> Result<u8, ActionParseError> {
        t.parse().map_err(|_| ActionParseError { text: t.into(), reason: "a number".into() })
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend([self.pile, self.mover as u8]);
    }
    fn decode(_: &[u8]) -> Result<Self, DecodeError> {
        Err(DecodeError::Invalid("not needed".into()))
    }
}

/// One decision, then nature: "safe" (action 0) ends level; "gamble" (action 1) leads to a
/// chance node that wins with probability `p_win` (action 10) and loses otherwise (action 11).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Gamble {
    p_win_pct: u8,
    stage: u8,
    result: Option<Outcome>,
}

impl Game for Gamble {
    type Action = u8;
    type Options = ();
    const NAME: &'static str = "gamble";
    const STATE_VERSION: u8 = 1;
    fn new_game(_: &()) -> Self {
        Gamble { p_win_pct: 50, stage: 0, result: None }
    }
    fn options(&self) -> &() {
        &()
    }
    fn to_move(&self) -> Actor {
        if self.stage == 0 { Actor::Player(Seat::First) } else { Actor::Chance }
    }
    fn outcome(&self) -> Option<Outcome> {
        self.result
    }
    fn at_turn_start(&self) -> bool {
        true
    }
    fn legal_actions(&self, out: &mut Vec<u8>) {
        out.clear();
        if self.result.is_none() {
            out.extend(if self.stage == 0 { [0, 1] } else { [10, 11] });
        }
    }
    fn chance_outcomes(&self, out: &mut Vec<(u8, f32)>) {
        out.clear();
        if self.stage == 1 && self.result.is_none() {
            let p = self.p_win_pct as f32 / 100.0;
            out.extend([(10, p), (11, 1.0 - p)]);
        }
    }
    fn play_unchecked(&mut self, a: u8) {
        match a {
            0 => self.result = Some(Outcome::on_points([0, 0])),
            1 => self.stage = 1,
            10 => self.result = Some(Outcome::decisive(Seat::First, [0, 0])),
            _ => self.result = Some(Outcome::decisive(Seat::Second, [0, 0])),
        }
    }
    fn parse_action(&self, t: &str) -> Result<u8, ActionParseError> {
        t.parse().map_err(|_| ActionParseError { text: t.into(), reason: "a number".into() })
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.stage);
    }
    fn decode(_: &[u8]) -> Result<Self, DecodeError> {
        Err(DecodeError::Invalid("not needed".into()))
    }
}

fn run<G: Game>(state: G, sims: u64, cfg: MctsConfig) -> Mcts<G> {
    let mut t = Mcts::new(state, cfg);
    let mut rng = crate::rng_from_seed(7);
    t.search(&Uniform, Budget::sims(sims), &mut rng, &mut |_| {});
    t
}

#[test]
fn nim_finds_the_winning_take() {
    // From 7 the winning move takes 1 (leaving 6); from 8 it takes 2.
    for (pile, best) in [(7u8, 1u8), (8, 2), (4, 1), (5, 2)] {
        let t = run(Nim { pile, mover: Seat::First }, 2000, MctsConfig::default());
        assert_eq!(t.best_action(), Some(best), "pile {pile}");
        assert!(t.root_value() > 0.5, "pile {pile}: value {}", t.root_value());
    }
}

#[test]
fn nim_lost_position_has_negative_value() {
    let t = run(Nim { pile: 6, mover: Seat::First }, 3000, MctsConfig::default());
    assert!(t.root_value() < -0.5, "value {}", t.root_value());
}

#[test]
fn chance_nodes_take_the_expectation() {
    // Gamble worth 2p-1: better than the safe 0 when p > 0.5.
    let good = run(Gamble { p_win_pct: 80, stage: 0, result: None }, 400, MctsConfig::default());
    assert_eq!(good.best_action(), Some(1));
    let bad = run(Gamble { p_win_pct: 20, stage: 0, result: None }, 400, MctsConfig::default());
    assert_eq!(bad.best_action(), Some(0));
    // The gamble child's mean approaches 2p - 1 = 0.6 under stratified chance selection.
    let g = good.root_children().into_iter().find(|c| c.action == 1).unwrap();
    assert!((g.q - 0.6).abs() < 0.05, "q = {}", g.q);
}

#[test]
fn budget_in_simulations_is_exact_and_progress_reports() {
    let mut t = Mcts::new(
        Nim { pile: 20, mover: Seat::First },
        MctsConfig { progress_every: 100, ..Default::default() },
    );
    let mut rng = crate::rng_from_seed(1);
    let mut reports = Vec::new();
    let n = t.search(&Rollout::default(), Budget::sims(1000), &mut rng, &mut |p| {
        reports.push((p.sims, p.nodes, p.max_depth))
    });
    assert_eq!(n, 1000);
    assert_eq!(t.root_visits(), 1000);
    assert!(reports.len() >= 10, "{} reports", reports.len());
    let last = reports.last().unwrap();
    assert_eq!(last.0, 1000);
    assert!(last.1 > 100 && last.2 > 3, "{last:?}");
}

#[test]
fn time_budget_stops() {
    let mut t = Mcts::new(Nim { pile: 60, mover: Seat::First }, MctsConfig::default());
    let mut rng = crate::rng_from_seed(1);
    let start = Instant::now();
    let n = t.search(&Rollout::default(), Budget::time(Duration::from_millis(50)), &mut rng, &mut |_| {});
    assert!(n > 10);
    assert!(start.elapsed() < Duration::from_millis(500));
}

#[test]
fn subtree_reuse_keeps_the_chosen_child() {
    let mut t = run(Nim { pile: 10, mover: Seat::First }, 2000, MctsConfig::default());
    let best = t.best_action().unwrap();
    let child_visits = t.root_children().iter().find(|c| c.action == best).unwrap().visits;
    t.advance(best);
    assert_eq!(t.root().pile, 10 - best);
    assert_eq!(t.root_visits(), child_visits);
    // The kept tree is consistent: children's visits sum to at most the root's.
    let sum: u32 = t.root_children().iter().map(|c| c.visits).sum();
    assert!(sum <= t.root_visits());
    // Searching on from the reused root works and continues counting.
    let mut rng = crate::rng_from_seed(3);
    t.search(&Uniform, Budget::sims(100), &mut rng, &mut |_| {});
    assert_eq!(t.root_visits(), child_visits + 100);
    // An action whose child was never visited starts a fresh tree.
    let mut fresh = run(Nim { pile: 10, mover: Seat::First }, 1, MctsConfig::default());
    assert_eq!(fresh.node_count(), 3);
    fresh.advance(2);
    assert_eq!(fresh.node_count(), 1);
    assert_eq!(fresh.root().pile, 8);
}

#[test]
fn batched_search_agrees() {
    let cfg = MctsConfig { batch_size: 8, ..Default::default() };
    let t = run(Nim { pile: 7, mover: Seat::First }, 3000, cfg);
    assert_eq!(t.best_action(), Some(1));
    assert_eq!(t.root_visits(), 3000);
}

#[test]
fn search_is_deterministic_given_a_seed() {
    let a = run(Nim { pile: 30, mover: Seat::First }, 500, MctsConfig::default());
    let b = run(Nim { pile: 30, mover: Seat::First }, 500, MctsConfig::default());
    assert_eq!(a.root_children(), b.root_children());
}

/// Nim's exact value (the mover wins when the pile is not a multiple of 3), with priors that
/// favour the wrong take 9 to 1, so only the search can find the right one.
struct NimOracle;

impl Evaluator<Nim> for NimOracle {
    fn evaluate(&self, leaves: &mut [Leaf<Nim>], _rng: &mut Rng) {
        for leaf in leaves {
            let mover_wins = leaf.state.pile % 3 != 0;
            leaf.value = if mover_wins == (leaf.state.mover == Seat::First) { 0.9 } else { -0.9 };
            let right = leaf.state.pile % 3;
            leaf.priors = leaf.actions.iter().map(|&a| if a == right { 0.1 } else { 0.9 }).collect();
        }
    }
    fn name(&self) -> String {
        "nim-oracle".into()
    }
}

#[test]
fn gumbel_improves_on_misleading_priors_with_few_simulations() {
    // From 7 the winning move takes 1, which the priors rate at 0.1: the improved policy
    // must carry it after 4 simulations, with or without the Gumbel draws.
    for (noise, seed) in [(false, 1), (true, 1), (true, 2), (true, 3)] {
        let mut t = Mcts::new(Nim { pile: 7, mover: Seat::First }, MctsConfig::default());
        let mut rng = crate::rng_from_seed(seed);
        let r = t.gumbel_search(&NimOracle, 4, &GumbelConfig::default(), noise, &mut rng);
        assert_eq!(r.sims, 4);
        assert_eq!(t.root_visits(), 4);
        let sum: f32 = r.policy.iter().map(|(_, p)| p).sum();
        assert!((sum - 1.0).abs() < 1e-4, "policy sums to {sum}");
        let p1 = r.policy.iter().find(|(a, _)| *a == 1).unwrap().1;
        assert!(p1 > 0.9, "noise {noise}: improved policy {:?}", r.policy);
        assert_eq!(r.action, 1, "noise {noise}, seed {seed}");
    }
}

#[test]
fn gumbel_halving_spends_the_budget_on_the_better_half() {
    // Sequential halving: with 8 candidates and 64 simulations the survivors of the first
    // round get more visits than the others, and every considered action is visited.
    let mut t = Mcts::new(Wide { width: 8, good: 5 }, MctsConfig::default());
    let mut rng = crate::rng_from_seed(11);
    let cfg = GumbelConfig { m: 8, ..GumbelConfig::default() };
    let r = t.gumbel_search(&Uniform, 64, &cfg, true, &mut rng);
    assert_eq!(r.action, 5);
    let kids = t.root_children();
    assert!(kids.iter().all(|c| c.visits >= 1), "{kids:?}");
    let good = kids.iter().find(|c| c.action == 5).unwrap().visits;
    assert!(good >= 16, "the winner got {good} of 64: {kids:?}");
    // Considering fewer actions than there are: only m of them are visited.
    let mut t = Mcts::new(Wide { width: 8, good: 5 }, MctsConfig::default());
    let r = t.gumbel_search(&Uniform, 8, &GumbelConfig { m: 4, ..cfg }, true, &mut rng);
    assert_eq!(t.root_children().iter().filter(|c| c.visits > 0).count(), 4);
    assert_eq!(r.sims, 8);
}

#[test]
fn gumbel_search_is_deterministic_given_a_seed_and_batches_alike() {
    let go = |batch: usize| {
        let cfg = MctsConfig { batch_size: batch, ..MctsConfig::default() };
        let mut t = Mcts::new(Nim { pile: 11, mover: Seat::First }, cfg);
        let mut rng = crate::rng_from_seed(5);
        t.gumbel_search(&Rollout::default(), 48, &GumbelConfig::default(), true, &mut rng)
    };
    assert_eq!(go(1), go(1));
    let batched = go(8);
    assert_eq!(batched.sims, 48);
    // From 11 the winning take is 2 (leaving 9).
    assert_eq!(batched.action, 2);
}

#[test]
fn forced_playouts_visit_every_root_child_and_pruning_takes_the_visits_back() {
    // Wide: one winning move among 8, every other loses at once. Plain PUCT soon stops
    // trying the losers; with k = 2 each child gets at least about √(2 · P · N) visits.
    let n = 400u32;
    let plain = run(Wide { width: 8, good: 5 }, u64::from(n), MctsConfig::default());
    let forced = run(
        Wide { width: 8, good: 5 },
        u64::from(n),
        MctsConfig { forced_playouts: 2.0, ..MctsConfig::default() },
    );
    let floor = |c: &ChildStats<u8>| (2.0 * c.prior * n as f32).sqrt().floor() as u32;
    let losers = |t: &Mcts<Wide>| t.root_children().into_iter().filter(|c| c.action != 5).collect::<Vec<_>>();
    assert!(losers(&forced).iter().all(|c| c.visits + 1 >= floor(c)), "{:?}", forced.root_children());
    let (f, p): (u32, u32) =
        (losers(&forced).iter().map(|c| c.visits).sum(), losers(&plain).iter().map(|c| c.visits).sum());
    assert!(f > p, "forced playouts gave the losers {f} visits, plain PUCT {p}");
    assert_eq!(forced.best_action(), Some(5));
    // The policy target: the forced visits to losing moves are pruned away, the best keeps
    // all of its own, and nothing grows.
    let pruned = forced.pruned_root_children(2.0);
    let raw = forced.root_children();
    for (a, b) in pruned.iter().zip(&raw) {
        assert!(a.visits <= b.visits, "{a:?} > {b:?}");
        if b.action == 5 {
            assert_eq!(a.visits, b.visits);
        } else {
            assert_eq!(a.visits, 0, "a loser keeps {a:?}");
        }
    }
    // k = 0 is no pruning; a child that PUCT would choose anyway keeps its visits.
    assert_eq!(forced.pruned_root_children(0.0), raw);
    let even =
        run(Wide { width: 2, good: 9 }, 64, MctsConfig { forced_playouts: 2.0, ..MctsConfig::default() });
    let kept: u32 = even.pruned_root_children(2.0).iter().map(|c| c.visits).sum();
    assert!(kept + 2 >= even.root_visits(), "two equal moves: {:?}", even.pruned_root_children(2.0));
}

/// One move among `width`; action `good` wins, every other loses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Wide {
    width: u8,
    good: u8,
}

impl Game for Wide {
    type Action = u8;
    type Options = ();
    const NAME: &'static str = "wide";
    const STATE_VERSION: u8 = 1;
    fn new_game(_: &()) -> Self {
        Wide { width: 8, good: 0 }
    }
    fn options(&self) -> &() {
        &()
    }
    fn to_move(&self) -> Actor {
        Actor::Player(Seat::First)
    }
    fn outcome(&self) -> Option<Outcome> {
        match self.width {
            100 => Some(Outcome::decisive(Seat::First, [1, 0])),
            101 => Some(Outcome::decisive(Seat::Second, [0, 1])),
            _ => None,
        }
    }
    fn at_turn_start(&self) -> bool {
        true
    }
    fn legal_actions(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend(0..self.width);
    }
    fn play_unchecked(&mut self, a: u8) {
        self.width = if a == self.good { 100 } else { 101 };
    }
    fn parse_action(&self, t: &str) -> Result<u8, ActionParseError> {
        t.parse().map_err(|_| ActionParseError { text: t.into(), reason: "a number".into() })
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend([self.width, self.good]);
    }
    fn decode(_: &[u8]) -> Result<Self, DecodeError> {
        Err(DecodeError::Invalid("not needed".into()))
    }
}
