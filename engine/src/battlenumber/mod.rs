//! Battle Number (拚數棋), per `shared/rules/battlenumber.md`.
//!
//! The 7×7 board lives in `u64` bitboards ([`bitboard`]): occupancy per seat, a mask per side
//! (N, E, S, W) of the squares whose piece has a solid edge there, and the Cross Zeros. Legal
//! placement squares for a kind and rotation are then a few word operations: the frontier,
//! minus squares where a facing solid edge would meet ours, minus squares that would close a
//! hole.
//!
//! Turns are clicks ([`Action`]): a placement is a square then a piece (kind and rotation); an
//! extraction is a start square, then each step, and ends when the path lands on the mover's
//! own Cross Zero. Every click offered can be completed to a legal turn.
//!
//! Seats: [`Seat::First`] is the game's first player ("player one" of the rules for this game).
//! A match is two games with the seats swapped ([`crate::arena`]).

pub mod bitboard;
pub mod features;
mod pack;
pub mod render;
mod setup;
pub mod symmetry;
mod text;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Rng;
use crate::game::{ActionParseError, Actor, DecodeError, Game, Outcome, Seat};
use bitboard::{BORDER, COL0, COL6, E, FULL, N, ROW0, ROW6, S, Squares, W, flood, neighbours, shift};
use rand::RngExt;

pub use setup::{Setup, SetupError};
pub use text::draw_board;

/// Board side length.
pub const SIZE: usize = 7;
/// Number of squares.
pub const SQUARES: usize = 49;
/// The marked centre square (row 3, column 3).
pub const CENTRE: u8 = 24;
/// Pieces of each kind per player.
pub const PER_KIND: u8 = 5;
/// Placements made by the first and second seat.
pub const PLACEMENTS: [u8; 2] = [25, 24];
/// Extractions made by each seat.
pub const EXTRACTIONS: u8 = 5;

/// The five piece kinds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kind {
    /// 單一: one solid edge (N); moves N one step.
    SingleOne = 0,
    /// 雙二: two opposite solid edges (W, E); moves W or E one step.
    DoubleTwo = 1,
    /// 角二: two adjacent solid edges (N, W); moves NW diagonally one or two steps.
    CornerTwo = 2,
    /// 圍三: three solid edges (N, W, E); moves N, W or E one step.
    SurroundThree = 3,
    /// 叉零: no solid edge; does not move. Extractions end on one.
    CrossZero = 4,
}

impl Kind {
    /// All kinds, in index order.
    pub const ALL: [Kind; 5] =
        [Kind::SingleOne, Kind::DoubleTwo, Kind::CornerTwo, Kind::SurroundThree, Kind::CrossZero];

    /// Short code: `S1`, `D2`, `C2`, `T3`, `X0` (letter, then the triangle count).
    pub fn code(self) -> &'static str {
        ["S1", "D2", "C2", "T3", "X0"][self as usize]
    }

    /// Chinese name.
    pub fn chinese(self) -> &'static str {
        ["單一", "雙二", "角二", "圍三", "叉零"][self as usize]
    }

    /// Triangles (= solid edges).
    pub fn triangles(self) -> i32 {
        [1, 2, 2, 3, 0][self as usize]
    }

    /// Rotations that give distinct pieces (1, 2 or 4); rotations are `0..rotations()`.
    pub fn rotations(self) -> u8 {
        [4, 2, 4, 4, 1][self as usize]
    }

    /// Solid sides at rotation 0, as bits `1 << side` (N=0, E=1, S=2, W=3).
    fn base_solid(self) -> u8 {
        [0b0001, 0b1010, 0b1001, 0b1011, 0][self as usize]
    }

    /// Solid sides after `rot` clockwise quarter turns, as bits `1 << side`.
    pub fn solid_sides(self, rot: u8) -> u8 {
        let m = self.base_solid();
        let r = rot % 4;
        ((m << r) | (m >> ((4 - r) % 4))) & 0xf
    }

    fn from_index(i: u8) -> Option<Kind> {
        Kind::ALL.get(i as usize).copied()
    }
}

/// A piece on the board.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Whose piece.
    pub owner: Seat,
    /// Its kind.
    pub kind: Kind,
    /// Clockwise quarter turns, `0..kind.rotations()`.
    pub rot: u8,
}

