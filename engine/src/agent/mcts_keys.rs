//! The keys of `mcts:…`, declared once. Some keys only mean something together (`model=` and
//! `mix=` need `eval=net`), so they are read into a [`MctsDraft`] and checked as a whole by
//! [`MctsDraft::finish`].

use std::time::Duration;

use super::keys::{Key, duration, unless};
use super::{EvalSpec, MctsSpec};
use crate::mcts::MctsConfig;

/// An `mcts:…` spec while its keys are read: the evaluator's keys apart until the end.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsDraft {
    sims: Option<u64>,
    time: Option<Duration>,
    eval: String,
    playouts: u32,
    model: Option<String>,
    mix: f32,
    lambda: f32,
    config: MctsConfig,
}

impl Default for MctsDraft {
    fn default() -> Self {
        MctsDraft {
            sims: None,
            time: None,
            eval: "rollout".into(),
            playouts: 1,
            model: None,
            mix: 0.5,
            lambda: 0.0,
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
            config: spec.config.clone(),
            ..MctsDraft::default()
        };
        match &spec.eval {
            EvalSpec::Uniform => d.eval = "uniform".into(),
            EvalSpec::Rollout { playouts } => d.playouts = *playouts,
            EvalSpec::Net { model, mix, lambda } => {
                d.eval = "net".into();
                d.model = Some(model.clone());
                (d.mix, d.lambda) = (*mix, *lambda);
            }
        }
        d
    }

    /// The spec, its keys checked together (800 simulations where neither `sims` nor `time`
    /// is given).
    ///
    /// # Errors
    /// `eval=net` without `model=`, `model=` or `lambda=` without `eval=net`, an unknown
    /// evaluator.
    pub fn finish(mut self) -> Result<MctsSpec, String> {
        let eval = match self.eval.as_str() {
            "rollout" => EvalSpec::Rollout { playouts: self.playouts },
            "uniform" => EvalSpec::Uniform,
            "net" => EvalSpec::Net {
                model: self.model.take().ok_or("eval=net needs model=PATH")?,
                mix: self.mix,
                lambda: self.lambda,
            },
            other => return Err(format!("unknown evaluator `{other}` (known: rollout, uniform, net)")),
        };
        if self.model.is_some() {
            return Err("model= is only for eval=net".into());
        }
        if self.lambda > 0.0 && !matches!(eval, EvalSpec::Net { .. }) {
            return Err("lambda= is only for eval=net".into());
        }
        let sims = if self.sims.is_none() && self.time.is_none() { Some(800) } else { self.sims };
        Ok(MctsSpec { sims, time: self.time, eval, config: self.config })
    }
}

/// A non-negative number.
fn num(what: &str, v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| format!("{what} must be a non-negative number, got `{v}`"))
}

/// A number in `[0, 1]`.
fn fraction(what: &str, v: &str) -> Result<f32, String> {
    let x = num(what, v)?;
    if x > 1.0 {
        return Err(format!("{what} must be in [0, 1]"));
    }
    Ok(x as f32)
}

/// The keys of `mcts:…`, declared once, in the order a spec prints them.
pub static MCTS_KEYS: &[Key<MctsDraft>] = &[
    Key {
        name: "sims",
        value: "N",
        default: "800",
        help: "Simulations per turn (with time, whichever ends first; 800 when neither is given).",
        set: |d, v| {
            let n = num("sims", v)? as u64;
            if n == 0 {
                return Err("sims must be at least 1".into());
            }
            d.sims = Some(n);
            Ok(())
        },
        get: |d| d.sims.map(|n| n.to_string()),
    },
    Key {
        name: "time",
        value: "DURATION",
        default: "-",
        help: "Time per turn (`200ms`, `1.5s`).",
        set: |d, v| {
            d.time = Some(duration(v)?);
            Ok(())
        },
        get: |d| d.time.map(|t| format!("{}ms", t.as_millis())),
    },
    Key {
        name: "eval",
        value: "rollout|uniform|net",
        default: "rollout",
        help: "The leaf evaluator: random playouts (the user's AI), uniform, or a trained network.",
        set: |d, v| {
            d.eval = v.to_string();
            Ok(())
        },
        get: |d| Some(d.eval.clone()),
    },
    Key {
        name: "playouts",
        value: "N",
        default: "1",
        help: "Playouts per leaf with eval=rollout.",
        set: |d, v| {
            d.playouts = (num("playouts", v)? as u32).max(1);
            Ok(())
        },
        get: |d| (d.eval == "rollout").then(|| unless(d.playouts, 1)).flatten(),
    },
    Key {
        name: "model",
        value: "PATH",
        default: "-",
        help: "The model file of eval=net.",
        set: |d, v| {
            d.model = Some(v.to_string());
            Ok(())
        },
        get: |d| d.model.clone(),
    },
    Key {
        name: "mix",
        value: "0..1",
        default: "0.5",
        help: "Weight of the margin head in eval=net's utility.",
        set: |d, v| {
            d.mix = fraction("mix", v)?;
            Ok(())
        },
        get: |d| unless(d.mix, 0.5),
    },
    Key {
        name: "lambda",
        value: "0..1",
        default: "0",
        help: "Weight of one random playout mixed into eval=net's value (0: the network alone).",
        set: |d, v| {
            d.lambda = fraction("lambda", v)?;
            Ok(())
        },
        get: |d| unless(d.lambda, 0.0),
    },
    Key {
        name: "cpuct",
        value: "X",
        default: "1.5",
        help: "PUCT's exploration constant.",
        set: |d, v| {
            d.config.c_puct = num("cpuct", v)? as f32;
            Ok(())
        },
        get: |d| unless(d.config.c_puct, MctsConfig::default().c_puct),
    },
    Key {
        name: "fpu",
        value: "X",
        default: "0.1",
        help: "First-play urgency reduction: an unvisited child's value below its parent's.",
        set: |d, v| {
            d.config.fpu_reduction = num("fpu", v)? as f32;
            Ok(())
        },
        get: |d| unless(d.config.fpu_reduction, MctsConfig::default().fpu_reduction),
    },
    Key {
        name: "batch",
        value: "N",
        default: "1",
        help: "Leaves evaluated together (1 to 4096).",
        set: |d, v| {
            d.config.batch_size = (num("batch", v)? as usize).clamp(1, 4096);
            Ok(())
        },
        get: |d| unless(d.config.batch_size, MctsConfig::default().batch_size),
    },
    Key {
        name: "scale",
        value: "X",
        default: "3",
        help: "Score scale of a finished game's value and of eval=net's margin (the user's AI: 3).",
        set: |d, v| {
            let x = num("scale", v)? as f32;
            if x <= 0.0 {
                return Err("scale must be positive".into());
            }
            d.config.score_scale = x;
            Ok(())
        },
        get: |d| unless(d.config.score_scale, MctsConfig::default().score_scale),
    },
    Key {
        name: "knowledge",
        value: "0..1",
        default: "0",
        help: "Share of the root's prior mass on the game's own AI's candidate moves.",
        set: |d, v| {
            d.config.knowledge = fraction("knowledge", v)?;
            Ok(())
        },
        get: |d| unless(d.config.knowledge, MctsConfig::default().knowledge),
    },
];
