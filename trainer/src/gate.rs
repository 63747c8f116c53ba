//! Gating: a candidate model plays the current best in side-swapped matches from shared
//! random openings; it is promoted by a configurable rule, and every model gets an Elo.
//!
//! Rules ([`GateRule`]):
//! - `threshold`: promote when the candidate scores at least `threshold` of the points over
//!   `matches` matches.
//! - `sprt`: Wald's sequential probability ratio test of H0 "candidate is `elo0` better" against
//!   H1 "candidate is `elo1` better" on per-match points (a Bernoulli model with draws as
//!   half points), stopping as soon as a bound is crossed or `matches` is reached (then the
//!   threshold rule decides).
//!
//! The first candidate, with no best model yet, plays the user's AI (rollout evaluator) at
//! the same simulation count: a network is promoted only once it searches better than the
//! baseline the workers used until then.

use std::sync::Arc;

use engine::agent::{Agent, EvalSpec, MctsAgent, MctsSpec};
use engine::arena::{Elo, elo, play_match_from, random_opening};
use engine::eval::{Evaluator, Rollout};
use engine::mcts::MctsConfig;
use engine::{Features, Game, derive_seed, rng_from_seed};
use model::{Model, NetEvaluator, UtilitySettings};
use serde::{Deserialize, Serialize};

/// The promotion rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateRule {
    /// At least `threshold` of the points over `matches` matches.
    Threshold,
    /// SPRT with `elo0`/`elo1`, `alpha`/`beta`; falls back to the threshold at `matches`.
    Sprt,
}

/// Gating settings (the `[gate]` table of `configs/train.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GateSettings {
    /// The rule.
    pub rule: GateRule,
    /// Matches (two games each, seats swapped) at most.
    pub matches: u32,
    /// Points fraction needed to promote under `threshold` (and at the end of `sprt`).
    pub threshold: f64,
    /// SPRT null hypothesis, in Elo.
    pub elo0: f64,
    /// SPRT alternative, in Elo.
    pub elo1: f64,
    /// SPRT false-promotion rate.
    pub alpha: f64,
    /// SPRT false-rejection rate.
    pub beta: f64,
    /// MCTS simulations per turn for both sides.
    pub sims: u64,
    /// Random opening length in atomic actions (each match starts from its own opening).
    pub opening_plies: u32,
    /// Weight of the margin term in the network's utility.
    pub margin_mix: f32,
    /// Seed of the openings.
    pub seed: u64,
}

impl Default for GateSettings {
    fn default() -> Self {
        GateSettings {
            rule: GateRule::Threshold,
            matches: 40,
            threshold: 0.55,
            elo0: 0.0,
            elo1: 35.0,
            alpha: 0.05,
            beta: 0.05,
            sims: 64,
            opening_plies: 6,
            margin_mix: 0.5,
            seed: 7,
        }
    }
}

impl GateSettings {
    /// Checks every field.
    ///
    /// # Errors
    /// A description of the first bad field.
    pub fn validate(&self) -> Result<(), String> {
        if self.matches == 0 {
            return Err("gate.matches must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.threshold) {
            return Err("gate.threshold must be in [0, 1]".into());
        }
        if !(self.alpha > 0.0 && self.alpha < 0.5 && self.beta > 0.0 && self.beta < 0.5) {
            return Err("gate.alpha and gate.beta must be in (0, 0.5)".into());
        }
        if self.elo1 <= self.elo0 {
            return Err("gate.elo1 must be above gate.elo0".into());
        }
        if self.sims == 0 {
            return Err("gate.sims must be at least 1".into());
        }
        Ok(())
    }
}

/// The outcome of a gating run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GateResult {
    /// Matches played.
    pub matches: u32,
    /// The candidate's points (1 a match won, ½ drawn).
    pub points: f64,
    /// Elo of the candidate over its opponent, with a 95% interval.
    pub elo: f64,
    /// Lower end of the interval.
    pub elo_lo: f64,
    /// Upper end of the interval.
    pub elo_hi: f64,
    /// Promoted?
    pub promoted: bool,
    /// Why (which rule decided, and how).
    pub reason: String,
}

