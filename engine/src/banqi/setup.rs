//! Untrusted positions: the external position string (`XXXXXXXX/… - G1A2… 0 1`) is read into
//! a [`Setup`], which [`Banqi::from_setup`] checks into a position; state bytes go through the
//! same checks.

use super::{
    Banqi, Colour, EMPTY, FACE_DOWN, HISTORY, Kind, NO_PROGRESS_LIMIT, Options, PIECE_CODES, Piece, SQUARES,
};
use crate::game::Seat;

/// What a square holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    /// Nothing.
    Empty,
    /// A face-down piece (one of the pool).
    FaceDown,
    /// A face-up piece.
    Up(Piece),
}

/// A position as an external tool describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// Each square, `row · 8 + column`.
    pub cells: [Cell; SQUARES],
    /// Face-down pieces by code (`colour · 7 + kind`).
    pub pool: [u8; PIECE_CODES],
    /// The colour to move; `None` before the first flip.
    pub to_move: Option<Colour>,
    /// Plies since the last flip or capture.
    pub quiet: u8,
}

/// Why a position string or [`Setup`] is not a Banqi position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// The text could not be read.
    #[error("position string: {0}")]
    Text(String),
    /// More pieces of a kind than the set has.
    #[error("{count} of piece {letter} (face up and face down together; the set has {max})")]
    TooMany {
        /// The piece letter.
        letter: char,
        /// How many.
        count: u32,
        /// How many the set has.
        max: u8,
    },
    /// The face-down squares and the pool disagree.
    #[error("{squares} face-down squares but {pool} pieces in the face-down pool")]
    PoolMismatch {
        /// Face-down squares.
        squares: u32,
        /// Pieces in the pool.
        pool: u32,
    },
    /// Pieces are face up or captured although no colour has been assigned.
    #[error("before the first flip (side `-`) every square must be face down")]
    NoColours,
    /// Too many quiet plies.
    #[error("{0} plies since the last flip or capture (at most {NO_PROGRESS_LIMIT})")]
    Quiet(u32),
}

impl Setup {
    /// The start position.
    pub fn start() -> Setup {
        Banqi::start().to_setup()
    }

    /// Reads a position string: `<rows top to bottom, '/'-separated, digits for empty runs>
    /// <side: r, b, or -> <pool: letter+count, red first, or -> <plies since the last flip or
    /// capture> <move number>`. The move number is read and ignored.
    ///
    /// # Errors
    /// [`SetupError::Text`] naming the part that cannot be read, or a consistency error.
    pub fn parse(text: &str) -> Result<Setup, SetupError> {
        let bad = |m: String| SetupError::Text(m);
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(bad(format!(
                "expected 5 fields (board, side, pool, quiet plies, move number), found {}",
                fields.len()
            )));
        }
        let rows: Vec<&str> = fields[0].split('/').collect();
        if rows.len() != 4 {
            return Err(bad(format!("the board has {} rows, expected 4", rows.len())));
        }
        let mut cells = [Cell::Empty; SQUARES];
        for (i, row) in rows.iter().enumerate() {
            let r = 3 - i;
            let mut col = 0usize;
            for ch in row.chars() {
                if let Some(d) = ch.to_digit(10) {
                    if d == 0 {
                        return Err(bad(format!("row {r}: an empty run of 0")));
                    }
                    col += d as usize;
                } else {
                    let cell = match ch {
                        'X' => Cell::FaceDown,
                        c => Cell::Up(Piece::from_letter(c).ok_or_else(|| {
                            bad(format!(
                                "row {r}: {c:?} is not a piece (GAERHCS red, gaerhcs black, X face down)"
                            ))
                        })?),
                    };
                    if col >= 8 {
                        return Err(bad(format!("row {r} has more than 8 squares")));
                    }
                    cells[r * 8 + col] = cell;
                    col += 1;
                }
                if col > 8 {
                    return Err(bad(format!("row {r} has more than 8 squares")));
                }
            }
            if col != 8 {
                return Err(bad(format!("row {r} has {col} squares, expected 8")));
            }
        }
        let to_move = match fields[1] {
            "r" => Some(Colour::Red),
            "b" => Some(Colour::Black),
            "-" => None,
            s => return Err(bad(format!("side {s:?}: expected r, b or -"))),
        };
        let mut pool = [0u8; PIECE_CODES];
        if fields[2] != "-" {
            let mut chars = fields[2].chars().peekable();
            while let Some(c) = chars.next() {
                let p = Piece::from_letter(c)
                    .ok_or_else(|| bad(format!("pool: {c:?} is not a piece letter (GAERHCS, gaerhcs)")))?;
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                let n: u8 = digits.parse().map_err(|_| bad(format!("pool: {c} needs a count")))?;
                let slot = &mut pool[p.code() as usize];
                *slot = slot.checked_add(n).ok_or_else(|| bad(format!("pool: count of {c} too large")))?;
            }
        }
        let quiet: u32 =
            fields[3].parse().map_err(|_| bad(format!("quiet plies {:?} is not a number", fields[3])))?;
        if quiet > u32::from(NO_PROGRESS_LIMIT) {
            return Err(SetupError::Quiet(quiet));
        }
        fields[4].parse::<u32>().map_err(|_| bad(format!("move number {:?} is not a number", fields[4])))?;
        let s = Setup { cells, pool, to_move, quiet: quiet as u8 };
        s.check(to_move.is_some())?;
        Ok(s)
    }

    /// Checks piece counts and the pool against the board.
    pub(super) fn check(&self, colours_assigned: bool) -> Result<(), SetupError> {
        let mut counts = self.pool.map(u32::from);
        let mut face_down = 0u32;
        for c in &self.cells {
            match c {
                Cell::FaceDown => face_down += 1,
                Cell::Up(p) => counts[p.code() as usize] += 1,
                Cell::Empty => {}
            }
        }
        for (code, &n) in counts.iter().enumerate() {
            let max = Kind::COUNT[code % 7];
            if n > u32::from(max) {
                return Err(SetupError::TooMany {
                    letter: Piece::from_code(code as u8).letter(),
                    count: n,
                    max,
                });
            }
        }
        let pool: u32 = self.pool.iter().map(|&n| u32::from(n)).sum();
        if pool != face_down {
            return Err(SetupError::PoolMismatch { squares: face_down, pool });
        }
        if !colours_assigned && self.cells.iter().any(|c| *c != Cell::FaceDown) {
            return Err(SetupError::NoColours);
        }
        if u32::from(self.quiet) > u32::from(NO_PROGRESS_LIMIT) {
            return Err(SetupError::Quiet(self.quiet.into()));
        }
        Ok(())
    }
}

