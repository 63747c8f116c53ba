//! What the play server's AI is, per game, without the server naming a game: the server
//! hands a [`ServeEnv`] (its `[leaf]`, whether a model has arrived, how to load it, how to
//! build a spec) to the game's [`GameAgents::served_ai`] and [`GameAgents::served_net`], which
//! each game's folder may override.

use std::sync::Arc;
use std::time::Duration;

use super::{Agent, EvalSpec, GameAgents, GameSpec, MctsAgent, MctsSpec};
use crate::eval::Evaluator;
use crate::leaf::LeafSettings;
use crate::mcts::MctsConfig;

/// Loads the model the server serves now as a leaf evaluator under the given settings
/// (called only while [`ServeEnv::has_model`]).
pub type ServedNet<'a, G> = dyn Fn(&LeafSettings) -> Arc<dyn Evaluator<G>> + 'a;

/// Builds a game's own agent the way the server builds every configured one (with its endgame
/// table store and its network loader).
pub type SpecBuilder<'a, G> = dyn Fn(&GameSpec) -> Box<dyn Agent<G>> + 'a;

/// What the play server offers a game building its AI for one move.
pub struct ServeEnv<'a, G> {
    /// The server's `[leaf]`: how a network AI values its leaves.
    pub leaf: LeafSettings,
    /// Whether a model has arrived (the slot's version is above 0).
    pub has_model: bool,
    /// The served model as a leaf.
    pub net: &'a ServedNet<'a, G>,
    /// Builds a spec's agent.
    pub build: &'a SpecBuilder<'a, G>,
}

impl<G: GameAgents> ServeEnv<'_, G> {
    /// MCTS at `time` a move over the served network under `leaf` with `knowledge` of the
    /// root's prior mass on the game's own candidates, or, while no model has arrived, over
    /// one rollout per leaf (the user's AI).
    pub fn net_mcts(&self, time: Duration, leaf: &LeafSettings, knowledge: f32) -> Box<dyn Agent<G>> {
        let evaluator = if self.has_model { (self.net)(leaf) } else { leaf.without_net() };
        let spec = MctsSpec {
            sims: None,
            time: Some(time),
            eval: EvalSpec::Rollout { playouts: 1 },
            config: MctsConfig {
                // A network answers a batch for about the cost of one position.
                batch_size: if self.has_model { 8 } else { 1 },
                knowledge: if self.has_model { knowledge } else { 0.0 },
                ..MctsConfig::default()
            },
        };
        Box::new(MctsAgent::new(spec, evaluator, format!("mcts:time={}ms,eval=net", time.as_millis())))
    }

    /// The game's agent `spec` at `time` a move, built as the server builds it.
    pub fn spec_at(&self, spec: &GameSpec, time: Duration) -> Box<dyn Agent<G>> {
        (self.build)(&spec.clone().with_time(time))
    }
}
