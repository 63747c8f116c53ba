//! Leaf evaluators: what the search asks about a position it has not expanded yet.
//!
//! The search talks only to the [`Evaluator`] trait, in batches, the way KataGo's search talks
//! only to its neural network. Two evaluators live here and need no network: [`Uniform`] and
//! [`Rollout`] (the user's own AI: a random playout to the end, scored by the score
//! difference), and [`Mixed`], a playout mixed into another evaluator's value. The trained
//! network is a third implementation, `model::NetEvaluator`; which evaluator a search uses,
//! and how, is a [`crate::leaf::LeafSettings`].

use crate::Rng;
use crate::game::{Game, Outcome, Seat};

/// One position for an [`Evaluator`] to fill in.
#[derive(Debug)]
pub struct Leaf<G: Game> {
    /// The position.
    pub state: G,
    /// Its legal actions (empty at a chance node: the search takes chance priors from the game).
    pub actions: Vec<G::Action>,
    /// Output: the value in `[-1, 1]` from [`Seat::First`]'s view (+1: first seat wins).
    pub value: f32,
    /// Output: one prior per action, in the order of `actions`, summing to 1.
    pub priors: Vec<f32>,
}

impl<G: Game> Leaf<G> {
    /// A leaf for `state` with its legal actions and empty outputs.
    pub fn new(state: G) -> Leaf<G> {
        let mut actions = Vec::new();
        if matches!(state.to_move(), crate::game::Actor::Player(_)) {
            state.legal_actions(&mut actions);
        }
        Leaf { state, actions, value: 0.0, priors: Vec::new() }
    }
}

/// Evaluates positions in batches.
///
/// Implementations must set `value` and, for player nodes, `priors` (same length as
/// `actions`) of every leaf. They may use `rng` (rollouts do) and must be deterministic given
/// it.
pub trait Evaluator<G: Game>: Send + Sync {
    /// Fills in every leaf of the batch.
    fn evaluate(&self, leaves: &mut [Leaf<G>], rng: &mut Rng);

    /// Called before each move's search. An evaluator that follows a changing model (the
    /// network) takes the newest one here, so a swap lands between moves, and returns its
    /// version for the game record; fixed evaluators return 0.
    fn begin_move(&self) -> u64 {
        0
    }

    /// Leaves per call this evaluator works best with (the search's virtual-loss batch in
    /// self-play): 1 for rollouts, more for a network, whose cost per call is mostly fixed.
    fn preferred_batch(&self) -> usize {
        1
    }

    /// The score scale of the margins in this evaluator's values (`tanh(d / (2·scale))`,
    /// [`outcome_value`]). Self-play values finished games on it too, so that a leaf that
    /// predicts a margin and a finished game with that margin agree. Wrappers forward it.
    fn score_scale(&self) -> f32 {
        SCORE_SCALE
    }

    /// A short name for logs (`uniform`, `rollout`).
    fn name(&self) -> String;

    /// The value of one position for its side to move, in `[-1, 1]` (what [`Evaluator::evaluate`]
    /// would give it, from the mover's view, priors not computed), where this evaluator has a
    /// path for a lone position cheaper than a batch call: an alpha-beta searcher asks for
    /// one value at every leaf. `None`: it has none, call `evaluate`. Deterministic
    /// evaluators only (no `rng` is passed).
    fn mover_value(&self, _state: &G) -> Option<f32> {
        None
    }

    /// The network's weights for the searcher to run itself ([`crate::shallow::ShallowNet`]),
    /// where this evaluator is such a network (one hidden layer) running on the calling
    /// thread; `None` otherwise. Asked once per search: a hot-swapped model may change
    /// between moves.
    fn shallow(&self) -> Option<std::sync::Arc<crate::shallow::ShallowNet>> {
        None
    }
}

