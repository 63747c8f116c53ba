//! Self-play: one game played by MCTS against itself, with the exploration that training data
//! needs — root Dirichlet noise, a temperature schedule, playout-cap randomisation (KataGo:
//! only fully searched moves become policy targets) and resignation with a share of games
//! played out to measure false resignations.
//!
//! Everything is deterministic given the seed and the evaluator, so a stored game (which
//! records its seed) can be replayed exactly.

use rand::RngExt;
use rand_distr::{Distribution, Gamma};
use serde::{Deserialize, Serialize};

use crate::Rng;
use crate::agent::{Agent, GameAgents};
use crate::eval::Evaluator;
use crate::game::{Actor, Game, Outcome, Seat, next_chance};
use crate::mcts::{Budget, GumbelConfig, Mcts, MctsConfig};
use crate::spec::AgentSpec;

/// Self-play settings (the coordinator hands them out with each position).
///
/// Its `[selfplay]` table is read and saved through [`crate::search_settings::SELFPLAY_KEYS`].
#[derive(Clone, Debug, PartialEq)]
pub struct SelfPlaySettings {
    /// Simulations of a full search (its moves become policy targets).
    pub full_sims: u32,
    /// Simulations of a fast search (playout-cap randomisation); 0: every search is full.
    pub fast_sims: u32,
    /// Probability that a move gets a full search.
    pub full_search_probability: f32,
    /// Root Dirichlet noise concentration; 0 disables noise.
    pub dirichlet_alpha: f32,
    /// Share of the root prior replaced by noise (full searches only).
    pub dirichlet_fraction: f32,
    /// `(until_ply, temperature)` steps: moves at plies below `until_ply` are sampled from
    /// visits^(1/T); after the last step the most visited move is played.
    pub temperature: Vec<(u32, f32)>,
    /// Resign when the mover's root value stays below this for `resign_consecutive` of their
    /// turns; ≤ −1 disables resignation.
    pub resign_threshold: f32,
    /// Consecutive turns below the threshold before resigning.
    pub resign_consecutive: u32,
    /// Share of games in which resignation is only noted and the game is played out.
    pub resign_playthrough_fraction: f32,
    /// PUCT exploration constant.
    pub c_puct: f32,
    /// An agent spec that plays both seats instead of MCTS (empty: MCTS self-play), such as
    /// `banqi-ab:nodes=20000`: training data from a stronger searcher than the network's own
    /// (its moves become one-hot policy targets, its search value the root value). A node
    /// budget keeps its games replayable from their seeds. It names no model file; with
    /// `model=served` it plays with the worker's newest model at its leaves once that is
    /// one-layer (`banqi-ab:nodes=20000,model=served`: the network-in-search agent teaching the
    /// next network), each move recording the model version that searched it.
    pub teacher: String,
    /// With a teacher: the probability that a move at a ply below `teacher_random_plies` is
    /// a uniformly random legal one instead (exploration; such moves are not policy targets).
    pub teacher_random: f32,
    /// With a teacher: the plies in which moves may be random.
    pub teacher_random_plies: u32,
    /// How the root is searched: `puct` (AlphaZero: Dirichlet noise, visit counts as the
    /// policy target, moves by the temperature schedule) or `gumbel` (Gumbel AlphaZero:
    /// sequential halving over `gumbel_m` sampled actions, the completed-Q improved policy as
    /// the target, the move the search keeps; no Dirichlet noise or temperature).
    pub root: RootSearch,
    /// Gumbel: root actions considered per search.
    pub gumbel_m: u32,
    /// Gumbel: `c_visit` of `σ(q̂) = (c_visit + max N) · c_scale · q̂`.
    pub gumbel_c_visit: f32,
    /// Gumbel: `c_scale` of the same transform.
    pub gumbel_c_scale: f32,
    /// PUCT: KataGo's forced playouts and policy-target pruning in full searches, with this
    /// `k` (each root child gets at least `√(k · P · N)` visits; those forced visits are then
    /// pruned from the stored policy target). 0: off; KataGo uses 2. Fast searches and
    /// moves are unaffected.
    pub forced_playouts: f32,
}

/// The root search of self-play ([`SelfPlaySettings::root`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RootSearch {
    /// PUCT with Dirichlet noise; visit counts are the policy target.
    #[default]
    Puct,
    /// Gumbel-top-k and sequential halving; the completed-Q improved policy is the target.
    Gumbel,
}

impl RootSearch {
    /// The name in configs and on the wire.
    pub fn name(self) -> &'static str {
        match self {
            RootSearch::Puct => "puct",
            RootSearch::Gumbel => "gumbel",
        }
    }

    /// Parses [`RootSearch::name`]; the empty string (an older peer) is `puct`.
    pub fn from_name(s: &str) -> Option<RootSearch> {
        match s {
            "" | "puct" => Some(RootSearch::Puct),
            "gumbel" => Some(RootSearch::Gumbel),
            _ => None,
        }
    }
}

