//! Why a finished Banqi game was drawn, and whether the endgame tables prove that a side had
//! it won on the way: the measure behind "in won positions `banqi-ab` converts rather than
//! repeats" (`zeroplay draws`).
//!
//! Every position of the game that the tables can hold (no face-down piece, at most
//! [`Tablebase::max_pieces`] pieces) is probed under the 60-ply rule. A drawn game that passed
//! through a position won for the side to move was *winnable*, and the first move after which
//! that side no longer had a win is the one that let it go. Positions with more pieces are
//! not judged: a draw there is counted as not proved winnable, whatever the material says.

use super::ab::{Weights, evaluate};
use super::tablebase::{Tablebase, Wdl};
use super::{Action, Banqi, FACE_DOWN, REPETITIONS};
use crate::game::{Game, Seat};

/// What ended a drawn game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DrawCause {
    /// The same position for the third time.
    Repetition,
    /// 60 plies without a flip or a capture.
    NoProgress,
}

/// The first position of a drawn game that the tables hold as won for the side to move.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MissedWin {
    /// Where: 0 is the start, `i` the position after `i` actions.
    pub ply: usize,
    /// The seat that had the win.
    #[serde(serialize_with = "seat_name")]
    pub seat: Seat,
    /// Plies to the next capture or the end, with best play on both sides (the tables' DTZ).
    pub distance: u16,
    /// Pieces on the board there.
    pub pieces: usize,
    /// The index of that seat's action after which its position was no longer won (the move
    /// that let the win go). A game drawn by repetition while the tables still held it won
    /// names the seat's last action, which allowed the repetition.
    pub let_go_at: usize,
}

/// One drawn game, reviewed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DrawReview {
    /// What ended it.
    pub cause: DrawCause,
    /// Actions played (chance reveals included).
    pub plies: usize,
    /// Face-up pieces at the end, by seat (first, second).
    pub pieces: [usize; 2],
    /// Face-down pieces at the end.
    pub face_down: usize,
    /// The handcrafted evaluation of the end position from the first seat's view: a hint of
    /// who was ahead where the tables cannot judge, not a proof.
    pub eval_first: i32,
    /// Whether the end position is one the tables hold.
    pub in_tables: bool,
    /// The first won position the game passed through, if any.
    pub missed: Option<MissedWin>,
}

/// Replays `actions` from `start` and, if the game ends drawn, reviews it with `tables`
/// (built on demand; [`Tablebase::for_analysis`] judges endings of up to 5 pieces).
/// `Ok(None)` for a game won by either side.
///
/// # Errors
/// An illegal action (its index and why), or a game that does not end.
pub fn review_draw(
    start: &Banqi,
    actions: &[Action],
    tables: &mut Tablebase,
) -> Result<Option<DrawReview>, String> {
    let max = tables.max_pieces();
    let mut pos = start.clone();
    let mut missed: Option<MissedWin> = None;
    // The action after which the missed win's seat no longer had it.
    let mut let_go: Option<usize> = None;
    let mut last_action_by = [None::<usize>; 2];
    // The tables' verdict where they hold the position (`prepare` and `probe` pass over one
    // with face-down pieces, a pending flip or too many pieces).
    let probe = |pos: &Banqi, tables: &mut Tablebase| -> Option<Wdl> {
        if pos.outcome().is_some() {
            return None;
        }
        tables.prepare(pos, max, None);
        tables.probe(pos)
    };
    let mut check = |ply: usize, pos: &Banqi, tables: &mut Tablebase, missed: &mut Option<MissedWin>| {
        let Some(w) = probe(pos, tables) else { return };
        match (missed.as_ref(), w) {
            (None, Wdl::Win(d)) => {
                *missed =
                    Some(MissedWin { ply, seat: pos.side(), distance: d, pieces: face_up(pos), let_go_at: 0 })
            }
            // The winner has just moved: the opponent to move must still be lost.
            (Some(m), w) if let_go.is_none() && pos.side() != m.seat && !matches!(w, Wdl::Loss(_)) => {
                let_go = Some(ply - 1);
            }
            _ => {}
        }
    };
    check(0, &pos, tables, &mut missed);
    for (i, &a) in actions.iter().enumerate() {
        if pos.outcome().is_some() {
            return Err(format!("action {} ({a}) after the end of the game", i + 1));
        }
        if let crate::game::Actor::Player(seat) = pos.to_move() {
            last_action_by[seat.index()] = Some(i);
        }
        pos.play(a).map_err(|e| format!("action {} ({a}): {e}", i + 1))?;
        check(i + 1, &pos, tables, &mut missed);
    }
    if let Some(m) = missed.as_mut() {
        m.let_go_at = let_go.or(last_action_by[m.seat.index()]).unwrap_or(0);
    }
    let outcome =
        pos.outcome().ok_or_else(|| format!("the game is not over after {} actions", actions.len()))?;
    if outcome.winner().is_some() {
        return Ok(None);
    }
    let cause = if pos.repetitions() >= REPETITIONS { DrawCause::Repetition } else { DrawCause::NoProgress };
    let mut pieces = [0; 2];
    for sq in 0..super::SQUARES as u8 {
        if let super::Cell::Up(p) = pos.cell(sq)
            && let Some(seat) = pos.seat_of(p.colour)
        {
            pieces[seat.index()] += 1;
        }
    }
    let face_down = pos.face_down_count();
    let eval = evaluate(&pos, &Weights::default());
    let eval_first = if pos.side() == Seat::First { eval } else { -eval };
    let in_tables = face_down == 0 && face_up(&pos) <= max;
    Ok(Some(DrawReview { cause, plies: actions.len(), pieces, face_down, eval_first, in_tables, missed }))
}

