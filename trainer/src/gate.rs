//! Gating: a candidate model plays the current best in side-swapped matches from shared
//! random openings; it is promoted by a configurable rule, and every model gets an Elo.
//!
//! The rules themselves ([`GateRule`], [`GateSettings::decide`]) live in `engine::gating`,
//! shared with the coordinator, which schedules the same matches on the workers.
//!
//! The first candidate, with no best model yet, plays the user's AI ([`model::gate_user_ai`]:
//! MCTS with the rollout evaluator at the same simulation count, or the game's own, TriGolden's
//! `trigolden-user`): a network is promoted only once it plays better than the baseline the
//! workers used until then.

use std::sync::Arc;

use engine::agent::{Agent, GameAgents};
use engine::arena::{play_match_from, random_opening};
use engine::{Features, Game, derive_seed, rng_from_seed};
use model::Model;

pub use engine::gating::{GateResult, GateRule, GateSettings, sprt_llr};

/// What a candidate plays against.
pub enum Opponent {
    /// The current best model.
    Model(Arc<Model>),
    /// The user's AI ([`model::gate_user_ai`]).
    UserAi,
}

/// Plays `candidate` against `opponent` under `s` and decides promotion. `progress` is called
/// after every match with (matches played, candidate points so far).
pub fn gate<G: Features + GameAgents>(
    candidate: &Arc<Model>,
    opponent: &Opponent,
    options: &G::Options,
    s: &GateSettings,
    progress: &mut dyn FnMut(u32, f64),
) -> GateResult {
    let cand_eval = model::gate_leaf::<G>(Some((**candidate).clone()), s);
    let candidate = || model::gate_agent(cand_eval.clone(), s, "candidate");
    match opponent {
        Opponent::Model(m) => {
            let opp_eval = model::gate_leaf::<G>(Some((**m).clone()), s);
            let opponent = || model::gate_agent(opp_eval.clone(), s, "opponent");
            gate_agents::<G>(&candidate, &opponent, options, s, progress)
        }
        Opponent::UserAi => {
            gate_agents::<G>(&candidate, &|| model::gate_user_ai::<G>(s, "opponent"), options, s, progress)
        }
    }
}

