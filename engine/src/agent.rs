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
//!   `banqi-ab:flip_depth=2,rep=0,probe=0,cpc=0` plays as ebfbbd8's `banqi-ab`.
//!
//! A spec string is read into a [`crate::spec::AgentSpec`]. `random` and `mcts` are every
//! game's and live here; the others are a game's own families, each declared in its game's
//! folder ([`GameAgents::FAMILIES`], a [`GameFamily`] whose settings are read by their key
//! table) and carried as a [`GameSpec`], so this module names no game. Every family's keys are
//! declared once, in a table ([`keys::Key`]: [`MCTS_KEYS`], TriGolden's `USER_KEYS` and
//! `LITE_KEYS`, Banqi's `AB_KEYS`) with the value's form, its default and its help; the parser,
//! the printer, an unknown key's error, `zeroplay agents` and docs/agents.md all read them.
//!
//! A multi-click turn is searched once at its first click (with the whole budget); later clicks
//! of the same turn reuse the subtree and only top it up when it is thin.

use std::sync::Arc;
use std::time::Duration;

use rand::RngExt;

use crate::Rng;
use crate::eval::Evaluator;
use crate::game::Game;
use crate::leaf::{LeafEvaluator, LeafSettings};
use crate::mcts::{Budget, Mcts, MctsConfig, Progress};

mod family;
pub mod keys;
mod mcts_keys;
mod serve;
pub use family::{FamilyKeys, GameFamily, GameSpec};
pub use mcts_keys::{MCTS_KEYS, MctsDraft};
pub use serve::{ServeEnv, ServedNet, SpecBuilder};

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
    /// [`crate::spec::AgentSpec::build_with`]; the engine never reads files).
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
    /// The game's own agent families, in the order `zeroplay agents` lists them (each in the
    /// game's folder, with its key table).
    const FAMILIES: &'static [GameFamily] = &[];

    /// The agent `spec` names for this game (called `name`), loading a network with `net`
    /// where the spec names one, or `None` if this game has no such agent.
    fn game_agent(
        spec: &GameSpec,
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
    fn user_ai(sims: u64) -> Option<GameSpec> {
        let _ = sims;
        None
    }

    /// The game's own searcher that plays a one-layer network ([`Evaluator::shallow`]) at its
    /// leaves, at a budget of `sims` simulations a turn, as a spec without its `model`: how
    /// gating and rating play such a network, because it is how the game serves one. Banqi:
    /// `banqi-ab` at the node budget of [`GameAgents::user_ai`]. `None` (the default): such a
    /// network plays through MCTS like any other.
    fn shallow_net_searcher(sims: u64) -> Option<GameSpec> {
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