fn seat_name<S: serde::Serializer>(seat: &Seat, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(if *seat == Seat::First { "first" } else { "second" })
}

fn face_up(pos: &Banqi) -> usize {
    (0..super::SQUARES).filter(|&s| pos.board[s] < FACE_DOWN).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actions(pos: &Banqi, text: &str) -> Vec<Action> {
        text.split_whitespace().map(|w| pos.parse_action(w).unwrap()).collect()
    }

    #[test]
    fn a_won_ending_shuffled_into_a_repetition_was_winnable_and_names_who_let_it_go() {
        // Two chariots against a horse, red to move: the tables hold it won.
        let start = Banqi::from_position_string("R7/8/8/3h3R r - 0 1").unwrap();
        let mut tables = Tablebase::for_analysis();
        tables.prepare(&start, 5, None);
        assert!(matches!(tables.probe(&start), Some(Wdl::Win(_))), "{:?}", tables.probe(&start));
        // Both sides shuffle: the start comes back a third time after 8 plies.
        let moves = actions(&start, "a3a2 d0c0 a2a3 c0d0 a3a2 d0c0 a2a3 c0d0");
        let review = review_draw(&start, &moves, &mut tables).unwrap().expect("a draw");
        assert_eq!(review.cause, DrawCause::Repetition);
        assert_eq!((review.plies, review.pieces, review.face_down, review.in_tables), (8, [2, 1], 0, true));
        assert!(review.eval_first > 0, "red is a chariot up: {}", review.eval_first);
        let m = review.missed.expect("the draw was winnable");
        assert_eq!((m.ply, m.seat, m.pieces), (0, start.side(), 3));
        assert!(m.distance > 0);
        // Red's moves are the even actions; one of them let the win go.
        assert!(m.let_go_at.is_multiple_of(2) && m.let_go_at < 8, "{}", m.let_go_at);
    }

    #[test]
    fn a_won_game_is_not_reviewed_and_a_draw_beyond_the_tables_is_not_called_winnable() {
        let start = Banqi::from_position_string("8/8/8/Rh6 r - 0 1").unwrap();
        let mut tables = Tablebase::for_analysis();
        assert_eq!(review_draw(&start, &actions(&start, "a0b0"), &mut tables), Ok(None));
        // Six pieces: more than the tables hold, so nothing is judged won.
        let start = Banqi::from_position_string("RR6/8/8/2shhs2 r - 0 1").unwrap();
        let moves = actions(&start, "a3a2 d0d1 a2a3 d1d0 a3a2 d0d1 a2a3 d1d0");
        let mut tables = Tablebase::for_analysis();
        let review = review_draw(&start, &moves, &mut tables).unwrap().expect("a draw");
        assert_eq!(
            (review.cause, review.in_tables, review.missed.is_none()),
            (DrawCause::Repetition, false, true)
        );
        assert_eq!(tables.tables(), 0, "no table is built for a position it cannot hold");
        // An unfinished game and an illegal action are errors that say where.
        assert!(review_draw(&start, &moves[..3], &mut tables).unwrap_err().contains("not over"));
        let bad = [Action::Move { from: 0, to: 9 }];
        assert!(review_draw(&start, &bad, &mut tables).unwrap_err().starts_with("action 1"));
    }

    #[test]
    fn analysis_tables_hold_five_pieces_where_play_holds_four() {
        // Two chariots against a horse and two pawns: five pieces, beyond play's tables.
        let pos = Banqi::from_position_string("R7/8/8/2shs2R r - 0 1").unwrap();
        let mut play = Tablebase::new();
        play.prepare(&pos, 5, None);
        assert_eq!(play.probe(&pos), None, "play's tables stop at 4 pieces");
        let mut analysis = Tablebase::for_analysis();
        let started = std::time::Instant::now();
        analysis.prepare(&pos, 5, None);
        eprintln!("5-piece tables built in {:?}", started.elapsed());
        let w = analysis.probe(&pos).expect("a 5-piece table");
        // Every sub-table (4 pieces and fewer) is built and agrees with play's own.
        let four = Banqi::from_position_string("R7/8/8/3hs2R r - 0 1").unwrap();
        play.prepare(&four, 4, None);
        assert_eq!(analysis.probe(&four), play.probe(&four));
        assert!(matches!(w, Wdl::Win(_)), "two chariots take a horse and two pawns: {w:?}");
    }
}
