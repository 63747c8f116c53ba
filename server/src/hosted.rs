//! Each game as the play server hosts it: its AI (with and without a network), the options a
//! new game starts from, and the model file the configuration names for it. [`AppState`]
//! holds one model slot and one AI per [`GameKind::ALL`], keyed by kind, so the handlers,
//! `/api/info`, `/metrics` and model following are written once for every game. What differs
//! per game is in the game's own folder: its [`GameAgents::served_ai`] and
//! [`GameAgents::served_net`], and its options' JSON ([`engine::pack::GamePack`]).

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use engine::GameKind;
use engine::LeafSettings;
use engine::agent::{GameAgents, GameSpec, SERVED_MODEL, ServeEnv};
use engine::spec::AgentSpec;
use model::{ModelSlot, NetSource};

use crate::table::{AiFactory, Served};
use crate::{AppState, ServeConfig};

/// What the play server needs from one game: its rules and pack ([`Served`]), its features
/// (a network plays it) and its agents. Every registered game is one.
pub(crate) trait Hosted: Served + engine::Features + GameAgents {}

impl<G: Served + engine::Features + GameAgents> Hosted for G {}

/// The options a new game of `G` starts from when a request names none (`[games.<name>]
/// options`, checked by [`ServeConfig::validate`]).
pub(crate) fn defaults<G: Hosted>(cfg: &ServeConfig) -> G::Options {
    let options = cfg.game(GameKind::of::<G>()).options_json();
    G::options_from_json(&options, &G::Options::default()).expect("options checked by ServeConfig::validate")
}

/// `G`'s AI under `cfg` (its `[games.<name>] agent`), playing with the network in `slot` once
/// one arrives: `auto` is the game's [`GameAgents::served_ai`], `net` its
/// [`GameAgents::served_net`], and a spec that spec at the player's time.
fn ai<G: Hosted>(cfg: &ServeConfig, slot: Arc<ModelSlot>) -> AiFactory<G> {
    let choice = cfg.game(GameKind::of::<G>()).agent;
    // Parsed once here (the config was validated); each move only sets its time.
    let spec = match choice.as_str() {
        "auto" | "net" => None,
        other => Some(other.parse::<AgentSpec>().expect("agent checked by ServeConfig::validate")),
    };
    let leaf = cfg.leaf;
    // A move's agent is new each time: endgame tables come from the disk cache.
    let tables = modelfile::tables::default_store();
    Arc::new(move |time| {
        let has_model = slot.version() > 0;
        let net = |l: &LeafSettings| model::net_leaf::<G>(NetSource::Slot(slot.clone(), None), l);
        let build_spec = |spec: AgentSpec| {
            let loader = |m: &str, l: &LeafSettings| match m == SERVED_MODEL && has_model {
                true => Ok(net(l)),
                false => Err(format!("the play server serves only its own model, not {m}")),
            };
            spec.with_table_store(tables.clone())
                .build_with::<G>(&loader)
                .expect("a served spec names no model file (ServeConfig::validate)")
        };
        let build = |spec: &GameSpec| build_spec(AgentSpec::Game(spec.clone()));
        let env = ServeEnv { leaf, has_model, net: &net, build: &build };
        match (&spec, choice.as_str()) {
            (Some(spec), _) => build_spec(spec.clone().with_time(time)),
            (None, "net") => G::served_net(time, &env),
            (None, _) => G::served_ai(time, &env),
        }
    })
}

/// Every game's model slot (empty until a model arrives) and AI, keyed by kind.
pub(crate) struct Hosts {
    models: BTreeMap<GameKind, Arc<ModelSlot>>,
    /// An [`AiFactory<G>`] for each kind's `G`, read back by [`Hosts::ai`].
    ais: BTreeMap<GameKind, Box<dyn Any + Send + Sync>>,
}

impl Hosts {
    /// One empty model slot and one AI per game of [`GameKind::ALL`], for `cfg` (validated).
    pub(crate) fn new(cfg: &ServeConfig) -> Hosts {
        let (mut models, mut ais) = (BTreeMap::new(), BTreeMap::new());
        for kind in GameKind::ALL {
            let slot = Arc::new(ModelSlot::new());
            let ai: Box<dyn Any + Send + Sync> =
                engine::with_game!(kind, |G| Box::new(ai::<G>(cfg, slot.clone())));
            models.insert(kind, slot);
            ais.insert(kind, ai);
        }
        Hosts { models, ais }
    }

    /// The model slot of `kind`.
    pub(crate) fn model(&self, kind: GameKind) -> &Arc<ModelSlot> {
        &self.models[&kind]
    }

    /// Every game's model slot, in [`GameKind::ALL`] order.
    pub(crate) fn models(&self) -> impl Iterator<Item = (GameKind, &Arc<ModelSlot>)> {
        GameKind::ALL.into_iter().map(|k| (k, self.model(k)))
    }

    /// The AI of game `G`.
    pub(crate) fn ai<G: Hosted>(&self) -> AiFactory<G> {
        self.ais[&GameKind::of::<G>()]
            .downcast_ref::<AiFactory<G>>()
            .expect("Hosts::new stores each kind's AiFactory<G>")
            .clone()
    }

    /// The name of `kind`'s AI now (it changes when a model arrives), at one second a move.
    pub(crate) fn ai_name(&self, kind: GameKind) -> String {
        engine::with_game!(kind, |G| (self.ai::<G>())(std::time::Duration::from_secs(1)).name())
    }
}

impl AppState {
    /// The model slot of `kind`'s AI (version 0 while it has no network).
    pub fn model(&self, kind: GameKind) -> &Arc<ModelSlot> {
        self.hosts.model(kind)
    }
}