/// The value of a finished game in `[-1, 1]` from [`Seat::First`]'s view: ±1 for a decisive
/// result, else `2σ(d / score_scale) − 1` with `d` the [`Outcome::difference`] — the user's leaf value
/// `1 / (1 + e^(−(own − opponent) / 3))` rescaled from `[0, 1]` to `[-1, 1]`.
pub fn outcome_value(outcome: &Outcome, score_scale: f32) -> f32 {
    match outcome.decisive {
        Some(Seat::First) => 1.0,
        Some(Seat::Second) => -1.0,
        None => {
            let d = outcome.difference(Seat::First) as f32;
            // 2σ(x) − 1 = tanh(x / 2)
            (d / score_scale / 2.0).tanh()
        }
    }
}

fn uniform_priors<G: Game>(leaf: &mut Leaf<G>) {
    let n = leaf.actions.len();
    leaf.priors.clear();
    leaf.priors.resize(n, if n == 0 { 0.0 } else { 1.0 / n as f32 });
}

/// Value 0 and uniform priors everywhere: search guided by terminal values alone.
#[derive(Copy, Clone, Debug, Default)]
pub struct Uniform;

impl<G: Game> Evaluator<G> for Uniform {
    fn evaluate(&self, leaves: &mut [Leaf<G>], _rng: &mut Rng) {
        for leaf in leaves {
            leaf.value = 0.0;
            uniform_priors(leaf);
        }
    }

    fn name(&self) -> String {
        "uniform".into()
    }
}

/// The score-difference scale of the logistic value of a finished game,
/// `1 / (1 + e^(−diff / 3))`, as the user's TriGolden AI defines it; every evaluator and the
/// network's margin term use it unless a setting says otherwise.
pub const SCORE_SCALE: f32 = 3.0;

/// The user's own AI's leaf value: play uniformly random actions to the end of the game and
/// score the result with [`outcome_value`]; uniform priors.
#[derive(Copy, Clone, Debug)]
pub struct Rollout {
    /// Score difference scale of the logistic (the user's AI uses 3).
    pub score_scale: f32,
    /// Playouts averaged per leaf.
    pub playouts: u32,
}

impl Default for Rollout {
    fn default() -> Self {
        Rollout { score_scale: SCORE_SCALE, playouts: 1 }
    }
}

impl<G: Game> Evaluator<G> for Rollout {
    fn evaluate(&self, leaves: &mut [Leaf<G>], rng: &mut Rng) {
        for leaf in leaves {
            let mut total = 0.0;
            for _ in 0..self.playouts.max(1) {
                let mut s = leaf.state.clone();
                s.random_playout(rng);
                let o = s.outcome().expect("a playout ends the game");
                total += outcome_value(&o, self.score_scale);
            }
            leaf.value = total / self.playouts.max(1) as f32;
            uniform_priors(leaf);
        }
    }

    fn score_scale(&self) -> f32 {
        self.score_scale
    }

    fn name(&self) -> String {
        "rollout".into()
    }
}

/// A leaf evaluator's value mixed with random playouts, as AlphaGo mixed its value network
/// with rollouts: `value = (1 − λ) · inner + λ · rollout`; priors are the inner evaluator's.
/// The playout sees what a single evaluation can miss (a player left without a legal move),
/// and its errors are independent of the network's.
pub struct Mixed<G: Game> {
    /// The evaluator that gives priors and the rest of the value (a network).
    pub inner: std::sync::Arc<dyn Evaluator<G>>,
    /// The rollout evaluator mixed in.
    pub rollout: Rollout,
    /// Weight of the rollout's value, in `[0, 1]`.
    pub lambda: f32,
}

impl<G: Game> Mixed<G> {
    /// `inner` mixed with one playout per leaf at weight `lambda` (clamped to `[0, 1]`), or
    /// `inner` itself when `lambda` is 0 (no playout cost).
    pub fn wrap(
        inner: std::sync::Arc<dyn Evaluator<G>>,
        lambda: f32,
        score_scale: f32,
    ) -> std::sync::Arc<dyn Evaluator<G>> {
        if lambda > 0.0 {
            std::sync::Arc::new(Mixed {
                inner,
                rollout: Rollout { score_scale, playouts: 1 },
                lambda: lambda.min(1.0),
            })
        } else {
            inner
        }
    }
}