/// One click.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Choose a square: where to place, where an extraction starts, or its next step.
    Square(u8),
    /// Choose the piece for the chosen placement square: kind and rotation.
    Piece(Kind, u8),
}

/// Text name of a square: column letter `a`–`g`, then row digit `0`–`6` (row 0 at the top).
/// The centre is `d3`.
pub fn square_name(sq: u8) -> String {
    let (r, c) = (sq / 7, sq % 7);
    format!("{}{}", (b'a' + c) as char, r)
}

/// Reads a square name (`d3`).
pub fn parse_square(text: &str) -> Option<u8> {
    let b = text.as_bytes();
    if b.len() != 2 {
        return None;
    }
    let c = b[0].to_ascii_lowercase().checked_sub(b'a')?;
    let r = b[1].checked_sub(b'0')?;
    // Lazily: `r * 7` overflows for a far-off digit (found by the fuzz target).
    (c < 7 && r < 7).then(|| r * 7 + c)
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Action::Square(s) => f.write_str(&square_name(s)),
            Action::Piece(k, r) => write!(f, "{}r{}", k.code(), r),
        }
    }
}

/// What "no hole" means **[decision]**.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HoleRule {
    /// After a placement, every side-connected group of empty squares must contain a border
    /// square (default).
    #[default]
    BorderConnected,
    /// No hole rule.
    Off,
}

/// The second player's leftover-piece rule **[decision]**.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeftoverRule {
    /// As the designer's code: at the second player's 24th placement, a placement that would
    /// leave a Cross Zero unplaced is illegal (default).
    #[default]
    CheckAtLastPlacement,
    /// Not checked: the second player may keep a Cross Zero (and will then run out of Cross
    /// Zeros to extract, losing at that extraction).
    Off,
}

/// Which region a piece's triangles count in **[decision]**.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TriangleRegion {
    /// The region of the piece's own square (default).
    #[default]
    OwnSquare,
    /// The region each triangle points into: the square across its solid edge, or the
    /// outside for a border edge.
    Pointed,
}

/// Battle Number options: each **[decision]** of the rules file.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// The meaning of "no hole".
    pub hole_rule: HoleRule,
    /// The second player's leftover-piece rule.
    pub leftover_rule: LeftoverRule,
    /// Where triangles count for the placement score.
    pub triangle_region: TriangleRegion,
}

/// A partial turn.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Pending {
    None,
    /// A placement square has been chosen.
    Square(u8),
    /// An extraction path is under way: the square the path is on, and the path so far.
    Path {
        cur: u8,
        visited: u64,
    },
}

/// A Battle Number game state. See [`Game`] for the equality and byte semantics.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BattleNumber {
    opts: Options,
    /// 0 = empty, else `0x80 | owner << 5 | kind << 2 | rot`.
    cells: [u8; SQUARES],
    // Derived from `cells`, kept incrementally.
    own: [u64; 2],
    solid: [u64; 4],
    cross: u64,
    hand: [[u8; 5]; 2],
    placed: [u8; 2],
    extracted: [u8; 2],
    mover: Seat,
    pending: Pending,
    /// First seat's placement score, fixed when the board fills.
    placement_score: i32,
    extraction_total: [i32; 2],
    outcome: Option<Outcome>,
}

#[inline]
fn cell_code(p: Piece) -> u8 {
    0x80 | ((p.owner as u8) << 5) | ((p.kind as u8) << 2) | p.rot
}

#[inline]
fn cell_piece(c: u8) -> Option<Piece> {
    if c & 0x80 == 0 {
        return None;
    }
    let owner = if c & 0x20 != 0 { Seat::Second } else { Seat::First };
    let kind = Kind::from_index((c >> 2) & 0x7)?;
    Some(Piece { owner, kind, rot: c & 3 })
}

/// Step targets by kind, rotation and square (a 2-step Corner Two move jumps).
static MOVES: [[[u64; SQUARES]; 4]; 5] = build_moves();

