//! Each stored game replayed from its start with the engine: its options, how it ended, and
//! what decided it, per game (TriGolden's bracing points by shape and rule-6 turns, Battle
//! Number's region and extraction points and pieces never placed, Banqi's captures, colours
//! and draw causes).

use std::collections::BTreeMap;

use engine::banqi::{Action as BqAction, Banqi, Cell, Colour};
use engine::battlenumber::{BattleNumber, Kind as BnKind};
use engine::pack::GamePack;
use engine::trigolden::{Action as TgAction, TriGolden};
use engine::{Actor, Game, GameKind, Seat};
use serde::Serialize;

use crate::read::GameRecord;

/// How a game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// On points (a draw on points too).
    Points,
    /// A player had no legal move (Battle Number: no legal placement or extraction).
    NoLegalMove,
    /// TriGolden: arbitration (rule 5): the player before left no legal two-piece turn.
    Arbitration,
    /// Banqi: every piece of the loser was taken.
    AllCaptured,
    /// Banqi: drawn by a position seen three times.
    Repetition,
    /// Banqi: drawn after 60 plies without a capture or a flip.
    NoProgress,
    /// A resignation.
    Resignation,
}

impl Ending {
    /// Every ending, in the report's order.
    pub const ALL: [Ending; 7] = [
        Ending::Points,
        Ending::NoLegalMove,
        Ending::Arbitration,
        Ending::AllCaptured,
        Ending::Repetition,
        Ending::NoProgress,
        Ending::Resignation,
    ];
}

/// One game, replayed.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    /// The stored record.
    pub record: GameRecord,
    /// The game's options as the game names them (`GamePack::options_json`).
    pub options: serde_json::Value,
    /// Atomic actions (clicks, chance included).
    pub plies: usize,
    /// Player turns.
    pub turns: usize,
    /// How it ended.
    pub ending: Ending,
    /// What decided it, per game.
    pub details: Details,
}

/// Per-game facts.
#[derive(Clone, Debug, PartialEq)]
pub enum Details {
    /// TriGolden.
    TriGolden {
        /// Bracing points by the shape of the piece they lie on (A, B, …).
        points_by_shape: BTreeMap<String, usize>,
        /// Bracing points by the seat owning the piece they lie on.
        points_by_owner: [usize; 2],
        /// Pieces placed by shape.
        placed_by_shape: BTreeMap<String, usize>,
        /// Turns whose two pieces went on different opponent pieces (rule 6's exception).
        rule6_turns: usize,
        /// The final points.
        scores: [i32; 2],
    },
    /// Battle Number.
    BattleNumber {
        /// The region (placement) score, the first seat's view.
        regions: i32,
        /// Each seat's extraction total.
        extraction: [i32; 2],
        /// Pieces left in hand at the end, by kind code (both seats).
        never_placed: BTreeMap<String, usize>,
    },
    /// Banqi.
    Banqi {
        /// Flips.
        flips: usize,
        /// Captures by the capturing piece's kind (upper-case letter).
        captures_by: BTreeMap<String, usize>,
        /// The first seat's colour (red or black), once drawn.
        first_colour: Option<&'static str>,
    },
    /// A game without its own figures.
    Other,
}

/// Why a stored game could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The start does not decode.
    #[error("game {id}: its start does not decode: {msg}")]
    Start {
        /// The game.
        id: String,
        /// The decoder's message.
        msg: String,
    },
    /// An action does not parse or is illegal there.
    #[error("game {id}: ply {ply} ({action}): {msg}")]
    Action {
        /// The game.
        id: String,
        /// Where.
        ply: usize,
        /// The action.
        action: String,
        /// Why.
        msg: String,
    },
    /// The actions run out before the game ends.
    #[error("game {id}: unfinished after {plies} plies")]
    Unfinished {
        /// The game.
        id: String,
        /// Its plies.
        plies: usize,
    },
}

/// Replays `r` from its start, calling `each` before every action with the position and the
/// action; returns the final position and the player turns counted.
fn replay<G: Game>(r: &GameRecord, mut each: impl FnMut(&G, &G::Action)) -> Result<(G, usize), ReplayError> {
    let mut g =
        G::decode(&r.start).map_err(|e| ReplayError::Start { id: r.id.clone(), msg: e.to_string() })?;
    let mut turns = 0;
    for (ply, text) in r.actions.iter().enumerate() {
        let bad = |msg: String| ReplayError::Action { id: r.id.clone(), ply, action: text.clone(), msg };
        let a = g.parse_action(text).map_err(|e| bad(e.to_string()))?;
        if g.at_turn_start() && matches!(g.to_move(), Actor::Player(_)) {
            turns += 1;
        }
        each(&g, &a);
        g.play(a).map_err(|e| bad(e.to_string()))?;
    }
    // A resigned game stops before the rules end it; any other must be over.
    if g.outcome().is_none() && !r.resigned {
        return Err(ReplayError::Unfinished { id: r.id.clone(), plies: r.actions.len() });
    }
    Ok((g, turns))
}

/// The ending read from the record and the final position (`G`'s generic part).
fn ending<G: Game>(r: &GameRecord, g: &G) -> Ending {
    if r.resigned {
        Ending::Resignation
    } else if g.outcome().is_some_and(|o| o.decisive.is_some()) {
        Ending::NoLegalMove
    } else {
        Ending::Points
    }
}

