//! Banqi (暗棋), Taiwan / TCGA computer rules, per `shared/rules/banqi.md`.
//!
//! A 4 × 8 board (square `row · 8 + column`; `a0` is 0, `h3` is 31), 32 pieces face down at the
//! start. A turn is one action: flip a face-down square, move a face-up piece one step, or
//! capture. A flip is two actions in the [`Game`] interface: the player's [`Action::Flip`] of
//! a square, then a chance node ([`Actor::Chance`]) whose outcomes are the pieces still face
//! down ([`Action::Reveal`]), each with its share of the face-down pool. The state holds only
//! that public pool, never which piece lies where, so search sees exactly what a player sees.
//! The hidden deal of a real game comes from its seed ([`Game::dealt_outcome`]).
//!
//! Seats: [`Seat::First`] makes the first flip and takes the colour it reveals; the other
//! colour moves next. Positions loaded from text ([`Setup`]) put red at the first seat.
//!
//! End of game, checked after every completed turn once colours are assigned: the side to
//! move with no pieces (face up or in the pool) or no legal move loses; else 60 plies without
//! a flip or capture draw; else the third occurrence of a position (board, pool, side to move)
//! draws. A win is scored `[1, −1]`; a draw `[0, 0]`.
//!
//! The position key is a Zobrist hash kept incrementally; the keys of the positions since the
//! last flip or capture (at most 61) are kept for the repetition rule.

pub mod ab;
pub mod draws;
pub mod features;
mod pack;
pub mod render;
mod setup;
pub mod tablebase;

use std::fmt;

use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::Rng;
use crate::game::{ActionParseError, Actor, DecodeError, Game, Outcome, Seat};

pub use setup::{Cell, Setup, SetupError};

/// Board columns (files a–h).
pub const COLS: usize = 8;
/// Board rows (ranks 0–3, row 0 at the bottom).
pub const ROWS: usize = 4;
/// Squares.
pub const SQUARES: usize = 32;
/// Plies without a flip or capture that draw the game.
pub const NO_PROGRESS_LIMIT: u8 = 60;
/// Occurrences of a position that draw the game.
pub const REPETITIONS: usize = 3;
/// Piece codes: `colour · 7 + kind`.
pub const PIECE_CODES: usize = 14;

const FACE_DOWN: u8 = 14;
const EMPTY: u8 = 15;
const HISTORY: usize = NO_PROGRESS_LIMIT as usize + 1;

/// A side's colour.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Colour {
    /// Red (upper-case letters).
    Red = 0,
    /// Black (lower-case letters).
    Black = 1,
}

impl Colour {
    /// The other colour.
    pub fn other(self) -> Colour {
        match self {
            Colour::Red => Colour::Black,
            Colour::Black => Colour::Red,
        }
    }

    /// 0 for red, 1 for black.
    pub fn index(self) -> usize {
        self as usize
    }

    fn from_index(i: usize) -> Colour {
        if i == 0 { Colour::Red } else { Colour::Black }
    }
}

/// A piece kind, strongest first.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kind {
    /// King / general (G).
    King = 0,
    /// Advisor (A).
    Advisor = 1,
    /// Elephant (E).
    Elephant = 2,
    /// Chariot (R).
    Chariot = 3,
    /// Horse (H).
    Horse = 4,
    /// Cannon (C).
    Cannon = 5,
    /// Pawn / soldier (S).
    Pawn = 6,
}

impl Kind {
    /// Every kind, strongest first.
    pub const ALL: [Kind; 7] =
        [Kind::King, Kind::Advisor, Kind::Elephant, Kind::Chariot, Kind::Horse, Kind::Cannon, Kind::Pawn];
    /// Pieces of each kind per colour, indexed by kind.
    pub const COUNT: [u8; 7] = [1, 2, 2, 2, 2, 2, 5];

    /// The upper-case letter of the external notation.
    pub fn letter(self) -> char {
        ['G', 'A', 'E', 'R', 'H', 'C', 'S'][self as usize]
    }

    /// Reads an upper-case letter.
    pub fn from_letter(c: char) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.letter() == c)
    }

    /// Whether a piece of this kind may take an enemy `target` by an adjacent capture: equal
    /// or lower rank, except that the king cannot take a pawn, a pawn takes only a pawn or the
    /// king, and the cannon never takes adjacently.
    pub fn takes_adjacent(self, target: Kind) -> bool {
        match (self, target) {
            (Kind::Cannon, _) => false,
            (Kind::King, Kind::Pawn) => false,
            (Kind::Pawn, t) => matches!(t, Kind::Pawn | Kind::King),
            (a, t) => a <= t,
        }
    }
}

