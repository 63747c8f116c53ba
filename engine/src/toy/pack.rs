//! The toy game's [`Pack`]: what the hosts need to know of it beyond the rules.

use std::fmt::Write;

use serde_json::{Value, json};

use super::{Options, SQUARES, Toy};
use crate::game::{Game, Seat};
use crate::pack::{GamePack, ModelDoc, POINTS_MARGIN, Pack, Strength, seat_name};

const CELL: f64 = 60.0;
const INK: [&str; 2] = ["#7a5300", "#123e6e"];

impl GamePack for Toy {
    const PACK: Pack = Pack {
        title: "Toy",
        title_zh: "井字棋",
        replay_code: 4,
        perft_note: "every claim of a square",
        // The hosts' defaults: nothing here is tuned, the game exists for the tests.
        selfplay: "",
        pipeline: "",
        strength: Strength {
            ms: 20,
            opponent: "mcts:time={ms}ms,eval=rollout",
            opening_plies: 0,
            mixed: "lambda=0.5",
            searcher: None,
        },
        model: ModelDoc {
            input: "A residual MLP. Input: 18 floats, the mover's squares then the opponent's (`engine/src/toy/features.rs`).",
            margin: POINTS_MARGIN,
            policy: Some(("9 squares", "Policy index: the square, row · 3 + column (a1 = 0).")),
        },
        served_agents: &[],
        arbitration: false,
        svg_name: "Toy",
        board_js: include_str!("board.js"),
        builtin_model: None,
    };

    fn svg(&self, caption: &[String]) -> String {
        let size = 3.0 * CELL;
        let (cw, ch) = crate::caption::size(caption);
        let (w, h) = ((size + 20.0).max(cw + 20.0), size + 20.0 + ch);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="-10 -10 {w} {h}" width="{w}" height="{h}" font-family="sans-serif">"#
        );
        let _ =
            write!(s, r##"<rect x="0" y="0" width="{size}" height="{size}" fill="#fbf8f1" stroke="#444"/>"##);
        for sq in 0..SQUARES {
            let (x, y) = ((sq % 3) as f64 * CELL, (sq / 3) as f64 * CELL);
            let _ = write!(
                s,
                r##"<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="none" stroke="#aaa"/>"##
            );
            if let Some(seat) = self.square(sq) {
                let (cx, cy, mark) = (x + CELL / 2.0, y + CELL / 2.0 + 12.0, ["X", "O"][seat.index()]);
                let ink = INK[seat.index()];
                let _ = write!(
                    s,
                    r#"<text x="{cx}" y="{cy}" font-size="36" text-anchor="middle" fill="{ink}">{mark}</text>"#
                );
            }
        }
        crate::caption::write(&mut s, caption, 0.0, size + 24.0);
        s.push_str("</svg>");
        s
    }

    fn caption(&self) -> String {
        match self.outcome().map(|o| o.winner()) {
            Some(Some(seat)) => format!("{seat} seat wins"),
            Some(None) => "draw".into(),
            None => format!("{} to move", ["first seat (X)", "second seat (O)"][self.mover().index()]),
        }
    }

    fn caption_line(&self, zh: bool) -> String {
        let n = self.squares.iter().filter(|s| s.is_some()).count();
        if zh { format!("已下 {n} 格") } else { format!("{n} squares claimed") }
    }

    fn options_from_json(v: &Value, _defaults: &Options) -> Result<Options, String> {
        match v {
            Value::Null => Ok(Options {}),
            Value::Object(o) if o.is_empty() => Ok(Options {}),
            _ => Err("the toy game has no options".into()),
        }
    }

    fn options_json(_o: &Options) -> Value {
        json!({})
    }

    /// Squares `row · 3 + column` (a1 first): `null` empty, else the seat holding it.
    fn board_json(&self) -> Value {
        let squares: Vec<Value> =
            self.squares.iter().map(|s| s.map_or(Value::Null, |s: Seat| json!(seat_name(s)))).collect();
        json!({ "squares": squares })
    }
}
