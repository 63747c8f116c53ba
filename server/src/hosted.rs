//! Each game as the play server hosts it: its AI (with and without a network), the options a
//! new game starts from, and the model file the configuration names for it. [`AppState`]
//! holds one model slot and one AI per [`GameKind::ALL`], keyed by kind, so the handlers,
//! `/api/info`, `/metrics` and model following are written once for every game; what differs
//! per game is here, behind one trait.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use engine::GameKind;
use engine::LeafSettings;
use engine::agent::{AgentSpec, SharedTables};
use engine::banqi::Banqi;
use engine::banqi::ab::{AbAgent, AbSettings};
use engine::battlenumber::BattleNumber;
use engine::trigolden::TriGolden;
use model::{ModelSlot, NetSource};

use crate::table::{AiFactory, Served};
use crate::{AppState, ServeConfig, net_ai};

/// What the play server needs from one game beyond the rules ([`Served`]).
pub(crate) trait Hosted: Served + engine::Features {
    /// The options a new game starts from when a request names none.
    fn defaults(cfg: &ServeConfig) -> Self::Options;
    /// This game's AI under `cfg` (its `[games.<name>] agent`), playing with the network in
    /// `slot` once one arrives.
    fn ai(cfg: &ServeConfig, slot: Arc<ModelSlot>) -> AiFactory<Self>;
}

impl Hosted for BattleNumber {
    fn defaults(cfg: &ServeConfig) -> Self::Options {
        cfg.options.battlenumber
    }
    fn ai(cfg: &ServeConfig, slot: Arc<ModelSlot>) -> AiFactory<Self> {
        net_ai::<BattleNumber>(slot, cfg.leaf, 0.0)
    }
}

/// Weight of `trigolden-user`'s candidate turns in the root priors of TriGolden's network AI
/// (`knowledge=0.5`: 90.0% against `trigolden-user` at 500 ms, against 83.5% for the network
/// alone, docs/benchmarks.md).
const TRIGOLDEN_KNOWLEDGE: f32 = 0.5;

impl Hosted for TriGolden {
    fn defaults(_: &ServeConfig) -> Self::Options {
        engine::trigolden::Options::default()
    }
    fn ai(cfg: &ServeConfig, slot: Arc<ModelSlot>) -> AiFactory<Self> {
        // The network alone (a playout costs milliseconds here) with half the root's priors on
        // the user's AI's candidates, as docs/benchmarks.md measured it.
        let net =
            net_ai::<TriGolden>(slot.clone(), LeafSettings { lambda: 0.0, ..cfg.leaf }, TRIGOLDEN_KNOWLEDGE);
        let agent = cfg.game(GameKind::of::<Self>()).agent;
        let (auto, spec) = match agent.as_str() {
            "net" => return net,
            // A person waits for the time they asked: the whole turn counts.
            "auto" => (true, "trigolden-user:clock=turn"),
            other => (false, other),
        };
        // Parsed once here (the config was validated); each move only sets its time.
        let spec: AgentSpec = spec.parse().expect("validated");
        Arc::new(move |time| {
            if auto && slot.version() > 0 {
                return net(time);
            }
            let spec = match spec.clone() {
                AgentSpec::TrigoldenUser(mut s) => {
                    s.time = Some(time);
                    s.sims = None;
                    AgentSpec::TrigoldenUser(s)
                }
                AgentSpec::TrigoldenLite(mut s) => {
                    s.time = Some(time);
                    s.sims = None;
                    AgentSpec::TrigoldenLite(s)
                }
                AgentSpec::Mcts(mut m) => {
                    m.time = Some(time);
                    m.sims = None;
                    AgentSpec::Mcts(m)
                }
                other => other,
            };
            spec.build::<TriGolden>()
        })
    }
}

impl Hosted for Banqi {
    fn defaults(_: &ServeConfig) -> Self::Options {
        engine::banqi::Options::default()
    }
    fn ai(cfg: &ServeConfig, slot: Arc<ModelSlot>) -> AiFactory<Self> {
        // The model's MCTS once there is a model, banqi-ab until then (`auto`).
        let net = net_ai::<Banqi>(slot.clone(), cfg.leaf, 0.0);
        let agent = cfg.game(GameKind::of::<Self>()).agent;
        let spec = match agent.as_str() {
            "net" => return net,
            spec => spec,
        };
        let (auto, spec) = if spec == "auto" { (true, "banqi-ab") } else { (false, spec) };
        let Ok(AgentSpec::BanqiAb(settings)) = spec.parse::<AgentSpec>() else { unreachable!("validated") };
        // A move's agent is new each time: the tables come from the disk cache.
        let settings = AbSettings { store: modelfile::tables::default_store().map(SharedTables), ..settings };
        Arc::new(move |time| {
            let ab = AbSettings { time: Some(time), nodes: None, ..settings.clone() };
            if auto && slot.version() > 0 {
                // A one-layer (`nano`) model is what banqi-ab runs at its leaves, measured
                // stronger than banqi-ab alone (docs/benchmarks.md, issue 39); a larger
                // model plays through MCTS.
                let leaf =
                    model::net_leaf::<Banqi>(NetSource::Slot(slot.clone(), None), &LeafSettings::net_alone());
                if leaf.shallow().is_none() {
                    return net(time);
                }
                let name = format!("banqi-ab:time={}ms,model=served", time.as_millis());
                return Box::new(AbAgent::with_leaf(ab, name, leaf));
            }
            AgentSpec::BanqiAb(ab).build::<Banqi>()
        })
    }
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
                engine::with_game!(kind, |G| Box::new(G::ai(cfg, slot.clone())));
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