impl Default for SelfPlaySettings {
    fn default() -> Self {
        SelfPlaySettings {
            full_sims: 400,
            fast_sims: 100,
            full_search_probability: 0.25,
            dirichlet_alpha: 0.3,
            dirichlet_fraction: 0.25,
            temperature: vec![(20, 1.0), (60, 0.5)],
            resign_threshold: -0.95,
            resign_consecutive: 3,
            resign_playthrough_fraction: 0.1,
            c_puct: 1.5,
            teacher: String::new(),
            teacher_random: 0.1,
            teacher_random_plies: 30,
            root: RootSearch::Puct,
            gumbel_m: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 0.1,
            forced_playouts: 0.0,
        }
    }
}

/// Settings that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("self-play settings: {0}")]
pub struct SettingsError(pub String);

impl SelfPlaySettings {
    /// Checks ranges.
    ///
    /// # Errors
    /// [`SettingsError`] naming the bad field.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let unit = |x: f32, name: &str| {
            if (0.0..=1.0).contains(&x) {
                Ok(())
            } else {
                Err(SettingsError(format!("{name} must be in [0, 1], got {x}")))
            }
        };
        if self.full_sims == 0 || self.full_sims > 1_000_000 {
            return Err(SettingsError(format!("full_sims must be in 1..=1000000, got {}", self.full_sims)));
        }
        if self.fast_sims > self.full_sims {
            return Err(SettingsError("fast_sims must not exceed full_sims".into()));
        }
        unit(self.full_search_probability, "full_search_probability")?;
        unit(self.dirichlet_fraction, "dirichlet_fraction")?;
        unit(self.resign_playthrough_fraction, "resign_playthrough_fraction")?;
        unit(self.teacher_random, "teacher_random")?;
        self.teacher_spec()?;
        if !(self.dirichlet_alpha.is_finite() && self.dirichlet_alpha >= 0.0 && self.dirichlet_alpha <= 100.0)
        {
            return Err(SettingsError(format!(
                "dirichlet_alpha must be in [0, 100], got {}",
                self.dirichlet_alpha
            )));
        }
        if !(self.c_puct.is_finite() && self.c_puct > 0.0 && self.c_puct <= 100.0) {
            return Err(SettingsError(format!("c_puct must be in (0, 100], got {}", self.c_puct)));
        }
        if !self.resign_threshold.is_finite() || self.resign_threshold > 1.0 {
            return Err(SettingsError("resign_threshold must be a number ≤ 1".into()));
        }
        if self.gumbel_m == 0 || self.gumbel_m > 4096 {
            return Err(SettingsError(format!("gumbel_m must be in 1..=4096, got {}", self.gumbel_m)));
        }
        for (x, name) in [(self.gumbel_c_visit, "gumbel_c_visit"), (self.gumbel_c_scale, "gumbel_c_scale")] {
            if !(x.is_finite() && x > 0.0 && x <= 1e4) {
                return Err(SettingsError(format!("{name} must be in (0, 10000], got {x}")));
            }
        }
        if !(self.forced_playouts.is_finite() && (0.0..=100.0).contains(&self.forced_playouts)) {
            return Err(SettingsError(format!(
                "forced_playouts must be in [0, 100], got {}",
                self.forced_playouts
            )));
        }
        if self.temperature.len() > 64
            || self.temperature.iter().any(|&(_, t)| !(t.is_finite() && t > 0.0 && t <= 100.0))
        {
            return Err(SettingsError("temperature steps: at most 64, each T in (0, 100]".into()));
        }
        Ok(())
    }

    /// The teacher's parsed spec (`None`: MCTS self-play).
    ///
    /// # Errors
    /// [`SettingsError`] if `teacher` is not an agent spec or names a model file.
    pub fn teacher_spec(&self) -> Result<Option<AgentSpec>, SettingsError> {
        if self.teacher.trim().is_empty() {
            return Ok(None);
        }
        let spec: AgentSpec = self.teacher.parse().map_err(|e| SettingsError(format!("teacher: {e}")))?;
        if spec.model().is_some_and(|m| m != crate::agent::SERVED_MODEL) {
            return Err(SettingsError(format!(
                "teacher {:?} names a model file; a teacher plays without a network or with the worker's own (`model={}`)",
                self.teacher,
                crate::agent::SERVED_MODEL
            )));
        }
        Ok(Some(spec))
    }

    /// The Gumbel root search settings these settings name.
    pub fn gumbel(&self) -> GumbelConfig {
        GumbelConfig { m: self.gumbel_m as usize, c_visit: self.gumbel_c_visit, c_scale: self.gumbel_c_scale }
    }

    /// Policy-target units per full search under Gumbel: the improved policy is stored as
    /// `floor(π · units)` in the visit-count column, which the trainer normalises back; twice
    /// the full search's simulations, within what the coordinator accepts for a lease.
    pub fn gumbel_units(&self) -> u32 {
        2 * self.full_sims.max(self.fast_sims).max(1)
    }

    /// Gumbel's improved policy `π` as a stored target: `floor(π · units)` per action
    /// ([`SelfPlaySettings::gumbel_units`]).
    pub fn gumbel_target<A: Copy>(&self, policy: &[(A, f32)]) -> Vec<(A, u32)> {
        let units = self.gumbel_units() as f32;
        policy.iter().map(|&(a, p)| (a, (p * units).floor() as u32)).collect()
    }

    fn temperature_at(&self, ply: u32) -> Option<f32> {
        self.temperature.iter().find(|(until, _)| ply < *until).map(|&(_, t)| t)
    }
}

