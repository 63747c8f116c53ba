//! What the server needs of each game beyond [`Game`]: [`Served`] (options as JSON, a board
//! description for the web client, a picture).
//! [`crate::table`] and [`crate::replay`] both build on it.

use std::sync::Arc;
use std::time::Duration;

use engine::agent::Agent;
use engine::banqi::{self, Banqi};
use engine::battlenumber::{self, BattleNumber};
use engine::game::{Game, Seat};
use engine::trigolden::{self, TriGolden};
use serde_json::{Value, json};

/// Builds the AI for one turn of game `G`, given its time per move.
pub type AiFactory<G> = Arc<dyn Fn(Duration) -> Box<dyn Agent<G>> + Send + Sync>;

/// What the server needs of a game beyond [`Game`]: its options as JSON, a board description
/// for the web client, a picture, and (optionally) per-action geometry.
pub trait Served: Game + Send + 'static {
    /// Reads options from a request's JSON (`null`: the defaults).
    ///
    /// # Errors
    /// A message naming the bad field.
    fn options_from_json(v: &Value, defaults: &Self::Options) -> Result<Self::Options, String>;

    /// Options as JSON (what [`Served::options_from_json`] reads back).
    fn options_json(o: &Self::Options) -> Value;

    /// The board for the web client.
    fn board_json(&self) -> Value;

    /// One entry per legal action: at least `{"action": text}`; games with geometry add
    /// what a client needs to draw the action (TriGolden: the ghost polygon).
    fn legal_json(&self, actions: &[Self::Action]) -> Vec<Value> {
        actions.iter().map(|a| json!({ "action": a.to_string() })).collect()
    }

    /// The board as an SVG document, with `caption` (lines of text) under it.
    fn svg(&self, caption: &[String]) -> String;

    /// The game's own line for a picture's caption (scores, colours), in Chinese if `zh`.
    fn caption_line(&self, zh: bool) -> String;

    /// The file name of the SVG download (without the time stamp and extension).
    fn svg_name() -> &'static str;

    /// The arbitration of this position for games whose rules have one (TriGolden's rule 5),
    /// at a turn start: `{seat, obligation_met, legal_turns}`.
    fn arbitration_json(&self) -> Option<Value> {
        None
    }
}

/// A seat as the web client names it.
pub(crate) fn seat_name(s: Seat) -> &'static str {
    match s {
        Seat::First => "first",
        Seat::Second => "second",
    }
}

impl Served for BattleNumber {
    fn options_from_json(
        v: &Value,
        defaults: &battlenumber::Options,
    ) -> Result<battlenumber::Options, String> {
        if v.is_null() {
            return Ok(*defaults);
        }
        serde_json::from_value(v.clone()).map_err(|e| format!("options: {e}"))
    }

    fn options_json(o: &battlenumber::Options) -> Value {
        serde_json::to_value(o).expect("options serialise")
    }

    fn board_json(&self) -> Value {
        let squares: Vec<Value> = (0..battlenumber::SQUARES as u8)
            .map(|sq| match self.piece(sq) {
                None => Value::Null,
                Some(p) => json!({
                    "owner": seat_name(p.owner),
                    "kind": p.kind.code(),
                    "rot": p.rot,
                    "solid": p.kind.solid_sides(p.rot),
                }),
            })
            .collect();
        let path = self.pending_path().map(|(visited, cur)| {
            json!({ "squares": battlenumber::bitboard::Squares(visited).collect::<Vec<u8>>(), "at": cur })
        });
        let done = self.outcome().is_some() || !self.in_placement();
        let regions: Vec<Vec<u8>> = if done && self.occupied() != 0 {
            self.regions().into_iter().map(|m| battlenumber::bitboard::Squares(m).collect()).collect()
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
            "kinds": battlenumber::Kind::ALL.iter().map(|k| json!({
                "code": k.code(),
                "chinese": k.chinese(),
                "triangles": k.triangles(),
                "rotations": k.rotations(),
                "solid": (0..4).map(|r| k.solid_sides(r)).collect::<Vec<u8>>(),
            })).collect::<Vec<Value>>(),
        })
    }

    fn svg(&self, caption: &[String]) -> String {
        battlenumber::render::svg_with_caption(self, caption)
    }

    fn caption_line(&self, zh: bool) -> String {
        let s = self.score_first();
        if zh { format!("比分（先手）：{s:+}") } else { format!("Score (first): {s:+}") }
    }

    fn svg_name() -> &'static str {
        "BattleNumber"
    }
}

