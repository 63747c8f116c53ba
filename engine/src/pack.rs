//! Game packs: what a game's own folder tells the programs that host it.
//!
//! Each game supplies one [`Pack`] through [`GamePack`] (in its folder's `pack.rs`): its names
//! in both languages, its replay-token byte, its perft note, its defaults for self-play and
//! for the training pipeline (as TOML over the hosts' own defaults, so the game folder needs
//! none of their types), its strength protocol, its model documentation and what the play
//! server may serve for it. The coordinator, the trainer, the play server and the commands
//! read these through [`crate::GameKind::pack`] instead of matching on the kind, so a fourth game
//! fills in one `Pack` where today's three would each need a new match arm in a dozen files.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::game::{Game, Seat};

/// What a game's folder supplies to the hosts (see the module docs).
#[derive(Debug)]
pub struct Pack {
    /// The game's English name ("Battle Number").
    pub title: &'static str,
    /// The game's own script ("拚數棋").
    pub title_zh: &'static str,
    /// The byte that names the game in the play server's replay tokens. Fixed forever: tokens
    /// already shared keep their meaning. Unique among the games (a test checks).
    pub replay_code: u8,
    /// What `zeroplay perft` counts, said in a few words.
    pub perft_note: &'static str,
    /// TOML over the coordinator's `[games.<name>]` defaults (the keys of that table), with
    /// comments saying why; empty: the defaults as they are.
    pub selfplay: &'static str,
    /// TOML over the trainer's defaults (the keys of `configs/train.toml`), with comments
    /// saying why; empty: the defaults as they are.
    pub pipeline: &'static str,
    /// How `zeroplay strength` measures a model of this game.
    pub strength: Strength,
    /// What MODEL.md says about the game's network.
    pub model: ModelDoc,
    /// The agent families the play server may serve besides `auto` and `net` (`[games.<name>]
    /// agent`), each as a spec's family name; empty: `auto` or `net` only.
    pub served_agents: &'static [&'static str],
    /// A decisive win that is not by the score is an arbitration (TriGolden's rule), not an
    /// outright win; the game's arbitration can be asked at a turn's start.
    pub arbitration: bool,
    /// The file name of the play server's SVG download, before its time stamp.
    pub svg_name: &'static str,
    /// The play page's board module for this game (plain JavaScript that registers itself in
    /// `window.zeroplayBoards` under the game's name; served as `/boards/<name>.js`); empty:
    /// the page draws the game itself (the first three games, drawn in `web/app.js`).
    pub board_js: &'static str,
    /// The model file built into the binary where the game's strongest player is a trained
    /// network (`model::builtin`; `model=builtin` in a spec), kept in the game's folder with a
    /// README of the run that trained it and its measured strength; `None`: none.
    pub builtin_model: Option<&'static [u8]>,
}

/// The documented strength protocol of one game: time per move, reference opponent, openings.
#[derive(Debug)]
pub struct Strength {
    /// Milliseconds per move for both sides.
    pub ms: u32,
    /// The reference opponent, as a spec with `{ms}` for its time.
    pub opponent: &'static str,
    /// Random plies before each match.
    pub opening_plies: u32,
    /// The served agent's leaf, as MCTS keys: what the server adds to the network.
    pub mixed: &'static str,
    /// The game's own searcher, with `{ms}` for its time, where a one-layer network plays
    /// inside it (Banqi's `banqi-ab`); `None`: such a network plays through MCTS.
    pub searcher: Option<&'static str>,
}

/// The game-specific paragraphs of an exported model's MODEL.md.
#[derive(Debug)]
pub struct ModelDoc {
    /// The input paragraph: the feature vector and where its layout is documented.
    pub input: &'static str,
    /// What the margin head predicts.
    pub margin: &'static str,
    /// The policy head's width and its index map; `None`: no fixed action space.
    pub policy: Option<(&'static str, &'static str)>,
}

/// The margin note of a game scored in points.
pub const POINTS_MARGIN: &str = "final score difference, mover's view, points";

/// Reads a file a configuration names, by its path as written there: the host's, so the
/// engine stays free of I/O.
pub type FileReader<'a> = dyn Fn(&str) -> Result<String, String> + 'a;

/// A game with a pack. Every game in [`crate::GameKind`] has one.
pub trait GamePack: Game {
    /// The game's pack.
    const PACK: Pack;

    /// The position as an SVG picture, with `caption` lines under the board (none: no caption).
    fn svg(&self, caption: &[String]) -> String;

    /// The caption `zeroplay render` writes under the board, in English: who is to move or
    /// won, and the scores.
    fn caption(&self) -> String;

    /// The game's own line for a picture's caption on the play server (scores, colours), in
    /// Chinese if `zh`.
    fn caption_line(&self, zh: bool) -> String;

    /// Reads options from a play request's JSON (`null`: `defaults`).
    ///
    /// # Errors
    /// A message naming the bad field.
    fn options_from_json(v: &Value, defaults: &Self::Options) -> Result<Self::Options, String>;

    /// Reads the options from a configuration's `[options.<name>]` table, reading any file the
    /// table names with `read` (the engine reads no files itself). By default the table is
    /// read as the JSON a play request carries ([`GamePack::options_from_json`]).
    ///
    /// # Errors
    /// A message naming the bad key, or the file and what is wrong with it.
    fn options_from_toml(table: &toml::Table, read: &FileReader<'_>) -> Result<Self::Options, String> {
        let _ = read;
        let json = serde_json::to_value(table).map_err(|e| e.to_string())?;
        Self::options_from_json(&json, &Self::Options::default())
    }