/// One action of a self-play game, with its search statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveStats<A> {
    /// The action played.
    pub action: A,
    /// True for a chance outcome.
    pub chance: bool,
    /// Root visits per legal action (empty for chance outcomes and forced moves); under
    /// Gumbel root search, the improved policy in units of
    /// [`SelfPlaySettings::gumbel_units`] (what the trainer normalises into its target).
    pub visits: Vec<(A, u32)>,
    /// Root value from the mover's view.
    pub root_value: f32,
    /// Whether this move had a full search (a policy target).
    pub full_search: bool,
    /// The model version that searched this move ([`Evaluator::begin_move`]; 0: no model).
    pub model_version: u64,
}

/// A finished self-play game.
#[derive(Clone, Debug)]
pub struct SelfPlayGame<G: Game> {
    /// The start position.
    pub start: G,
    /// Every action in order.
    pub moves: Vec<MoveStats<G::Action>>,
    /// The result: the game's own, or a decisive loss for the seat that resigned.
    pub outcome: Outcome,
    /// The seat that resigned, if one did.
    pub resigned: Option<Seat>,
    /// The seat that would have resigned, in a game chosen to be played out anyway (to
    /// measure false resignations: how often that seat did not lose).
    pub would_have_resigned: Option<Seat>,
    /// The root value, from the resigning seat's view, of the search that made it resign
    /// (that search's move is never played, so no [`MoveStats`] records it); 0 otherwise.
    pub resign_value: f32,
}

/// Mixes Dirichlet(α) noise into the root priors.
fn root_noise<G: Game>(tree: &mut Mcts<G>, alpha: f32, fraction: f32, rng: &mut Rng) {
    let n = tree.root_children().len();
    if n < 2 || alpha <= 0.0 || fraction <= 0.0 {
        return;
    }
    let Ok(gamma) = Gamma::new(alpha, 1.0) else { return };
    let mut noise: Vec<f32> = (0..n).map(|_| gamma.sample(rng)).collect();
    let sum: f32 = noise.iter().sum();
    if sum <= 0.0 || !sum.is_finite() {
        return;
    }
    noise.iter_mut().for_each(|x| *x /= sum);
    tree.mix_root_priors(&noise, fraction);
}

/// Plays one self-play game from `start`.
///
/// # Panics
/// If `start` is a finished game.
pub fn play_game<G: Game, E: Evaluator<G> + ?Sized>(
    start: &G,
    settings: &SelfPlaySettings,
    evaluator: &E,
    seed: u64,
) -> SelfPlayGame<G> {
    play_game_until(start, settings, evaluator, seed, &|| false).expect("never stopped")
}

/// The tree search of self-play and of its checks: the settings' PUCT constant, the
/// evaluator's batch, and finished games valued on the evaluator's score scale (they were once
/// valued at the default 3 whatever scale the leaves used).
fn search_config<G: Game, E: Evaluator<G> + ?Sized>(
    settings: &SelfPlaySettings,
    evaluator: &E,
) -> MctsConfig {
    MctsConfig {
        c_puct: settings.c_puct,
        batch_size: evaluator.preferred_batch(),
        score_scale: evaluator.score_scale(),
        ..MctsConfig::default()
    }
}

/// What one fresh search of a position found, for a check of a stored move (issue 42).
#[derive(Clone, Debug, PartialEq)]
pub struct CheckSearch<A> {
    /// The root value, from the view of the player to move.
    pub root_value: f32,
    /// The policy target self-play would store for the move: root visit counts (forced
    /// playouts pruned when configured), or with Gumbel the improved policy in units.
    pub visits: Vec<(A, u32)>,
}

/// One fresh search of `state` for `sims` simulations, configured as self-play configures a
/// full search but without root noise (PUCT with its forced playouts, or Gumbel): what a
/// check compares a stored move's root value and policy target with (issue 42). Fixed by
/// `seed`.
///
/// # Panics
/// If `state` is a finished game.
pub fn search_check<G: Game, E: Evaluator<G> + ?Sized>(
    state: &G,
    settings: &SelfPlaySettings,
    evaluator: &E,
    sims: u32,
    seed: u64,
) -> CheckSearch<G::Action> {
    assert!(state.outcome().is_none(), "a check of a finished game");
    let mut rng = crate::rng_from_seed(seed);
    let mut tree = Mcts::new(state.clone(), search_config(settings, evaluator));
    let _ = evaluator.begin_move();
    let sims = u64::from(sims.max(1));
    let visits = if settings.root == RootSearch::Gumbel {
        let r = tree.gumbel_search(evaluator, sims, &settings.gumbel(), true, &mut rng);
        settings.gumbel_target(&r.policy)
    } else {
        tree.set_forced_playouts(settings.forced_playouts);
        tree.search(evaluator, Budget::sims(sims), &mut rng, &mut |_| {});
        let target = if settings.forced_playouts > 0.0 {
            tree.pruned_root_children(settings.forced_playouts)
        } else {
            tree.root_children()
        };
        target.iter().map(|c| (c.action, c.visits)).collect()
    };
    CheckSearch { root_value: tree.root_value(), visits }
}

