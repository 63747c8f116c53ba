//! Agents: things that choose actions. An agent is named by a spec string, so the arena, the
//! play command and the play server can all build the same player from one line (gating's
//! agent is `model::gate_agent`):
//!
//! - `random` — a uniformly random legal click.
//! - `mcts:sims=800,eval=rollout` — MCTS with 800 simulations per turn and the rollout
//!   evaluator (the user's own AI).
//! - `mcts:time=200ms,eval=uniform,cpuct=2.0,batch=8,playouts=2,scale=3,fpu=0.1`.
//! - `mcts:time=100ms,eval=net,model=best.safetensors,lambda=0.5` — the network's priors,
//!   and its value mixed half and half with one random playout: the [`LeafSettings`] of
//!   `eval=net`, built by the caller's loader (`model::net_leaf`).
//! - `mcts:time=500ms,eval=net,model=best.safetensors,knowledge=0.5` — half the root's prior
//!   mass on the game's own AI's candidate moves ([`Game::knowledge_priors`]; TriGolden's are
//!   the user's AI's candidate turns).
//! - `trigolden-user:time=1s,minimax=3` — the user's own TriGolden AI, as the user wrote it
//!   ([`crate::trigolden::user`]; TriGolden only, reached through [`GameAgents`]).
//! - `trigolden-lite:time=1s,minimax=3` — a cheap simplification of it
//!   ([`crate::trigolden::lite`]; `trigolden-seed` is its old name).
//! - `banqi-ab:time=300ms,nodes=200000,depth=20,tt=16,flips=4,tb=5` — Banqi's expectiminimax
//!   searcher with its endgame tables ([`crate::banqi::ab`]; Banqi only); `model=PATH` values
//!   its leaves with a trained network instead of its handcrafted evaluation;
//!   `banqi-ab:flip_depth=2,rep=0` plays as ebfbbd8's `banqi-ab`.
//!
//! Every family's keys are declared once, in a table ([`keys::Key`]: [`MCTS_KEYS`],
//! [`USER_KEYS`], [`LITE_KEYS`], [`AB_KEYS`]) with the value's form, its default and its help;
//! the parser, the printer, an unknown key's error, `zeroplay agents` and docs/agents.md all
//! read those tables.
//!
//! A multi-click turn is searched once at its first click (with the whole budget); later clicks
//! of the same turn reuse the subtree and only top it up when it is thin.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use rand::RngExt;

use crate::Rng;
use crate::eval::{Evaluator, Rollout, Uniform};
use crate::game::Game;
use crate::leaf::{LeafEvaluator, LeafSettings};
use crate::mcts::{Budget, Mcts, MctsConfig, Progress};

pub mod keys;
mod mcts_keys;
mod serve;
mod settings;
pub use mcts_keys::{MCTS_KEYS, MctsDraft};
pub use serve::{ServeEnv, ServedNet, SpecBuilder};
pub use settings::{
    AB_KEYS, AbSettings, LITE_KEYS, LiteSettings, SharedTables, USER_KEYS, UserClock, UserSettings,
};

/// Chooses actions for one seat of a game.
pub trait Agent<G: Game>: Send {
    /// The agent's spec string.
    fn name(&self) -> String;

    /// Chooses the next action at `state`, where a player (this agent) is to move.
    /// `progress` receives live search statistics, if the agent searches.
    fn choose(
        &mut self,
        state: &G,
        rng: &mut Rng,
        progress: &mut dyn FnMut(&Progress<G::Action>),
    ) -> G::Action;

    /// Told of every action applied to the game (own, opponent's or chance), with the state
    /// before it, so a searching agent can keep its tree.
    fn observe(&mut self, _before: &G, _action: G::Action) {}

    /// Gives the agent a flag that another thread sets to stop its search early (a play
    /// server whose client left): the search then answers at once with what it has. Agents
    /// that do not search ignore it.
    fn set_stop(&mut self, _stop: StopFlag) {}