const fn build_moves() -> [[[u64; SQUARES]; 4]; 5] {
    // Rotation-0 movement vectors (drow, dcol) per kind, padded with (0, 0).
    const BASE: [[(i32, i32); 3]; 5] = [
        [(-1, 0), (0, 0), (0, 0)],
        [(0, -1), (0, 1), (0, 0)],
        [(-1, -1), (-2, -2), (0, 0)],
        [(-1, 0), (0, -1), (0, 1)],
        [(0, 0), (0, 0), (0, 0)],
    ];
    let mut t = [[[0u64; SQUARES]; 4]; 5];
    let mut k = 0;
    while k < 5 {
        let mut rot = 0;
        while rot < 4 {
            let mut sq = 0;
            while sq < SQUARES {
                let (r, c) = ((sq / 7) as i32, (sq % 7) as i32);
                let mut m = 0u64;
                let mut i = 0;
                while i < 3 {
                    let (mut dr, mut dc) = BASE[k][i];
                    if dr != 0 || dc != 0 {
                        let mut q = 0;
                        while q < rot {
                            // Clockwise quarter turn: N -> E -> S -> W.
                            let t = dr;
                            dr = dc;
                            dc = -t;
                            q += 1;
                        }
                        let (nr, nc) = (r + dr, c + dc);
                        if nr >= 0 && nr < 7 && nc >= 0 && nc < 7 {
                            m |= 1u64 << (nr * 7 + nc);
                        }
                    }
                    i += 1;
                }
                t[k][rot][sq] = m;
                sq += 1;
            }
            rot += 1;
        }
        k += 1;
    }
    t
}

/// Precomputed per-turn placement context: squares that pass the adjacency and hole rules,
/// and for each side the squares whose neighbour there shows a solid edge towards them.
struct PlaceCtx {
    base: u64,
    blocked: [u64; 4],
}

impl BattleNumber {
    /// The options of this game.
    pub fn opts(&self) -> Options {
        self.opts
    }

    /// The piece on `sq`, if any.
    ///
    /// # Panics
    /// If `sq >= 49`.
    pub fn piece(&self, sq: u8) -> Option<Piece> {
        cell_piece(self.cells[sq as usize])
    }

    /// Occupied squares.
    #[inline]
    pub fn occupied(&self) -> u64 {
        self.own[0] | self.own[1]
    }

    /// Squares holding `seat`'s pieces.
    pub fn pieces_of(&self, seat: Seat) -> u64 {
        self.own[seat.index()]
    }

    /// Pieces of each kind still in `seat`'s hand.
    pub fn hand(&self, seat: Seat) -> [u8; 5] {
        self.hand[seat.index()]
    }

    /// Placements made so far by each seat.
    pub fn placed(&self) -> [u8; 2] {
        self.placed
    }

    /// Extractions made so far by each seat.
    pub fn extracted(&self) -> [u8; 2] {
        self.extracted
    }

    /// True while pieces are still being placed.
    pub fn in_placement(&self) -> bool {
        self.placed[0] + self.placed[1] < PLACEMENTS[0] + PLACEMENTS[1]
    }

    /// The first seat's placement score (0 until the board has filled).
    pub fn placement_score(&self) -> i32 {
        self.placement_score
    }

    /// Each seat's extraction total so far.
    pub fn extraction_totals(&self) -> [i32; 2] {
        self.extraction_total
    }

    /// The first seat's current game score: placement score plus the difference of the
    /// extraction totals.
    pub fn score_first(&self) -> i32 {
        self.placement_score + self.extraction_total[0] - self.extraction_total[1]
    }

    /// The chosen placement square, mid-placement.
    pub fn pending_square(&self) -> Option<u8> {
        match self.pending {
            Pending::Square(s) => Some(s),
            _ => None,
        }
    }

    /// The extraction path so far (a mask) and the square it is on, mid-extraction.
    pub fn pending_path(&self) -> Option<(u64, u8)> {
        match self.pending {
            Pending::Path { cur, visited } => Some((visited, cur)),
            _ => None,
        }
    }

    fn empty_state(opts: Options) -> BattleNumber {
        BattleNumber {
            opts,
            cells: [0; SQUARES],
            own: [0; 2],
            solid: [0; 4],
            cross: 0,
            hand: [[PER_KIND; 5]; 2],
            placed: [0; 2],
            extracted: [0; 2],
            mover: Seat::First,
            pending: Pending::None,
            placement_score: 0,
            extraction_total: [0; 2],
            outcome: None,
        }
    }