/// The total variation distance between two visit distributions, each normalised to sum 1,
/// over the union of their actions: 0 when they have the same shape, 1 when no action is
/// visited in both. `None` when either has no visits. Actions are matched by `==` (each
/// listed once).
pub fn visit_distance<K: PartialEq>(a: &[(K, u32)], b: &[(K, u32)]) -> Option<f32> {
    let (sa, sb) = (
        a.iter().map(|(_, n)| f64::from(*n)).sum::<f64>(),
        b.iter().map(|(_, n)| f64::from(*n)).sum::<f64>(),
    );
    if sa <= 0.0 || sb <= 0.0 {
        return None;
    }
    let share = |v: &[(K, u32)], k: &K, s: f64| {
        v.iter().find(|(x, _)| x == k).map_or(0.0, |(_, n)| f64::from(*n) / s)
    };
    let mut d: f64 = a.iter().map(|(k, n)| (f64::from(*n) / sa - share(b, k, sb)).abs()).sum();
    d += b
        .iter()
        .filter(|(k, _)| !a.iter().any(|(x, _)| x == k))
        .map(|(_, n)| f64::from(*n) / sb)
        .sum::<f64>();
    Some((d / 2.0).clamp(0.0, 1.0) as f32)
}

/// Plays one self-play game from `start`, checking `stop` before every action; returns `None`
/// if it was stopped (a worker shutting down abandons its games this way).
///
/// # Panics
/// If `start` is a finished game.
pub fn play_game_until<G: Game, E: Evaluator<G> + ?Sized>(
    start: &G,
    settings: &SelfPlaySettings,
    evaluator: &E,
    seed: u64,
    stop: &dyn Fn() -> bool,
) -> Option<SelfPlayGame<G>> {
    assert!(start.outcome().is_none(), "self-play from a finished game");
    let mut rng = crate::rng_from_seed(seed);
    // The hidden deal (Banqi) comes from the game's seed, apart from the search's randomness.
    let deal = crate::derive_seed(seed, crate::arena::DEAL_STREAM);
    let mut tree = Mcts::new(start.clone(), search_config(settings, evaluator));
    let mut state = start.clone();
    let mut moves = Vec::new();
    let mut chances = Vec::new();
    let mut legal = Vec::new();
    let playthrough = rng.random::<f32>() < settings.resign_playthrough_fraction;
    let mut low_streak = [0u32; 2];
    let mut would_have_resigned: Option<Seat> = None;
    let mut ply = 0u32;
    let mut model_version = evaluator.begin_move();
    while state.outcome().is_none() {
        if stop() {
            return None;
        }
        let mover = match state.to_move() {
            Actor::Chance => {
                let a = next_chance(&state, start, deal, &mut chances, &mut rng);
                tree.advance(a);
                state.play_unchecked(a);
                moves.push(MoveStats {
                    action: a,
                    chance: true,
                    visits: vec![],
                    root_value: 0.0,
                    full_search: false,
                    model_version,
                });
                ply += 1;
                continue;
            }
            Actor::Player(s) => s,
        };
        state.legal_actions(&mut legal);
        if legal.len() == 1 {
            let a = legal[0];
            tree.advance(a);
            state.play_unchecked(a);
            moves.push(MoveStats {
                action: a,
                chance: false,
                visits: vec![],
                root_value: 0.0,
                full_search: false,
                model_version,
            });
            ply += 1;
            continue;
        }
        // A new model, if one was published, takes over here: between moves.
        model_version = evaluator.begin_move();
        let full = settings.fast_sims == 0 || rng.random::<f32>() < settings.full_search_probability;
        let target = if full { settings.full_sims } else { settings.fast_sims.max(1) };
        let mut gumbel_pick = None;
        if settings.root == RootSearch::Gumbel {
            // Gumbel: a fresh budget every move (sequential halving schedules it), whatever
            // the reused subtree holds.
            let r = tree.gumbel_search(evaluator, u64::from(target), &settings.gumbel(), true, &mut rng);
            gumbel_pick = Some((r.action, settings.gumbel_target(&r.policy)));
        } else {
            if tree.root_visits() == 0 {
                tree.search(evaluator, Budget::sims(1), &mut rng, &mut |_| {});
            }
            if full {
                root_noise(&mut tree, settings.dirichlet_alpha, settings.dirichlet_fraction, &mut rng);
            }
            tree.set_forced_playouts(if full { settings.forced_playouts } else { 0.0 });
            let have = tree.root_visits();
            if have < target {
                tree.search(evaluator, Budget::sims((target - have) as u64), &mut rng, &mut |_| {});
            }
        }
        let value = tree.root_value();
        // Resignation is judged at turn starts only, from the mover's view.
        if state.at_turn_start() && settings.resign_threshold > -1.0 {
            let streak = &mut low_streak[mover.index()];
            *streak = if value < settings.resign_threshold { *streak + 1 } else { 0 };
            if *streak >= settings.resign_consecutive.max(1) {
                if playthrough {
                    would_have_resigned.get_or_insert(mover);
                } else {
                    let scores = state.outcome().map_or([0, 0], |o| o.scores);
                    return Some(SelfPlayGame {
                        start: start.clone(),
                        moves,
                        outcome: Outcome::decisive(mover.other(), scores),
                        resigned: Some(mover),
                        would_have_resigned: None,
                        resign_value: value,
                    });
                }
            }
        }
        let (a, visits) = match gumbel_pick {
            Some(pick) => pick,
            None => {
                let children = tree.root_children();
                let a = settings
                    .temperature_at(ply)
                    .and_then(|t| sample_by_visits(&children, t, &mut rng))
                    .unwrap_or_else(|| tree.best_action().expect("searched root has children"));
                // The policy target: forced visits pruned back where they were forced.
                let target = if full && settings.forced_playouts > 0.0 {
                    tree.pruned_root_children(settings.forced_playouts)
                } else {
                    children
                };
                (a, target.iter().map(|c| (c.action, c.visits)).collect())
            }
        };
        moves.push(MoveStats {
            action: a,
            chance: false,
            visits,
            root_value: value,
            full_search: full,
            model_version,
        });
        tree.advance(a);
        state.play_unchecked(a);
        ply += 1;
    }
    Some(SelfPlayGame {
        start: start.clone(),
        moves,
        outcome: state.outcome().expect("loop ends at the end"),
        resigned: None,
        would_have_resigned,
        resign_value: 0.0,
    })
}

