//! The search settings shared by config files and agent specs, each declared once as a
//! [`Setting`]: its TOML key, its spec key, default and help. The `[leaf]` table is read and
//! saved through these declarations ([`Table`], [`table_serde!`]); `[selfplay]` and `[gate]`
//! ([`crate::search_tables`]) and the `mcts:…` spec ([`MCTS_KEYS`](crate::agent::MCTS_KEYS))
//! lift them, so a setting named in two syntaxes (`c_puct` in a config, `cpuct` in a spec) is
//! one declaration with one reader. This module depends on nothing that plays (the agents'
//! spec table imports it).

use crate::leaf::LeafSettings;
use crate::mcts::MctsConfig;
use crate::settings::{Setting, Table, Value};
use crate::table_serde;

/// A non-negative number.
fn nonneg(v: &Value) -> Result<f64, String> {
    v.number().ok().filter(|x| *x >= 0.0).ok_or_else(|| format!("must be a non-negative number, got `{v}`"))
}

/// PUCT's exploration constant (`c_puct`, `cpuct=`).
pub const C_PUCT: Setting<MctsConfig> = Setting {
    toml: "c_puct",
    spec: "cpuct",
    value: "X",
    default: "1.5",
    help: "PUCT's exploration constant: Q + c_puct · P · √N / (1 + n).",
    set: |c, v| {
        c.c_puct = v.within(0.0, 100.0)? as f32;
        Ok(())
    },
    get: |c| Some(Value::from_f32(c.c_puct)),
};

/// First-play urgency (`fpu_reduction`, `fpu=`).
pub const FPU: Setting<MctsConfig> = Setting {
    toml: "fpu_reduction",
    spec: "fpu",
    value: "X",
    default: "0.1",
    help: "First-play urgency reduction: an unvisited child's value below its parent's.",
    set: |c, v| {
        c.fpu_reduction = nonneg(v)? as f32;
        Ok(())
    },
    get: |c| Some(Value::from_f32(c.fpu_reduction)),
};

/// Leaves per evaluator call (`batch_size`, `batch=`).
pub const BATCH: Setting<MctsConfig> = Setting {
    toml: "batch_size",
    spec: "batch",
    value: "N",
    default: "1",
    help: "Leaves evaluated together, under virtual loss (1 to 4096).",
    set: |c, v| {
        c.batch_size = (nonneg(v)? as usize).clamp(1, 4096);
        Ok(())
    },
    get: |c| Some(Value::from_u64(c.batch_size as u64)),
};

/// Prior mass on the game's own candidates (`knowledge`, `knowledge=`).
pub const KNOWLEDGE: Setting<MctsConfig> = Setting {
    toml: "knowledge",
    spec: "knowledge",
    value: "0..1",
    default: "0",
    help: "Share of the root's prior mass on the game's own AI's candidate moves.",
    set: |c, v| {
        c.knowledge = v.within(0.0, 1.0)? as f32;
        Ok(())
    },
    get: |c| Some(Value::from_f32(c.knowledge)),
};

/// KataGo's forced playouts (`forced_playouts`, `forced=`).
pub const FORCED: Setting<MctsConfig> = Setting {
    toml: "forced_playouts",
    spec: "",
    value: "K",
    default: "0",
    help: "KataGo's forced playouts: each root child gets at least √(K · P · N) visits (0: off; \
           KataGo uses 2); self-play prunes them from the policy target.",
    set: |c, v| {
        c.forced_playouts = v.within(0.0, 100.0)? as f32;
        Ok(())
    },
    get: |c| Some(Value::from_f32(c.forced_playouts)),
};

/// The leaf evaluator (`evaluator`, `eval=`).
pub const EVALUATOR: Setting<LeafSettings> = Setting {
    toml: "evaluator",
    spec: "eval",
    value: "net|rollout|uniform",
    default: "net",
    help: "The leaf evaluator: a trained network, random playouts (the user's AI), or uniform.",
    set: |l, v| {
        l.evaluator = v.text().parse().map_err(|_| format!("must be net, rollout or uniform, got `{v}`"))?;
        Ok(())
    },
    get: |l| Some(Value::Text(l.evaluator.name().into())),
};

