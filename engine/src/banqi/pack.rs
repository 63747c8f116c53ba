//! Banqi's [`Pack`]: what the hosts need to know of it beyond the rules.

use super::Banqi;
use serde_json::{Value, json};

use crate::game::Seat;
use crate::pack::{GamePack, ModelDoc, Pack, Strength};

impl GamePack for Banqi {
    const PACK: Pack = Pack {
        title: "Banqi",
        title_zh: "暗棋",
        replay_code: 3,
        perft_note: "a flip and each piece it may reveal are distinct sequences",
        selfplay: r#"
# Taught by banqi-ab: after 30 minutes the network alone scored 93.8% against rollout MCTS at
# 100 ms, where MCTS self-play promoted no model at all (docs/benchmarks.md, "Banqi on the
# curve"). `model=served`: once a one-layer model is promoted the teacher searches with it at
# its leaves (the handcrafted evaluation until then), so each model is taught by the last one
# inside banqi-ab; its second model scored 72.0% over 200 matches against banqi-ab alone at
# 300 ms, where the first generation's scored 56.7% over 120, and a third, taught the same way
# from the second (local --init-model), 63.3% over 60 against the second: today's built-in
# model (docs/benchmarks.md, "The served teacher, measured", "The issue's 200 matches" and
# "a third generation").
[settings]
teacher = "banqi-ab:nodes=20000,model=served"
"#,
        pipeline: r#"
# The recipe measured with the coordinator's Banqi teacher (banqi-ab plays both seats;
# docs/benchmarks.md, "Banqi on the curve"): rounds every 20,000 positions, 8 samples a
# position.
min_new_positions = 20000
samples_per_position = 8.0
steps_per_round = 4000

[train]
# A one-layer network: what the play server runs inside banqi-ab, measured stronger there
# than banqi-ab's own evaluation (docs/benchmarks.md, issue 39).
net = "nano"

[gate]
# Gated as it is served: banqi-ab with the candidate at its leaves (model::gate_agent) at
# 20,000 nodes a move, the teacher's budget; the first candidate meets banqi-ab alone at the
# same budget, so no model is served until one beats the AI served without one. A match costs
# about 3 s of one core.
sims = 200
baseline_sims = 200

[rating]
# Rating matches would take the same time from the teacher's games.
matches = 0
"#,
        strength: Strength {
            ms: 100,
            opponent: "mcts:time={ms}ms,eval=rollout",
            opening_plies: 6,
            mixed: "lambda=0.5",
            searcher: Some("banqi-ab:time={ms}ms"),
        },
        model: ModelDoc {
            input: "A residual MLP. Input: the Banqi feature vector, version `feature_version`
(`feature_len` floats: planes of 32 squares, then scalars, from the view of the player to move, or of the player
whose flip is being resolved; the layout is in `engine/src/banqi/features.rs`).",
            margin: "result, mover's view (a won game counts the trainer's decisive_margin, 20 by default)",
            policy: Some((
                "1,024 from·32+to indices",
                "Policy index: a move or capture from square `f` to `t` (square = row · 8 + column, a0 = 0) →
`32·f + t`; a flip of square `s` → `33·s`. Mask to the legal moves, then softmax.",
            )),
        },
        served_agents: &["banqi-ab"],
        board_js: "",
        builtin_model: Some(include_bytes!("builtin/banqi.safetensors")),
        svg_name: "Banqi",
        arbitration: false,
    };

    fn svg(&self, caption: &[String]) -> String {
        super::render::svg_with_caption(self, caption)
    }

    fn caption(&self) -> String {
        super::render::english_caption(self)
    }

    fn options_from_json(v: &Value, _defaults: &super::Options) -> Result<super::Options, String> {
        match v {
            Value::Null => Ok(super::Options {}),
            Value::Object(o) if o.is_empty() => Ok(super::Options {}),
            _ => Err("Banqi has no options (the TCGA rules decide everything)".into()),
        }
    }

    fn options_json(_o: &super::Options) -> Value {
        json!({})
    }

    /// Squares `row · 8 + column` (a0 first): `null` empty, `"X"` face down, else the piece
    /// letter (upper case red). Never what lies under a face-down square: the state does not
    /// know it.
    fn board_json(&self) -> Value {
        let squares: Vec<Value> = (0..super::SQUARES as u8)
            .map(|sq| match self.cell(sq) {
                super::Cell::Empty => Value::Null,
                super::Cell::FaceDown => json!("X"),
                super::Cell::Up(p) => json!(p.letter().to_string()),
            })
            .collect();
        let colour =
            |c: Option<super::Colour>| c.map(|c| if c == super::Colour::Red { "red" } else { "black" });
        let mut pool = serde_json::Map::new();
        for code in 0..super::PIECE_CODES as u8 {
            let p = super::Piece::from_code(code);
            if self.pool_count(p) > 0 {
                pool.insert(p.letter().to_string(), json!(self.pool_count(p)));
            }
        }
        json!({
            "squares": squares,
            "colours": [colour(self.colour_of(Seat::First)), colour(self.colour_of(Seat::Second))],
            "pool": pool,
            "quiet": self.quiet_plies(),
            "position": self.position_string(),
        })
    }

    fn caption_line(&self, zh: bool) -> String {
        let name = |c: Option<super::Colour>| match (c, zh) {
            (Some(super::Colour::Red), false) => "red",
            (Some(super::Colour::Black), false) => "black",
            (Some(super::Colour::Red), true) => "紅",
            (Some(super::Colour::Black), true) => "黑",
            (None, false) => "no colour yet",
            (None, true) => "未定",
        };
        let (a, b) = (name(self.colour_of(Seat::First)), name(self.colour_of(Seat::Second)));
        let q = self.quiet_plies();
        if zh {
            format!("先手 {a}，後手 {b} · {q} 步未吃未翻")
        } else {
            format!("First {a}, second {b} · {q} quiet plies")
        }
    }
}
