//! How a search values its leaves: one [`LeafSettings`] for self-play, gating, the play server,
//! `uci` and agent spec strings, so "the network at the leaves" means the same thing wherever
//! it is configured (the `leaf` table of the coordinator's, the trainer's and the play
//! server's configs, and the `LeafSettings` message on the wire).
//!
//! The network's own evaluator lives in the `model` crate (it runs burn); this module holds
//! the settings, the evaluators without a network, and the λ-mix around a network
//! ([`LeafSettings::around_net`]).

use std::fmt;
use std::sync::Arc;

use crate::eval::{Evaluator, Mixed, Rollout, Uniform};
use crate::game::Game;

pub use crate::eval::SCORE_SCALE;

/// Which evaluator values a leaf.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LeafEvaluator {
    /// The trained network (its priors and value), once one is published; the rollout
    /// evaluator until then.
    #[default]
    Net,
    /// The user's AI: one uniformly random playout, scored with the logistic of the
    /// difference.
    Rollout,
    /// Value 0 and uniform priors (tests and baselines).
    Uniform,
}

impl LeafEvaluator {
    /// Its name in configs and on the wire.
    pub fn name(self) -> &'static str {
        match self {
            LeafEvaluator::Net => "net",
            LeafEvaluator::Rollout => "rollout",
            LeafEvaluator::Uniform => "uniform",
        }
    }
}

impl fmt::Display for LeafEvaluator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LeafEvaluator {
    type Err = String;

    fn from_str(s: &str) -> Result<LeafEvaluator, String> {
        match s {
            "net" => Ok(LeafEvaluator::Net),
            "rollout" => Ok(LeafEvaluator::Rollout),
            "uniform" => Ok(LeafEvaluator::Uniform),
            other => Err(format!("evaluator {other:?}: \"net\", \"rollout\" or \"uniform\"")),
        }
    }
}

/// The leaf recipe: which evaluator, and for a network how its value is made.
///
/// Its table is read and saved through [`crate::search_settings::LEAF_KEYS`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LeafSettings {
    /// "net", "rollout" or "uniform".
    pub evaluator: LeafEvaluator,
    /// Network only: weight, in [0, 1], of the margin term in the network's value
    /// (`(1 − mix)·(P(win) − P(loss)) + mix·tanh(margin / (2·score_scale))`).
    pub margin_mix: f32,
    /// Network only: share, in [0, 1], of one random playout's value mixed into each leaf
    /// value (AlphaGo's λ); 0 is the network alone.
    pub lambda: f32,
    /// Score-difference scale of finished games' values and of the margin term
    /// ([`SCORE_SCALE`]).
    pub score_scale: f32,
}

impl Default for LeafSettings {
    /// The network alone at the leaves (λ = 0): what a `leaf` table means for every key it
    /// leaves out. Where a table is absent, its owner's default applies instead (the rollout
    /// evaluator for the coordinator's self-play, [`LeafSettings::served`] for gating and the
    /// play server).
    fn default() -> Self {
        LeafSettings { evaluator: LeafEvaluator::Net, margin_mix: 0.5, lambda: 0.0, score_scale: SCORE_SCALE }
    }
}

impl LeafSettings {
    /// The network alone at the leaves (λ = 0).
    pub fn net_alone() -> LeafSettings {
        LeafSettings::default()
    }

    /// The user's AI at the leaves: one random playout, no network.
    pub fn rollout() -> LeafSettings {
        LeafSettings { evaluator: LeafEvaluator::Rollout, ..LeafSettings::default() }
    }

    /// The leaf of the agent that is served to players, and so the one gating measures a
    /// candidate with: the network mixed with one random playout per leaf (λ = 0.5, run 6 in
    /// docs/benchmarks.md: 79% against the user's AI, against 64–67.5% for runs gated on the
    /// network alone). The play server's and the trainer's gate defaults are both this.
    pub fn served() -> LeafSettings {
        LeafSettings { evaluator: LeafEvaluator::Net, lambda: 0.5, ..LeafSettings::default() }
    }

    /// Checks the ranges.
    ///
    /// # Errors
    /// A message naming the bad field.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.margin_mix) {
            return Err(format!("margin_mix {} must be in [0, 1]", self.margin_mix));
        }
        if !(0.0..=1.0).contains(&self.lambda) {
            return Err(format!("lambda {} must be in [0, 1]", self.lambda));
        }
        if !(self.score_scale.is_finite() && (0.01..=1000.0).contains(&self.score_scale)) {
            return Err(format!("score_scale {} must be in [0.01, 1000]", self.score_scale));
        }
        Ok(())
    }

    /// The evaluator without a network: uniform, or the rollout evaluator (also what `net`
    /// plays before a model exists).
    pub fn without_net<G: Game>(&self) -> Arc<dyn Evaluator<G>> {
        match self.evaluator {
            LeafEvaluator::Uniform => Arc::new(Uniform),
            LeafEvaluator::Net | LeafEvaluator::Rollout => {
                Arc::new(Rollout { score_scale: self.score_scale, playouts: 1 })
            }
        }
    }

    /// A network's evaluator (built with this `margin_mix` and `score_scale`) mixed with one
    /// playout per leaf at weight `lambda`; the network itself when `lambda` is 0.
    pub fn around_net<G: Game>(&self, net: Arc<dyn Evaluator<G>>) -> Arc<dyn Evaluator<G>> {
        Mixed::wrap(net, self.lambda, self.score_scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_validate_and_read_from_toml() {
        assert!(LeafSettings::rollout().validate().is_ok());
        assert!(LeafSettings::served().validate().is_ok());
        for bad in [
            LeafSettings { lambda: 1.5, ..LeafSettings::default() },
            LeafSettings { lambda: f32::NAN, ..LeafSettings::default() },
            LeafSettings { margin_mix: -0.1, ..LeafSettings::default() },
            LeafSettings { score_scale: 0.0, ..LeafSettings::default() },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
        // A partial table is the network with the keys it gives.
        let s: LeafSettings = toml::from_str("lambda = 0.25").unwrap();
        assert_eq!(
            s,
            LeafSettings { evaluator: LeafEvaluator::Net, lambda: 0.25, ..LeafSettings::default() }
        );
        let r: LeafSettings = toml::from_str("evaluator = \"rollout\"").unwrap();
        assert_eq!(r, LeafSettings::rollout());
        let e = toml::from_str::<LeafSettings>("evaluator = \"nn\"").unwrap_err().to_string();
        assert!(e.contains("net") && e.contains("rollout"), "{e}");
        let e = toml::from_str::<LeafSettings>("leaf_lambda = 0.5").unwrap_err().to_string();
        assert!(e.contains("leaf_lambda"), "{e}");
        for k in [LeafEvaluator::Net, LeafEvaluator::Rollout, LeafEvaluator::Uniform] {
            assert_eq!(k.name().parse::<LeafEvaluator>().unwrap(), k);
        }
    }

    #[test]
    fn the_mix_is_skipped_at_lambda_zero() {
        use crate::battlenumber::BattleNumber;
        let net: Arc<dyn Evaluator<BattleNumber>> = Arc::new(Uniform);
        assert_eq!(LeafSettings::net_alone().around_net(net.clone()).name(), "uniform");
        assert!(LeafSettings::served().around_net(net).name().contains("λ=0.5"));
        assert_eq!(LeafSettings::served().without_net::<BattleNumber>().name(), "rollout");
        let uniform = LeafSettings { evaluator: LeafEvaluator::Uniform, ..LeafSettings::default() };
        assert_eq!(uniform.without_net::<BattleNumber>().name(), "uniform");
    }
}
