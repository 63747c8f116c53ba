//! Agent specs: the one line that names a player (`mcts:sims=800,eval=rollout`,
//! `banqi-ab:time=300ms`), read into an [`AgentSpec`] and built into an
//! [`Agent`](crate::agent::Agent) for a game. `random` and `mcts` play every game; every other
//! family is a game's own, found through the game registry ([`GameKind::ALL`] and each game's
//! [`GameAgents::FAMILIES`]), so this parser names no game, and no game needs it (the games'
//! agents see only their own [`GameSpec`]).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::agent::keys::{self, Family};
use crate::agent::{
    Agent, EvalSpec, FamilyKeys, GameAgents, GameFamily, GameSpec, MCTS_KEYS, MctsAgent, MctsDraft, MctsSpec,
    NetLoader, RandomAgent,
};
use crate::banqi::tablebase::TableStore;
use crate::eval::{Evaluator, Rollout, Uniform};
use crate::kind::GameKind;
use crate::settings::spec_parts;

/// A parsed agent spec string (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub enum AgentSpec {
    /// `random`.
    Random,
    /// `mcts:…`.
    Mcts(MctsSpec),
    /// A game's own agent (`trigolden-user:…`, `banqi-ab:…`), read by its family's key table.
    Game(GameSpec),
}

impl From<GameSpec> for AgentSpec {
    fn from(spec: GameSpec) -> AgentSpec {
        AgentSpec::Game(spec)
    }
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

/// Every game's own agent families, in [`GameKind::ALL`] order.
fn game_families() -> impl Iterator<Item = &'static GameFamily> {
    GameKind::ALL.into_iter().flat_map(|k| crate::with_game!(k, |G| <G as GameAgents>::FAMILIES).iter())
}

impl FromStr for AgentSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, SpecError> {
        let err = |reason: String| SpecError { spec: s.to_string(), reason };
        let s = s.trim();
        let (name, rest) = s.split_once(':').unwrap_or((s, ""));
        let spec = match name {
            "random" if rest.is_empty() => Ok(AgentSpec::Random),
            "mcts" => {
                let mut draft = MctsDraft::default();
                keys::read(MCTS_KEYS, &mut draft, rest).and_then(|()| draft.finish()).map(AgentSpec::Mcts)
            }
            _ => match game_families().find(|f| f.answers_to(name)) {
                Some(family) => family.parse(rest).map(AgentSpec::Game),
                None => {
                    let others: Vec<String> = game_families().map(|f| format!("`{}:...`", f.name)).collect();
                    Err(format!("expected `random`, `mcts:key=value,...` or {}", others.join(", ")))
                }
            },
        };
        spec.map_err(err)
    }
}

impl fmt::Display for AgentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentSpec::Random => f.write_str("random"),
            AgentSpec::Mcts(m) => write!(f, "mcts:{}", spec_parts(MCTS_KEYS, &MctsDraft::of(m)).join(",")),
            AgentSpec::Game(g) => g.fmt(f),
        }
    }
}

impl AgentSpec {
    /// The family's name, as a spec starts ([`AgentSpec::families`]).
    pub fn family(&self) -> &'static str {
        match self {
            AgentSpec::Random => "random",
            AgentSpec::Mcts(_) => "mcts",
            AgentSpec::Game(g) => g.family(),
        }
    }

    /// Every agent family with its keys, for `zeroplay agents` and the docs: what a spec can
    /// say, from the same tables the parser reads.
    pub fn families() -> Vec<Family> {
        let mut all = vec![
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
        ];
        all.extend(game_families().map(GameFamily::table));
        all
    }

    /// The settings of a game's own agent, if this spec is one with settings `S`
    /// (`banqi-ab:…` and [`crate::banqi::ab::AbSettings`]).
    pub fn game<S: FamilyKeys>(&self) -> Option<&S> {
        match self {
            AgentSpec::Game(g) => g.settings(),
            _ => None,
        }
    }

    /// Whether building this agent loads a network (`eval=net`, `model=`).
    pub fn uses_net(&self) -> bool {
        self.model().is_some()
    }

    /// The network the spec names (`model=`), if any.
    pub fn model(&self) -> Option<&str> {
        match self {
            AgentSpec::Mcts(MctsSpec { eval: EvalSpec::Net { model, .. }, .. }) => Some(model),
            AgentSpec::Game(g) => g.model(),
            _ => None,
        }
    }

    /// This spec with its network named `model` (MCTS's with `eval=net`, and a game's agent
    /// that plays one, as `banqi-ab`; other specs are returned as they are).
    pub fn with_model(mut self, model: &str) -> AgentSpec {
        match &mut self {
            AgentSpec::Game(g) => g.set_model(model),
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
            AgentSpec::Game(g) => self = AgentSpec::Game(g.clone().with_time(time)),
        }
        self
    }

    /// This spec with `store` as the place its endgame tables are kept between processes
    /// (a game's agent with tables, as `banqi-ab`; other specs are returned as they are).
    pub fn with_table_store(mut self, store: Option<Arc<dyn TableStore>>) -> AgentSpec {
        if let AgentSpec::Game(g) = &mut self {
            g.set_table_store(store);
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
    /// The loader's error, or a game's agent asked to play another game.
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
            AgentSpec::Game(g) => G::game_agent(g, self.to_string(), net)
                .ok_or_else(|| format!("{self} is not an agent of {}", G::NAME))??,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::StopFlag;
    use crate::banqi::ab::AB_KEYS;
    use crate::game::Game;

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
        let e = "banqi-ab:cpc_depth=0".parse::<AgentSpec>().unwrap_err();
        assert_eq!(e.reason, "cpc_depth `0`: 1 to 8");
        let e = "banqi-ab:fast=1".parse::<AgentSpec>().unwrap_err();
        assert_eq!(
            e.reason,
            format!(
                "unknown key `fast` (known: {})",
                crate::settings::names(AB_KEYS, crate::settings::Syntax::Spec)
            )
        );
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
            "banqi-ab:time=300ms,flip_depth=2,rep=0,probe=0,cpc=0",
            "banqi-ab:time=300ms,cpc=20,cpc_depth=3",
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