/// Log-likelihood ratio of per-match points under H1 (`elo1`) over H0 (`elo0`), with the
/// points read as Bernoulli outcomes (draws as halves).
pub fn sprt_llr(points: &[f64], elo0: f64, elo1: f64) -> f64 {
    let p = |e: f64| 1.0 / (1.0 + 10f64.powf(-e / 400.0));
    let (p0, p1) = (p(elo0), p(elo1));
    points.iter().map(|&x| x * (p1 / p0).ln() + (1.0 - x) * ((1.0 - p1) / (1.0 - p0)).ln()).sum()
}

/// What a candidate plays against.
pub enum Opponent {
    /// The current best model.
    Model(Arc<Model>),
    /// The user's AI: MCTS with the rollout evaluator.
    Rollout,
}

fn net_evaluator<G: Features>(m: &Model, mix: f32) -> Arc<dyn Evaluator<G>> {
    Arc::new(NetEvaluator::<G>::fixed(m.clone(), UtilitySettings { margin_mix: mix, score_scale: 3.0 }))
}

fn agent<G: Features>(eval: Arc<dyn Evaluator<G>>, sims: u64, name: &str) -> MctsAgent<G> {
    let spec = MctsSpec {
        sims: Some(sims),
        time: None,
        eval: EvalSpec::Uniform,
        config: MctsConfig { batch_size: 8, ..MctsConfig::default() },
    };
    MctsAgent::new(spec, eval, name.into())
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
    let cand_eval = net_evaluator::<G>(candidate, s.margin_mix);
    let opp_eval: Arc<dyn Evaluator<G>> = match opponent {
        Opponent::Model(m) => net_evaluator::<G>(m, s.margin_mix),
        Opponent::Rollout => Arc::new(Rollout::default()),
    };
    let sims = s.sims;
    gate_agents::<G>(
        &|| Box::new(agent(cand_eval.clone(), sims, "candidate")),
        &|| Box::new(agent(opp_eval.clone(), sims, "opponent")),
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
    let (lower, upper) = ((s.beta / (1.0 - s.alpha)).ln(), ((1.0 - s.beta) / s.alpha).ln());
    let mut reason = String::new();
    let mut decided = None;
    for i in 0..s.matches {
        let seed = derive_seed(s.seed, u64::from(i));
        let start = random_opening(G::new_game(options), s.opening_plies, &mut rng_from_seed(seed));
        let mut a = candidate();
        let mut b = opponent();
        let m = play_match_from(&start, a.as_mut(), b.as_mut(), seed);
        points.push(m.points_a);
        progress(i + 1, points.iter().sum());
        if s.rule == GateRule::Sprt {
            let llr = sprt_llr(&points, s.elo0, s.elo1);
            if llr >= upper {
                reason = format!("SPRT accepted H1 (+{} Elo) after {} matches, LLR {llr:.2}", s.elo1, i + 1);
                decided = Some(true);
                break;
            }
            if llr <= lower {
                reason = format!("SPRT accepted H0 (+{} Elo) after {} matches, LLR {llr:.2}", s.elo0, i + 1);
                decided = Some(false);
                break;
            }
        }
    }
    let total: f64 = points.iter().sum();
    let n = points.len() as u32;
    let frac = total / f64::from(n);
    let promoted = decided.unwrap_or_else(|| {
        reason = format!(
            "{:.1}% of the points over {n} matches (needed {:.1}%)",
            100.0 * frac,
            100.0 * s.threshold
        );
        frac >= s.threshold
    });
    let Elo { diff, lo, hi, .. } = elo(&points);
    GateResult { matches: n, points: total, elo: diff, elo_lo: lo, elo_hi: hi, promoted, reason }
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

    #[test]
    fn sprt_llr_sign_follows_the_evidence() {
        assert!(sprt_llr(&[1.0; 20], 0.0, 35.0) > 0.0);
        assert!(sprt_llr(&[0.0; 20], 0.0, 35.0) < 0.0);
        assert!(sprt_llr(&[0.5; 20], 0.0, 35.0) < 0.0, "even scores favour H0 = 0 Elo");
    }
}
