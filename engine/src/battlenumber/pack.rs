//! Battle Number's [`Pack`]: what the hosts need to know of it beyond the rules.

use super::BattleNumber;
use serde_json::{Value, json};

use crate::game::{Game, Seat};
use crate::pack::{GamePack, ModelDoc, Pack, Strength};

impl GamePack for BattleNumber {
    const PACK: Pack = Pack {
        title: "Battle Number",
        title_zh: "拚數棋",
        replay_code: 1,
        perft_note: "default options",
        // The hosts' defaults were chosen for Battle Number, the first game.
        selfplay: "",
        pipeline: "",
        strength: Strength {
            ms: 100,
            opponent: "mcts:time={ms}ms,eval=rollout",
            opening_plies: 6,
            mixed: "lambda=0.5",
            searcher: None,
        },
        model: ModelDoc {
            input: "A residual MLP. Input: the Battle Number feature vector, version `feature_version`
(`feature_len` floats, from the view of the player to move; the layout is in
`engine/src/battlenumber/features.rs`).",
            margin: crate::pack::POINTS_MARGIN,
            policy: Some((
                "the 69 click indices",
                "Policy index: square `s` (row · 7 + column) → `s`; piece `(kind, rotation)` → `49 + 4·kind + rotation`
with kinds S1, D2, C2, T3, X0 = 0..4. Mask to the legal clicks, then softmax.",
            )),
        },
        // The user's AI is MCTS with the rollout evaluator: `auto` serves it until a model
        // arrives.
        served_agents: &[],
        board_js: "",
        builtin_model: None,
        svg_name: "BattleNumber",
        arbitration: false,
    };

    fn svg(&self, caption: &[String]) -> String {
        super::render::svg_with_caption(self, caption)
    }

    fn caption(&self) -> String {
        super::render::english_caption(self)
    }

    fn options_from_json(v: &Value, defaults: &super::Options) -> Result<super::Options, String> {
        if v.is_null() {
            return Ok(*defaults);
        }
        serde_json::from_value(v.clone()).map_err(|e| format!("options: {e}"))
    }

    fn options_json(o: &super::Options) -> Value {
        serde_json::to_value(o).expect("options serialise")
    }

    fn board_json(&self) -> Value {
        let squares: Vec<Value> = (0..super::SQUARES as u8)
            .map(|sq| match self.piece(sq) {
                None => Value::Null,
                Some(p) => json!({
                    "owner": crate::pack::seat_name(p.owner),
                    "kind": p.kind.code(),
                    "rot": p.rot,
                    "solid": p.kind.solid_sides(p.rot),
                }),
            })
            .collect();
        let path = self.pending_path().map(|(visited, cur)| {
            json!({ "squares": super::bitboard::Squares(visited).collect::<Vec<u8>>(), "at": cur })
        });
        let done = self.outcome().is_some() || !self.in_placement();
        let regions: Vec<Vec<u8>> = if done && self.occupied() != 0 {
            self.regions().into_iter().map(|m| super::bitboard::Squares(m).collect()).collect()
        } else {
            vec![]
        };
        json!({
            "squares": squares,
            "hands": [self.hand(Seat::First), self.hand(Seat::Second)],
            "placed": self.placed(),
            "extracted": self.extracted(),
            "phase": if self.in_placement() { "placement" } else { "extraction" },
            "pending_square": self.pending_square(),
            "path": path,
            "placement_score": self.placement_score(),
            "extraction_totals": self.extraction_totals(),
            "score_first": self.score_first(),
            "regions": regions,
            "kinds": super::Kind::ALL.iter().map(|k| json!({
                "code": k.code(),
                "chinese": k.chinese(),
                "triangles": k.triangles(),
                "rotations": k.rotations(),
                "solid": (0..4).map(|r| k.solid_sides(r)).collect::<Vec<u8>>(),
            })).collect::<Vec<Value>>(),
        })
    }

    fn caption_line(&self, zh: bool) -> String {
        let s = self.score_first();
        if zh { format!("比分（先手）：{s:+}") } else { format!("Score (first): {s:+}") }
    }
}

/// Battle Number has no agents of its own: MCTS with the rollout evaluator is the user's AI.
impl crate::agent::GameAgents for BattleNumber {}
