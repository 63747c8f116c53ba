//! TriGolden's [`Pack`]: what the hosts need to know of it beyond the rules.

use super::TriGolden;
use crate::game::Game;
use serde_json::{Value, json};

use crate::game::Seat;
use crate::pack::{GamePack, ModelDoc, Pack, Strength};

impl GamePack for TriGolden {
    const PACK: Pack = Pack {
        title: "TriGolden",
        title_zh: "頂鑫棋",
        replay_code: 2,
        perft_note: "default piece set and options; a turn is the set of pieces it places",
        selfplay: r#"
# TriGolden's positions cost far more to expand and play out than Battle Number's:
# lighter searches (200 simulations for a full search, 50 for a fast one).
[settings]
full_sims = 200
fast_sims = 50
"#,
        pipeline: r#"
# TriGolden's games come about fifty times slower than Battle Number's: a 200,000-position
# window, a round every 3,000 new positions.
window_positions = 200000
window_min_positions = 50000
min_new_positions = 3000
# 25 samples per position: the ~300 steps per 3,000 positions that run tg3 was measured with
# (docs/benchmarks.md); TriGolden positions are scarce.
samples_per_position = 25.0
steps_per_round = 300

[train]
# The loss weights tg3 was measured with.
q_mix = 0.5
margin_weight = 1.0

[gate]
sims = 32
# The fixed threshold over 40 matches that tg3 was measured with: its matches cost seconds
# each, and the default SPRT would play up to 100 a round (its effect there is not measured).
rule = "threshold"
matches = 40

[gate.leaf]
# A TriGolden playout costs milliseconds: gating with one per leaf would take longer than the
# round it gates.
lambda = 0.0

[rating]
# Rating games cost what gating games cost: a few, against the reference only.
matches = 4
anchors = []
"#,
        strength: Strength {
            ms: 500,
            opponent: "trigolden-user:time={ms}ms",
            opening_plies: 0,
            mixed: "lambda=0,knowledge=0.5",
            searcher: None,
        },
        model: ModelDoc {
            input: "A residual MLP. Input: the TriGolden feature vector, version `feature_version`
(`feature_len` floats:
turn, scores, stock, methods, edge states and the single, double and co-live links of both
players, from the view of the player to move; the layout is in
`engine/src/trigolden/features.rs`).",
            margin: crate::pack::POINTS_MARGIN,
            policy: None,
        },
        served_agents: &["trigolden-user", "trigolden-lite", "mcts"],
        board_js: "",
        builtin_model: None,
        svg_name: "BraceTheTriGolden",
        arbitration: true,
    };

    fn svg(&self, caption: &[String]) -> String {
        super::render::svg_with_caption(self, caption)
    }

    fn caption(&self) -> String {
        super::render::english_caption(self)
    }

    // A turn counts once per set of pieces, whatever the order of its clicks.
    fn perft_children(&self) -> Vec<Self> {
        let turns = self.legal_turns().into_iter();
        turns
            .map(|turn| {
                let mut child = self.clone();
                turn.into_iter().for_each(|a| child.play_unchecked(a));
                child
            })
            .collect()
    }

    fn perft(&self, depth: u32, make_every_turn: bool) -> u64 {
        super::perft(self, depth, make_every_turn)
    }

    fn summary(&self) -> String {
        let [a, b] = self.scores();
        let ending = crate::pack::ending(self.outcome());
        format!(
            "{} pieces, {} turns played, scores {a}–{b}{ending}",
            self.pieces().len(),
            self.turns_played()
        )
    }

    fn options_from_json(v: &Value, defaults: &super::Options) -> Result<super::Options, String> {
        let mut o = defaults.clone();
        if v.is_null() {
            return Ok(o);
        }
        let obj = v.as_object().ok_or("options must be an object")?;
        for (k, val) in obj {
            match k.as_str() {
                "scoring" => {
                    o.scoring = serde_json::from_value(val.clone()).map_err(|_| {
                        format!("options.scoring: {val} is not bracer, trigolden or same-owner")
                    })?
                }
                "rule6-new-point" => {
                    o.rule6_new_point =
                        val.as_bool().ok_or("options.rule6-new-point must be true or false")?
                }
                other => return Err(format!("unknown option `{other}` (known: scoring, rule6-new-point)")),
            }
        }
        Ok(o)
    }