/// A piece: colour and kind.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Piece {
    /// Its colour.
    pub colour: Colour,
    /// Its kind.
    pub kind: Kind,
}

impl Piece {
    /// A piece.
    pub fn new(colour: Colour, kind: Kind) -> Piece {
        Piece { colour, kind }
    }

    /// `colour · 7 + kind`, in `0..14`.
    pub fn code(self) -> u8 {
        self.colour as u8 * 7 + self.kind as u8
    }

    /// The piece with this code.
    ///
    /// # Panics
    /// If `code >= 14`.
    pub fn from_code(code: u8) -> Piece {
        assert!(code < PIECE_CODES as u8, "piece code {code} out of range");
        Piece { colour: Colour::from_index(code as usize / 7), kind: Kind::ALL[code as usize % 7] }
    }

    /// Its letter: upper case red, lower case black.
    pub fn letter(self) -> char {
        let c = self.kind.letter();
        if self.colour == Colour::Red { c } else { c.to_ascii_lowercase() }
    }

    /// Reads a piece letter.
    pub fn from_letter(c: char) -> Option<Piece> {
        let kind = Kind::from_letter(c.to_ascii_uppercase())?;
        Some(Piece { colour: if c.is_ascii_uppercase() { Colour::Red } else { Colour::Black }, kind })
    }
}

/// One atomic action.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Flip the face-down piece on a square (the player's choice); written `f0f0`.
    Flip(u8),
    /// Move or capture from a square to a square; written `e1e2`.
    Move {
        /// From.
        from: u8,
        /// To.
        to: u8,
    },
    /// The chance outcome of a flip: the piece revealed; written `=G` (red king), `=s`.
    Reveal(Piece),
}

/// A square's name: file `a`–`h`, rank `0`–`3` (`a0` is square 0).
pub fn square_name(sq: u8) -> String {
    format!("{}{}", (b'a' + sq % 8) as char, sq / 8)
}

/// Reads a square name.
pub fn parse_square(s: &str) -> Option<u8> {
    let b = s.as_bytes();
    if b.len() != 2 || !(b'a'..=b'h').contains(&b[0]) || !(b'0'..=b'3').contains(&b[1]) {
        return None;
    }
    Some((b[1] - b'0') * 8 + (b[0] - b'a'))
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Action::Flip(s) => write!(f, "{}{}", square_name(s), square_name(s)),
            Action::Move { from, to } => write!(f, "{}{}", square_name(from), square_name(to)),
            Action::Reveal(p) => write!(f, "={}", p.letter()),
        }
    }
}

impl Action {
    /// Reads the text form (`e1e2`, `f0f0` for a flip, `=G` for a revealed piece), without
    /// checking it against a position.
    ///
    /// # Errors
    /// [`ActionParseError`] naming what was expected.
    pub fn parse(text: &str) -> Result<Action, ActionParseError> {
        let err = |reason: &str| ActionParseError { text: text.to_string(), reason: reason.to_string() };
        let t = text.trim();
        if let Some(rest) = t.strip_prefix('=') {
            let mut cs = rest.chars();
            return match (cs.next().and_then(Piece::from_letter), cs.next()) {
                (Some(p), None) => Ok(Action::Reveal(p)),
                _ => Err(err("a revealed piece is `=` and a piece letter (GAERHCS red, gaerhcs black)")),
            };
        }
        let (a, b) = (t.get(0..2), t.get(2..4));
        match (t.len(), a.and_then(parse_square), b.and_then(parse_square)) {
            (4, Some(from), Some(to)) if from == to => Ok(Action::Flip(from)),
            (4, Some(from), Some(to)) => Ok(Action::Move { from, to }),
            _ => Err(err("a move is two squares a0–h3 (`e1e2`); a flip is one square twice (`f0f0`)")),
        }
    }
}

/// Banqi's options. The TCGA rules leave nothing to decide, so there are none; the type
/// exists for the [`Game`] interface.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {}

