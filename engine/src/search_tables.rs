//! The `[selfplay]` and `[gate]` config tables, declared key by key as [`Setting`]s (their
//! shared keys, `c_puct` and `forced_playouts`, read as [`crate::search_settings`] declares
//! them; `[gate.leaf]` is a `[leaf]` table). The config reader and the saved config go through
//! these declarations ([`table_serde!`]), and `zeroplay settings` and `docs/settings.md` print
//! them ([`tables`]).

use crate::gating::{GateRule, GateSettings};
use crate::leaf::LeafSettings;
use crate::mcts::MctsConfig;
use crate::search_settings::{C_PUCT, FORCED, LEAF_KEYS};
use crate::selfplay::{RootSearch, SelfPlaySettings};
use crate::settings::{Setting, Table, Value};
use crate::table_serde;

/// A number field of a table.
macro_rules! num_key {
    ($t:ty, $field:ident, $form:literal, $default:literal, $help:expr, $conv:ident) => {
        Setting::<$t> {
            toml: stringify!($field),
            spec: "",
            value: $form,
            default: $default,
            help: $help,
            set: |s, v| {
                s.$field = num_key!(@read $conv, v);
                Ok(())
            },
            get: |s| Some(num_key!(@write $conv, s.$field)),
        }
    };
    (@read f32, $v:ident) => { $v.number()? as f32 };
    (@read f64, $v:ident) => { $v.number()? };
    (@read u32, $v:ident) => { u32::try_from($v.whole()?).map_err(|_| format!("must be below 2^32, got {}", $v))? };
    (@read u64, $v:ident) => { $v.whole()? };
    (@write f32, $x:expr) => { Value::from_f32($x) };
    (@write f64, $x:expr) => { Value::Float($x) };
    (@write u32, $x:expr) => { Value::from_u64(u64::from($x)) };
    (@write u64, $x:expr) => { Value::from_u64($x) };
}

/// An `f32` field of [`SelfPlaySettings`] named, documented and checked as its namesake in
/// [`MctsConfig`] is declared ([`C_PUCT`], [`FORCED`]).
macro_rules! as_mcts {
    ($decl:path, $field:ident) => {
        Setting {
            toml: $decl.toml,
            spec: "",
            value: $decl.value,
            default: $decl.default,
            help: $decl.help,
            set: |s, v| {
                let mut c = MctsConfig::default();
                ($decl.set)(&mut c, v)?;
                s.$field = c.$field;
                Ok(())
            },
            get: |s| Some(Value::from_f32(s.$field)),
        }
    };
}