/// A root action drawn with probability ∝ visits^(1/t); `None` when no child was visited.
fn sample_by_visits<A: Copy>(
    children: &[crate::mcts::ChildStats<A>],
    t: f32,
    rng: &mut crate::Rng,
) -> Option<A> {
    let weights: Vec<f64> = children.iter().map(|c| (c.visits as f64).powf(1.0 / t as f64)).collect();
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return None;
    }
    let mut x = rng.random::<f64>() * total;
    for (c, w) in children.iter().zip(&weights) {
        if x < *w {
            return Some(c.action);
        }
        x -= w;
    }
    children.last().map(|c| c.action)
}

/// Plays one game from `start` with `teacher` on both seats (a fresh agent per seat, so a
/// game depends only on its seed), checking `stop` before every action; `Ok(None)` if
/// stopped. A teacher's move is a full search with one-hot visits and its search value as
/// the root value; a random exploration move ([`SelfPlaySettings::teacher_random`]) has no
/// visits. Nobody resigns. A teacher with `model=served` values with `served` (the worker's
/// model slot), taking its newest model before each move ([`Evaluator::begin_move`]) and
/// recording that model's version with the move.
///
/// # Errors
/// If the teacher is not an agent of `G`, or names `model=served` without `served`.
///
/// # Panics
/// If `start` is a finished game.
pub fn play_teacher_game_until<G: GameAgents>(
    start: &G,
    settings: &SelfPlaySettings,
    teacher: &AgentSpec,
    served: Option<&std::sync::Arc<dyn crate::eval::Evaluator<G>>>,
    seed: u64,
    stop: &dyn Fn() -> bool,
) -> Result<Option<SelfPlayGame<G>>, String> {
    assert!(start.outcome().is_none(), "self-play from a finished game");
    let net = |m: &str, _: &crate::leaf::LeafSettings| match served {
        Some(n) if m == crate::agent::SERVED_MODEL => Ok(n.clone()),
        _ => Err(format!("a teacher plays without a network or with the served one, not {m:?}")),
    };
    let mut agents: [Box<dyn Agent<G>>; 2] = [teacher.build_with(&net)?, teacher.build_with(&net)?];
    let served = served.filter(|_| teacher.uses_net());
    let mut rng = crate::rng_from_seed(seed);
    let deal = crate::derive_seed(seed, crate::arena::DEAL_STREAM);
    let mut state = start.clone();
    let mut moves = Vec::new();
    let mut chances = Vec::new();
    let mut legal = Vec::new();
    let mut ply = 0u32;
    let plain = |action: G::Action| MoveStats {
        action,
        chance: false,
        visits: vec![],
        root_value: 0.0,
        full_search: false,
        model_version: 0,
    };
    while state.outcome().is_none() {
        if stop() {
            return Ok(None);
        }
        let stats = match state.to_move() {
            Actor::Chance => {
                let a = next_chance(&state, start, deal, &mut chances, &mut rng);
                MoveStats { action: a, chance: true, ..plain(a) }
            }
            Actor::Player(seat) => {
                state.legal_actions(&mut legal);
                if legal.len() == 1 {
                    plain(legal[0])
                } else if ply < settings.teacher_random_plies && rng.random::<f32>() < settings.teacher_random
                {
                    plain(legal[rng.random_range(0..legal.len())])
                } else {
                    let mut value = 0.0;
                    // The newest model, pinned for this move's search.
                    let model_version = served.map_or(0, |n| n.begin_move());
                    let a = agents[seat.index()].choose(&state, &mut rng, &mut |p| value = p.value);
                    MoveStats {
                        visits: vec![(a, 1)],
                        root_value: value.clamp(-1.0, 1.0),
                        full_search: true,
                        model_version,
                        ..plain(a)
                    }
                }
            }
        };
        for agent in &mut agents {
            agent.observe(&state, stats.action);
        }
        state.play_unchecked(stats.action);
        moves.push(stats);
        ply += 1;
    }
    Ok(Some(SelfPlayGame {
        start: start.clone(),
        moves,
        outcome: state.outcome().expect("loop ends at the end"),
        resigned: None,
        would_have_resigned: None,
        resign_value: 0.0,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::battlenumber::{BattleNumber, Options};
    use crate::eval::Rollout;

    fn fast() -> SelfPlaySettings {
        SelfPlaySettings { full_sims: 40, fast_sims: 10, ..SelfPlaySettings::default() }
    }

    #[test]
    fn gumbel_games_replay_store_the_improved_policy_and_are_deterministic() {
        let start = BattleNumber::new_game(&Options::default());
        let s = SelfPlaySettings { root: RootSearch::Gumbel, gumbel_m: 8, ..fast() };
        s.validate().unwrap();
        let a = play_game(&start, &s, &Rollout::default(), 9);
        assert_eq!(a.moves, play_game(&start, &s, &Rollout::default(), 9).moves);
        let units = u64::from(s.gumbel_units());
        let mut state = start.clone();
        let mut searched = 0;
        for m in &a.moves {
            if !m.visits.is_empty() {
                searched += 1;
                let total: u64 = m.visits.iter().map(|v| u64::from(v.1)).sum();
                // floor(π · units) over every legal action: at most `units`, and at least
                // what the floors of a distribution can lose.
                assert!(total <= units && total + m.visits.len() as u64 >= units, "{total} of {units}");
                let mut legal = Vec::new();
                state.legal_actions(&mut legal);
                assert_eq!(m.visits.len(), legal.len(), "the policy covers every legal action");
            }
            state.play(m.action).unwrap();
        }
        assert!(searched > 10);
        if a.resigned.is_none() {
            assert_eq!(state.outcome(), Some(a.outcome));
        }
    }

    #[test]
    fn forced_playouts_games_replay_and_prune_only_full_search_targets() {
        let start = BattleNumber::new_game(&Options::default());
        let s = SelfPlaySettings { forced_playouts: 2.0, full_search_probability: 0.5, ..fast() };
        s.validate().unwrap();
        let a = play_game(&start, &s, &Rollout::default(), 9);
        assert_eq!(a.moves, play_game(&start, &s, &Rollout::default(), 9).moves);
        let mut state = start.clone();
        let (mut full, mut pruned) = (0, 0);
        for m in &a.moves {
            let total: u32 = m.visits.iter().map(|v| v.1).sum();
            if m.full_search {
                full += 1;
                // A pruned target holds fewer visits than the search made, never more.
                assert!(total > 0 && total <= s.full_sims, "{total}");
                // Unpruned, a full search's children hold full_sims - 1 visits (the first
                // visit expands the root).
                pruned += u32::from(total + 1 < s.full_sims);
            }
            state.play(m.action).unwrap();
        }
        assert!(full > 5 && pruned > 0, "{full} full searches, {pruned} pruned");
        if a.resigned.is_none() {
            assert_eq!(state.outcome(), Some(a.outcome));
        }
    }

    #[test]
    fn finished_games_are_valued_on_the_leaf_evaluators_score_scale() {
        // A position whose every legal click ends the game on points, all with margins of one
        // sign and at least 2: valued at the default scale 3 its root value would be at least
        // tanh(2/6) = 0.32 in size (less the root's own playout value); on the evaluator's scale
        // of 1000 it is tanh(d/2000).
        let mut found = None;
        'seeds: for seed in 0..400 {
            let mut rng = crate::rng_from_seed(seed);
            let mut s = BattleNumber::new_game(&Options::default());
            let mut legal = Vec::new();
            while s.outcome().is_none() {
                s.legal_actions(&mut legal);
                let ends: Vec<i32> = legal
                    .iter()
                    .filter_map(|&a| {
                        let mut t = s.clone();
                        t.play_unchecked(a);
                        t.outcome().filter(|o| o.decisive.is_none()).map(|o| o.difference(Seat::First))
                    })
                    .collect();
                if ends.len() == legal.len()
                    && (ends.iter().all(|&d| d >= 2) || ends.iter().all(|&d| d <= -2))
                {
                    found = Some((s.clone(), ends));
                    break 'seeds;
                }
                let a = legal[rng.random_range(0..legal.len())];
                s.play_unchecked(a);
            }
        }
        let (state, ends) = found.expect("some random game passes such a position");
        let far = ends.iter().map(|d| d.abs()).max().unwrap() as f32;
        let wide = Rollout { score_scale: 1000.0, playouts: 1 };
        let v = search_check(&state, &fast(), &wide, 32, 1).root_value;
        assert!(v.abs() <= (far / 2000.0).tanh() + 1e-3, "root value {v}: finished games valued at scale 3");
        // The default scale still values them at 3.
        let v3 = search_check(&state, &fast(), &Rollout::default(), 32, 1).root_value;
        assert!(v3.abs() > 0.25, "{v3}");
    }

    #[test]
    fn visit_distance_is_total_variation_over_the_union() {
        let a = [("x", 6), ("y", 2), ("z", 0)];
        assert_eq!(visit_distance(&a, &a), Some(0.0));
        // Same shape, other totals and order: the same distribution.
        assert_eq!(visit_distance(&a, &[("y", 1), ("x", 3)]), Some(0.0));
        assert_eq!(visit_distance(&[("x", 5)], &[("y", 5)]), Some(1.0));
        // Reversed: 0.75/0.25 against 0.25/0.75.
        assert_eq!(visit_distance(&a, &[("x", 2), ("y", 6)]), Some(0.5));
        assert_eq!(visit_distance(&a, &[("x", 0)]), None);
        assert_eq!(visit_distance::<&str>(&[], &a), None);
    }

    #[test]
    fn a_check_search_is_seeded_and_shaped_like_a_stored_target() {
        let start = BattleNumber::new_game(&Options::default());
        let s = SelfPlaySettings { full_sims: 200, fast_sims: 0, resign_threshold: -2.0, ..fast() };
        let g = play_game(&start, &s, &Rollout::default(), 3);
        let gumbel = SelfPlaySettings { root: RootSearch::Gumbel, gumbel_m: 8, ..s.clone() };
        let mut state = start.clone();
        let mut n = 0;
        for (i, m) in g.moves.iter().enumerate() {
            if m.full_search && m.visits.len() > 1 && i % 4 == 0 {
                let c = search_check(&state, &s, &Rollout::default(), s.full_sims, 40 + i as u64);
                assert_eq!(c, search_check(&state, &s, &Rollout::default(), s.full_sims, 40 + i as u64));
                let total: u32 = c.visits.iter().map(|v| v.1).sum();
                assert_eq!(total + 1, s.full_sims, "every simulation but the root's expansion");
                assert!((-1.0..=1.0).contains(&c.root_value));
                // The same actions as the stored move's target (every legal click is a child).
                let mut a: Vec<_> = c.visits.iter().map(|v| v.0).collect();
                let mut b: Vec<_> = m.visits.iter().map(|v| v.0).collect();
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(a, b);
                assert!(visit_distance(&m.visits, &c.visits).is_some());
                // Gumbel: the improved policy in units, as self-play stores it.
                let c = search_check(&state, &gumbel, &Rollout::default(), s.full_sims, 7);
                let total: u32 = c.visits.iter().map(|v| v.1).sum();
                assert!(
                    total <= gumbel.gumbel_units() && total + c.visits.len() as u32 >= gumbel.gumbel_units()
                );
                n += 1;
            }
            state.play(m.action).unwrap();
        }
        assert!(n >= 5, "{n} checks");
    }

    #[test]
    fn games_replay_and_are_deterministic() {
        let start = BattleNumber::new_game(&Options::default());
        let a = play_game(&start, &fast(), &Rollout::default(), 5);
        let b = play_game(&start, &fast(), &Rollout::default(), 5);
        assert_eq!(a.moves, b.moves);
        let mut s = start.clone();
        for m in &a.moves {
            s.play(m.action).unwrap();
            let total: u32 = m.visits.iter().map(|v| v.1).sum();
            assert!(m.visits.is_empty() || total > 0);
        }
        if a.resigned.is_none() {
            assert_eq!(s.outcome(), Some(a.outcome));
        }
        assert!(
            a.moves.iter().any(|m| m.full_search)
                && a.moves.iter().any(|m| !m.full_search && !m.visits.is_empty())
        );
    }

    #[test]
    fn resignation_and_playthrough() {
        let start = BattleNumber::new_game(&Options::default());
        // A threshold of 1.0 makes every searched turn "losing". The first seat's opening turn
        // is searched only mid-turn (d3 is forced), so the second seat reaches two judged
        // turns first and resigns.
        let s = SelfPlaySettings {
            resign_threshold: 1.0,
            resign_consecutive: 2,
            resign_playthrough_fraction: 0.0,
            ..fast()
        };
        let g = play_game(&start, &s, &Rollout::default(), 1);
        assert_eq!(g.resigned, Some(Seat::Second));
        assert_eq!(g.outcome.decisive, Some(Seat::First));
        let s = SelfPlaySettings { resign_playthrough_fraction: 1.0, ..s };
        let g = play_game(&start, &s, &Rollout::default(), 1);
        assert!(g.resigned.is_none() && g.would_have_resigned == Some(Seat::Second));
    }

    #[test]
    fn a_stopped_game_returns_none() {
        let start = BattleNumber::new_game(&Options::default());
        let calls = std::cell::Cell::new(0);
        let stop = || {
            calls.set(calls.get() + 1);
            calls.get() > 5
        };
        assert!(play_game_until(&start, &fast(), &Rollout::default(), 1, &stop).is_none());
    }

    #[test]
    fn a_teacher_plays_replayable_games_with_one_hot_targets() {
        use crate::banqi::Banqi;
        let s = SelfPlaySettings {
            teacher: "banqi-ab:nodes=300,tb=0".into(),
            teacher_random: 0.5,
            teacher_random_plies: 10,
            ..fast()
        };
        let spec = s.teacher_spec().unwrap().expect("a teacher");
        let start = Banqi::start();
        let a = play_teacher_game_until(&start, &s, &spec, None, 9, &|| false).unwrap().unwrap();
        let b = play_teacher_game_until(&start, &s, &spec, None, 9, &|| false).unwrap().unwrap();
        assert_eq!(a.moves, b.moves, "a game is fixed by its seed");
        let mut state = start.clone();
        let (mut taught, mut random) = (0, 0);
        for (ply, m) in a.moves.iter().enumerate() {
            assert!(state.is_legal(m.action), "ply {ply}");
            if m.full_search {
                assert_eq!(m.visits, vec![(m.action, 1)]);
                assert!((-1.0..=1.0).contains(&m.root_value));
                taught += 1;
            } else if !m.chance && ply >= 10 {
                let mut legal = Vec::new();
                state.legal_actions(&mut legal);
                assert_eq!(legal.len(), 1, "after the random plies only forced moves go untaught");
            } else if !m.chance {
                random += 1;
            }
            state.play_unchecked(m.action);
        }
        assert_eq!(state.outcome(), Some(a.outcome));
        assert!(taught > 10 && random > 0, "{taught} taught, {random} random");
        let other = play_teacher_game_until(&start, &s, &spec, None, 10, &|| false).unwrap().unwrap();
        assert_ne!(other.moves, a.moves, "another seed, another deal");
        // A teacher another game does not have is refused, not played.
        let bn = BattleNumber::new_game(&Options::default());
        assert!(play_teacher_game_until(&bn, &s, &spec, None, 1, &|| false).is_err());
        assert!(play_teacher_game_until(&start, &s, &spec, None, 1, &|| true).unwrap().is_none());
    }

    #[test]
    fn a_served_teacher_searches_with_the_workers_one_layer_model_and_records_its_version() {
        use crate::banqi::Banqi;
        use crate::eval::{Evaluator, Leaf};
        use crate::shallow::ShallowNet;
        use std::sync::Arc;
        /// A worker's model slot: its version, and the one-layer model if it holds one.
        struct Slot(u64, Option<Arc<ShallowNet>>);
        impl Evaluator<Banqi> for Slot {
            fn evaluate(&self, _: &mut [Leaf<Banqi>], _: &mut crate::Rng) {
                unreachable!("banqi-ab asks a one-layer model for nothing else")
            }
            fn name(&self) -> String {
                "slot".into()
            }
            fn begin_move(&self) -> u64 {
                self.0
            }
            fn shallow(&self) -> Option<Arc<ShallowNet>> {
                self.1.clone()
            }
        }
        let plain = SelfPlaySettings { teacher: "banqi-ab:nodes=300,tb=0".into(), ..fast() };
        let served = SelfPlaySettings { teacher: "banqi-ab:nodes=300,tb=0,model=served".into(), ..fast() };
        let (plain_spec, spec) =
            (plain.teacher_spec().unwrap().unwrap(), served.teacher_spec().unwrap().unwrap());
        let start = Banqi::start();
        let alone =
            play_teacher_game_until(&start, &plain, &plain_spec, None, 9, &|| false).unwrap().unwrap();
        let play = |slot: Slot| {
            let slot: Arc<dyn Evaluator<Banqi>> = Arc::new(slot);
            play_teacher_game_until(&start, &served, &spec, Some(&slot), 9, &|| false).unwrap().unwrap()
        };
        // No model yet (or a larger one): the handcrafted evaluation, the same game.
        let none = play(Slot(0, None));
        assert_eq!(none.moves, alone.moves);
        // A one-layer model values the leaves, and every searched move names its version.
        let net = Arc::new(crate::shallow::random_net(<Banqi as crate::Features>::FEATURE_LEN, 8, 3));
        let taught = play(Slot(7, Some(net)));
        assert_ne!(taught.moves, alone.moves, "the network changes the teacher's moves");
        assert!(taught.moves.iter().filter(|m| m.full_search).all(|m| m.model_version == 7));
        assert!(alone.moves.iter().all(|m| m.model_version == 0));
        // Without the slot the spec cannot be built; a model file is refused up front.
        assert!(play_teacher_game_until(&start, &served, &spec, None, 9, &|| false).is_err());
        let file = SelfPlaySettings { teacher: "banqi-ab:nodes=300,model=best.safetensors".into(), ..fast() };
        assert!(file.teacher_spec().unwrap_err().to_string().contains("model file"));
    }

    #[test]
    fn bad_settings_are_refused() {
        assert!(SelfPlaySettings::default().validate().is_ok());
        for bad in [
            SelfPlaySettings { full_sims: 0, ..fast() },
            SelfPlaySettings { fast_sims: 100, full_sims: 10, ..fast() },
            SelfPlaySettings { dirichlet_fraction: 1.5, ..fast() },
            SelfPlaySettings { temperature: vec![(10, 0.0)], ..fast() },
            SelfPlaySettings { c_puct: f32::NAN, ..fast() },
            SelfPlaySettings { forced_playouts: -1.0, ..fast() },
            SelfPlaySettings { forced_playouts: f32::NAN, ..fast() },
            SelfPlaySettings { teacher: "banqi-ab:nodes=-3".into(), ..fast() },
            SelfPlaySettings { teacher: "mcts:eval=net,model=m.safetensors".into(), ..fast() },
            SelfPlaySettings { teacher_random: 2.0, ..fast() },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