/// A Banqi position (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Banqi {
    /// Piece code, [`FACE_DOWN`] or [`EMPTY`] per square.
    board: [u8; SQUARES],
    /// Face-down pieces by code.
    pool: [u8; PIECE_CODES],
    /// The first seat's colour, once the first flip has shown it.
    first_colour: Option<Colour>,
    /// The seat to move (at a chance node: the seat that flipped).
    side: Seat,
    /// The square being flipped (a chance node).
    pending: Option<u8>,
    /// Plies since the last flip or capture.
    quiet: u8,
    /// Keys of the positions since the last flip or capture: `history[i]` after `i` quiet
    /// plies; unused entries are 0 (and 0 for positions before a loaded one).
    history: [u64; HISTORY],
    /// Zobrist key of board, pool, colours and side to move.
    key: u64,
    outcome: Option<Outcome>,
    opts: Options,
}

const fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Zobrist keys: 32 squares × 15 cell codes (empty has none), 14 codes × 6 pool counts, side,
/// and 3 colour assignments.
const ZOBRIST: [u64; SQUARES * 15 + PIECE_CODES * 6 + 1 + 3] = {
    let mut t = [0u64; SQUARES * 15 + PIECE_CODES * 6 + 1 + 3];
    let mut i = 0;
    while i < t.len() {
        t[i] = splitmix(0xBA4C_0000_0000_0000 ^ i as u64);
        i += 1;
    }
    t
};
const Z_POOL: usize = SQUARES * 15;
const Z_SIDE: usize = Z_POOL + PIECE_CODES * 6;
const Z_COLOURS: usize = Z_SIDE + 1;

#[inline]
fn z_cell(sq: usize, cell: u8) -> u64 {
    if cell == EMPTY { 0 } else { ZOBRIST[sq * 15 + cell as usize] }
}

#[inline]
fn z_pool(code: usize, count: u8) -> u64 {
    ZOBRIST[Z_POOL + code * 6 + count as usize]
}

fn z_colours(first: Option<Colour>) -> u64 {
    ZOBRIST[Z_COLOURS + first.map_or(0, |c| 1 + c.index())]
}

/// The four orthogonal neighbours of each square (`u8::MAX` off the board), in the order
/// up, down, left, right.
const NEIGHBOURS: [[u8; 4]; SQUARES] = {
    let mut t = [[u8::MAX; 4]; SQUARES];
    let mut s = 0;
    while s < SQUARES {
        let (r, c) = (s / COLS, s % COLS);
        if r + 1 < ROWS {
            t[s][0] = (s + COLS) as u8;
        }
        if r > 0 {
            t[s][1] = (s - COLS) as u8;
        }
        if c > 0 {
            t[s][2] = (s - 1) as u8;
        }
        if c + 1 < COLS {
            t[s][3] = (s + 1) as u8;
        }
        s += 1;
    }
    t
};

impl Banqi {
    /// The start: every square face down, the full pool, no colours yet.
    pub fn start() -> Banqi {
        let mut pool = [0u8; PIECE_CODES];
        for (code, n) in pool.iter_mut().enumerate() {
            *n = Kind::COUNT[code % 7];
        }
        let mut g = Banqi {
            board: [FACE_DOWN; SQUARES],
            pool,
            first_colour: None,
            side: Seat::First,
            pending: None,
            quiet: 0,
            history: [0; HISTORY],
            key: 0,
            outcome: None,
            opts: Options {},
        };
        g.key = g.compute_key();
        g.history[0] = g.key;
        g
    }

    /// What is on `sq`.
    ///
    /// # Panics
    /// If `sq >= 32`.
    pub fn cell(&self, sq: u8) -> Cell {
        match self.board[sq as usize] {
            FACE_DOWN => Cell::FaceDown,
            EMPTY => Cell::Empty,
            c => Cell::Up(Piece::from_code(c)),
        }
    }

    /// Face-down pieces of this kind and colour.
    pub fn pool_count(&self, piece: Piece) -> u8 {
        self.pool[piece.code() as usize]
    }

    /// Face-down pieces in all.
    pub fn pool_total(&self) -> u32 {
        self.pool.iter().map(|&n| u32::from(n)).sum()
    }

    /// The first seat's colour (`None` before the first flip).
    pub fn first_colour(&self) -> Option<Colour> {
        self.first_colour
    }

    /// The colour of `seat`, once colours are assigned.
    pub fn colour_of(&self, seat: Seat) -> Option<Colour> {
        self.first_colour.map(|c| if seat == Seat::First { c } else { c.other() })
    }

    /// The seat playing `colour`, once colours are assigned.
    pub fn seat_of(&self, colour: Colour) -> Option<Seat> {
        self.first_colour.map(|c| if c == colour { Seat::First } else { Seat::Second })
    }