fn points(p: &trigolden::Piece) -> Vec<[f64; 2]> {
    p.v.iter()
        .map(|z| {
            let (x, y) = z.to_f64();
            [(x * 1e4).round() / 1e4, (y * 1e4).round() / 1e4]
        })
        .collect()
}

impl Served for TriGolden {
    fn options_from_json(v: &Value, defaults: &trigolden::Options) -> Result<trigolden::Options, String> {
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

    fn options_json(o: &trigolden::Options) -> Value {
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
                    "owner": seat_name(p.owner),
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
                let owner = self.pieces().get(usize::from(*piece)).map(|p| seat_name(p.owner));
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
        })
    }

    fn legal_json(&self, actions: &[trigolden::Action]) -> Vec<Value> {
        actions
            .iter()
            .map(|a| {
                let ghost = self.ghost(*a);
                let (target, shape, mirror) = match *a {
                    trigolden::Action::Open { shape, mirror } => (None, shape, mirror),
                    trigolden::Action::Place(p) => (Some(p.target), p.shape, p.mirror),
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

    fn svg(&self, caption: &[String]) -> String {
        trigolden::render::svg_with_caption(self, caption)
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

    fn svg_name() -> &'static str {
        "BraceTheTriGolden"
    }

    fn arbitration_json(&self) -> Option<Value> {
        self.arbitration().map(|a| {
            json!({
                "seat": seat_name(a.seat),
                "obligation_met": a.obligation_met,
                "legal_turns": a.legal_turns,
            })
        })
    }
}

impl Served for Banqi {
    fn options_from_json(v: &Value, _defaults: &banqi::Options) -> Result<banqi::Options, String> {
        match v {
            Value::Null => Ok(banqi::Options {}),
            Value::Object(o) if o.is_empty() => Ok(banqi::Options {}),
            _ => Err("Banqi has no options (the TCGA rules decide everything)".into()),
        }
    }

    fn options_json(_o: &banqi::Options) -> Value {
        json!({})
    }

    /// Squares `row · 8 + column` (a0 first): `null` empty, `"X"` face down, else the piece
    /// letter (upper case red). Never what lies under a face-down square: the state does not
    /// know it.
    fn board_json(&self) -> Value {
        let squares: Vec<Value> = (0..banqi::SQUARES as u8)
            .map(|sq| match self.cell(sq) {
                banqi::Cell::Empty => Value::Null,
                banqi::Cell::FaceDown => json!("X"),
                banqi::Cell::Up(p) => json!(p.letter().to_string()),
            })
            .collect();
        let colour =
            |c: Option<banqi::Colour>| c.map(|c| if c == banqi::Colour::Red { "red" } else { "black" });
        let mut pool = serde_json::Map::new();
        for code in 0..banqi::PIECE_CODES as u8 {
            let p = banqi::Piece::from_code(code);
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

    fn svg(&self, caption: &[String]) -> String {
        banqi::render::svg_with_caption(self, caption)
    }

    fn caption_line(&self, zh: bool) -> String {
        let name = |c: Option<banqi::Colour>| match (c, zh) {
            (Some(banqi::Colour::Red), false) => "red",
            (Some(banqi::Colour::Black), false) => "black",
            (Some(banqi::Colour::Red), true) => "紅",
            (Some(banqi::Colour::Black), true) => "黑",
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

    fn svg_name() -> &'static str {
        "Banqi"
    }
}