/// The margin head's weight (`margin_mix`, `mix=`).
pub const MARGIN_MIX: Setting<LeafSettings> = Setting {
    toml: "margin_mix",
    spec: "mix",
    value: "0..1",
    default: "0.5",
    help: "Weight of the margin head in a network's value: (1 − mix)·(P(win) − P(loss)) + \
           mix·tanh(margin / (2·score_scale)).",
    set: |l, v| {
        l.margin_mix = v.within(0.0, 1.0)? as f32;
        Ok(())
    },
    get: |l| Some(Value::from_f32(l.margin_mix)),
};

/// AlphaGo's λ (`lambda`, `lambda=`).
pub const LAMBDA: Setting<LeafSettings> = Setting {
    toml: "lambda",
    spec: "lambda",
    value: "0..1",
    default: "0",
    help: "Weight of one random playout mixed into a network's leaf value (AlphaGo's λ; 0: the \
           network alone).",
    set: |l, v| {
        l.lambda = v.within(0.0, 1.0)? as f32;
        Ok(())
    },
    get: |l| Some(Value::from_f32(l.lambda)),
};

/// The score scale (`score_scale`, `scale=`).
pub const SCORE_SCALE: Setting<LeafSettings> = Setting {
    toml: "score_scale",
    spec: "scale",
    value: "X",
    default: "3",
    help: "Score scale of a finished game's value 2σ(d / scale) − 1 and of the margin term (the \
           user's AI: 3).",
    set: |l, v| {
        l.score_scale = v.within(0.01, 1000.0)? as f32;
        Ok(())
    },
    get: |l| Some(Value::from_f32(l.score_scale)),
};

/// Lifts a declaration on an inner struct to an outer one through a field (`|s| s.leaf`),
/// keeping its names, default and help.
#[macro_export]
macro_rules! lift {
    ($decl:path, |$s:ident| $field:expr) => {
        $crate::settings::Setting {
            toml: $decl.toml,
            spec: $decl.spec,
            value: $decl.value,
            default: $decl.default,
            help: $decl.help,
            set: |$s, v| ($decl.set)(&mut $field, v),
            get: |$s| ($decl.get)(&$field),
        }
    };
}

/// The keys of a `[leaf]` table.
pub static LEAF_KEYS: &[Setting<LeafSettings>] = &[EVALUATOR, MARGIN_MIX, LAMBDA, SCORE_SCALE];

impl Table for LeafSettings {
    const TABLE: &'static str = "[leaf]";
    const ABOUT: &'static str = "How search values its leaves (the coordinator's and the play \
        server's `[leaf]`, the trainer's `[gate.leaf]`). Keys left out take the defaults below: \
        the network alone. A missing table means its owner's default: the rollout evaluator for \
        self-play before a model, the network with λ = 0.5 for gating and the play server.";

    fn keys() -> &'static [Setting<Self>] {
        LEAF_KEYS
    }
}

table_serde!(LeafSettings);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leaf::LeafEvaluator;
    use crate::settings::{Syntax, defaults_hold, set, toml_value};

    #[test]
    fn leaf_defaults_are_the_real_ones() {
        defaults_hold::<LeafSettings>(&[]);
    }

    #[test]
    fn a_setting_named_in_both_syntaxes_reads_the_same_in_each() {
        let mut by_toml = LeafSettings::default();
        let mut by_spec = LeafSettings::default();
        for (k, v) in [(&SCORE_SCALE, "5"), (&MARGIN_MIX, "0.25"), (&LAMBDA, "0.75"), (&EVALUATOR, "rollout")]
        {
            set(LEAF_KEYS, Syntax::Toml, &mut by_toml, k.toml, &toml_value(v)).unwrap();
            set(LEAF_KEYS, Syntax::Spec, &mut by_spec, k.spec, &Value::Text(v.into())).unwrap();
        }
        assert_eq!(by_toml, by_spec);
        assert_eq!(
            by_spec,
            LeafSettings {
                evaluator: LeafEvaluator::Rollout,
                margin_mix: 0.25,
                lambda: 0.75,
                score_scale: 5.0
            }
        );
    }
}