    /// The seat to move (at a chance node, the seat whose flip is being resolved).
    pub fn side(&self) -> Seat {
        self.side
    }

    /// The colour to move (`None` before the first flip).
    pub fn colour_to_move(&self) -> Option<Colour> {
        self.colour_of(self.side)
    }

    /// The square being flipped, at a chance node.
    pub fn pending_flip(&self) -> Option<u8> {
        self.pending
    }

    /// Plies since the last flip or capture.
    pub fn quiet_plies(&self) -> u8 {
        self.quiet
    }

    /// The position key (Zobrist hash of board, pool, colours and side to move), kept
    /// incrementally.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// How often the current position has occurred since the last flip or capture (1 the
    /// first time).
    pub fn repetitions(&self) -> usize {
        self.history[..=self.quiet as usize].iter().filter(|&&k| k == self.key).count()
    }

    /// The position key computed from scratch (the incremental [`Banqi::key`] must equal it).
    pub fn compute_key(&self) -> u64 {
        let mut k = 0;
        for (s, &c) in self.board.iter().enumerate() {
            k ^= z_cell(s, c);
        }
        for (code, &n) in self.pool.iter().enumerate() {
            k ^= z_pool(code, n);
        }
        if self.side == Seat::Second {
            k ^= ZOBRIST[Z_SIDE];
        }
        k ^ z_colours(self.first_colour)
    }

    fn colour_at(&self, sq: usize) -> Option<Colour> {
        let c = self.board[sq];
        (c < FACE_DOWN).then(|| Colour::from_index(c as usize / 7))
    }

    /// Calls `f` with each legal player action for the side to move, in square order, until
    /// `f` returns false. Returns false if it was stopped.
    fn for_each_action(&self, mut f: impl FnMut(Action) -> bool) -> bool {
        let me = self.colour_to_move();
        for s in 0..SQUARES {
            let c = self.board[s];
            if c == FACE_DOWN {
                if !f(Action::Flip(s as u8)) {
                    return false;
                }
                continue;
            }
            let Some(me) = me else { continue };
            if c == EMPTY || Colour::from_index(c as usize / 7) != me {
                continue;
            }
            let kind = Kind::ALL[c as usize % 7];
            for (dir, &t) in NEIGHBOURS[s].iter().enumerate() {
                if t == u8::MAX {
                    continue;
                }
                let tc = self.board[t as usize];
                let ok = tc == EMPTY
                    || (tc < FACE_DOWN
                        && Colour::from_index(tc as usize / 7) != me
                        && kind.takes_adjacent(Kind::ALL[tc as usize % 7]));
                if ok && !f(Action::Move { from: s as u8, to: t }) {
                    return false;
                }
                if kind == Kind::Cannon
                    && let Some(to) = self.cannon_target(s, dir)
                    && !f(Action::Move { from: s as u8, to })
                {
                    return false;
                }
            }
        }
        true
    }

    /// The square a cannon on `from` captures in direction `dir`: beyond the first occupied
    /// square (the screen), the next occupied square, if it holds a face-up enemy.
    fn cannon_target(&self, from: usize, dir: usize) -> Option<u8> {
        let me = self.colour_at(from)?;
        let mut s = NEIGHBOURS[from][dir];
        let mut screened = false;
        while s != u8::MAX {
            let c = self.board[s as usize];
            if c != EMPTY {
                if screened {
                    return (c < FACE_DOWN && Colour::from_index(c as usize / 7) != me).then_some(s);
                }
                screened = true;
            }
            s = NEIGHBOURS[s as usize][dir];
        }
        None
    }

    fn has_legal_action(&self) -> bool {
        !self.for_each_action(|_| false)
    }

    /// Decides the outcome after a completed turn.
    fn settle(&mut self) {
        self.outcome = None;
        if self.pending.is_some() {
            return;
        }
        let Some(me) = self.colour_to_move() else { return };
        let codes = me.index() * 7..me.index() * 7 + 7;
        let on_board = self.board.iter().any(|&c| codes.contains(&(c as usize)));
        let in_pool = self.pool[codes].iter().any(|&n| n > 0);
        let win = |seat: Seat| {
            let mut scores = [-1, -1];
            scores[seat.index()] = 1;
            Outcome::decisive(seat, scores)
        };
        if (!on_board && !in_pool) || !self.has_legal_action() {
            self.outcome = Some(win(self.side.other()));
        } else if self.quiet >= NO_PROGRESS_LIMIT || self.repetitions() >= REPETITIONS {
            self.outcome = Some(Outcome::on_points([0, 0]));
        }
    }