    #[inline]
    fn put(&mut self, sq: u8, p: Piece) {
        let b = 1u64 << sq;
        self.cells[sq as usize] = cell_code(p);
        self.own[p.owner.index()] |= b;
        let sides = p.kind.solid_sides(p.rot);
        for d in 0..4 {
            if sides & (1 << d) != 0 {
                self.solid[d] |= b;
            }
        }
        if p.kind == Kind::CrossZero {
            self.cross |= b;
        }
    }

    #[inline]
    fn remove_mask(&mut self, m: u64) {
        for sq in Squares(m) {
            self.cells[sq as usize] = 0;
        }
        self.own[0] &= !m;
        self.own[1] &= !m;
        for d in 0..4 {
            self.solid[d] &= !m;
        }
        self.cross &= !m;
    }

    /// Recomputes every derived bitboard from the cells (for tests of the incremental state).
    pub fn recomputed_bitboards(&self) -> ([u64; 2], [u64; 4], u64) {
        let mut s = BattleNumber::empty_state(self.opts);
        for sq in 0..SQUARES as u8 {
            if let Some(p) = self.piece(sq) {
                s.put(sq, p);
            }
        }
        (s.own, s.solid, s.cross)
    }

    /// The incrementally kept bitboards (for tests).
    pub fn bitboards(&self) -> ([u64; 2], [u64; 4], u64) {
        (self.own, self.solid, self.cross)
    }

    // ---------------------------------------------------------------- placement

    fn place_ctx(&self) -> PlaceCtx {
        let occ = self.occupied();
        if occ == 0 {
            // The first move: a Corner Two on the centre.
            return PlaceCtx { base: 1u64 << CENTRE, blocked: [0; 4] };
        }
        let empty = FULL & !occ;
        let frontier = empty & neighbours(occ);
        let mut base = frontier;
        if self.opts.hole_rule == HoleRule::BorderConnected {
            for sq in Squares(frontier) {
                let b = 1u64 << sq;
                let after = empty & !b;
                let near = neighbours(b) & after;
                // Quick accept: every empty neighbour is itself on the border.
                if near & !BORDER == 0 {
                    continue;
                }
                if flood(BORDER & after, after) & near != near {
                    base &= !b;
                }
            }
        }
        // blocked[d]: squares whose neighbour in direction d has a solid edge facing back.
        let blocked = [
            shift(self.solid[S], S),
            shift(self.solid[W], W),
            shift(self.solid[N], N),
            shift(self.solid[E], E),
        ];
        PlaceCtx { base, blocked }
    }

    /// Squares where `kind` at `rot` may go now for the mover.
    fn legal_mask(&self, ctx: &PlaceCtx, kind: Kind, rot: u8) -> u64 {
        self.legal_mask_for(self.mover, ctx, kind, rot)
    }

    /// Squares where `kind` at `rot` could go for `seat` were it to move now.
    fn legal_mask_for(&self, seat: Seat, ctx: &PlaceCtx, kind: Kind, rot: u8) -> u64 {
        let me = seat.index();
        if self.hand[me][kind as usize] == 0 {
            return 0;
        }
        if self.placed == [0, 0] && kind != Kind::CornerTwo {
            return 0;
        }
        if me == 1
            && self.opts.leftover_rule == LeftoverRule::CheckAtLastPlacement
            && self.placed[1] + 1 == PLACEMENTS[1]
        {
            let mut left = self.hand[1];
            left[kind as usize] -= 1;
            if left[Kind::CrossZero as usize] > 0 {
                return 0;
            }
        }
        let sides = kind.solid_sides(rot);
        let mut m = ctx.base;
        for d in 0..4 {
            if sides & (1 << d) != 0 {
                m &= !ctx.blocked[d];
            }
        }
        m
    }

    /// Where `seat` could place, were it to move now in the placement phase: the squares
    /// (as a mask) and the number of distinct (square, kind, rotation) placements. Both are
    /// 0 outside the placement phase. The network sees both seats' mobility, since a player
    /// left without a legal placement loses at once.
    pub fn placement_mobility(&self, seat: Seat) -> (u64, u32) {
        if self.outcome.is_some()
            || !self.in_placement()
            || self.placed[seat.index()] >= PLACEMENTS[seat.index()]
        {
            return (0, 0);
        }
        let ctx = self.place_ctx();
        let (mut squares, mut count) = (0u64, 0u32);
        for kind in Kind::ALL {
            for rot in 0..kind.rotations() {
                let m = self.legal_mask_for(seat, &ctx, kind, rot);
                squares |= m;
                count += m.count_ones();
            }
        }
        (squares, count)
    }