    /// The root children of the agent's last search, with their visits (a hint or analysis
    /// view shows the top ones). Empty for agents that keep no such tree.
    fn root_children(&self) -> Vec<crate::mcts::ChildStats<G::Action>> {
        Vec::new()
    }
}

pub use crate::mcts::StopFlag;

/// Chooses uniformly among the legal actions.
#[derive(Copy, Clone, Debug, Default)]
pub struct RandomAgent;

impl<G: Game> Agent<G> for RandomAgent {
    fn name(&self) -> String {
        "random".into()
    }

    fn choose(&mut self, state: &G, rng: &mut Rng, _: &mut dyn FnMut(&Progress<G::Action>)) -> G::Action {
        let mut actions = Vec::new();
        state.legal_actions(&mut actions);
        assert!(!actions.is_empty(), "RandomAgent asked to move in a finished game");
        actions[rng.random_range(0..actions.len())]
    }
}

/// Which evaluator an MCTS agent uses.
#[derive(Clone, Debug, PartialEq)]
pub enum EvalSpec {
    /// [`Uniform`].
    Uniform,
    /// [`Rollout`] with this many playouts per leaf.
    Rollout {
        /// Playouts per leaf.
        playouts: u32,
    },
    /// A trained network from a model file (loaded by the caller: see
    /// [`AgentSpec::build_with`]; the engine never reads files).
    Net {
        /// Path of the model file.
        model: String,
        /// Weight of the margin term in the network's utility.
        mix: f32,
        /// Weight of random playouts mixed into the network's value ([`crate::eval::Mixed`];
        /// 0: the network alone).
        lambda: f32,
    },
}

/// The `model=` of a spec that names the model its program serves now, not a file: a
/// worker's newest model, followed between moves (a self-play teacher's
/// `banqi-ab:nodes=20000,model=served`).
pub const SERVED_MODEL: &str = "served";

/// Loads a model file and builds its network leaf under the given [`LeafSettings`] (supplied
/// by a crate that can read files and run networks: `model::net_leaf` is the recipe).
pub type NetLoader<'a, G> = dyn Fn(&str, &LeafSettings) -> Result<Arc<dyn Evaluator<G>>, String> + 'a;

/// An MCTS agent's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsSpec {
    /// Simulations per turn.
    pub sims: Option<u64>,
    /// Time per turn.
    pub time: Option<Duration>,
    /// Leaf evaluator.
    pub eval: EvalSpec,
    /// Search settings.
    pub config: MctsConfig,
}

impl MctsSpec {
    /// The leaf recipe of `eval=net,mix=…,lambda=…` under this spec's score scale.
    pub fn leaf(&self, mix: f32, lambda: f32) -> LeafSettings {
        LeafSettings {
            evaluator: LeafEvaluator::Net,
            margin_mix: mix,
            lambda,
            score_scale: self.config.score_scale,
        }
    }
}

/// Agents a game has beyond the generic ones (random, MCTS): the specs only one game
/// understands, such as TriGolden's `trigolden-user:…`. The game's own module implements it,
/// so this generic factory reaches a game's agents without naming the game.
pub trait GameAgents: Game {
    /// The agent `spec` names for this game (called `name`), loading a network with `net`
    /// where the spec names one, or `None` if this game has no such agent.
    fn game_agent(
        spec: &AgentSpec,
        name: String,
        net: &NetLoader<'_, Self>,
    ) -> Option<Result<Box<dyn Agent<Self>>, String>> {
        let _ = (spec, name, net);
        None
    }

    /// The game's own strongest baseline at a budget of `sims` simulations a turn, as a spec:
    /// the first candidate's opponent in gating when `gate.baseline_sims` > 0 (opponent
    /// version 0). TriGolden: the user's AI (`trigolden-user`); Banqi: `banqi-ab` at a node
    /// budget of about equal time. `None` (Battle Number): the user's AI is MCTS with the
    /// rollout evaluator, which gating builds itself.
    fn user_ai(sims: u64) -> Option<AgentSpec> {
        let _ = sims;
        None
    }