    fn switch_side(&mut self) {
        self.side = self.side.other();
        self.key ^= ZOBRIST[Z_SIDE];
    }

    /// A flip or capture: the repetition history starts again here.
    fn irreversible(&mut self) {
        self.quiet = 0;
        self.history = [0; HISTORY];
        self.history[0] = self.key;
    }

    fn set_cell(&mut self, sq: usize, cell: u8) {
        self.key ^= z_cell(sq, self.board[sq]) ^ z_cell(sq, cell);
        self.board[sq] = cell;
    }

    /// How many squares hold a face-down piece.
    pub fn face_down_count(&self) -> usize {
        self.pool.iter().map(|&n| usize::from(n)).sum()
    }

    /// The face-down squares in index order.
    fn face_down_squares(&self) -> impl Iterator<Item = usize> + '_ {
        (0..SQUARES).filter(|&s| self.board[s] == FACE_DOWN)
    }

    /// The deal of the face-down pieces of `self` seeded by `deal`: piece code per face-down
    /// square (other squares [`EMPTY`]).
    pub fn deal(&self, deal: u64) -> [u8; SQUARES] {
        let mut pieces = Vec::with_capacity(SQUARES);
        for (code, &n) in self.pool.iter().enumerate() {
            pieces.extend(std::iter::repeat_n(code as u8, n as usize));
        }
        let mut rng = crate::rng_from_seed(deal);
        for i in (1..pieces.len()).rev() {
            let j = rng.random_range(0..=i);
            pieces.swap(i, j);
        }
        let mut out = [EMPTY; SQUARES];
        for (s, p) in self.face_down_squares().zip(pieces) {
            out[s] = p;
        }
        out
    }
}

impl Game for Banqi {
    type Action = Action;
    type Options = Options;

    const NAME: &'static str = "banqi";
    const STATE_VERSION: u8 = 1;
    /// Each game of a match counts: a won game does not end the match.
    const DECISIVE_ENDS_MATCH: bool = false;

    fn new_game(_options: &Options) -> Self {
        Banqi::start()
    }

    fn options(&self) -> &Options {
        &self.opts
    }