    fn legal_square_mask(&self, ctx: &PlaceCtx) -> u64 {
        let mut m = 0;
        for kind in Kind::ALL {
            for rot in 0..kind.rotations() {
                m |= self.legal_mask(ctx, kind, rot);
                if m == ctx.base {
                    return m;
                }
            }
        }
        m
    }

    fn place(&mut self, sq: u8, kind: Kind, rot: u8) {
        let me = self.mover;
        self.put(sq, Piece { owner: me, kind, rot });
        self.hand[me.index()][kind as usize] -= 1;
        self.placed[me.index()] += 1;
        if !self.in_placement() {
            self.placement_score = self.region_score();
            self.hand = [[0; 5]; 2];
        }
        self.end_turn();
    }

    // ---------------------------------------------------------------- regions and scoring

    /// Passable directions between side-adjacent squares: no solid edge on either side.
    fn open_masks(&self) -> [u64; 4] {
        let sd = &self.solid;
        [
            !ROW0 & !sd[N] & !shift(sd[S], S),
            FULL & !COL6 & !sd[E] & !shift(sd[W], W),
            FULL & !ROW6 & !sd[S] & !shift(sd[N], N),
            FULL & !COL0 & !sd[W] & !shift(sd[E], E),
        ]
    }

    /// The regions of the (full) board: the outside region first (possibly empty), then the
    /// enclosed ones, each as a mask of squares.
    pub fn regions(&self) -> Vec<u64> {
        let open = self.open_masks();
        let grow = |mut r: u64| loop {
            let mut next = r;
            for (d, o) in open.iter().enumerate() {
                next |= shift(r & o, d);
            }
            if next == r {
                return r;
            }
            r = next;
        };
        let sd = &self.solid;
        let border_open = (ROW0 & !sd[N]) | (ROW6 & !sd[S]) | (COL0 & !sd[W]) | (COL6 & !sd[E]);
        let outside = if border_open == 0 { 0 } else { grow(border_open) };
        let mut out = vec![outside];
        let mut left = FULL & !outside;
        while left != 0 {
            let r = grow(left & left.wrapping_neg());
            out.push(r);
            left &= !r;
        }
        out
    }

    /// The first seat's placement score on the current board (meaningful once it is full).
    pub fn region_score(&self) -> i32 {
        let regions = self.regions();
        let sd = &self.solid;
        let mut score = 0;
        for (i, &r) in regions.iter().enumerate() {
            if r & self.own[0] == 0 || r & self.own[1] == 0 {
                continue;
            }
            let mut t = [0i32; 2];
            for p in 0..2 {
                for d in 0..4 {
                    let pointing = match self.opts.triangle_region {
                        TriangleRegion::OwnSquare => r,
                        TriangleRegion::Pointed => {
                            // Squares whose d-neighbour is in r, and for the outside region
                            // the border squares whose d side faces off the board.
                            let edge = [ROW0, COL6, ROW6, COL0][d];
                            let mut m = shift(r, (d + 2) % 4);
                            if i == 0 {
                                m |= edge;
                            }
                            m
                        }
                    };
                    t[p] += (sd[d] & self.own[p] & pointing).count_ones() as i32;
                }
            }
            score += t[0] - t[1];
        }
        score
    }

    // ---------------------------------------------------------------- extraction

    /// Squares one legal step from `from` for the mover, given the path `visited`.
    #[inline]
    fn step_targets(&self, from: u8, visited: u64) -> u64 {
        let Some(p) = cell_piece(self.cells[from as usize]) else { return 0 };
        let opp_cross = self.cross & self.own[self.mover.other().index()];
        MOVES[p.kind as usize][p.rot as usize][from as usize] & self.occupied() & !visited & !opp_cross
    }

    /// Whether a path at `from` (with `visited`) can still reach one of the mover's Cross Zeros.
    fn can_finish(&self, from: u8, visited: u64) -> bool {
        let t = self.step_targets(from, visited);
        if t & self.cross & self.own[self.mover.index()] != 0 {
            return true;
        }
        Squares(t).any(|s| self.can_finish(s, visited | (1u64 << s)))
    }

