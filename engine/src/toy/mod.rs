//! The toy game: three in a row (井字棋) on a 3 × 3 board, a tiny game that exists so the
//! tests can add a fourth game the way a real one is added (this folder, one line in
//! [`crate::kind`], its web board module) and run it through every host: the coordinator,
//! a worker, the trainer, the arena and the play server. Players take turns to claim an
//! empty square; three in a line wins (+1 / −1), a full board without one is a draw.
//!
//! It is registered only with the engine's `toy` feature, which the workspace's tests turn
//! on: without it [`crate::GameKind::ALL`] leaves it out and its name is unknown, so no
//! program a user runs offers it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::game::{ActionParseError, Actor, DecodeError, Game, Outcome, Seat};

mod features;
mod pack;

/// Squares on the board, row by row from the top left (`a1` = 0, `c3` = 8).
pub const SQUARES: usize = 9;

/// The eight lines of three.
const LINES: [[usize; 3]; 8] =
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];

/// The toy game has no [decision]s; the type exists for the [`Game`] interface.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {}

/// A claim of one square, `0..9`, written `a1`…`c3` (column letter, row number).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Action(pub u8);

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", char::from(b'a' + self.0 % 3), self.0 / 3 + 1)
    }
}

/// A position: each square empty or claimed by a seat.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Toy {
    squares: [Option<Seat>; SQUARES],
    options: Options,
}

impl Toy {
    /// Who holds square `sq`, if anyone.
    ///
    /// # Panics
    /// If `sq >= 9`.
    pub fn square(&self, sq: usize) -> Option<Seat> {
        self.squares[sq]
    }

    fn count(&self, seat: Seat) -> usize {
        self.squares.iter().filter(|s| **s == Some(seat)).count()
    }

    fn line_of(&self) -> Option<Seat> {
        LINES.iter().find_map(|l| {
            let s = self.squares[l[0]]?;
            (self.squares[l[1]] == Some(s) && self.squares[l[2]] == Some(s)).then_some(s)
        })
    }

    fn mover(&self) -> Seat {
        if self.count(Seat::First) > self.count(Seat::Second) { Seat::Second } else { Seat::First }
    }
}

impl Game for Toy {
    type Action = Action;
    type Options = Options;
    const NAME: &'static str = "toy";
    const STATE_VERSION: u8 = 1;

    fn new_game(options: &Options) -> Toy {
        Toy { squares: [None; SQUARES], options: options.clone() }
    }

    fn options(&self) -> &Options {
        &self.options
    }

    fn to_move(&self) -> Actor {
        Actor::Player(self.mover())
    }

    fn outcome(&self) -> Option<Outcome> {
        match self.line_of() {
            Some(Seat::First) => Some(Outcome::on_points([1, -1])),
            Some(Seat::Second) => Some(Outcome::on_points([-1, 1])),
            None if self.squares.iter().all(Option::is_some) => Some(Outcome::on_points([0, 0])),
            None => None,
        }
    }

    fn at_turn_start(&self) -> bool {
        true
    }

    fn legal_actions(&self, out: &mut Vec<Action>) {
        out.clear();
        if self.outcome().is_none() {
            out.extend((0..SQUARES as u8).filter(|&sq| self.squares[usize::from(sq)].is_none()).map(Action));
        }
    }

    /// # Contract
    /// `action` is legal here ([`Game::is_legal`]).
    fn play_unchecked(&mut self, action: Action) {
        self.squares[usize::from(action.0)] = Some(self.mover());
    }

    fn parse_action(&self, text: &str) -> Result<Action, ActionParseError> {
        let err = || ActionParseError { text: text.into(), reason: "a square a1…c3".into() };
        match text.trim().as_bytes() {
            &[c @ b'a'..=b'c', r @ b'1'..=b'3'] => Ok(Action((r - b'1') * 3 + (c - b'a'))),
            _ => Err(err()),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"TY");
        out.push(Self::STATE_VERSION);
        out.extend(self.squares.iter().map(|s| s.map_or(0, |s| 1 + s.index() as u8)));
    }