    /// Options as JSON (what [`GamePack::options_from_json`] reads back).
    fn options_json(o: &Self::Options) -> Value;

    /// The board as the web client's board module draws it.
    fn board_json(&self) -> Value;

    /// One entry per legal action: at least `{"action": text}`; games with geometry add
    /// what a client needs to draw the action (TriGolden: the ghost polygon).
    fn legal_json(&self, actions: &[Self::Action]) -> Vec<Value> {
        actions.iter().map(|a| json!({ "action": a.to_string() })).collect()
    }

    /// The arbitration of this position at a turn start, for a game whose pack says
    /// [`Pack::arbitration`] (TriGolden's rule 5): `{seat, obligation_met, legal_turns}`.
    fn arbitration_json(&self) -> Option<Value> {
        None
    }

    /// The positions one turn on, for a perft shared out among threads (by default every
    /// click sequence of a turn, [`crate::perft::first_turns`]).
    fn perft_children(&self) -> Vec<Self> {
        crate::perft::first_turns(self).into_iter().map(|(_, child)| child).collect()
    }

    /// Perft to `depth` turns: by default every click sequence counts. `make_every_turn` is
    /// for a game that counts a turn once per set of pieces (TriGolden's `perft`); the others
    /// ignore it.
    fn perft(&self, depth: u32, make_every_turn: bool) -> u64 {
        let _ = make_every_turn;
        crate::perft::perft(self, depth)
    }

    /// One line on where the game stands: its outcome and scores, or that it is not over.
    fn summary(&self) -> String {
        match self.outcome() {
            Some(o) => format!("game over, scores {}–{}{}", o.scores[0], o.scores[1], ending(Some(o))),
            None => "game not over".into(),
        }
    }
}

/// A seat as the web client and the board JSON name it.
pub fn seat_name(s: Seat) -> &'static str {
    match s {
        Seat::First => "first",
        Seat::Second => "second",
    }
}

/// How a game ended, as [`GamePack::summary`] words it (empty while it goes on).
pub fn ending(o: Option<crate::game::Outcome>) -> &'static str {
    match o {
        Some(o) if o.decisive.is_some() => " (decided: a player had no legal move)",
        Some(_) => " (game over)",
        None => "",
    }
}

/// `base` with the TOML `overlay` laid over it: tables merge key by key, anything else is
/// replaced. How a host applies a game pack's defaults ([`Pack::selfplay`], [`Pack::pipeline`])
/// to its own.
///
/// # Errors
/// An overlay that is not TOML, or whose keys or values the type does not accept (the type's
/// own message, naming the key).
pub fn overlay<T: Serialize + DeserializeOwned>(base: &T, overlay: &str) -> Result<T, String> {
    let mut merged = toml::Table::try_from(base).map_err(|e| format!("the defaults as TOML: {e}"))?;
    let top: toml::Table = toml::from_str(overlay).map_err(|e| format!("not TOML: {e}"))?;
    merge(&mut merged, top);
    merged.try_into().map_err(|e: toml::de::Error| e.to_string())
}

fn merge(into: &mut toml::Table, from: toml::Table) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GameKind;
    use std::collections::BTreeSet;

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Inner {
        a: u32,
        b: String,
    }

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Outer {
        x: f64,
        list: Vec<String>,
        inner: Inner,
    }

    impl Default for Inner {
        fn default() -> Self {
            Inner { a: 1, b: "one".into() }
        }
    }

    impl Default for Outer {
        fn default() -> Self {
            Outer { x: 0.5, list: vec!["p".into()], inner: Inner::default() }
        }
    }

    #[test]
    fn an_overlay_merges_tables_and_replaces_values() {
        let o = overlay(&Outer::default(), "# why\nlist = []\n[inner]\na = 7\n").unwrap();
        assert_eq!(o, Outer { x: 0.5, list: vec![], inner: Inner { a: 7, b: "one".into() } });
        assert_eq!(overlay(&Outer::default(), "").unwrap(), Outer::default());
        let e = overlay(&Outer::default(), "[inner]\nc = 1\n").unwrap_err();
        assert!(e.contains("unknown field `c`"), "{e}");
        assert!(overlay(&Outer::default(), "x = \"half\"").is_err());
        assert!(overlay(&Outer::default(), "x = ").unwrap_err().starts_with("not TOML"));
    }

    #[test]
    fn every_game_has_a_pack_with_its_own_names_and_replay_byte() {
        let codes: BTreeSet<u8> = GameKind::ALL.iter().map(|k| k.pack().replay_code).collect();
        assert_eq!(codes.len(), GameKind::ALL.len(), "replay bytes are unique");
        for k in GameKind::ALL {
            let p = k.pack();
            assert_eq!(GameKind::from_replay_code(p.replay_code), Some(k));
            assert_eq!(k.title(), format!("{} ({})", p.title, p.title_zh));
            assert!(!p.perft_note.is_empty() && p.strength.opponent.contains("{ms}"), "{k}");
            toml::from_str::<toml::Table>(p.selfplay).unwrap();
            toml::from_str::<toml::Table>(p.pipeline).unwrap();
            for family in p.served_agents {
                assert!(crate::spec::AgentSpec::families().iter().any(|f| f.name == *family), "{family}");
            }
        }
        assert_eq!(GameKind::from_replay_code(0), None);
    }
}