    fn legal_starts(&self) -> u64 {
        let me = self.mover.index();
        let mine = self.own[me];
        let mut m = mine & self.cross;
        for sq in Squares(mine & !self.cross) {
            if self.can_finish(sq, 1u64 << sq) {
                m |= 1u64 << sq;
            }
        }
        m
    }

    fn legal_steps(&self, cur: u8, visited: u64) -> u64 {
        let my_cross = self.cross & self.own[self.mover.index()];
        let t = self.step_targets(cur, visited);
        let mut m = t & my_cross;
        for s in Squares(t & !my_cross) {
            if self.can_finish(s, visited | (1u64 << s)) {
                m |= 1u64 << s;
            }
        }
        m
    }

    fn extract_click(&mut self, sq: u8) {
        let b = 1u64 << sq;
        let my_cross = self.cross & self.own[self.mover.index()];
        let visited = match self.pending {
            Pending::Path { visited, .. } => visited | b,
            _ => b,
        };
        if b & my_cross != 0 {
            self.finish_extraction(visited);
        } else {
            self.pending = Pending::Path { cur: sq, visited };
        }
    }

    fn finish_extraction(&mut self, path: u64) {
        let me = self.mover.index();
        let opp = 1 - me;
        if path & self.own[opp] != 0 {
            let tri = |seat: usize| -> i32 {
                (0..4).map(|d| (self.solid[d] & self.own[seat] & path).count_ones() as i32).sum()
            };
            self.extraction_total[me] += tri(me) - tri(opp);
        }
        self.remove_mask(path);
        self.extracted[me] += 1;
        self.end_turn();
    }

    // ---------------------------------------------------------------- turns

    fn end_turn(&mut self) {
        self.pending = Pending::None;
        self.mover = self.mover.other();
        self.update_outcome();
    }

    /// Sets `outcome` for a state at a turn boundary.
    fn update_outcome(&mut self) {
        self.outcome = None;
        if !self.in_placement() && self.extracted == [EXTRACTIONS; 2] {
            let s = self.score_first();
            self.outcome = Some(Outcome::on_points([s, -s]));
            return;
        }
        let can_move = if self.in_placement() {
            let ctx = self.place_ctx();
            self.legal_square_mask(&ctx) != 0
        } else {
            self.legal_starts() != 0
        };
        if !can_move {
            let s = self.score_first();
            self.outcome = Some(Outcome::decisive(self.mover.other(), [s, -s]));
        }
    }

    /// Legal squares or pieces for the current click, as a list (allocation-free variant of
    /// [`Game::legal_actions`] for the placement piece step).
    fn piece_choices(&self, ctx: &PlaceCtx, sq: u8, mut f: impl FnMut(Kind, u8)) {
        let b = 1u64 << sq;
        for kind in Kind::ALL {
            for rot in 0..kind.rotations() {
                if self.legal_mask(ctx, kind, rot) & b != 0 {
                    f(kind, rot);
                }
            }
        }
    }

    /// The legal click squares at this point of the turn as a mask (placement squares,
    /// extraction starts or next steps); 0 while a placement square is chosen or at the end.
    pub fn legal_square_clicks(&self) -> u64 {
        if self.outcome.is_some() {
            return 0;
        }
        match self.pending {
            Pending::None if self.in_placement() => self.legal_square_mask(&self.place_ctx()),
            Pending::None => self.legal_starts(),
            Pending::Square(_) => 0,
            Pending::Path { cur, visited } => self.legal_steps(cur, visited),
        }
    }
}

fn pick_bit(m: u64, rng: &mut Rng) -> u8 {
    let n = m.count_ones();
    let mut k = rng.random_range(0..n);
    let mut m = m;
    while k > 0 {
        m &= m - 1;
        k -= 1;
    }
    m.trailing_zeros() as u8
}

impl Game for BattleNumber {
    type Action = Action;
    type Options = Options;

    const NAME: &'static str = "battlenumber";
    const STATE_VERSION: u8 = 1;

    fn new_game(options: &Options) -> Self {
        let mut s = BattleNumber::empty_state(*options);
        s.update_outcome();
        s
    }

    fn options(&self) -> &Options {
        &self.opts
    }