/// The keys of a `[selfplay]` table.
pub static SELFPLAY_KEYS: &[Setting<SelfPlaySettings>] = &[
    num_key!(
        SelfPlaySettings,
        full_sims,
        "N",
        "400",
        "Simulations of a full search (its moves become policy targets).",
        u32
    ),
    num_key!(
        SelfPlaySettings,
        fast_sims,
        "N",
        "100",
        "Simulations of a fast search (playout-cap randomisation); 0: every search is full.",
        u32
    ),
    num_key!(
        SelfPlaySettings,
        full_search_probability,
        "0..1",
        "0.25",
        "Probability that a move gets a full search.",
        f32
    ),
    num_key!(
        SelfPlaySettings,
        dirichlet_alpha,
        "X",
        "0.3",
        "Root Dirichlet noise concentration; 0 disables noise.",
        f32
    ),
    num_key!(
        SelfPlaySettings,
        dirichlet_fraction,
        "0..1",
        "0.25",
        "Share of the root prior replaced by noise (full searches only).",
        f32
    ),
    Setting {
        toml: "temperature",
        spec: "",
        value: "[[PLY, T], …]",
        default: "[[20, 1], [60, 0.5]]",
        help: "Temperature steps: moves at plies below PLY are sampled from visits^(1/T); after \
               the last step the most visited move is played.",
        set: |s, v| {
            s.temperature = v
                .items()?
                .iter()
                .map(|step| match step.items()? {
                    [ply, t] => Ok((u32::try_from(ply.whole()?).unwrap_or(u32::MAX), t.number()? as f32)),
                    _ => Err(format!("steps are [PLY, T] pairs, got {step}")),
                })
                .collect::<Result<_, String>>()?;
            Ok(())
        },
        get: |s| {
            let steps = s.temperature.iter();
            Some(Value::List(
                steps
                    .map(|&(p, t)| Value::List(vec![Value::from_u64(p.into()), Value::from_f32(t)]))
                    .collect(),
            ))
        },
    },
    num_key!(
        SelfPlaySettings,
        resign_threshold,
        "X",
        "-0.95",
        "Resign when the mover's root value stays below this for resign_consecutive of their turns; ≤ −1 disables resignation.",
        f32
    ),
    num_key!(
        SelfPlaySettings,
        resign_consecutive,
        "N",
        "3",
        "Consecutive turns below the threshold before resigning.",
        u32
    ),
    num_key!(
        SelfPlaySettings,
        resign_playthrough_fraction,
        "0..1",
        "0.1",
        "Share of games in which resignation is only noted and the game is played out (to measure false resignations).",
        f32
    ),
    as_mcts!(C_PUCT, c_puct),
    Setting {
        toml: "teacher",
        spec: "",
        value: "SPEC",
        default: "\"\"",
        help: "An agent spec that plays both seats instead of MCTS, e.g. `banqi-ab:nodes=20000` \
               (empty: MCTS self-play); `model=served` puts the worker's newest one-layer model at \
               its leaves.",
        set: |s, v| {
            s.teacher = v.text().into_owned();
            Ok(())
        },
        get: |s| Some(Value::Text(s.teacher.clone())),
    },
    num_key!(
        SelfPlaySettings,
        teacher_random,
        "0..1",
        "0.1",
        "With a teacher: the probability that a move in the first teacher_random_plies is uniformly random (not a policy target).",
        f32
    ),
    num_key!(
        SelfPlaySettings,
        teacher_random_plies,
        "N",
        "30",
        "With a teacher: the plies in which moves may be random.",
        u32
    ),
    Setting {
        toml: "root",
        spec: "",
        value: "puct|gumbel",
        default: "puct",
        help: "The root search: PUCT (Dirichlet noise, visit counts as the policy target, the \
               temperature schedule) or Gumbel AlphaZero (sequential halving, the completed-Q \
               policy as the target).",
        set: |s, v| {
            s.root = RootSearch::from_name(&v.text())
                .ok_or_else(|| format!("must be puct or gumbel, got `{v}`"))?;
            Ok(())
        },
        get: |s| Some(Value::Text(s.root.name().into())),
    },
    num_key!(SelfPlaySettings, gumbel_m, "N", "16", "Gumbel: root actions considered per search.", u32),
    num_key!(
        SelfPlaySettings,
        gumbel_c_visit,
        "X",
        "50",
        "Gumbel: c_visit of σ(q̂) = (c_visit + max N) · c_scale · q̂.",
        f32
    ),
    num_key!(SelfPlaySettings, gumbel_c_scale, "X", "0.1", "Gumbel: c_scale of the same transform.", f32),
    as_mcts!(FORCED, forced_playouts),
];

impl Table for SelfPlaySettings {
    const TABLE: &'static str = "[selfplay]";
    const ABOUT: &'static str = "How workers play self-play games (the coordinator's \
        `[selfplay]`, handed out with every position).";

    fn keys() -> &'static [Setting<Self>] {
        SELFPLAY_KEYS
    }
}

/// The keys of a `[gate]` table.
pub static GATE_KEYS: &[Setting<GateSettings>] = &[
    Setting {
        toml: "rule",
        spec: "",
        value: "sprt|threshold",
        default: "sprt",
        help: "The promotion rule: Wald's SPRT of elo0 against elo1 (a test still undecided at \
               `matches` refuses), or at least `threshold` of the points over `matches`.",
        set: |g, v| {
            g.rule = GateRule::from_name(&v.text())
                .ok_or_else(|| format!("must be sprt or threshold, got `{v}`"))?;
            Ok(())
        },
        get: |g| Some(Value::Text(g.rule.name().into())),
    },
    num_key!(GateSettings, matches, "N", "100", "Matches (two games each, seats swapped) at most.", u32),
    num_key!(
        GateSettings,
        threshold,
        "0..1",
        "0.55",
        "Points fraction needed to promote under `threshold`.",
        f64
    ),
    num_key!(GateSettings, elo0, "ELO", "0", "SPRT's null hypothesis, in Elo.", f64),
    num_key!(GateSettings, elo1, "ELO", "60", "SPRT's alternative, in Elo.", f64),
    num_key!(GateSettings, alpha, "0..1", "0.05", "SPRT's false-promotion rate.", f64),
    num_key!(GateSettings, beta, "0..1", "0.05", "SPRT's false-rejection rate.", f64),
    num_key!(GateSettings, sims, "N", "64", "MCTS simulations per turn for both sides.", u64),
    num_key!(
        GateSettings,
        baseline_sims,
        "N",
        "0",
        "The first candidate's opponent while no model is promoted: 0, the user's AI as MCTS with the rollout evaluator at `sims`; N > 0, the game's own baseline at N simulations a turn where it has one.",
        u64
    ),
    num_key!(
        GateSettings,
        opening_plies,
        "N",
        "6",
        "Random opening length in atomic actions (each match from its own opening).",
        u32
    ),
    Setting {
        toml: "leaf",
        spec: "",
        value: "TABLE",
        default: "evaluator = net, lambda = 0.5",
        help: "How both networks value their leaves ([leaf]'s keys; the evaluator is always the \
               network): by default the agent players meet.",
        set: |g, v| {
            g.leaf = LeafSettings::from_value(v)?;
            Ok(())
        },
        get: |g| Some(g.leaf.to_value()),
    },
    num_key!(GateSettings, seed, "N", "7", "Seed of the openings.", u64),
];