/// Rating games: `candidate` (as it is gated, `s`'s leaf and simulations) against `anchor`
/// in `matches` side-swapped matches from openings of `seed`. Returns the candidate's points.
/// `progress` gets (matches played, points so far).
pub fn rate<G: Features + GameAgents>(
    candidate: &Arc<Model>,
    s: &GateSettings,
    anchor: &AgentFactory<'_, G>,
    matches: u32,
    seed: u64,
    progress: &mut dyn FnMut(u32, f64),
) -> f64 {
    let cand_eval = model::gate_leaf::<G>(Some((**candidate).clone()), s);
    let candidate = || model::gate_agent(cand_eval.clone(), s, "candidate");
    // The threshold rule decides at `matches`, never before: every game is played.
    let r = GateSettings { rule: GateRule::Threshold, matches, seed, ..s.clone() };
    gate_agents::<G>(&candidate, anchor, &Default::default(), &r, progress).points
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

    use engine::agent::RandomAgent;
    use engine::battlenumber::BattleNumber;
    use engine::spec::AgentSpec;

    fn settings(rule: GateRule) -> GateSettings {
        // H1 at +200: 16 straight wins then cross the SPRT's bound (at the default +60 they
        // would not, and a truncated SPRT refuses).
        GateSettings { rule, matches: 16, opening_plies: 4, elo1: 200.0, ..GateSettings::default() }
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
        // SPRT stops early on such a clear difference (with a wide enough H1: at +60 Elo one
        // win moves the LLR by only ln(0.586/0.5), and 19 straight wins are needed).
        let s = settings(GateRule::Sprt);
        let r = gate_agents::<BattleNumber>(&strong_f, &weak_f, &Default::default(), &s, &mut |_, _| {});
        assert!(r.matches < 16, "{r:?}");
    }

    /// A freshly initialised model of size `net` for `G`, as loaded from its file's bytes.
    fn fresh<G: Features>(net: &str) -> model::Model {
        let dev = model::cpu();
        let cfg = model::NetConfig::named(net).unwrap();
        let vnet = model::ValueNet::new(&cfg, G::FEATURE_LEN, G::POLICY_LEN, &dev);
        let meta = model::ModelMeta::for_game::<G>(cfg, 3.0, model::ModelInfo::default());
        model::load::<G>(&model::to_bytes(&vnet, &meta).unwrap(), &dev).unwrap()
    }

    #[test]
    fn a_one_layer_banqi_model_is_gated_inside_banqi_ab_as_it_is_served() {
        use engine::banqi::Banqi;
        let s = GateSettings { sims: 3, baseline_sims: 3, ..GateSettings::default() };
        let agent =
            |net: &str| model::gate_agent(model::gate_leaf::<Banqi>(Some(fresh::<Banqi>(net)), &s), &s, "c");
        // Served leaves mix a playout (lambda 0.5), yet the one-layer model runs alone inside
        // banqi-ab at the baseline's node budget, as `serve` plays it.
        assert!(s.leaf.lambda > 0.0);
        assert_eq!(agent("nano").name(), "banqi-ab:nodes=300,model=c");
        assert_eq!(model::gate_user_ai::<Banqi>(&s, "opponent").name(), "banqi-ab:nodes=300");
        // A deeper model plays through MCTS, and so does a one-layer model of a game without
        // such a searcher.
        assert_eq!(agent("tiny").name(), "c");
        let bn = model::gate_leaf::<BattleNumber>(Some(fresh::<BattleNumber>("nano")), &s);
        assert_eq!(model::gate_agent(bn, &s, "c").name(), "c");

        // A whole gating match of the one-layer model against banqi-ab, from the start.
        let one = GateSettings { matches: 1, rule: GateRule::Threshold, ..s };
        let cand = Arc::new(fresh::<Banqi>("nano"));
        let r = gate::<Banqi>(&cand, &Opponent::UserAi, &Default::default(), &one, &mut |_, _| {});
        assert_eq!(r.matches, 1, "{r:?}");
    }

    #[test]
    fn the_first_candidate_plays_the_games_own_user_ai_where_it_has_one() {
        use engine::trigolden::TriGolden;
        let s = GateSettings { sims: 4, baseline_sims: 1, ..GateSettings::default() };
        assert_eq!(model::gate_user_ai::<TriGolden>(&s, "opponent").name(), "trigolden-user:sims=1");
        // 0: the rollout MCTS the workers play before a network, at `sims`.
        let rollout = GateSettings { baseline_sims: 0, ..s.clone() };
        assert_eq!(model::gate_user_ai::<TriGolden>(&rollout, "opponent").name(), "opponent");
        // Battle Number's user AI is MCTS with the rollout evaluator.
        assert_eq!(model::gate_user_ai::<BattleNumber>(&s, "opponent").name(), "opponent");
        // Banqi's baseline is its alpha-beta searcher at a deterministic node budget.
        let ab = GateSettings { baseline_sims: 64, ..s.clone() };
        assert_eq!(
            model::gate_user_ai::<engine::banqi::Banqi>(&ab, "opponent").name(),
            "banqi-ab:nodes=6400"
        );

        // A whole gating match of a fresh TriGolden network against it, from late openings
        // (the user AI's simulations each play the game out).
        let candidate = Arc::new(fresh::<TriGolden>("tiny"));
        let s = GateSettings { matches: 1, opening_plies: 44, ..s };
        let mut calls = 0;
        let r =
            gate::<TriGolden>(&candidate, &Opponent::UserAi, &Default::default(), &s, &mut |_, _| calls += 1);
        assert_eq!((r.matches, calls), (1, 1), "{r:?}");
    }
}
