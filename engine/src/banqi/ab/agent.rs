//! `banqi-ab` as an [`Agent`]: the searcher kept across a game's moves, and Banqi's
//! [`GameAgents`] (the spec it builds, the user's-AI stand-in for gating).

use std::time::Duration;

use super::{AbSettings, Action, Banqi, Searcher, WIN_BOUND};
use crate::Rng;
use crate::agent::{Agent, GameAgents, GameFamily, GameSpec, NetLoader, SERVED_MODEL, ServeEnv};
use crate::leaf::LeafSettings;
use crate::mcts::Progress;

/// Banqi's own agent: `banqi-ab:…`.
impl GameAgents for Banqi {
    const FAMILIES: &'static [GameFamily] = super::settings::FAMILIES;

    fn game_agent(
        spec: &GameSpec,
        name: String,
        net: &NetLoader<'_, Banqi>,
    ) -> Option<Result<Box<dyn Agent<Banqi>>, String>> {
        let s = spec.settings::<AbSettings>()?;
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
    fn user_ai(sims: u64) -> Option<GameSpec> {
        Some(GameSpec::new(AbSettings {
            nodes: Some(sims.saturating_mul(NODES_PER_SIM)),
            ..AbSettings::default()
        }))
    }

    /// `banqi-ab` at the baseline's node budget: the searcher the play server runs a `nano`
    /// model in, against the baseline at equal nodes (the network's node costs ~30% more
    /// time: docs/benchmarks.md, issue 39).
    fn shallow_net_searcher(sims: u64) -> Option<GameSpec> {
        Self::user_ai(sims)
    }

    /// `banqi-ab` until there is a model, then `banqi-ab` with the model at its leaves when it
    /// is a one-layer (`nano`) network, measured stronger than `banqi-ab` alone
    /// (docs/benchmarks.md, issue 39); a larger model plays through MCTS.
    fn served_ai(time: Duration, env: &ServeEnv<'_, Banqi>) -> Box<dyn Agent<Banqi>> {
        if !env.has_model {
            return env.spec_at(&GameSpec::new(AbSettings::default()), time);
        }
        if (env.net)(&LeafSettings::net_alone()).shallow().is_none() {
            return Self::served_net(time, env);
        }
        let served = AbSettings { model: Some(SERVED_MODEL.into()), ..AbSettings::default() };
        env.spec_at(&GameSpec::new(served), time)
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
    /// its spec with a network loader for that).
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