    fn to_move(&self) -> Actor {
        if self.pending.is_some() { Actor::Chance } else { Actor::Player(self.side) }
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn at_turn_start(&self) -> bool {
        // A move is a whole turn; a flip's turn ends when its piece is revealed.
        self.pending.is_none()
    }

    fn legal_actions(&self, out: &mut Vec<Action>) {
        out.clear();
        if self.outcome.is_some() {
            return;
        }
        if self.pending.is_some() {
            for (code, &n) in self.pool.iter().enumerate() {
                if n > 0 {
                    out.push(Action::Reveal(Piece::from_code(code as u8)));
                }
            }
            return;
        }
        self.for_each_action(|a| {
            out.push(a);
            true
        });
    }

    fn chance_outcomes(&self, out: &mut Vec<(Action, f32)>) {
        out.clear();
        if self.pending.is_none() || self.outcome.is_some() {
            return;
        }
        let total = self.pool_total() as f32;
        for (code, &n) in self.pool.iter().enumerate() {
            if n > 0 {
                out.push((Action::Reveal(Piece::from_code(code as u8)), f32::from(n) / total));
            }
        }
    }

    fn is_legal(&self, action: Action) -> bool {
        if self.outcome.is_some() {
            return false;
        }
        match (self.pending, action) {
            (Some(_), Action::Reveal(p)) => self.pool[p.code() as usize] > 0,
            (None, Action::Flip(s)) => (s as usize) < SQUARES && self.board[s as usize] == FACE_DOWN,
            (None, Action::Move { .. }) => !self.for_each_action(|a| a != action),
            _ => false,
        }
    }

    /// Contract: `action` is legal here. A flip only records the square; the reveal that
    /// follows places the piece, assigns colours on the first flip, and passes the turn.
    fn play_unchecked(&mut self, action: Action) {
        match action {
            Action::Flip(s) => {
                debug_assert_eq!(self.board[s as usize], FACE_DOWN);
                self.pending = Some(s);
                self.outcome = None;
                return;
            }
            Action::Reveal(p) => {
                let s = self.pending.take().expect("a reveal follows a flip") as usize;
                let code = p.code() as usize;
                let n = self.pool[code];
                debug_assert!(n > 0, "revealed a piece not in the pool");
                self.key ^= z_pool(code, n) ^ z_pool(code, n - 1);
                self.pool[code] = n - 1;
                self.set_cell(s, p.code());
                if self.first_colour.is_none() {
                    self.key ^= z_colours(None) ^ z_colours(Some(p.colour));
                    self.first_colour = Some(p.colour);
                }
                self.switch_side();
                self.irreversible();
            }
            Action::Move { from, to } => {
                let (from, to) = (from as usize, to as usize);
                let piece = self.board[from];
                let capture = self.board[to] != EMPTY;
                self.set_cell(to, piece);
                self.set_cell(from, EMPTY);
                self.switch_side();
                if capture {
                    self.irreversible();
                } else {
                    self.quiet += 1;
                    self.history[self.quiet as usize] = self.key;
                }
            }
        }
        self.settle();
    }

    fn parse_action(&self, text: &str) -> Result<Action, ActionParseError> {
        Action::parse(text)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"BQ");
        out.push(Self::STATE_VERSION);
        out.extend_from_slice(&self.board);
        out.extend_from_slice(&self.pool);
        out.push(self.first_colour.map_or(0, |c| 1 + c as u8));
        out.push(self.side.index() as u8);
        out.push(self.pending.unwrap_or(u8::MAX));
        out.push(self.quiet);
        for k in &self.history[..self.quiet as usize] {
            out.extend_from_slice(&k.to_le_bytes());
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let fixed = 3 + SQUARES + PIECE_CODES + 4;
        if bytes.len() < 3 {
            return Err(DecodeError::Truncated { needed: 3, got: bytes.len() });
        }
        if &bytes[..2] != b"BQ" {
            return Err(DecodeError::WrongGame { expected: Self::NAME, found: [bytes[0], bytes[1]] });
        }
        if bytes[2] != Self::STATE_VERSION {
            return Err(DecodeError::Version { found: bytes[2], supported: Self::STATE_VERSION });
        }
        if bytes.len() < fixed {
            return Err(DecodeError::Truncated { needed: fixed, got: bytes.len() });
        }
        let mut board = [0u8; SQUARES];
        board.copy_from_slice(&bytes[3..3 + SQUARES]);
        let mut pool = [0u8; PIECE_CODES];
        pool.copy_from_slice(&bytes[3 + SQUARES..3 + SQUARES + PIECE_CODES]);
        let tail = &bytes[3 + SQUARES + PIECE_CODES..];
        let first_colour = match tail[0] {
            0 => None,
            1 => Some(Colour::Red),
            2 => Some(Colour::Black),
            v => return Err(DecodeError::Invalid(format!("colour byte {v}"))),
        };
        let side = Seat::from_index(tail[1] as usize)
            .ok_or_else(|| DecodeError::Invalid(format!("side byte {}", tail[1])))?;
        let pending = match tail[2] {
            u8::MAX => None,
            s if (s as usize) < SQUARES => Some(s),
            s => return Err(DecodeError::Invalid(format!("flip square {s}"))),
        };
        let quiet = tail[3];
        if quiet > NO_PROGRESS_LIMIT {
            return Err(DecodeError::Invalid(format!("{quiet} quiet plies (at most {NO_PROGRESS_LIMIT})")));
        }
        let need = fixed + 8 * quiet as usize;
        if bytes.len() < need {
            return Err(DecodeError::Truncated { needed: need, got: bytes.len() });
        }
        if bytes.len() > need {
            return Err(DecodeError::Trailing(bytes.len() - need));
        }
        let mut history = [0u64; HISTORY];
        for (i, k) in bytes[fixed..].chunks_exact(8).enumerate() {
            history[i] = u64::from_le_bytes(k.try_into().expect("8 bytes"));
        }
        // The board and pool go through the same checks as a hand-built position.
        let mut cells = [Cell::Empty; SQUARES];
        for (s, &c) in board.iter().enumerate() {
            cells[s] = match c {
                FACE_DOWN => Cell::FaceDown,
                EMPTY => Cell::Empty,
                c if c < FACE_DOWN => Cell::Up(Piece::from_code(c)),
                c => return Err(DecodeError::Invalid(format!("square {s}: cell code {c}"))),
            };
        }
        let setup = Setup { cells, pool, to_move: None, quiet };
        setup.check(first_colour.is_some()).map_err(|e| DecodeError::Invalid(e.to_string()))?;
        if let Some(p) = pending
            && board[p as usize] != FACE_DOWN
        {
            return Err(DecodeError::Invalid(format!("flip of square {p}, which is not face down")));
        }
        let mut g = Banqi {
            board,
            pool,
            first_colour,
            side,
            pending,
            quiet,
            history,
            key: 0,
            outcome: None,
            opts: Options {},
        };
        g.key = g.compute_key();
        g.history[quiet as usize] = g.key;
        g.settle();
        Ok(g)
    }

    fn dealt_outcome(&self, start: &Self, deal: u64) -> Option<Action> {
        let s = self.pending? as usize;
        if start.board[s] != FACE_DOWN {
            return None;
        }
        let code = start.deal(deal)[s];
        // A state that did not come from `start` under this deal may lack the piece.
        (self.pool[code as usize] > 0).then(|| Action::Reveal(Piece::from_code(code)))
    }

    fn random_playout(&mut self, rng: &mut Rng) {
        let mut actions = Vec::with_capacity(64);
        while self.outcome.is_none() {
            let a = if self.pending.is_some() {
                let mut x = rng.random_range(0..self.pool_total());
                let mut pick = 0;
                for (code, &n) in self.pool.iter().enumerate() {
                    if x < u32::from(n) {
                        pick = code;
                        break;
                    }
                    x -= u32::from(n);
                }
                Action::Reveal(Piece::from_code(pick as u8))
            } else {
                self.legal_actions(&mut actions);
                actions[rng.random_range(0..actions.len())]
            };
            self.play_unchecked(a);
        }
    }
}

impl fmt::Display for Banqi {
    /// The external position string ([`Banqi::position_string`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.position_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::Features;