    /// The game's own searcher that plays a one-layer network ([`Evaluator::shallow`]) at its
    /// leaves, at a budget of `sims` simulations a turn, as a spec without its `model`: how
    /// gating and rating play such a network, because it is how the game serves one. Banqi:
    /// `banqi-ab` at the node budget of [`GameAgents::user_ai`]. `None` (the default): such a
    /// network plays through MCTS like any other.
    fn shallow_net_searcher(sims: u64) -> Option<AgentSpec> {
        let _ = sims;
        None
    }

    /// The play server's AI (`[games.<name>] agent = "auto"`) at `time` a move: by default
    /// [`GameAgents::served_net`], which is the user's AI (MCTS over one rollout per leaf)
    /// until a model arrives. A game whose own AI is stronger than that before a model
    /// arrives, or that plays a model inside its own searcher, says so here.
    fn served_ai(time: Duration, env: &ServeEnv<'_, Self>) -> Box<dyn Agent<Self>> {
        Self::served_net(time, env)
    }

    /// The play server's network AI (`agent = "net"`) at `time` a move: by default MCTS over
    /// the served network under the server's `[leaf]`.
    fn served_net(time: Duration, env: &ServeEnv<'_, Self>) -> Box<dyn Agent<Self>> {
        env.net_mcts(time, &env.leaf, 0.0)
    }
}

impl GameAgents for crate::battlenumber::BattleNumber {}

/// A parsed agent spec string (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub enum AgentSpec {
    /// `random`.
    Random,
    /// `mcts:…`.
    Mcts(MctsSpec),
    /// `trigolden-lite:…` (TriGolden only; `trigolden-seed:…` is its old name).
    TrigoldenLite(LiteSettings),
    /// `trigolden-user:…` (TriGolden only).
    TrigoldenUser(UserSettings),
    /// `banqi-ab:…` (Banqi only).
    BanqiAb(AbSettings),
}

/// A spec string that names no agent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad agent spec {spec:?}: {reason}")]
pub struct SpecError {
    /// The text given.
    pub spec: String,
    /// What is wrong.
    pub reason: String,
}

impl FromStr for AgentSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, SpecError> {
        let err = |reason: String| SpecError { spec: s.to_string(), reason };
        let s = s.trim();
        if s == "random" {
            return Ok(AgentSpec::Random);
        }
        // Each family's keys are read by its table (`keys`).
        fn read<S>(table: &[keys::Key<S>], mut settings: S, rest: &str) -> Result<S, String> {
            for (k, v) in key_values(rest)? {
                keys::set(table, &mut settings, k, v)?;
            }
            Ok(settings)
        }
        let spec = if let Some(rest) = s.strip_prefix("trigolden-user") {
            read(USER_KEYS, UserSettings::default(), rest).map(AgentSpec::TrigoldenUser)
        } else if let Some(rest) = s.strip_prefix("banqi-ab") {
            read(AB_KEYS, AbSettings::default(), rest).map(AgentSpec::BanqiAb)
        } else if let Some(rest) =
            s.strip_prefix("trigolden-lite").or_else(|| s.strip_prefix("trigolden-seed"))
        {
            read(LITE_KEYS, LiteSettings::default(), rest).map(AgentSpec::TrigoldenLite)
        } else if let Some(rest) = s.strip_prefix("mcts") {
            read(MCTS_KEYS, MctsDraft::default(), rest).and_then(MctsDraft::finish).map(AgentSpec::Mcts)
        } else {
            Err("expected `random`, `mcts:key=value,...`, `trigolden-user:...`, `trigolden-lite:...` or `banqi-ab:...`"
                .into())
        };
        spec.map_err(err)
    }
}