impl<G: Game> Evaluator<G> for Mixed<G> {
    fn evaluate(&self, leaves: &mut [Leaf<G>], rng: &mut Rng) {
        self.inner.evaluate(leaves, rng);
        let l = self.lambda.clamp(0.0, 1.0);
        for leaf in leaves {
            let mut total = 0.0;
            for _ in 0..self.rollout.playouts.max(1) {
                let mut s = leaf.state.clone();
                s.random_playout(rng);
                let o = s.outcome().expect("a playout ends the game");
                total += outcome_value(&o, self.rollout.score_scale);
            }
            let r = total / self.rollout.playouts.max(1) as f32;
            leaf.value = (1.0 - l) * leaf.value + l * r;
        }
    }

    fn begin_move(&self) -> u64 {
        self.inner.begin_move()
    }

    fn preferred_batch(&self) -> usize {
        self.inner.preferred_batch()
    }

    fn score_scale(&self) -> f32 {
        self.rollout.score_scale
    }

    fn name(&self) -> String {
        format!("{}+rollout(λ={})", self.inner.name(), self.lambda)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_value_matches_the_users_formula() {
        // User: v = 1/(1+e^(-d/3)) in [0,1]; ours = 2v - 1.
        for d in [-7, -1, 0, 2, 9] {
            let user = 1.0 / (1.0 + (-(d as f32) / 3.0).exp());
            let ours = outcome_value(&Outcome::on_points([d, -d]), 3.0);
            assert!((ours - (2.0 * user - 1.0)).abs() < 1e-5, "d={d}");
        }
        // Separate point totals: the difference is own minus opponent.
        let v = outcome_value(&Outcome::on_points([7, 4]), 3.0);
        assert!((v - (2.0 / (1.0 + (-1.0f32).exp()) - 1.0)).abs() < 1e-5);
        assert_eq!(outcome_value(&Outcome::decisive(Seat::Second, [5, -5]), 3.0), -1.0);
    }

    /// An inner evaluator with a fixed value and skewed priors, to see what the mix keeps.
    struct Fixed(f32);
    impl<G: Game> Evaluator<G> for Fixed {
        fn evaluate(&self, leaves: &mut [Leaf<G>], _rng: &mut Rng) {
            for leaf in leaves {
                leaf.value = self.0;
                let n = leaf.actions.len();
                leaf.priors = (0..n).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect();
            }
        }
        fn name(&self) -> String {
            "fixed".into()
        }
    }

    #[test]
    fn mixed_weights_the_rollout_by_lambda_and_keeps_inner_priors() {
        use crate::battlenumber::BattleNumber;
        let g = BattleNumber::new_game(&Default::default());
        let rollout = Rollout::default();
        // The rollout's own values, drawn with the same seed the mixed evaluator will use.
        let mut plain = vec![Leaf::new(g.clone()), Leaf::new(g.clone()), Leaf::new(g.clone())];
        rollout.evaluate(&mut plain, &mut crate::rng_from_seed(3));
        for lambda in [0.0, 0.25, 1.0] {
            let mixed = Mixed::<BattleNumber> { inner: std::sync::Arc::new(Fixed(0.5)), rollout, lambda };
            let mut leaves = vec![Leaf::new(g.clone()), Leaf::new(g.clone()), Leaf::new(g.clone())];
            mixed.evaluate(&mut leaves, &mut crate::rng_from_seed(3));
            for (l, p) in leaves.iter().zip(&plain) {
                assert!((l.value - ((1.0 - lambda) * 0.5 + lambda * p.value)).abs() < 1e-6);
                assert_eq!(l.priors[0], 1.0);
            }
        }
        // Rollout values are ±1 or a logistic of points: not all equal to the inner value.
        assert!(plain.iter().any(|p| p.value != 0.5));
    }
}