fn generic<G: GamePack>(r: GameRecord) -> Result<Played, ReplayError> {
    let (g, turns) = replay::<G>(&r, |_, _| {})?;
    let ending = ending(&r, &g);
    Ok(Played {
        options: G::options_json(g.options()),
        plies: r.actions.len(),
        turns,
        ending,
        details: Details::Other,
        record: r,
    })
}

/// Replays one stored game.
///
/// # Errors
/// Its start does not decode, an action is illegal, or it does not end.
pub fn play(r: GameRecord) -> Result<Played, ReplayError> {
    match r.kind {
        GameKind::TriGolden => trigolden(r),
        GameKind::BattleNumber => battlenumber(r),
        GameKind::Banqi => banqi(r),
        kind => engine::with_game!(kind, |G| generic::<G>(r)),
    }
}

fn letter(i: u8) -> String {
    char::from(b'A' + i.min(25)).to_string()
}

fn trigolden(r: GameRecord) -> Result<Played, ReplayError> {
    let mut rule6 = 0;
    // The current turn's targets (a turn of two placements on two pieces is rule 6's case).
    let mut turn: Vec<u8> = Vec::new();
    let (g, turns) = replay::<TriGolden>(&r, |g, a| {
        if g.at_turn_start() {
            turn.clear();
        }
        if let TgAction::Place(p) = a {
            turn.push(p.target);
            if turn.len() == 2 && turn[0] != turn[1] {
                rule6 += 1;
            }
        }
    })?;
    let mut ending = ending(&r, &g);
    if ending == Ending::NoLegalMove {
        ending = Ending::Arbitration;
    }
    let pieces = g.pieces();
    let mut points_by_shape = BTreeMap::new();
    let mut points_by_owner = [0; 2];
    for &(piece, _) in g.scored_points() {
        if let Some(p) = pieces.get(usize::from(piece)) {
            *points_by_shape.entry(letter(p.shape)).or_insert(0) += 1;
            points_by_owner[p.owner.index()] += 1;
        }
    }
    let mut placed_by_shape = BTreeMap::new();
    for p in pieces {
        *placed_by_shape.entry(letter(p.shape)).or_insert(0) += 1;
    }
    let details = Details::TriGolden {
        points_by_shape,
        points_by_owner,
        placed_by_shape,
        rule6_turns: rule6,
        scores: g.scores(),
    };
    Ok(Played {
        options: TriGolden::options_json(g.options()),
        plies: r.actions.len(),
        turns,
        ending,
        details,
        record: r,
    })
}

fn battlenumber(r: GameRecord) -> Result<Played, ReplayError> {
    let (g, turns) = replay::<BattleNumber>(&r, |_, _| {})?;
    let ending = ending(&r, &g);
    let mut never_placed = BTreeMap::new();
    for seat in Seat::BOTH {
        for (k, n) in BnKind::ALL.iter().zip(g.hand(seat)) {
            *never_placed.entry(k.code().to_string()).or_insert(0) += usize::from(n);
        }
    }
    let details = Details::BattleNumber {
        regions: g.placement_score(),
        extraction: g.extraction_totals(),
        never_placed,
    };
    Ok(Played {
        options: BattleNumber::options_json(g.options()),
        plies: r.actions.len(),
        turns,
        ending,
        details,
        record: r,
    })
}

fn banqi(r: GameRecord) -> Result<Played, ReplayError> {
    let (mut flips, mut captures_by) = (0, BTreeMap::new());
    let (g, turns) = replay::<Banqi>(&r, |g, a| match *a {
        BqAction::Flip(_) => flips += 1,
        BqAction::Move { from, to } => {
            if let (Cell::Up(p), Cell::Up(_) | Cell::FaceDown) = (g.cell(from), g.cell(to)) {
                *captures_by.entry(p.kind.letter().to_string()).or_insert(0) += 1;
            }
        }
        BqAction::Reveal(_) => {}
    })?;
    let mut ending = ending(&r, &g);
    let Some(outcome) = g.outcome() else {
        // Resigned.
        return Ok(banqi_played(r, &g, turns, ending, flips, captures_by));
    };
    if ending == Ending::NoLegalMove {
        // The loser has nothing left, or nothing that can move.
        let loser = outcome.decisive.map(Seat::other);
        let colour = loser.and_then(|s| g.colour_of(s));
        let has_pieces = colour.is_some_and(|c| {
            (0..32).any(|sq| matches!(g.cell(sq), Cell::Up(p) if p.colour == c))
                || engine::banqi::Kind::ALL.iter().any(|&k| g.pool_count(engine::banqi::Piece::new(c, k)) > 0)
        });
        if !has_pieces {
            ending = Ending::AllCaptured;
        }
    } else if ending == Ending::Points && outcome.winner().is_none() {
        ending = if g.repetitions() >= engine::banqi::REPETITIONS {
            Ending::Repetition
        } else {
            Ending::NoProgress
        };
    }
    Ok(banqi_played(r, &g, turns, ending, flips, captures_by))
}

fn banqi_played(
    r: GameRecord,
    g: &Banqi,
    turns: usize,
    ending: Ending,
    flips: usize,
    captures_by: BTreeMap<String, usize>,
) -> Played {
    let first_colour = g.colour_of(Seat::First).map(|c| if c == Colour::Red { "red" } else { "black" });
    let details = Details::Banqi { flips, captures_by, first_colour };
    Played {
        options: Banqi::options_json(g.options()),
        plies: r.actions.len(),
        turns,
        ending,
        details,
        record: r,
    }
}