impl fmt::Display for AgentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.family();
        let parts = match self {
            AgentSpec::Random => return f.write_str(name),
            AgentSpec::Mcts(m) => {
                return write!(f, "{name}:{}", keys::parts(MCTS_KEYS, &MctsDraft::of(m)).join(","));
            }
            AgentSpec::TrigoldenLite(s) => keys::parts(LITE_KEYS, s),
            AgentSpec::TrigoldenUser(s) => keys::parts(USER_KEYS, s),
            AgentSpec::BanqiAb(s) => s.spec_parts(),
        };
        if parts.is_empty() { f.write_str(name) } else { write!(f, "{name}:{}", parts.join(",")) }
    }
}

impl AgentSpec {
    /// The family's name, as a spec starts ([`AgentSpec::families`]).
    pub fn family(&self) -> &'static str {
        match self {
            AgentSpec::Random => "random",
            AgentSpec::Mcts(_) => "mcts",
            AgentSpec::TrigoldenLite(_) => "trigolden-lite",
            AgentSpec::TrigoldenUser(_) => "trigolden-user",
            AgentSpec::BanqiAb(_) => "banqi-ab",
        }
    }

    /// Every agent family with its keys, for `zeroplay agents` and the docs: what a spec can
    /// say, from the same tables the parser reads.
    pub fn families() -> Vec<keys::Family> {
        use keys::Family;
        vec![
            Family {
                name: "random",
                about: "A uniformly random legal click (every game).",
                keys: Vec::new(),
            },
            Family::of(
                "mcts",
                "Monte Carlo tree search with PUCT (every game); eval=rollout is the user's own AI.",
                MCTS_KEYS,
            ),
            Family::of(
                "trigolden-user",
                "The user's own TriGolden AI, as the user wrote it (TriGolden).",
                USER_KEYS,
            ),
            Family::of(
                "trigolden-lite",
                "A cheap simplification of the user's AI (TriGolden; `trigolden-seed` is its old name).",
                LITE_KEYS,
            ),
            Family::of(
                "banqi-ab",
                "Banqi's expectiminimax alpha-beta searcher with endgame tables (Banqi).",
                AB_KEYS,
            ),
        ]
    }
}

/// The `key=value` pairs after a spec's name (`name:k=v,k=v`, or nothing).
fn key_values(rest: &str) -> Result<Vec<(&str, &str)>, String> {
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    rest.split(',')
        .filter(|p| !p.is_empty())
        .map(|kv| kv.split_once('=').ok_or_else(|| format!("`{kv}` is not key=value")))
        .collect()
}

impl AgentSpec {
    /// Whether building this agent loads a network (`eval=net`).
    pub fn uses_net(&self) -> bool {
        self.model().is_some()
    }

    /// The network the spec names (`model=`), if any.
    pub fn model(&self) -> Option<&str> {
        match self {
            AgentSpec::BanqiAb(AbSettings { model: Some(m), .. }) => Some(m),
            AgentSpec::Mcts(MctsSpec { eval: EvalSpec::Net { model, .. }, .. }) => Some(model),
            _ => None,
        }
    }

    /// This spec with its network named `model` (`banqi-ab`'s `model=`, and MCTS's with
    /// `eval=net`; other specs are returned as they are).
    pub fn with_model(mut self, model: &str) -> AgentSpec {
        match &mut self {
            AgentSpec::BanqiAb(s) => s.model = Some(model.into()),
            AgentSpec::Mcts(MctsSpec { eval: EvalSpec::Net { model: m, .. }, .. }) => *m = model.into(),
            _ => {}
        }
        self
    }

    /// This spec at `time` a turn, whatever budget it had (its simulations or nodes dropped):
    /// how a play server holds an agent to the time a player chose.
    pub fn with_time(mut self, time: Duration) -> AgentSpec {
        match &mut self {
            AgentSpec::Random => {}
            AgentSpec::Mcts(m) => (m.sims, m.time) = (None, Some(time)),
            AgentSpec::TrigoldenLite(s) => (s.sims, s.time) = (None, Some(time)),
            AgentSpec::TrigoldenUser(s) => (s.sims, s.time) = (None, Some(time)),
            AgentSpec::BanqiAb(s) => (s.nodes, s.time) = (None, Some(time)),
        }
        self
    }