impl Banqi {
    /// Checks a [`Setup`] into a position. Red sits at the first seat; the repetition history
    /// before the position is unknown (only positions from here on count).
    ///
    /// # Errors
    /// [`SetupError`] for inconsistent counts.
    pub fn from_setup(s: &Setup) -> Result<Banqi, SetupError> {
        s.check(s.to_move.is_some())?;
        let mut board = [EMPTY; SQUARES];
        for (b, c) in board.iter_mut().zip(&s.cells) {
            *b = match c {
                Cell::Empty => EMPTY,
                Cell::FaceDown => FACE_DOWN,
                Cell::Up(p) => p.code(),
            };
        }
        let first_colour = s.to_move.map(|_| Colour::Red);
        let side = if s.to_move == Some(Colour::Black) { Seat::Second } else { Seat::First };
        let mut g = Banqi {
            board,
            pool: s.pool,
            first_colour,
            side,
            pending: None,
            quiet: s.quiet,
            history: [0; HISTORY],
            key: 0,
            outcome: None,
            opts: Options {},
        };
        g.key = g.compute_key();
        g.history[g.quiet as usize] = g.key;
        g.settle();
        Ok(g)
    }

    /// Reads a position string ([`Setup::parse`]).
    ///
    /// # Errors
    /// [`SetupError`] for text that cannot be read or an inconsistent position.
    pub fn from_position_string(text: &str) -> Result<Banqi, SetupError> {
        Banqi::from_setup(&Setup::parse(text)?)
    }

    /// The position as a [`Setup`] (at a chance node: as before the flip).
    pub fn to_setup(&self) -> Setup {
        let mut cells = [Cell::Empty; SQUARES];
        for (s, c) in cells.iter_mut().enumerate() {
            *c = self.cell(s as u8);
        }
        Setup { cells, pool: self.pool, to_move: self.colour_to_move(), quiet: self.quiet }
    }

    /// The external position string: rows top (rank 3) to bottom, side to move, face-down
    /// pool, plies since the last flip or capture, and `1`.
    pub fn position_string(&self) -> String {
        let mut out = String::new();
        for r in (0..4).rev() {
            let mut run = 0;
            for c in 0..8 {
                match self.cell((r * 8 + c) as u8) {
                    Cell::Empty => run += 1,
                    cell => {
                        if run > 0 {
                            out.push_str(&run.to_string());
                            run = 0;
                        }
                        out.push(match cell {
                            Cell::FaceDown => 'X',
                            Cell::Up(p) => p.letter(),
                            Cell::Empty => unreachable!(),
                        });
                    }
                }
            }
            if run > 0 {
                out.push_str(&run.to_string());
            }
            if r > 0 {
                out.push('/');
            }
        }
        out.push(' ');
        out.push(match self.colour_to_move() {
            Some(Colour::Red) => 'r',
            Some(Colour::Black) => 'b',
            None => '-',
        });
        out.push(' ');
        if self.pool_total() == 0 {
            out.push('-');
        } else {
            for (code, &n) in self.pool.iter().enumerate() {
                if n > 0 {
                    out.push(Piece::from_code(code as u8).letter());
                    out.push_str(&n.to_string());
                }
            }
        }
        out.push_str(&format!(" {} 1", self.quiet));
        out
    }
}