    #[test]
    fn adjacent_capture_table() {
        use Kind::*;
        // Row: attacker; column: target, in rank order G A E R H C S.
        let table = [
            [1, 1, 1, 1, 1, 1, 0], // king: anything but a pawn
            [0, 1, 1, 1, 1, 1, 1],
            [0, 0, 1, 1, 1, 1, 1],
            [0, 0, 0, 1, 1, 1, 1],
            [0, 0, 0, 0, 1, 1, 1],
            [0, 0, 0, 0, 0, 0, 0], // cannon: never adjacently
            [1, 0, 0, 0, 0, 0, 1], // pawn: the king and pawns
        ];
        for (a, row) in Kind::ALL.iter().zip(table) {
            for (t, want) in Kind::ALL.iter().zip(row) {
                assert_eq!(a.takes_adjacent(*t), want == 1, "{a:?} takes {t:?}");
            }
        }
        assert!(Pawn.takes_adjacent(King) && !King.takes_adjacent(Pawn));
    }

    #[test]
    fn zobrist_keys_are_distinct() {
        let mut keys: Vec<u64> = ZOBRIST.to_vec();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), ZOBRIST.len());
        assert!(!keys.contains(&0));
    }

    #[test]
    fn features_take_the_movers_view() {
        let r = Banqi::from_position_string("8/8/Gs6/8 r - 0 1").unwrap();
        let b = Banqi::from_position_string("8/8/Gs6/8 b - 0 1").unwrap();
        let (mut fr, mut fb) = (vec![0.0; Banqi::FEATURE_LEN], vec![0.0; Banqi::FEATURE_LEN]);
        r.encode_features(&mut fr);
        b.encode_features(&mut fb);
        // Red to move: its king (plane 0) on a1 = 8; black's pawn (plane 7 + 6) on b1 = 9.
        assert_eq!(fr[8], 1.0);
        assert_eq!(fr[13 * 32 + 9], 1.0);
        // Black to move: its pawn is the mover's (plane 6), the red king the opponent's (7).
        assert_eq!(fb[6 * 32 + 9], 1.0);
        assert_eq!(fb[7 * 32 + 8], 1.0);
        assert_eq!(fr.iter().sum::<f32>(), fb.iter().sum::<f32>());
        assert_eq!(Banqi::action_index(&Action::Flip(3)), Some(3 * 33));
        assert_eq!(Banqi::action_index(&Action::Move { from: 1, to: 9 }), Some(41));
        assert_eq!(Banqi::action_index(&Action::Reveal(Piece::from_code(0))), None);
    }
}
