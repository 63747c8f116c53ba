//! Gating: a candidate model plays the current best in side-swapped matches from shared
//! random openings; it is promoted by a configurable rule, and every model gets an Elo.
//!
//! The rules themselves ([`GateRule`], [`GateSettings::decide`]) live in `engine::gating`,
//! shared with the coordinator, which schedules the same matches on the workers.
//!
//! The first candidate, with no best model yet, plays the user's AI (rollout evaluator) at
//! the same simulation count: a network is promoted only once it searches better than the
//! baseline the workers used until then.

use std::sync::Arc;

use engine::agent::Agent;
use engine::arena::{play_match_from, random_opening};
use engine::{Features, Game, derive_seed, rng_from_seed};
use model::Model;

pub use engine::gating::{GateResult, GateRule, GateSettings, sprt_llr};

/// What a candidate plays against.
pub enum Opponent {
    /// The current best model.
    Model(Arc<Model>),
    /// The user's AI: MCTS with the rollout evaluator.
    Rollout,
}

/// Plays `candidate` against `opponent` under `s` and decides promotion. `progress` is called
/// after every match with (matches played, candidate points so far).
pub fn gate<G: Features>(
    candidate: &Arc<Model>,
    opponent: &Opponent,
    options: &G::Options,
    s: &GateSettings,
    progress: &mut dyn FnMut(u32, f64),
) -> GateResult {
    let cand_eval = model::gate_leaf::<G>(Some((**candidate).clone()), s);
    let opp_eval = model::gate_leaf::<G>(
        match opponent {
            Opponent::Model(m) => Some((**m).clone()),
            Opponent::Rollout => None,
        },
        s,
    );
    gate_agents::<G>(
        &|| Box::new(model::gate_agent(cand_eval.clone(), s, "candidate")),
        &|| Box::new(model::gate_agent(opp_eval.clone(), s, "opponent")),
        options,
        s,
        progress,
    )
}

/// A fresh agent for each match.
pub type AgentFactory<'a, G> = dyn Fn() -> Box<dyn Agent<G>> + 'a;

/// The gating procedure for any two agents (the models' case is [`gate`]).
pub fn gate_agents<G: Game>(
    candidate: &AgentFactory<'_, G>,
    opponent: &AgentFactory<'_, G>,
    options: &G::Options,
    s: &GateSettings,
    progress: &mut dyn FnMut(u32, f64),
) -> GateResult {
    let mut points = Vec::new();
    for i in 0..s.matches {
        let seed = derive_seed(s.seed, u64::from(i));
        let start = random_opening(G::new_game(options), s.opening_plies, &mut rng_from_seed(seed));
        let mut a = candidate();
        let mut b = opponent();
        let m = play_match_from(&start, a.as_mut(), b.as_mut(), seed);
        points.push(m.points_a);
        progress(i + 1, points.iter().sum());
        if let Some((promoted, reason)) = s.decide(&points) {
            return GateResult::new(&points, promoted, reason);
        }
    }
    unreachable!("the rule decides by `matches` matches")
}

#[cfg(test)]
mod tests {
    use super::*;

    use engine::agent::{AgentSpec, RandomAgent};
    use engine::battlenumber::BattleNumber;

    fn settings(rule: GateRule) -> GateSettings {
        GateSettings { rule, matches: 16, opening_plies: 4, ..GateSettings::default() }
    }

    #[test]
    fn gating_promotes_a_clearly_stronger_agent_and_refuses_a_weaker_one() {
        let strong: AgentSpec = "mcts:sims=200,eval=rollout".parse().unwrap();
        let strong_f = || strong.build::<BattleNumber>();
        let weak_f = || Box::new(RandomAgent) as Box<dyn Agent<BattleNumber>>;
        for rule in [GateRule::Threshold, GateRule::Sprt] {
            let s = settings(rule);
            let up = gate_agents::<BattleNumber>(&strong_f, &weak_f, &Default::default(), &s, &mut |_, _| {});
            assert!(up.promoted, "{rule:?}: {up:?}");
            assert!(up.elo_lo > 0.0, "{up:?}");
            let down =
                gate_agents::<BattleNumber>(&weak_f, &strong_f, &Default::default(), &s, &mut |_, _| {});
            assert!(!down.promoted, "{rule:?}: {down:?}");
            assert!(down.elo_hi < 0.0, "{down:?}");
        }
        // SPRT stops early on such a clear difference (with a wide enough H1: at +35 Elo one
        // win moves the LLR by only ln(0.55/0.5), and 31 straight wins are needed).
        let s = GateSettings { elo1: 200.0, ..settings(GateRule::Sprt) };
        let r = gate_agents::<BattleNumber>(&strong_f, &weak_f, &Default::default(), &s, &mut |_, _| {});
        assert!(r.matches < 16, "{r:?}");
    }
}