    /// This spec with `store` as the place its endgame tables are kept between processes
    /// (`banqi-ab` only; other specs are returned as they are).
    pub fn with_table_store(
        mut self,
        store: Option<Arc<dyn crate::banqi::tablebase::TableStore>>,
    ) -> AgentSpec {
        if let AgentSpec::BanqiAb(s) = &mut self {
            s.store = store.map(SharedTables);
        }
        self
    }

    /// Builds the agent.
    ///
    /// # Panics
    /// If the spec names a network (`eval=net`): use [`AgentSpec::build_with`].
    pub fn build<G: GameAgents>(&self) -> Box<dyn Agent<G>> {
        self.build_with(&|_, _| Err("no network loader".into()))
            .unwrap_or_else(|e| panic!("{self}: {e}; use build_with to load networks"))
    }

    /// Builds the agent, loading a network with `net` where the spec names one.
    ///
    /// # Errors
    /// The loader's error.
    pub fn build_with<G: GameAgents>(&self, net: &NetLoader<'_, G>) -> Result<Box<dyn Agent<G>>, String> {
        Ok(match self {
            AgentSpec::Random => Box::new(RandomAgent),
            AgentSpec::Mcts(m) => {
                let evaluator: Arc<dyn Evaluator<G>> = match &m.eval {
                    EvalSpec::Uniform => Arc::new(Uniform),
                    EvalSpec::Rollout { playouts } => {
                        Arc::new(Rollout { score_scale: m.config.score_scale, playouts: *playouts })
                    }
                    EvalSpec::Net { model, mix, lambda } => net(model, &m.leaf(*mix, *lambda))?,
                };
                Box::new(MctsAgent::new(m.clone(), evaluator, self.to_string()))
            }
            AgentSpec::TrigoldenLite(_) | AgentSpec::TrigoldenUser(_) | AgentSpec::BanqiAb(_) => {
                G::game_agent(self, self.to_string(), net)
                    .ok_or_else(|| format!("{self} is not an agent of {}", G::NAME))??
            }
        })
    }
}

/// An agent that searches with [`Mcts`] and plays the most visited action.
pub struct MctsAgent<G: Game> {
    spec: MctsSpec,
    name: String,
    evaluator: Arc<dyn Evaluator<G>>,
    tree: Option<Mcts<G>>,
    actions: Vec<G::Action>,
    stop: Option<StopFlag>,
    /// Whether this turn has had its full search (a forced first click has none, and then
    /// the next click gets the whole budget, not a top-up).
    turn_searched: bool,
}

impl<G: Game> MctsAgent<G> {
    /// An agent with these settings and evaluator.
    pub fn new(spec: MctsSpec, evaluator: Arc<dyn Evaluator<G>>, name: String) -> Self {
        MctsAgent { spec, name, evaluator, tree: None, actions: Vec::new(), stop: None, turn_searched: false }
    }

    /// The current search tree, if any.
    pub fn tree(&self) -> Option<&Mcts<G>> {
        self.tree.as_ref()
    }

    fn budget(&self, fraction: u32) -> Budget {
        Budget {
            sims: self.spec.sims.map(|n| (n / fraction as u64).max(1)),
            deadline: self.spec.time.map(|t| std::time::Instant::now() + t / fraction),
        }
    }
}