impl Table for GateSettings {
    const TABLE: &'static str = "[gate]";
    const ABOUT: &'static str = "When a candidate model is promoted (the trainer's `[gate]`).";

    fn keys() -> &'static [Setting<Self>] {
        GATE_KEYS
    }
}

table_serde!(SelfPlaySettings, GateSettings);

/// Every config table of search settings, as `(name, about, rows)` for `zeroplay settings`.
pub fn tables() -> Vec<(&'static str, &'static str, Vec<crate::settings::Row>)> {
    use crate::settings::{Syntax, rows};
    vec![
        (SelfPlaySettings::TABLE, SelfPlaySettings::ABOUT, rows(SELFPLAY_KEYS, Syntax::Toml)),
        (LeafSettings::TABLE, LeafSettings::ABOUT, rows(LEAF_KEYS, Syntax::Toml)),
        (GateSettings::TABLE, GateSettings::ABOUT, rows(GATE_KEYS, Syntax::Toml)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::defaults_hold;

    #[test]
    fn declared_defaults_are_the_real_ones() {
        defaults_hold::<SelfPlaySettings>(&[]);
        defaults_hold::<GateSettings>(&["leaf"]);
    }

    #[test]
    fn tables_round_trip_through_toml_and_json_with_every_key() {
        let sp = SelfPlaySettings {
            c_puct: 2.5,
            temperature: vec![(10, 0.7)],
            teacher: "random".into(),
            root: RootSearch::Gumbel,
            ..SelfPlaySettings::default()
        };
        let text = toml::to_string(&sp).unwrap();
        assert!(text.contains("c_puct = 2.5") && text.contains("temperature = [[10, 0.7]]"), "{text}");
        assert_eq!(toml::from_str::<SelfPlaySettings>(&text).unwrap(), sp);
        let gate = GateSettings {
            leaf: LeafSettings::rollout(),
            rule: GateRule::Threshold,
            ..GateSettings::default()
        };
        let text = toml::to_string(&gate).unwrap();
        assert_eq!(toml::from_str::<GateSettings>(&text).unwrap(), gate, "{text}");
        assert_eq!(
            serde_json::from_str::<GateSettings>(&serde_json::to_string(&gate).unwrap()).unwrap(),
            gate
        );
        let (sp, gate) = (toml::to_string(&sp).unwrap(), toml::to_string(&gate).unwrap());
        for k in SELFPLAY_KEYS {
            assert!(sp.contains(&format!("{} =", k.toml)), "a saved [selfplay] writes {}", k.toml);
        }
        for k in GATE_KEYS.iter().filter(|k| k.toml != "leaf") {
            assert!(gate.contains(&format!("{} =", k.toml)), "a saved [gate] writes {}", k.toml);
        }
        assert!(gate.contains("[leaf]") && gate.contains("evaluator = \"rollout\""), "{gate}");
    }

    #[test]
    fn a_table_refuses_unknown_keys_and_bad_values_naming_them() {
        let e = toml::from_str::<SelfPlaySettings>("c_pucct = 1").unwrap_err().to_string();
        assert!(e.contains("unknown key `c_pucct`") && e.contains("c_puct"), "{e}");
        let e = toml::from_str::<SelfPlaySettings>("full_sims = 400.5").unwrap_err().to_string();
        assert!(e.contains("full_sims must be a whole number"), "{e}");
        let e = toml::from_str::<GateSettings>("[leaf]\nlambda = 2").unwrap_err().to_string();
        assert!(e.contains("lambda must be in [0, 1]"), "{e}");
        let e = toml::from_str::<SelfPlaySettings>("temperature = [[1, 2, 3]]").unwrap_err().to_string();
        assert!(e.contains("[PLY, T]"), "{e}");
        let e = toml::from_str::<SelfPlaySettings>("root = \"ucb\"").unwrap_err().to_string();
        assert!(e.contains("puct or gumbel"), "{e}");
    }
}
