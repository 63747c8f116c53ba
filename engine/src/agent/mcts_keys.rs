//! The keys of `mcts:…`, declared once. Some keys only mean something together (`model=` and
//! `mix=` need `eval=net`), so they are read into a [`MctsDraft`] and checked as a whole by
//! [`MctsDraft::finish`]. The keys a config file also has (`cpuct` is `[selfplay]`'s `c_puct`,
//! `scale` is `[leaf]`'s `score_scale`, …) lift their declarations from
//! [`crate::search_settings`].

use std::time::Duration;

use super::{EvalSpec, MctsSpec};
use crate::leaf::{LeafEvaluator, LeafSettings};
use crate::lift;
use crate::mcts::MctsConfig;
use crate::search_settings::{BATCH, C_PUCT, EVALUATOR, FPU, KNOWLEDGE, LAMBDA, MARGIN_MIX, SCORE_SCALE};
use crate::settings::{Setting, Value, duration, duration_value};

/// An `mcts:…` spec while its keys are read: the evaluator's keys apart until the end.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsDraft {
    sims: Option<u64>,
    time: Option<Duration>,
    /// `None` until `eval=` is read (rollout, printed only when given).
    eval: Option<LeafEvaluator>,
    playouts: u32,
    model: Option<String>,
    /// `mix`, `lambda` and `scale`.
    leaf: LeafSettings,
    config: MctsConfig,
}

impl Default for MctsDraft {
    fn default() -> Self {
        MctsDraft {
            sims: None,
            time: None,
            eval: None,
            playouts: 1,
            model: None,
            leaf: LeafSettings::default(),
            config: MctsConfig::default(),
        }
    }
}

impl MctsDraft {
    /// The draft a spec prints from.
    pub fn of(spec: &MctsSpec) -> MctsDraft {
        let mut d = MctsDraft {
            sims: spec.sims,
            time: spec.time,
            leaf: LeafSettings { score_scale: spec.config.score_scale, ..LeafSettings::default() },
            config: spec.config.clone(),
            ..MctsDraft::default()
        };
        match &spec.eval {
            EvalSpec::Uniform => d.eval = Some(LeafEvaluator::Uniform),
            EvalSpec::Rollout { playouts } => {
                (d.eval, d.playouts) = (Some(LeafEvaluator::Rollout), *playouts)
            }
            EvalSpec::Net { model, mix, lambda } => {
                d.eval = Some(LeafEvaluator::Net);
                d.model = Some(model.clone());
                (d.leaf.margin_mix, d.leaf.lambda) = (*mix, *lambda);
            }
        }
        d
    }

    /// The spec, its keys checked together (800 simulations where neither `sims` nor `time`
    /// is given).
    ///
    /// # Errors
    /// `eval=net` without `model=`, `model=` or `lambda=` without `eval=net`.
    pub fn finish(mut self) -> Result<MctsSpec, String> {
        let eval = match self.eval.unwrap_or(LeafEvaluator::Rollout) {
            LeafEvaluator::Rollout => EvalSpec::Rollout { playouts: self.playouts },
            LeafEvaluator::Uniform => EvalSpec::Uniform,
            LeafEvaluator::Net => EvalSpec::Net {
                model: self.model.take().ok_or("eval=net needs model=PATH")?,
                mix: self.leaf.margin_mix,
                lambda: self.leaf.lambda,
            },
        };
        if self.model.is_some() {
            return Err("model= is only for eval=net".into());
        }
        if self.leaf.lambda > 0.0 && !matches!(eval, EvalSpec::Net { .. }) {
            return Err("lambda= is only for eval=net".into());
        }
        self.config.score_scale = self.leaf.score_scale;
        let sims = if self.sims.is_none() && self.time.is_none() { Some(800) } else { self.sims };
        Ok(MctsSpec { sims, time: self.time, eval, config: self.config })
    }
}

/// A non-negative number.
fn num(v: &Value) -> Result<f64, String> {
    v.number().ok().filter(|x| *x >= 0.0).ok_or_else(|| format!("must be a non-negative number, got `{v}`"))
}

/// The keys of `mcts:…`, declared once, in the order a spec prints them.
pub static MCTS_KEYS: &[Setting<MctsDraft>] = &[
    Setting {
        toml: "",
        spec: "sims",
        value: "N",
        default: "800",
        help: "Simulations per turn (with time, whichever ends first; 800 when neither is given).",
        set: |d, v| {
            let n = num(v)? as u64;
            if n == 0 {
                return Err("must be at least 1".into());
            }
            d.sims = Some(n);
            Ok(())
        },
        get: |d| d.sims.map(Value::from_u64),
    },
    Setting {
        toml: "",
        spec: "time",
        value: "DURATION",
        default: "-",
        help: "Time per turn (`200ms`, `1.5s`).",
        set: |d, v| {
            d.time = Some(duration(v)?);
            Ok(())
        },
        get: |d| d.time.map(duration_value),
    },
    Setting {
        toml: "",
        spec: EVALUATOR.spec,
        value: EVALUATOR.value,
        default: "rollout",
        help: EVALUATOR.help,
        set: |d, v| {
            let mut leaf = LeafSettings::default();
            (EVALUATOR.set)(&mut leaf, v)?;
            d.eval = Some(leaf.evaluator);
            Ok(())
        },
        get: |d| d.eval.map(|e| Value::Text(e.name().into())),
    },
    Setting {
        toml: "",
        spec: "playouts",
        value: "N",
        default: "1",
        help: "Playouts per leaf with eval=rollout.",
        set: |d, v| {
            d.playouts = (num(v)? as u32).max(1);
            Ok(())
        },
        get: |d| Some(Value::from_u64(d.playouts.into())),
    },
    Setting {
        toml: "",
        spec: "model",
        value: "PATH",
        default: "-",
        help: "The model file of eval=net.",
        set: |d, v| {
            d.model = Some(v.text().into_owned());
            Ok(())
        },
        get: |d| d.model.clone().map(Value::Text),
    },
    lift!(MARGIN_MIX, |d| d.leaf),
    lift!(LAMBDA, |d| d.leaf),
    lift!(C_PUCT, |d| d.config),
    lift!(FPU, |d| d.config),
    lift!(BATCH, |d| d.config),
    lift!(SCORE_SCALE, |d| d.leaf),
    lift!(KNOWLEDGE, |d| d.config),
];