impl<G: Game> Agent<G> for MctsAgent<G> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(
        &mut self,
        state: &G,
        rng: &mut Rng,
        progress: &mut dyn FnMut(&Progress<G::Action>),
    ) -> G::Action {
        state.legal_actions(&mut self.actions);
        assert!(!self.actions.is_empty(), "MctsAgent asked to move in a finished game");
        if state.at_turn_start() {
            self.turn_searched = false;
        }
        if self.actions.len() == 1 {
            return self.actions[0];
        }
        let config = self.spec.config.clone();
        let tree = self.tree.get_or_insert_with(|| Mcts::new(state.clone(), config));
        if tree.root() != state {
            tree.reset(state.clone());
        }
        tree.set_stop(self.stop.clone());
        let budget = if !self.turn_searched {
            self.turn_searched = true;
            Some(self.budget(1))
        } else {
            // Later clicks of a turn: the first click's search already explored them; top up
            // only a thin subtree.
            let enough = self.spec.sims.map_or(64, |n| (n / 4).max(1)) as u32;
            (tree.root_visits() < enough).then(|| self.budget(4))
        };
        if let Some(b) = budget {
            self.evaluator.begin_move();
            let tree = self.tree.as_mut().expect("tree was just set");
            tree.search(self.evaluator.as_ref(), b, rng, progress);
        }
        self.tree.as_ref().and_then(Mcts::best_action).unwrap_or(self.actions[0])
    }

    fn observe(&mut self, before: &G, action: G::Action) {
        match &mut self.tree {
            Some(t) if t.root() == before => t.advance(action),
            _ => self.tree = None,
        }
    }

    fn set_stop(&mut self, stop: StopFlag) {
        self.stop = Some(stop);
    }

    fn root_children(&self) -> Vec<crate::mcts::ChildStats<G::Action>> {
        self.tree.as_ref().map(Mcts::root_children).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_default_is_the_real_default() {
        let mut checked = 0;
        for family in AgentSpec::families() {
            let plain: AgentSpec = family.name.parse().unwrap();
            for (key, _, default, _) in family.keys.iter().filter(|k| k.2 != "-") {
                let spec: AgentSpec = format!("{}:{key}={default}", family.name).parse().unwrap();
                assert_eq!(spec, plain, "{}'s {key} is declared to default to {default}", family.name);
                checked += 1;
            }
        }
        assert!(checked >= 20, "{checked}");
    }

    #[test]
    fn an_unknown_key_names_the_known_ones_from_the_table() {
        let e = "banqi-ab:time=100ms,lmr=3".parse::<AgentSpec>().unwrap_err();
        assert_eq!(e.reason, "lmr `3`: 1 (one extra ply) or 2 (logarithmic)");
        let e = "banqi-ab:fast=1".parse::<AgentSpec>().unwrap_err();
        assert_eq!(e.reason, format!("unknown key `fast` (known: {})", keys::names(AB_KEYS)));
        assert!(e.reason.contains("rfp, lmr, reveal"), "{}", e.reason);
        let e = "mcts:speed=2".parse::<AgentSpec>().unwrap_err();
        assert!(e.reason.starts_with("unknown key `speed` (known: sims, time, eval,"), "{}", e.reason);
        let e = "mcts:eval=net".parse::<AgentSpec>().unwrap_err();
        assert_eq!(e.reason, "eval=net needs model=PATH");
        let e = "trigolden-user:clock=wall".parse::<AgentSpec>().unwrap_err();
        assert_eq!(e.reason, "clock `wall`: file or turn");
    }

    #[test]
    fn specs_parse_and_print() {
        for s in [
            "random",
            "mcts:sims=800,eval=rollout",
            "mcts:time=200ms,eval=rollout",
            "mcts:sims=50,eval=uniform,cpuct=2,batch=8",
            "mcts:time=50ms,eval=net,model=runs/x/best.safetensors,batch=8",
            "mcts:time=500ms,eval=net,model=m.safetensors,knowledge=0.5",
            "mcts:sims=64,eval=net,model=m.safetensors,mix=0.25",
            "mcts:time=100ms,eval=net,model=m.safetensors,lambda=0.5,batch=8",
            "banqi-ab",
            "trigolden-user:time=1000ms,clock=turn",
            "banqi-ab:time=300ms,nodes=5000,depth=12,tt=4,flips=6,tb=0",
            "banqi-ab:nodes=100,weights=900/500/250/120/60/330/45/600/300/900/3",
            "banqi-ab:time=300ms,flip_depth=2,search=2,null=0,contempt=10",
            "banqi-ab:time=300ms,flip_depth=2,rep=0",
            "banqi-ab:time=100ms,rfp=30,lmr=2,reveal=1,contempt=40",
        ] {
            let spec: AgentSpec = s.parse().unwrap();
            let again: AgentSpec = spec.to_string().parse().unwrap();
            assert_eq!(spec, again, "{s}");
            assert_eq!(spec.to_string(), s);
        }
        // A game's own agent is refused by the other games.
        let ab: AgentSpec = "banqi-ab:nodes=100".parse().unwrap();
        assert!(ab.build_with::<crate::battlenumber::BattleNumber>(&|_, _| Err("no".into())).is_err());
        assert_eq!(ab.build::<crate::banqi::Banqi>().name(), "banqi-ab:nodes=100");
        let AgentSpec::Mcts(m) = "mcts:time=1.5s".parse().unwrap() else { panic!() };
        assert_eq!(m.time, Some(Duration::from_millis(1500)));
        assert_eq!(m.eval, EvalSpec::Rollout { playouts: 1 });
        let AgentSpec::Mcts(m) = "mcts:eval=net,model=a/b.safetensors".parse().unwrap() else { panic!() };
        assert_eq!(m.eval, EvalSpec::Net { model: "a/b.safetensors".into(), mix: 0.5, lambda: 0.0 });
        // Without a loader, a network agent is an error, not a silent fallback.
        let spec: AgentSpec = "mcts:eval=net,model=x".parse().unwrap();
        let e = spec.build_with::<crate::battlenumber::BattleNumber>(&|p, _| Err(format!("cannot load {p}")));
        assert_eq!(e.err().unwrap(), "cannot load x");
    }

    #[test]
    fn a_stop_flag_ends_a_long_search_with_a_legal_answer() {
        use crate::banqi::Banqi;
        use std::sync::atomic::Ordering;
        use std::time::Instant;
        let start = Banqi::new_game(&Default::default());
        let mut legal = Vec::new();
        start.legal_actions(&mut legal);
        assert!(legal.len() > 1, "the test needs a real choice");
        for spec in ["mcts:time=60s,eval=rollout", "banqi-ab:time=60s"] {
            let mut agent = spec.parse::<AgentSpec>().unwrap().build::<Banqi>();
            let stop = StopFlag::default();
            agent.set_stop(stop.clone());
            let setter = {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(300));
                    stop.store(true, Ordering::Relaxed);
                })
            };
            let t0 = Instant::now();
            let a = agent.choose(&start, &mut crate::rng_from_seed(7), &mut |_| {});
            setter.join().unwrap();
            assert!(t0.elapsed() < Duration::from_secs(20), "{spec}: {:?}", t0.elapsed());
            assert!(legal.contains(&a), "{spec}");
        }
    }

    #[test]
    fn bad_specs_are_refused_with_a_reason() {
        for s in [
            "alphazero",
            "mcts:sims=0",
            "mcts:sims=abc",
            "banqi-ab:depth=0",
            "banqi-ab:search=3",
            "banqi-ab:time=3",
            "banqi-ab:sims=100",
            "banqi-ab:weights=1/2/3",
            "banqi-ab:weights=900/500/250/120/60/330/40/600/300/900/-1",
            "banqi-ab:weights=900/500/250/120/60/330/x/600/300/900/2",
            "mcts:time=5",
            "mcts:eval=nn",
            "mcts:eval=net",
            "mcts:model=m.safetensors",
            "mcts:eval=net,model=m,mix=2",
            "mcts:eval=net,model=m,lambda=1.5",
            "mcts:eval=rollout,lambda=0.5",
            "mcts:sims=8,knowledge=1.5",
            "mcts:foo=1",
            "mcts:sims",
        ] {
            let e = s.parse::<AgentSpec>().unwrap_err();
            assert!(!e.reason.is_empty(), "{s}");
        }
    }
}