    fn to_move(&self) -> Actor {
        Actor::Player(self.mover)
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn at_turn_start(&self) -> bool {
        self.pending == Pending::None
    }

    fn legal_actions(&self, out: &mut Vec<Action>) {
        out.clear();
        if self.outcome.is_some() {
            return;
        }
        if let Pending::Square(sq) = self.pending {
            let ctx = self.place_ctx();
            self.piece_choices(&ctx, sq, |k, r| out.push(Action::Piece(k, r)));
        } else {
            out.extend(Squares(self.legal_square_clicks()).map(Action::Square));
        }
    }

    fn is_legal(&self, action: Action) -> bool {
        if self.outcome.is_some() {
            return false;
        }
        match (self.pending, action) {
            (Pending::Square(sq), Action::Piece(k, r)) => {
                r < k.rotations() && self.legal_mask(&self.place_ctx(), k, r) & (1u64 << sq) != 0
            }
            (Pending::Square(_), Action::Square(_)) | (_, Action::Piece(..)) => false,
            (_, Action::Square(sq)) => sq < SQUARES as u8 && self.legal_square_clicks() & (1u64 << sq) != 0,
        }
    }

    fn play_unchecked(&mut self, action: Action) {
        match (self.pending, action) {
            (Pending::Square(sq), Action::Piece(k, r)) => self.place(sq, k, r),
            (Pending::None, Action::Square(sq)) if self.in_placement() => self.pending = Pending::Square(sq),
            (_, Action::Square(sq)) => self.extract_click(sq),
            _ => debug_assert!(false, "play_unchecked: {action} is not legal here"),
        }
    }

    fn parse_action(&self, text: &str) -> Result<Action, crate::game::ActionParseError> {
        parse_action(text)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        setup::encode(self, out)
    }

    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        setup::decode(bytes)
    }

    fn random_playout(&mut self, rng: &mut Rng) {
        // Same distribution as the generic playout (a uniform square, then a uniform piece),
        // computing the placement context once per placement and allocating nothing.
        while self.outcome.is_none() {
            let sq = match self.pending {
                Pending::Square(sq) => Some(sq),
                Pending::None if self.in_placement() => None,
                _ => {
                    let m = self.legal_square_clicks();
                    self.play_unchecked(Action::Square(pick_bit(m, rng)));
                    continue;
                }
            };
            let ctx = self.place_ctx();
            let sq = sq.unwrap_or_else(|| pick_bit(self.legal_square_mask(&ctx), rng));
            let mut choices = [(Kind::CrossZero, 0u8); 15];
            let mut n = 0;
            self.piece_choices(&ctx, sq, |k, r| {
                choices[n] = (k, r);
                n += 1;
            });
            let (k, r) = choices[rng.random_range(0..n)];
            self.place(sq, k, r);
        }
    }
}

/// Reads an action: a square (`d3`) or a piece (`C2r1`; a bare code such as `C2` is rotation 0).
///
/// Squares are written in lower case and piece codes in upper case, which settles the two
/// texts that could be either: `C2` and `D2` are pieces, `c2` and `d2` are squares. Otherwise
/// case does not matter (`D3` is the square d3, `c2r0` the piece C2r0).
///
/// # Errors
/// [`ActionParseError`] naming what was expected.
pub fn parse_action(text: &str) -> Result<Action, ActionParseError> {
    let t = text.trim();
    let err = || ActionParseError {
        text: text.to_string(),
        reason: "expected a square such as d3 or a piece such as C2r1 (S1, D2, C2, T3, X0; r0-r3)".into(),
    };
    let upper = t.to_ascii_uppercase();
    let is_code = |c: &str| Kind::ALL.iter().any(|k| k.code() == c);
    let bare_piece = t.len() == 2 && t.as_bytes()[0].is_ascii_uppercase() && is_code(&upper);
    if !bare_piece && let Some(sq) = parse_square(t) {
        return Ok(Action::Square(sq));
    }
    let (code, rot) = match upper.split_once('R') {
        Some((c, r)) => (c, r.parse::<u8>().map_err(|_| err())?),
        None => (upper.as_str(), 0),
    };
    let kind = Kind::ALL.into_iter().find(|k| k.code() == code).ok_or_else(err)?;
    if rot >= kind.rotations() {
        return Err(ActionParseError {
            text: text.to_string(),
            reason: format!("{} has rotations r0-r{}", kind.code(), kind.rotations() - 1),
        });
    }
    Ok(Action::Piece(kind, rot))
}

#[cfg(test)]
mod tests;