    /// `pieces = "FILE"` names a shape table (TOML, as `default_pieces.toml`), read with
    /// `read`; the other keys are the play page's.
    fn options_from_toml(
        table: &toml::Table,
        read: &crate::pack::FileReader<'_>,
    ) -> Result<super::Options, String> {
        let mut rest = table.clone();
        let shapes = match rest.remove("pieces") {
            None => super::shapes::ShapeTable::default_table(),
            Some(toml::Value::String(path)) => {
                let text = read(&path).map_err(|e| format!("shape table {path}: {e}"))?;
                super::shapes::ShapeTable::parse(&text).map_err(|e| format!("shape table {path}: {e}"))?
            }
            Some(other) => return Err(format!("pieces must be a file name, not {other}")),
        };
        let json = serde_json::to_value(&rest).map_err(|e| e.to_string())?;
        let o = Self::options_from_json(&json, &super::Options::default())?;
        Ok(super::Options { shapes: std::sync::Arc::new(shapes), ..o })
    }

    fn options_json(o: &super::Options) -> Value {
        json!({ "scoring": o.scoring, "rule6-new-point": o.rule6_new_point })
    }

    fn board_json(&self) -> Value {
        let states = self.edge_states();
        let pieces: Vec<Value> = self
            .pieces()
            .iter()
            .enumerate()
            .map(|(i, p)| {
                json!({
                    "n": i,
                    "owner": crate::pack::seat_name(p.owner),
                    "shape": p.shape,
                    "mirror": p.mirror,
                    "points": points(p),
                    "edges": states[i].iter().map(|e| format!("{e:?}").to_lowercase()).collect::<Vec<String>>(),
                })
            })
            .collect();
        let shapes = &self.options().shapes.shapes;
        let stock: Vec<Vec<u8>> =
            Seat::BOTH.iter().map(|&s| (0..shapes.len()).map(|i| self.stock(s, i)).collect()).collect();
        let scored: Vec<Value> = self
            .scored_points()
            .iter()
            .map(|(piece, z)| {
                let (x, y) = z.to_f64();
                let owner = self.pieces().get(usize::from(*piece)).map(|p| crate::pack::seat_name(p.owner));
                json!({ "piece": piece, "owner": owner, "at": [x, y] })
            })
            .collect();
        json!({
            "pieces": pieces,
            "scores": self.scores(),
            "stock": stock,
            "shapes": (0..shapes.len()).map(|i| char::from(b'A' + i as u8).to_string()).collect::<Vec<String>>(),
            "turns_played": self.turns_played(),
            "total_turns": self.total_turns(),
            "scored_points": scored,
            // Each shape as the opening would lay it, plain then mirrored: the palette draws its
            // icons from these, so an icon keeps its orientation from turn to turn.
            "outlines": shapes.iter().map(|s| [false, true].map(|m| corners(&s.oriented(m).0))).collect::<Vec<_>>(),
        })
    }

    fn legal_json(&self, actions: &[super::Action]) -> Vec<Value> {
        actions
            .iter()
            .map(|a| {
                let ghost = self.ghost(*a);
                let (target, shape, mirror) = match *a {
                    super::Action::Open { shape, mirror } => (None, shape, mirror),
                    super::Action::Place(p) => (Some(p.target), p.shape, p.mirror),
                };
                json!({
                    "action": a.to_string(),
                    "target": target,
                    "shape": shape,
                    "mirror": mirror,
                    "points": ghost.as_ref().map(points),
                })
            })
            .collect()
    }

    fn caption_line(&self, zh: bool) -> String {
        let [a, b] = self.scores();
        let turn = (self.turns_played() + 1).min(self.total_turns());
        if zh {
            format!("分數：先手 {a}，後手 {b} · 第 {turn} / {} 回合", self.total_turns())
        } else {
            format!("Points: first {a}, second {b} · turn {turn} of {}", self.total_turns())
        }
    }

    fn arbitration_json(&self) -> Option<Value> {
        self.arbitration().map(|a| {
            json!({
                "seat": crate::pack::seat_name(a.seat),
                "obligation_met": a.obligation_met,
                "legal_turns": a.legal_turns,
            })
        })
    }
}

fn points(p: &super::Piece) -> Vec<[f64; 2]> {
    corners(&p.v)
}

fn corners(v: &[super::zomega::Z]) -> Vec<[f64; 2]> {
    v.iter()
        .map(|z| {
            let (x, y) = z.to_f64();
            [(x * 1e4).round() / 1e4, (y * 1e4).round() / 1e4]
        })
        .collect()
}