    fn decode(bytes: &[u8]) -> Result<Toy, DecodeError> {
        let len = 3 + SQUARES;
        if bytes.len() < 3 {
            return Err(DecodeError::Truncated { needed: 3, got: bytes.len() });
        }
        if &bytes[..2] != b"TY" {
            return Err(DecodeError::WrongGame { expected: Self::NAME, found: [bytes[0], bytes[1]] });
        }
        if bytes[2] != Self::STATE_VERSION {
            return Err(DecodeError::Version { found: bytes[2], supported: Self::STATE_VERSION });
        }
        if bytes.len() < len {
            return Err(DecodeError::Truncated { needed: len, got: bytes.len() });
        }
        if bytes.len() > len {
            return Err(DecodeError::Trailing(bytes.len() - len));
        }
        let mut g = Toy::new_game(&Options {});
        for (sq, &b) in bytes[3..].iter().enumerate() {
            g.squares[sq] = match b {
                0 => None,
                1 | 2 => Seat::from_index(usize::from(b - 1)),
                _ => return Err(DecodeError::Invalid(format!("square {sq} holds {b}"))),
            };
        }
        Setup::check(&g).map_err(DecodeError::Invalid)?;
        Ok(g)
    }
}

/// The checks a position must pass to be one the rules can reach.
struct Setup;

impl Setup {
    fn check(g: &Toy) -> Result<(), String> {
        let (first, second) = (g.count(Seat::First), g.count(Seat::Second));
        if first != second && first != second + 1 {
            return Err(format!("{first} first-seat squares against {second}: seats alternate"));
        }
        // Play stops at the first line: the seat that made it moved last.
        let lines: Vec<Seat> = LINES
            .iter()
            .filter_map(|l| {
                let s = g.squares[l[0]]?;
                (g.squares[l[1]] == Some(s) && g.squares[l[2]] == Some(s)).then_some(s)
            })
            .collect();
        match lines.first() {
            Some(&w) if lines.iter().any(|&s| s != w) => Err("both seats have a line".into()),
            Some(Seat::First) if first != second + 1 => {
                Err("the first seat's line was not its last move".into())
            }
            Some(Seat::Second) if first != second => {
                Err("the second seat's line was not its last move".into())
            }
            _ => Ok(()),
        }
    }
}

impl crate::agent::GameAgents for Toy {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::to_bytes;

    fn play(moves: &str) -> Toy {
        let mut g = Toy::new_game(&Options {});
        for m in moves.split_whitespace() {
            let a = g.parse_action(m).unwrap();
            g.play(a).unwrap();
        }
        g
    }

    #[test]
    fn three_in_a_row_wins_and_a_full_board_draws() {
        let g = play("a1 a2 b1 b2 c1");
        assert_eq!(g.outcome(), Some(Outcome::on_points([1, -1])));
        let mut v = Vec::new();
        g.legal_actions(&mut v);
        assert!(v.is_empty(), "nothing after the line");
        let d = play("a1 b1 c1 b2 a2 c2 b3 a3 c3");
        assert_eq!(d.outcome(), Some(Outcome::on_points([0, 0])));
        assert!(play("b2").play(Action(4)).is_err(), "a taken square");
        assert_eq!(Action(7).to_string(), "b3");
        assert!(g.parse_action("d1").is_err());
    }

    #[test]
    fn bytes_round_trip_and_unreachable_positions_are_refused() {
        for moves in ["", "b2", "a1 a2 b1 b2 c1", "a1 b1 c1 b2 a2 c2 b3 a3 c3"] {
            let g = play(moves);
            assert_eq!(Toy::decode(&to_bytes(&g)).unwrap(), g, "{moves}");
        }
        let mut b = to_bytes(&play(""));
        b[3] = 2;
        assert!(Toy::decode(&b).unwrap_err().to_string().contains("alternate"));
        let mut both = to_bytes(&play(""));
        both[3..].copy_from_slice(&[1, 1, 1, 2, 2, 2, 0, 0, 0]);
        assert!(Toy::decode(&both).unwrap_err().to_string().contains("both seats"));
        assert!(Toy::decode(b"BQ\x01").is_err());
        assert!(Toy::decode(&[b'T', b'Y', 1, 0]).is_err());
    }

    /// Random games: after every claim the bytes round-trip, the legal claims are the empty
    /// squares exactly while the game goes on, and the result matches a recount.
    #[test]
    fn random_playouts_keep_every_invariant() {
        use rand::RngExt;
        let mut rng = crate::rng_from_seed(7);
        let mut actions = Vec::new();
        for _ in 0..200 {
            let mut g = Toy::new_game(&Options {});
            loop {
                assert_eq!(Toy::decode(&to_bytes(&g)).unwrap(), g);
                g.legal_actions(&mut actions);
                let empty = g.squares.iter().filter(|s| s.is_none()).count();
                match g.outcome() {
                    Some(o) => {
                        assert!(actions.is_empty());
                        assert_eq!(o.winner(), g.line_of());
                        assert!(g.line_of().is_some() || empty == 0);
                        break;
                    }
                    None => assert_eq!(actions.len(), empty),
                }
                let a = actions[rng.random_range(0..actions.len())];
                g.play(a).unwrap();
            }
        }
    }
}
